"""Listeners that keep whatever they are sent (another user's, at the default addresses or planted in
a data folder), and the CLI run in the test's process, where the ``strangers`` fixture (conftest.py)
leads its channels to the default addresses to such listeners on free ports: the real ports may be a
running stack's, never the tests'."""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path
from typing import Any

import pytest

from arena.cli import main
from arena.local.config import SETTINGS

ENGINE = str(SETTINGS["engine_address"].default)
MATCHMAKER = str(SETTINGS["matchmaker_address"].default)
SETTINGS_FRAME = bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])  # an empty HTTP/2 SETTINGS: the client then sends its call


class Keeper:
    """A listener that answers as an HTTP/2 server would at first, so that a client sends its call,
    and keeps whatever it is sent."""

    def __init__(self, listener: socket.socket) -> None:
        self.listener = listener
        self.listener.listen()
        self.received = bytearray()
        self.connections = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.listener.accept()
            except OSError:  # closed
                return
            self.connections += 1
            with connection:
                connection.settimeout(1.0)
                connection.sendall(SETTINGS_FRAME)
                try:
                    while data := connection.recv(65536):
                        self.received += data
                except OSError:
                    pass

    def close(self) -> None:
        with contextlib.suppress(OSError):  # wakes the accept() the thread waits in (close alone does not)
            self.listener.shutdown(socket.SHUT_RDWR)
        self.listener.close()
        self.thread.join(5)
        assert not self.thread.is_alive(), "the listener's thread did not end"


class PlantedSocket(Keeper):
    """What another user leaves in a data folder they may write in: a unix socket that keeps what it is sent."""

    def __init__(self, path: Path) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        super().__init__(listener)


def local_keeper() -> Keeper:
    """A Keeper on a free port of 127.0.0.1."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    return Keeper(listener)


def ohell_in_process(
    monkeypatch: pytest.MonkeyPatch, capsys: Any, data: Path, *args: str, env: dict[str, str]
) -> tuple[int, str, str]:
    """``ohell ARGS`` beside ``ohell up`` on ``data``, given no address (none in the environment either),
    with ``env`` set: its exit status and what it wrote to stdout and to stderr."""
    for name in ("OHELL_ENGINE_ADDRESS", "OHELL_MATCHMAKER_ADDRESS", "OHELL_HOST_TOKEN", "OHELL_AGENT_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OHELL_DATA_DIR", str(data))
    monkeypatch.setenv("COLUMNS", "200")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    capsys.readouterr()
    try:
        status = main(list(args))
    except SystemExit as exit:  # the SDK's blocking calls exit on an AgentError
        status = int(exit.code or 0)
    captured = capsys.readouterr()
    return status, captured.out, captured.err
