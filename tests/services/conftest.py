"""Fixtures of the service tests: one redis-server and one engine service process per module."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import redis
from svc_helpers import EngineProcess

from arena.keys import register_agent_token


@pytest.fixture(scope="module")
def engine_process(shared_redis_server) -> Iterator[EngineProcess]:  # type: ignore[no-untyped-def]
    engine = EngineProcess(shared_redis_server.url)
    try:
        yield engine
    finally:
        code = engine.stop()
        assert code == 0, f"engine did not shut down gracefully on SIGTERM (exit {code})"


@pytest.fixture
def make_agent(shared_redis_server):  # type: ignore[no-untyped-def]
    """Register a fresh agent id and token in Redis (as the matchmaker does)."""
    client = redis.Redis.from_url(shared_redis_server.url)

    def make(prefix: str = "agent") -> tuple[str, str]:
        agent_id = f"{prefix}-{uuid.uuid4().hex[:8]}"
        token = uuid.uuid4().hex
        register_agent_token(client, agent_id, token)
        return agent_id, token

    yield make
    client.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A service test that hangs fails after 90 s instead of holding CI for the global 300 s."""
    for item in items:
        if "tests/services/" in str(item.path):
            item.add_marker(pytest.mark.timeout(90))
