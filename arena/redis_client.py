"""The one way every process makes its synchronous Redis client."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import redis
from redis.backoff import ExponentialBackoff
from redis.retry import Retry

REDIS_ERRORS = (redis.ConnectionError, redis.TimeoutError)
T = TypeVar("T")


class _Refused(Exception):
    """Carries a refused password past redis-py's retry loop (not one of the errors it retries)."""

    def __init__(self, error: redis.AuthenticationError) -> None:
        super().__init__(str(error))
        self.error = error


class ConnectionRetry(Retry):
    """redis-py's retry, except for a password Redis refuses or asks for: an ``AuthenticationError``
    is a ``ConnectionError`` to redis-py, so a wrong URL was retried at every level for up to 90 s
    before the caller heard of it; asking again cannot help."""

    def call_with_retry(self, do: Callable[[], T], fail: Any, *args: Any, **kwargs: Any) -> T:
        def attempt() -> T:
            try:
                return do()
            except redis.AuthenticationError as error:
                raise _Refused(error) from None

        try:
            return super().call_with_retry(attempt, fail, *args, **kwargs)
        except _Refused as refused:
            raise refused.error from None


def retrying_client(redis_url: str, retries: int = 10, health_check_interval: int = 0) -> redis.Redis:
    """A client that retries with back-off on connection errors: ``retries=25`` rides out a Redis
    restart of ~15 s. Safe because every write the platform makes is idempotent."""
    return redis.Redis.from_url(
        redis_url,
        retry=ConnectionRetry(ExponentialBackoff(cap=1.0, base=0.05), retries=retries),
        retry_on_error=list(REDIS_ERRORS),
        health_check_interval=health_check_interval,
    )
