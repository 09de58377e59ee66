"""A ladder stack for the security tests (matchmaker, workers, optionally the engine) on the test's
redis-server, and endpoint agents served in their own processes."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, Any

from arena.embedded_redis import EmbeddedRedis
from arena.local.stack import Stack, StackConfig
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import rules_pb2
from arena.rpc.auth import auth_metadata


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


class LineLog:
    """A child's text pipe read to its end in a thread: a test waits on a line it must print before
    acting on it (never a sleep that guesses how long the child takes), and reads the whole text after."""

    def __init__(self, pipe: IO[str]) -> None:
        self.lines: list[str] = []
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self.thread.start()

    def _read(self, pipe: IO[str]) -> None:
        for line in pipe:
            with self.changed:
                self.lines.append(line)
                self.changed.notify_all()

    def wait_for(self, text: str, timeout_s: float) -> None:
        """Until a line containing ``text`` was printed; AssertionError (with what was) after ``timeout_s``."""
        with self.changed:
            if not self.changed.wait_for(lambda: any(text in line for line in self.lines), timeout_s):
                raise AssertionError(f"timed out after {timeout_s} s waiting for {text!r} in:\n{''.join(self.lines)}")

    def text(self) -> str:
        """Everything printed, once the child closed the pipe (it exited)."""
        self.thread.join(20)
        return "".join(self.lines)


@contextlib.contextmanager
def endpoint_process(bot: str, token: str, port: int) -> Iterator[subprocess.Popen[str]]:
    """A built-in bot served as an endpoint agent by ``ohell bot connect --serve`` in its own
    process, as a bot author runs one, listening on ``port`` and accepting only ``token``."""
    command = [sys.executable, "-m", "arena.cli", "bot", "connect", "--bot", bot, "--serve"]
    command += ["--address", f"127.0.0.1:{port}", "--token", token]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert f"serving on port {port}" in line, f"the endpoint did not start: {line!r}"
        yield proc
    finally:
        proc.terminate()
        proc.wait(10)


def free_port() -> int:
    """A port nothing listens on (bound and released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def endpoint_ladder(stub: Any, host_token: str, port: int) -> Any:
    """Ladder "ep" (3 seats, one hand of 3 cards) with two built-in random agents queued, and an
    endpoint agent "ep" registered at 127.0.0.1:``port``, not queued: its RegisterAgentResponse."""
    host = auth_metadata(host_token)
    ladder = pb.Ladder(name="ep", rules=rules_pb2.Rules(hand_sizes=[3]), seats=3, base_window=50)
    stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=host)
    agent = stub.RegisterAgent(
        pb.RegisterAgentRequest(name="ep", kind=pb.AGENT_KIND_ENDPOINT, endpoint=f"127.0.0.1:{port}"), metadata=host
    )
    for index in range(2):
        bot = stub.RegisterAgent(
            pb.RegisterAgentRequest(name=f"b{index}", kind=pb.AGENT_KIND_BUILTIN, bot="random"), metadata=host
        )
        stub.JoinQueue(pb.JoinQueueRequest(ladder="ep"), metadata=auth_metadata(bot.token))
    return agent
