"""Shared fixtures: a real redis-server process, and a PostgreSQL server, started (and stopped) by
the tests from the machine's binaries (never the servers a machine may already run).

Without PostgreSQL's server binaries the PostgreSQL tests are skipped with the reason shown, except
in CI (``CI`` set): there they fail (``tests.needs``), so they are never skipped silently
(``.ci/run`` installs Debian's ``postgresql`` when initdb is missing)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import redis

from arena.archive.local_postgres import LocalPostgres, PostgresUnavailable
from arena.embedded_redis import EmbeddedRedis
from arena.ladder.redis_store import RedisStore

from .needs import missing


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules with slow tests first (each module's tests still together and in order): under xdist
    their long runs start early and the quick tests even out the end; in collection order tests/web's
    minute-long modules came last, where one worker could be left running them with the other idle."""
    slow_modules = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_modules)  # stable


# pytest-xdist's workers run with COLUMNS=80, which the CLI's console would take as the width of a
# pipe; the tests check the output a host gets in a pipe or a file (not wrapped at 80 columns)
os.environ.pop("COLUMNS", None)


@pytest.fixture
def redis_server() -> Iterator[EmbeddedRedis]:
    """A fresh redis-server for one test (AOF on, private data dir, free port)."""
    server = EmbeddedRedis().start()
    try:
        yield server
    finally:
        # its data goes with it: SIGKILL, not the clean shutdown that waits for Redis's next
        # timer tick (~0.1 s, on each of some 150 tests)
        server.stop(kill=True)
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


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[LocalPostgres]:
    try:
        server = LocalPostgres().start()
    except PostgresUnavailable as error:
        missing(f"no PostgreSQL server could be started ({error})", "apt-get install postgresql (.ci/run does)")
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture
def postgres_url(postgres_server: LocalPostgres) -> str:
    """A fresh, empty database on the test server."""
    return postgres_server.create_database()
