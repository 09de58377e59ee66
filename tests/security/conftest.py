"""Fixtures of the security tests: real engine and matchmaker processes on a real redis-server,
attacked with only what an anonymous caller or a registered agent has (plus the host token where
a test needs the host's role to set the stage)."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest

from arena.embedded_redis import EmbeddedRedis
from arena.local.stack import PORT_LINE, Proc

from .keepers import ENGINE, MATCHMAKER, Keeper, local_keeper

HOST_TOKEN = "security-tests-host-token-0123456789"


class Service:
    """One service process (``python -m services.X``) on 127.0.0.1:0; ``channel()`` dials it."""

    def __init__(self, module: str, redis_url: str, env: dict[str, str], folder: Path) -> None:
        self.folder = folder
        command = [sys.executable, "-m", module, "--address", "127.0.0.1:0", "--redis-url", redis_url]
        if module == "services.matchmaker":  # its archive in the test's folder, not the working directory
            command += ["--no-forming", "--database-url", f"sqlite:///{folder / 'archive.sqlite3'}"]
        full_env = {"OHELL_HOST_TOKEN": HOST_TOKEN, "PYTHONUNBUFFERED": "1"} | env
        self.proc = Proc(module, command, full_env, folder / f"{module}-{id(self)}.log")
        self.port = int(self.proc.wait_for(PORT_LINE, 30).group(1))
        self.address = f"127.0.0.1:{self.port}"

    def channel(self) -> grpc.Channel:
        return grpc.insecure_channel(self.address)


@pytest.fixture
def start_service(redis_server: EmbeddedRedis) -> Iterator[Callable[..., Service]]:
    """Start ``services.engine`` or ``services.matchmaker`` (API only) on the test's redis-server."""
    folder = Path(tempfile.mkdtemp(prefix="ohell-security-"))
    started: list[Service] = []

    def start(module: str, **env: str) -> Service:
        service = Service(module, redis_server.url, env, folder)
        started.append(service)
        return service

    yield start
    for service in started:
        # thrown away with the test's Redis: SIGKILL, not the graceful stop (0.5-2 s with streams open)
        if service.proc.popen.poll() is None:
            os.killpg(service.proc.popen.pid, signal.SIGKILL)
            service.proc.popen.wait()
        service.proc.stop()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def strangers(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Keeper]]:
    """Another user's listeners where the engine's and the matchmaker's default addresses lead: a
    channel the test's process opens to one of them goes to one of these, on a free port (so the
    test needs neither default port free, and never dials a stack running there)."""
    keepers = {ENGINE: local_keeper(), MATCHMAKER: local_keeper()}

    def led(address: str) -> str:
        keeper = keepers.get(address)
        return f"127.0.0.1:{keeper.listener.getsockname()[1]}" if keeper else address

    sync, aio = grpc.insecure_channel, grpc.aio.insecure_channel
    monkeypatch.setattr(grpc, "insecure_channel", lambda address, *a, **k: sync(led(address), *a, **k))
    monkeypatch.setattr(grpc.aio, "insecure_channel", lambda address, *a, **k: aio(led(address), *a, **k))
    yield list(keepers.values())
    for keeper in keepers.values():
        keeper.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/security/" in str(item.path):
            item.add_marker(pytest.mark.timeout(120))
