"""The one way every process makes its synchronous Redis client."""

from __future__ import annotations

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

REDIS_ERRORS = (redis.ConnectionError, redis.TimeoutError)


def retrying_client(redis_url: str, retries: int = 10, health_check_interval: int = 0) -> redis.Redis:
    """A client that retries with back-off on connection errors: ``retries=25`` rides out a Redis
    restart of ~15 s. Safe because every write the platform makes is idempotent."""
    return redis.Redis.from_url(
        redis_url,
        retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), retries=retries),
        retry_on_error=list(REDIS_ERRORS),
        health_check_interval=health_check_interval,
    )
