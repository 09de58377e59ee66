"""Tokens the platform hands out work on a command line: none begins with '-', which argparse
would take for an option (one in 64 URL-safe tokens did, and ``ohell bot connect --token <it>`` then
exited at once: agents that never connected)."""

from __future__ import annotations

import subprocess
import sys

import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import new_token
from arena.ladder.redis_store import RedisStore
from arena.rpc.auth import new_host_token


def test_new_tokens_never_begin_with_a_dash_and_keep_their_strength() -> None:
    tokens = [new_token() for _ in range(3000)]  # without the redraw ~47 would begin with '-'
    assert not any(token.startswith("-") for token in tokens)
    assert {len(token) for token in tokens} == {32} and len(set(tokens)) == len(tokens)
    assert any("-" in token for token in tokens)  # the alphabet is unchanged: '-' still occurs inside
    assert len(new_host_token()) == 43 and not new_host_token().startswith("-")


def test_registered_agents_tokens_pass_as_command_line_arguments(redis_server: EmbeddedRedis) -> None:
    store = RedisStore(redis.Redis.from_url(redis_server.url))
    registered = [store.register_agent(f"agent{index}", "connected") for index in range(200)]
    tokens = [token for _, token in registered]
    tokens += [store.set_token(agent.agent_id, rotate=True) or "" for agent, _ in registered]
    store.client.close()
    assert not any(token.startswith("-") for token in tokens)
    code = "import argparse, sys; p = argparse.ArgumentParser(); p.add_argument('--token'); p.parse_args(sys.argv[1:])"
    args = [part for token in tokens[:50] for part in ("--token", token)]
    assert subprocess.run([sys.executable, "-c", code, *args], capture_output=True).returncode == 0
