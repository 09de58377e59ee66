"""Thin Celery tasks over ``arena.ladder.jobs``, ``arena.ladder.archiving`` and
``arena.tournament.jobs`` (a tournament's table); they take ids and re-read state from Redis."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache, partial
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from arena.archive.db import connect, database_url
from arena.keys import Keys
from arena.ladder import archiving, jobs, metrics
from arena.ladder.redis_store import RedisStore
from arena.ladder.routing import (
    ARCHIVE_MATCHES,
    MAX_BATCH,
    RUN_MATCH,
    RUN_MATCHES,
    RUN_TOURNEY_TABLE,
    UPDATE_RATINGS,
    carried_batch,
    matches_sender,
    tourney_dispatcher,
)
from arena.redis_client import REDIS_ERRORS
from arena.tournament import jobs as tourney_jobs
from arena.tournament.store import TournamentStore
from workers.app import REDIS_URL, app

ARCHIVE_BACKOFF_MAX_S = 30.0


@cache
def store() -> RedisStore:
    """One client per process (redis-py resets its pool after a fork); it retries through a Redis
    restart of ~15 s, and every store write is idempotent, so a retried write is safe."""
    return RedisStore.connect(REDIS_URL, Keys.from_env(), retries=25)


@cache
def archive_engine() -> Engine:
    """The archive's engine (``OHELL_DATABASE_URL``), migrated on first use; not cached while the
    database cannot be reached (the call raises)."""
    return connect(database_url())


def tourney_store() -> TournamentStore:
    return TournamentStore.connect(REDIS_URL, Keys.from_env(), retries=25)


def rate_now(ladder: str) -> None:
    """Apply the ladder's new log entries here, right after the match (no extra task per match;
    the cursor makes it exactly once even when workers race, and the matchmaker's sweep sends
    ``update_ratings`` for anything left behind)."""
    jobs.update_ratings(store(), ladder)


def archive_later() -> None:
    """Ask for an archive run, at most once per ARCHIVE_REQUEST_MS (the run takes every match
    finished by then; a later finisher asks again, and the matchmaker's sweep asks for any
    match left waiting over 2 s)."""
    if store().request_archive():
        archive_matches.apply_async(queue=store().queues.ratings, ignore_result=True)


def send_matches(match_ids: Sequence[str], queue: str, batch: int) -> None:
    """Send matches to the workers as the matchmaker does: one alone, several as a batch (carrying
    ``batch``, the size its own next batches take)."""
    matches_sender(app, batch)(match_ids, queue)


def form_next(ladders: set[str], batch: int) -> list[str]:
    """The next batch (of at most ``batch`` matches) for a batch task that stored its matches: formed
    here from the agents it freed (``jobs.form_next``); the other tables formed go to the workers."""
    return jobs.form_next(store(), ladders, batch, partial(send_matches, batch=batch))


@app.task(name=RUN_MATCH, bind=True, max_retries=5)
def run_match(self: Any, match_id: str) -> str:
    ladder = match_id.rpartition("-")[0]  # match ids are "<ladder>-<n>"
    try:
        outcome = jobs.run_match(store(), match_id, rate_now, archive=archive_later)
    except REDIS_ERRORS as error:
        metrics.MATCHES_FAILED.labels(ladder, "redis").inc()
        raise self.retry(exc=error, countdown=1.0) from None
    except Exception as error:
        metrics.MATCHES_FAILED.labels(ladder, type(error).__name__).inc()
        if self.request.retries >= self.max_retries:
            store().fail_match(match_id, f"{type(error).__name__}: {error}")
            raise
        raise self.retry(exc=error, countdown=2**self.request.retries) from None
    if outcome == "busy":  # held by another runner: look again when its lease would have lapsed
        raise self.retry(countdown=jobs.lease_seconds(), max_retries=None)
    return outcome


@app.task(name=RUN_MATCHES, bind=True, max_retries=5)
def run_matches(self: Any, match_ids: list[str], batch: int | None = None) -> dict[str, str]:
    """A batch of all-built-in matches claimed together; ``batch``: the size of the batches it forms
    and plays next, the matchmaker's (``routing.carried_batch``). A redelivery (its worker died) skips the
    matches finished already; matches another runner holds are tried again when its lease would
    have lapsed; a match whose play raised goes on alone, as ``run_match`` (its retries, then failed);
    matches a batch of long games did not begin within ``jobs.HAND_BACK_S`` are sent again."""
    if not (isinstance(match_ids, list) and 0 < len(match_ids) <= MAX_BATCH):
        raise ValueError(f"match_ids must be a list of 1 to {MAX_BATCH} match ids")
    if not all(isinstance(match_id, str) and 0 < len(match_id) <= 200 for match_id in match_ids):
        raise ValueError("match_ids must be match ids (text of 1 to 200 characters)")
    size = carried_batch(batch)
    following = partial(form_next, batch=size)
    try:
        run = jobs.run_matches(store(), match_ids, rate_now, archive=archive_later, form_next=following)
    except REDIS_ERRORS as error:
        for match_id in match_ids:
            metrics.MATCHES_FAILED.labels(match_id.rpartition("-")[0], "redis").inc()
        raise self.retry(exc=error, countdown=1.0) from None
    for match_id, raised in run.errors.items():
        metrics.MATCHES_FAILED.labels(match_id.rpartition("-")[0], type(raised).__name__).inc()
        run_match.apply_async(args=[match_id], queue=store().queues.builtin, countdown=1.0, ignore_result=True)
    deferred = [match_id for match_id, outcome in run.outcomes.items() if outcome == "deferred"]
    if deferred:  # long games: given back so that the worker's idle children take them
        send_matches(deferred, store().queues.builtin, size)
    busy = [match_id for match_id, outcome in run.outcomes.items() if outcome == "busy"]
    if busy:  # held by another runner: look again when its lease would have lapsed
        raise self.retry(args=[busy], countdown=jobs.lease_seconds(), max_retries=None)
    return run.outcomes


@app.task(name=UPDATE_RATINGS, bind=True, max_retries=None)
def update_ratings(self: Any, ladder: str) -> int:
    try:
        return jobs.update_ratings(store(), ladder)
    except REDIS_ERRORS as error:
        raise self.retry(exc=error, countdown=1.0) from None


@app.task(name=ARCHIVE_MATCHES, bind=True, max_retries=None)
def archive_matches(self: Any) -> int:
    """Drain the archive's backlog. While the database is down one task (holding ``archive_retry``)
    retries with back-off; the others end at once and the backlog waits in Redis."""
    try:
        drained = archiving.archive_pending(store(), archive_engine)
    except REDIS_ERRORS as error:
        metrics.ARCHIVE_ERRORS.labels("redis").inc()
        raise self.retry(exc=error, countdown=1.0) from None
    except SQLAlchemyError as error:
        metrics.ARCHIVE_ERRORS.labels("database").inc()
        delay = min(ARCHIVE_BACKOFF_MAX_S, 2.0**self.request.retries)
        if store().hold("archive_retry", self.request.id or "", delay + 10):
            raise self.retry(exc=error, countdown=delay) from None
        return 0
    if self.request.retries:
        store().release("archive_retry", self.request.id or "")
    return drained.archived


@app.task(name=RUN_TOURNEY_TABLE, bind=True, max_retries=5)
def run_tourney_table(self: Any, tourney_id: str, table_id: str) -> str:
    """Play one tournament table; a crash or redelivery resumes it (games recorded once)."""
    dispatch = tourney_dispatcher(app, Keys.from_env().prefix)
    try:
        outcome = tourney_jobs.run_table(tourney_store(), tourney_id, table_id, dispatch)
    except REDIS_ERRORS as error:
        raise self.retry(exc=error, countdown=1.0) from None
    except Exception as error:
        if self.request.retries >= self.max_retries:
            raise  # the table stays unfinished: `ohell tournament resume` sends it again
        raise self.retry(exc=error, countdown=2**self.request.retries) from None
    if outcome == "busy":  # held by another runner: look again when its lease would have lapsed
        raise self.retry(countdown=tourney_jobs.lease_seconds(), max_retries=None)
    return outcome
