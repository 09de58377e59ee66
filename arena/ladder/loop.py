"""The matchmaker's background work, as plain functions: form tables, hand matches to the
workers, and the recovery sweep (matches whose runner died, ratings that fell behind, finished
matches the archive does not hold yet). While the archive's backlog is full (the database is
away), no table forms: matches in play still finish and are rated, and Redis stays bounded."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arena.clock import now_ms
from arena.ladder import metrics
from arena.ladder.forming import FormingPolicy, form_tables
from arena.ladder.model import Ladder
from arena.ladder.redis_store import RedisStore
from arena.ladder.routing import DEFAULT_BATCH, batch_size, batches
from arena.ladder.settings import backlog_max
from arena.ladder.store import StoreError
from arena.redispatch import due

log = logging.getLogger(__name__)

Dispatch = Callable[[Sequence[str], str], None]  # (match ids: one, or a batch of all-built-in ones; celery queue)


def policy_for(ladder: Ladder) -> FormingPolicy:
    return FormingPolicy(
        seats=ladder.seats,
        base_window=ladder.base_window,
        widen_per_s=ladder.widen_per_s,
        house_fill=ladder.house_fill,
        fill_after_s=ladder.fill_after_s,
        max_window=max(FormingPolicy.max_window, ladder.base_window),
    )


def form_once(store: RedisStore, ladder: Ladder, dispatch: Dispatch | None, batch: int = DEFAULT_BATCH) -> list[str]:
    """One forming round on one ladder; returns the ids of the matches created. All-built-in
    matches go to the workers in batches of at most ``batch`` (``routing.batches``), every other
    match alone."""
    now = now_ms()
    tickets = store.snapshot(ladder.name, now)
    metrics.TICKETS_WAITING.labels(ladder.name).set(len(tickets))
    if not tickets:
        return []
    house = store.house_bots(ladder.name) if ladder.house_fill else []
    tables = form_tables(tickets, policy_for(ladder), house)
    claims = store.claim_queued(ladder.name, [table.seated for table in tables], now, ladder)
    waited = {ticket.agent_id: ticket.waited_s for ticket in tickets}
    created = []
    for table, claimed in zip(tables, claims, strict=True):
        if claimed is None:
            metrics.CLAIMS_REJECTED.labels(ladder.name).inc()
            continue
        created.append(claimed)
        metrics.TABLES_FORMED.labels(ladder.name).inc()
        for agent in table.agents:
            metrics.QUEUE_WAIT.labels(ladder.name).observe(waited[agent])
    if dispatch is not None:
        builtin = [match_id for match_id, queue in created if queue == store.queues.builtin]
        for chunk in batches(builtin, batch):
            dispatch(chunk, store.queues.builtin)
        for match_id, queue in created:
            if queue != store.queues.builtin:
                dispatch([match_id], queue)
    return [match_id for match_id, _ in created]


@dataclass
class SweepPolicy:
    redispatch_after_s: float = 30.0  # a queued match nobody started is sent again after this (doubled per copy)
    archive_after_s: float = 2.0  # a finished match not archived after this gets an archive task


def sweep(
    store: RedisStore,
    dispatch: Dispatch,
    rate: Callable[[str], None],
    policy: SweepPolicy,
    archive: Callable[[], None] | None = None,
) -> int:
    """Send again every unfinished match whose runner is gone (its lease lapsed; once per runner
    that started it, then again only after ``redispatch_after_s``: the copy may wait behind other
    tasks) or that no worker picked up in time, each copy no worker started doubling the next wait
    (``arena.redispatch``: a queue no worker takes from must not grow by a copy per match every
    ``redispatch_after_s``); ask for a rating catch-up where the log is ahead of the ratings,
    and for an archive run when a finished match waits too long (unless an archive task already
    waits for the database). Duplicate sends are harmless: every task is idempotent. Returns
    matches sent again."""
    sent = 0
    now = now_ms()
    for match_id in store.active_matches():
        try:
            info = store.get_match(match_id)
        except StoreError:
            continue
        if info.state not in ("queued", "running") or store.lease_alive(match_id):
            continue
        copy = due(store.dispatched(match_id), info.attempts, info.state == "running", now, policy.redispatch_after_s)
        if copy.died or copy.waited:
            store.mark_dispatched(match_id, info.attempts, copy.unstarted)
            dispatch([match_id], info.queue)  # alone: it may be one of a batch whose runner died
            metrics.MATCHES_REDISPATCHED.labels(info.ladder).inc()
            sent += 1
    for ladder in store.list_ladders():
        if store.ratings_behind(ladder.name):
            rate(ladder.name)
    metrics.ARCHIVE_BACKLOG.set(store.archive_backlog())
    oldest = store.oldest_unarchived_ms()
    if archive is not None and oldest and now - oldest >= policy.archive_after_s * 1000 and not store.archive_waiting():
        archive()
    return sent


def run_forever(
    store: RedisStore,
    dispatch: Dispatch,
    rate: Callable[[str], None],
    stop: Callable[[], bool],
    tick_s: float = 0.05,
    sweep_every_s: float = 2.0,
    sweep_policy: SweepPolicy | None = None,
    archive: Callable[[], None] | None = None,
    batch: int | None = None,
    min_gap_s: float = 0.005,
) -> None:
    """The matchmaker's loop (run in a thread): form on every ladder each tick, or as soon as a
    finished match puts enrolled agents back in a queue but at most once per ``min_gap_s`` (unless
    the archive's backlog is full); sweep now and then. ``batch``: all-built-in matches per task
    (default ``routing.batch_size()``)."""
    policy = sweep_policy or SweepPolicy()
    batch = batch or batch_size()
    limit = backlog_max()
    next_sweep = 0.0
    while not stop():
        round_started = time.monotonic()
        try:
            backlog, ladders = store.forming_state()  # one round trip
            if backlog >= limit:
                for ladder, _ in ladders:
                    if not ladder.paused:
                        metrics.FORMING_PAUSED.labels(ladder.name).inc()
            else:
                for ladder, queued in ladders:
                    if queued and not ladder.paused:  # an empty queue costs no snapshot
                        form_once(store, ladder, dispatch, batch)
            if time.monotonic() >= next_sweep:
                sweep(store, dispatch, rate, policy, archive)
                next_sweep = time.monotonic() + sweep_every_s
            # until the next tick, or sooner when a finished match puts agents back in a queue
            if store.wait_for_requeue(tick_s):
                time.sleep(max(0.0, min_gap_s - (time.monotonic() - round_started)))
        except Exception:  # Redis restarting, a bad ladder: log, wait, go on
            log.exception("matchmaker round failed")
            time.sleep(min(1.0, tick_s * 10))
