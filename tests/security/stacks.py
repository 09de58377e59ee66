"""A ladder stack for the security tests (matchmaker, workers, optionally the engine) on the test's
redis-server, and a thread that runs endpoint agents (SDK) on their own event loop."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

from arena.embedded_redis import EmbeddedRedis
from arena.ladder.redis_store import RedisStore
from arena.local.stack import Stack, StackConfig
from arena.sdk import serve_async
from ohell.bots import make_bot


def start_stack(redis_server: EmbeddedRedis, **options: Any) -> Stack:
    env = {"OHELL_MATCH_LEASE_S": "1.5"} | options.pop("env", {})
    matchmaker_args = ("--tick", "0.02", "--sweep-every", "0.5", "--redispatch-after", "3")
    config = StackConfig(redis_url=redis_server.url, env=env, matchmaker_args=matchmaker_args, **options)
    return Stack(config).start()


def wait_until(condition: Callable[[], object], timeout_s: float, what: str, stack: Stack | None = None) -> None:
    """Wait for ``condition``; a timeout reports the ``stack``'s logs when one is given."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() >= deadline:
            logs = f"\n{stack.log_tails()}" if stack is not None else ""
            raise AssertionError(f"timed out after {timeout_s} s waiting for {what}{logs}")
        time.sleep(0.05)


class Endpoints:
    """Endpoint agents (``arena.sdk.serve_async``) served from one background event loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.servers: list[Any] = []

    def serve_on(self, bot: str, token: str, port: int = 0) -> int:
        serving = serve_async(make_bot(bot, 1), f"127.0.0.1:{port}", token=token)
        served = asyncio.run_coroutine_threadsafe(serving, self.loop).result(10)
        self.servers.append(served)
        return int(served.port)

    def close(self) -> None:
        for served in self.servers:
            asyncio.run_coroutine_threadsafe(served.server.stop(0), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def free_port() -> int:
    """A port nothing listens on (bound and released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def match_state(store: RedisStore, match_id: str) -> str:
    """The match's state, or '' while it does not exist."""
    return store.get_match(match_id).state if store.client.exists(store.keys.match(match_id)) else ""
