"""Thin Celery tasks over ``arena.ladder.jobs``; they take ids and re-read state from Redis."""

from __future__ import annotations

import os
from functools import cache
from typing import Any

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

from arena.ladder import jobs, metrics
from arena.ladder.keys import Keys
from arena.services.matchmaker.redis_store import RedisStore
from arena.workers.app import REDIS_URL, app
from arena.workers.routing import QUEUE_RATINGS, RUN_MATCH, UPDATE_RATINGS

REDIS_ERRORS = (redis.ConnectionError, redis.TimeoutError)


@cache
def store() -> RedisStore:
    """One client per process (redis-py resets its pool after a fork). Retries ride out a
    Redis restart of ~15 s; every store write is idempotent, so a retried write is safe."""
    client = redis.Redis.from_url(
        REDIS_URL, retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), retries=25),
        retry_on_error=list(REDIS_ERRORS), health_check_interval=10,
    )  # fmt: skip
    return RedisStore(client, Keys(os.environ.get("OHELL_REDIS_PREFIX", Keys.prefix)))


def request_ratings(ladder: str) -> None:
    """Queue a rating catch-up unless one is queued already (it will see this match too: the
    match is logged before the flag is checked, and the task clears the flag before reading)."""
    if store().client.set(store().keys.rating_pending(ladder), "1", nx=True, ex=30):
        update_ratings.apply_async((ladder,), queue=QUEUE_RATINGS)


@app.task(name=RUN_MATCH, bind=True, max_retries=5)
def run_match(self: Any, match_id: str) -> str:
    try:
        outcome = jobs.run_match(store(), match_id, request_ratings)
    except REDIS_ERRORS as error:
        metrics.MATCHES_FAILED.labels("unknown", "redis").inc()
        raise self.retry(exc=error, countdown=1.0) from None
    except Exception as error:
        ladder = match_id.rpartition("-")[0]
        metrics.MATCHES_FAILED.labels(ladder, type(error).__name__).inc()
        if self.request.retries >= self.max_retries:
            store().fail_match(match_id, f"{type(error).__name__}: {error}")
            raise
        raise self.retry(exc=error, countdown=2 ** self.request.retries) from None
    if outcome == "busy":  # held by another runner: look again when its lease would have lapsed
        raise self.retry(countdown=jobs.lease_seconds(), max_retries=None)
    return outcome


@app.task(name=UPDATE_RATINGS, bind=True, max_retries=None)
def update_ratings(self: Any, ladder: str) -> int:
    try:
        store().client.delete(store().keys.rating_pending(ladder))
        return jobs.update_ratings(store(), ladder)
    except REDIS_ERRORS as error:
        raise self.retry(exc=error, countdown=1.0) from None
