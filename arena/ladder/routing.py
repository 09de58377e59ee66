"""Celery queues, task names, which queue a match goes to, and the Celery configuration shared by
the workers' app (``workers.app``) and the processes that only send tasks (the matchmaker)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from arena.keys import DEFAULT_PREFIX
from arena.ladder.settings import visibility_timeout_s
from arena.play.specs import SeatSpec, all_builtin

if TYPE_CHECKING:  # Celery is loaded where an app is made: the command line reads this module's settings too
    from celery import Celery

RUN_MATCH = "ohell.run_match"
RUN_MATCHES = "ohell.run_matches"  # a batch of all-built-in matches claimed together (arena.ladder.jobs.run_matches)
UPDATE_RATINGS = "ohell.update_ratings"
ARCHIVE_MATCHES = "ohell.archive_matches"  # on the ratings queue: short, and after the ratings
RUN_TOURNEY_TABLE = "ohell.run_tourney_table"  # one tournament table (arena.tournament.jobs)


@dataclass(frozen=True)
class Queues:
    """The Celery queues of one stack, named after its key prefix ("ohell:" -> "ohell.builtin"), so
    stacks with different prefixes on one Redis never take each other's tasks."""

    prefix: str = DEFAULT_PREFIX

    @property
    def builtin(self) -> str:  # CPU-bound: every seat is a built-in bot, played in-process
        return f"{self.prefix.rstrip(':')}.builtin"

    @property
    def remote(self) -> str:  # I/O-bound: at least one seat is a connected or endpoint agent
        return f"{self.prefix.rstrip(':')}.remote"

    @property
    def ratings(self) -> str:  # short rating updates
        return f"{self.prefix.rstrip(':')}.ratings"

    @property
    def all(self) -> tuple[str, str, str]:
        return self.builtin, self.remote, self.ratings

    def for_seats(self, seats: Iterable[SeatSpec]) -> str:
        return self.builtin if all_builtin(seats) else self.remote


QUEUE_BUILTIN, QUEUE_REMOTE, QUEUE_RATINGS = ALL_QUEUES = Queues().all  # of the default prefix

BATCH_ENV = "OHELL_MATCH_BATCH"
# All-built-in matches per run_matches task (a full classic game of bots: ~4 ms). A worker whose batch
# ends while no task waits forms and plays the next tables of the agents it freed (jobs.form_next), so
# a ladder of 12 tables on two workers no longer needs a third batch waiting to keep them busy: 6
# (two batches) spent ~0.6 ms less CPU per light match than 4 (docs/benchmarks.md, Ladder).
DEFAULT_BATCH = 6
MAX_BATCH = 32  # the most a run_matches task accepts


def batch_size(value: str | None = None) -> int:
    """How many all-built-in matches formed in one round go to one task: ``value``, else
    $OHELL_MATCH_BATCH, else DEFAULT_BATCH; from 1 (one match per task) to MAX_BATCH."""
    raw = value if value is not None else os.environ.get(BATCH_ENV, "")
    try:
        size = int(raw) if raw.strip() else DEFAULT_BATCH
    except ValueError:
        raise ValueError(f"{BATCH_ENV}={raw!r} must be a whole number from 1 to {MAX_BATCH}") from None
    if not 1 <= size <= MAX_BATCH:
        raise ValueError(f"{BATCH_ENV}={raw!r} must be a whole number from 1 to {MAX_BATCH}")
    return size


def carried_batch(value: object) -> int:
    """The batch size a run_matches task carries (``matches_sender``); a task sent without one (by
    hand, or by a matchmaker of an earlier version) uses ``batch_size()``."""
    if value is None:
        return batch_size()
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_BATCH:
        raise ValueError(f"batch must be a whole number from 1 to {MAX_BATCH}, got {value!r}")
    return value


