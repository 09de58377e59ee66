"""Shared fixtures: a real redis-server process started (and stopped) by the tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.ladder.redis_store import RedisStore


@pytest.fixture
def redis_server() -> Iterator[EmbeddedRedis]:
    """A fresh redis-server for one test (AOF on, private data dir, free port)."""
    server = EmbeddedRedis().start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture(scope="session")
def shared_redis_server() -> Iterator[EmbeddedRedis]:
    """One redis-server for a whole test session; tests must use their own key prefixes or flush."""
    server = EmbeddedRedis().start()
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture
def store(redis_server: EmbeddedRedis) -> Iterator[RedisStore]:
    """The ladder store on a fresh redis-server."""
    client = redis.Redis.from_url(redis_server.url)
    yield RedisStore(client)
    client.close()
