"""Celery queues, task names, which queue a match goes to, and the Celery configuration shared by
the workers' app (``workers.app``) and the processes that only send tasks (the matchmaker)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from celery import Celery
from kombu import Exchange, Queue

from arena.play.specs import SeatSpec, all_builtin

QUEUE_BUILTIN = "ohell.builtin"  # CPU-bound: every seat is a built-in bot, played in-process
QUEUE_REMOTE = "ohell.remote"  # I/O-bound: at least one seat is a connected or endpoint agent
QUEUE_RATINGS = "ohell.ratings"  # short rating updates
ALL_QUEUES = (QUEUE_BUILTIN, QUEUE_REMOTE, QUEUE_RATINGS)

RUN_MATCH = "ohell.run_match"
UPDATE_RATINGS = "ohell.update_ratings"


def queue_for(seats: Iterable[SeatSpec]) -> str:
    return QUEUE_BUILTIN if all_builtin(seats) else QUEUE_REMOTE


def make_celery(redis_url: str, include: Iterable[str] = ()) -> Celery:
    """A Celery app on ``redis_url`` with the ladder's queues and delivery guarantees."""
    app = Celery("ohell", broker=redis_url, backend=redis_url, include=list(include))
    app.conf.update(
        task_acks_late=True,  # a task is acknowledged only when it returns: a dead worker's task comes back
        task_reject_on_worker_lost=True,  # ... at once when a pool child dies (SIGKILL, OOM)
        worker_prefetch_multiplier=1,  # one match at a time per process
        task_queues=[Queue(name, Exchange(name), routing_key=name) for name in ALL_QUEUES],
        task_default_queue=QUEUE_BUILTIN,
        task_default_exchange=QUEUE_BUILTIN,
        task_default_routing_key=QUEUE_BUILTIN,
        task_routes={RUN_MATCH: {"queue": QUEUE_BUILTIN}, UPDATE_RATINGS: {"queue": QUEUE_RATINGS}},
        task_ignore_result=True,  # state lives in the store; the backend is for ad-hoc inspection
        task_serializer="json",
        accept_content=["json"],
        broker_transport_options={"visibility_timeout": int(os.environ.get("OHELL_VISIBILITY_TIMEOUT_S", 3600))},
        broker_connection_retry_on_startup=True,
        broker_connection_max_retries=None,  # ride out a Redis restart
        worker_hijack_root_logger=False,
        worker_send_task_events=False,
    )
    return app


def celery_senders(redis_url: str) -> tuple[Any, Any]:
    """(dispatch(match_id, queue), rate(ladder)): send run_match / update_ratings to the workers."""
    app = make_celery(redis_url)

    # ignore_result: nobody waits for these results (state lives in the store), and without it
    # every send subscribes to the result backend and unsubscribes when the AsyncResult is dropped.
    def dispatch(match_id: str, queue: str) -> None:
        app.send_task(RUN_MATCH, args=[match_id], queue=queue, ignore_result=True)

    def rate(ladder: str) -> None:
        app.send_task(UPDATE_RATINGS, args=[ladder], queue=QUEUE_RATINGS, ignore_result=True)

    return dispatch, rate