def batches(match_ids: Sequence[str], size: int) -> list[list[str]]:
    """``match_ids`` cut into as few batches of at most ``size`` as possible, of sizes that differ by
    at most one (10 matches, size 4: batches of 4, 3 and 3)."""
    if not match_ids:
        return []
    count = -(-len(match_ids) // size)
    base, extra = divmod(len(match_ids), count)
    out, start = [], 0
    for index in range(count):
        end = start + base + (index < extra)
        out.append(list(match_ids[start:end]))
        start = end
    return out


def make_celery(redis_url: str, include: Iterable[str] = (), prefix: str = DEFAULT_PREFIX) -> Celery:
    """A Celery app on ``redis_url`` with the queues of the stack of ``prefix`` and the ladder's
    delivery guarantees."""
    from celery import Celery
    from kombu import Exchange, Queue

    queues = Queues(prefix)
    app = Celery("ohell", broker=redis_url, backend=redis_url, include=list(include))
    app.conf.update(
        task_acks_late=True,  # a task is acknowledged only when it returns: a dead worker's task comes back
        task_reject_on_worker_lost=True,  # ... at once when a pool child dies (SIGKILL, OOM)
        worker_prefetch_multiplier=1,  # one match at a time per process
        task_queues=[Queue(name, Exchange(name), routing_key=name) for name in queues.all],
        task_default_queue=queues.builtin,
        task_default_exchange=queues.builtin,
        task_default_routing_key=queues.builtin,
        task_routes={
            RUN_MATCH: {"queue": queues.builtin},
            RUN_MATCHES: {"queue": queues.builtin},
            RUN_TOURNEY_TABLE: {"queue": queues.builtin},
            UPDATE_RATINGS: {"queue": queues.ratings},
            ARCHIVE_MATCHES: {"queue": queues.ratings},
        },
        task_ignore_result=True,  # state lives in the store; the backend is for ad-hoc inspection
        task_serializer="json",
        accept_content=["json"],
        broker_transport_options={"visibility_timeout": visibility_timeout_s()},
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,  # ride out a Redis restart
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
    )
    return app


def matches_sender(app: Any, batch: int) -> Callable[[Sequence[str], str], None]:
    """dispatch(match_ids, queue): one match as run_match, several as run_matches. A run_matches task
    carries ``batch``, the size of the batches it forms and plays next (``jobs.form_next``), so the
    size the matchmaker forms with decides the workers' batches too (whatever their environment)."""

    # ignore_result: nobody waits for these results (state lives in the store), and without it
    # every send subscribes to the result backend and unsubscribes when the AsyncResult is dropped.
    def dispatch(match_ids: Sequence[str], queue: str) -> None:
        if len(match_ids) == 1:
            app.send_task(RUN_MATCH, args=[match_ids[0]], queue=queue, ignore_result=True)
        else:
            kwargs = {"batch": batch}
            app.send_task(RUN_MATCHES, args=[list(match_ids)], kwargs=kwargs, queue=queue, ignore_result=True)

    return dispatch


def celery_senders(redis_url: str, prefix: str = DEFAULT_PREFIX, batch: int = DEFAULT_BATCH) -> tuple[Any, Any, Any]:
    """(dispatch(match_ids, queue), rate(ladder), archive()): send run_match (one match) or
    run_matches (a batch, carrying ``batch``: see ``matches_sender``) / update_ratings / archive_matches
    to the workers."""
    app = make_celery(redis_url, prefix=prefix)
    ratings_queue = Queues(prefix).ratings

    def rate(ladder: str) -> None:
        app.send_task(UPDATE_RATINGS, args=[ladder], queue=ratings_queue, ignore_result=True)

    def archive() -> None:
        app.send_task(ARCHIVE_MATCHES, queue=ratings_queue, ignore_result=True)

    return matches_sender(app, batch), rate, archive


def tourney_dispatcher(app: Any, prefix: str = DEFAULT_PREFIX) -> Callable[[str, str, Sequence[SeatSpec]], None]:
    """dispatch(tournament, table, seats): send run_tourney_table to the builtin queue when every
    seat is a built-in bot, else to the remote queue."""
    queues = Queues(prefix)

    def dispatch(tourney_id: str, table_id: str, seats: Sequence[SeatSpec]) -> None:
        app.send_task(RUN_TOURNEY_TABLE, args=[tourney_id, table_id], queue=queues.for_seats(seats), ignore_result=True)

    return dispatch
