"""The host commands reach ``ohell up``'s matchmaker through a unix socket in its data folder (mode 700),
not through its TCP port. Until 3 Dec 2026 a host command sent the host token to whatever listened at
127.0.0.1:50052, and while the host's stack was down any user of the machine could listen there."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from arena.local.config import SETTINGS
from arena.local.stack import Stack, StackConfig
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc

pytestmark = pytest.mark.slow  # starts the stack twice

DEFAULT = str(SETTINGS["matchmaker_address"].default)
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
        self.listener.close()
        self.thread.join(5)


class Stranger(Keeper):
    """Another user's listener on the matchmaker's default address."""

    def __init__(self, address: str) -> None:
        host, _, port = address.rpartition(":")
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # not SO_REUSEPORT: never shared
        try:
            listener.bind((host, int(port)))
        except OSError as error:
            listener.close()
            pytest.skip(f"{address} is taken by another process ({error.strerror}): the stranger cannot listen there")
        super().__init__(listener)


@pytest.fixture
def stranger() -> Iterator[Stranger]:
    listening = Stranger(DEFAULT)
    yield listening
    listening.close()


def start(data: Path) -> Stack:
    """``ohell up``'s processes that a host command talks to, on any free ports (not the default)."""
    return Stack(StackConfig(log_dir=str(data), engine=False, builtin_workers=0, remote_worker=False)).start()


def host_command(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``ohell ARGS`` as the host types it beside ``ohell up``: no --matchmaker, no address or token in
    the environment (the token from the data folder's host-token)."""
    env = {k: v for k, v in os.environ.items() if k not in ("OHELL_MATCHMAKER_ADDRESS", "OHELL_HOST_TOKEN")}
    env |= {"OHELL_DATA_DIR": str(data), "COLUMNS": "200"}
    command = [sys.executable, "-m", "arena.cli", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)


def says_down(result: subprocess.CompletedProcess[str], data: Path) -> bool:
    line = f"the local stack is not running: nothing answers on unix:{data / 'matchmaker.sock'}"
    return result.returncode == 2 and line in result.stderr


def test_the_host_token_goes_through_the_socket_never_to_the_default_port(stranger: Stranger, tmp_path: Path) -> None:
    data = tmp_path / "data"
    stack = start(data)
    try:
        made = host_command(data, "ladder", "create", "by_socket", "--seats", "3")
        assert stranger.connections == 0, f"the stranger was sent {bytes(stranger.received)!r}"
        assert made.returncode == 0, made.stdout + made.stderr
        listed = host_command(data, "agent", "list")  # a host read: the token is sent
        assert listed.returncode == 0, listed.stdout + listed.stderr
    finally:
        stack.stop(graceful=False)  # killed: the socket file stays, nothing listens on it
    assert (data / "matchmaker.sock").is_socket()
    down = host_command(data, "ladder", "list")
    assert says_down(down, data), down.stdout + down.stderr

    stack = start(data)  # on the same folder: the socket the killed run left is replaced
    try:
        listed = host_command(data, "ladder", "list")
        assert listed.returncode == 0 and "by_socket" in listed.stdout, listed.stdout + listed.stderr
        # without a token: the call is rate-limited as its peer's, a unix one
        with grpc.insecure_channel(f"unix:{stack.matchmaker_socket}") as channel:
            stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
            assert stub.ListLadders(pb.ListLaddersRequest(), timeout=10).ladders
    finally:
        stack.cleanup()  # stopped as Ctrl-C stops it: gRPC removes its socket, a closed one is left
    assert (data / "matchmaker.sock").is_socket()
    down = host_command(data, "agent", "list")
    assert says_down(down, data), down.stdout + down.stderr

    assert (stranger.connections, bytes(stranger.received)) == (0, b"")


class PlantedSocket(Keeper):
    """What another user leaves in a data folder they may write in: a unix socket that keeps what it is sent."""

    def __init__(self, path: Path) -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        super().__init__(listener)


def test_a_socket_in_a_folder_others_may_write_in_is_not_dialled(tmp_path: Path) -> None:
    """$OHELL_DATA_DIR at a folder others may write in (under /tmp, say), or a link to it another user
    owns: the host command dialled any socket there and sent it $OHELL_HOST_TOKEN, or the data folder's
    host-token, which could be a link to a file of the host's that the listener then read."""
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o777)
    secret = tmp_path / "secret"
    secret.write_text("a-secret-of-the-hosts-0123\n")
    (data / "host-token").symlink_to(secret)
    planted = PlantedSocket(data / "matchmaker.sock")
    try:
        without = host_command(data, "agent", "list")
        env_token = dict(os.environ, OHELL_HOST_TOKEN="the-real-host-token-0123")
        command = [sys.executable, "-m", "arena.cli", "agent", "list"]
        env_token |= {"OHELL_DATA_DIR": str(data), "COLUMNS": "200"}
        env_token.pop("OHELL_MATCHMAKER_ADDRESS", None)
        with_env = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env_token)
    finally:
        planted.close()
    assert b"secret-of-the-hosts" not in planted.received and b"real-host-token" not in planted.received
    assert planted.received == b""
    for done in (without, with_env):
        assert done.returncode == 2 and f"others may write in {data}: the host commands do not dial" in done.stderr, (
            done.stderr
        )


def test_the_stack_replaces_a_link_where_it_keeps_a_secret(tmp_path: Path) -> None:
    """host-token and redis-url were opened for writing through whatever was at their names: a link
    left by someone who could write in the folder before it was made 700 had the host token written
    into (and the rest of) the file it named cut off, a FIFO held ``ohell up`` for ever."""
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    victim = tmp_path / "notes"
    victim.write_text("the host's own file\n")
    (data / "host-token").symlink_to(victim)
    stack = Stack(StackConfig(log_dir=str(data), host_token="a-host-token-long-enough-0123"))
    assert victim.read_text() == "the host's own file\n"
    token = data / "host-token"
    assert not token.is_symlink() and token.read_text() == "a-host-token-long-enough-0123\n"
    assert token.stat().st_mode & 0o777 == 0o600 and stack.host_token_path == token
    assert not list(data.glob(".host-token*"))  # no temporary file left
