"""Fixtures of the ladder tests: a store on a real redis-server, and the whole stack."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from arena.embedded_redis import EmbeddedRedis
from arena.local.stack import Stack, StackConfig


@pytest.fixture
def make_stack(redis_server: EmbeddedRedis) -> Iterator[Callable[..., Stack]]:
    """Start the stack (matchmaker, Celery worker processes, optionally the engine) on the test's
    redis-server; every process is stopped after the test."""
    stacks: list[Stack] = []

    def start(**options: object) -> Stack:
        env = {"OHELL_MATCH_LEASE_S": "1.5"} | dict(options.pop("env", {}))  # type: ignore[arg-type]
        config = StackConfig(redis_url=redis_server.url, env=env, **options)  # type: ignore[arg-type]
        config.matchmaker_args = config.matchmaker_args or ("--sweep-every", "0.5", "--tick", "0.02")
        stack = Stack(config)
        stacks.append(stack)
        return stack.start()

    yield start
    for stack in stacks:
        stack.cleanup(graceful=False)
