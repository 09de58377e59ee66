"""The host commands reach ``ohell up``'s matchmaker through a unix socket in its data folder (mode 700),
not through its TCP port. Until 3 Dec 2026 a host command sent the host token to whatever listened at
127.0.0.1:50052, and while the host's stack was down any user of the machine could listen there.

The main test runs the host commands in its own process, where the ``strangers`` fixture leads the
default addresses to listeners on free ports: it needs neither 50051 nor 50052 free, so never skips."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.local.stack import Stack, StackConfig
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc

from .keepers import Keeper, PlantedSocket, ohell_in_process

pytestmark = pytest.mark.slow  # starts the stack twice


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


def says_down(result: tuple[int, str, str], data: Path) -> bool:
    status, _, errors = result
    line = f"the local stack is not running: nothing answers on unix:{data / 'matchmaker.sock'}"
    return status == 2 and line in " ".join(errors.split())


def test_the_host_token_goes_through_the_socket_never_to_the_default_port(
    strangers: list[Keeper], monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path
) -> None:
    """The host commands run in the test's process, where the default addresses lead to the strangers."""
    data = tmp_path / "data"

    def host(*args: str) -> tuple[int, str, str]:
        """``ohell ARGS`` as the host types it beside ``ohell up``: the token from the data folder's host-token."""
        return ohell_in_process(monkeypatch, capsys, data, *args, env={})

    stack = start(data)
    try:
        made = host("ladder", "create", "by_socket", "--seats", "3")
        assert [(s.connections, bytes(s.received)) for s in strangers] == [(0, b"")] * 2, "a stranger was dialled"
        assert made[0] == 0, made
        listed = host("agent", "list")  # a host read: the token is sent
        assert listed[0] == 0, listed
    finally:
        stack.stop(graceful=False)  # killed: the socket file stays, nothing listens on it
    assert (data / "matchmaker.sock").is_socket()
    down = host("ladder", "list")
    assert says_down(down, data), down

    stack = start(data)  # on the same folder: the socket the killed run left is replaced
    try:
        listed = host("ladder", "list")
        assert listed[0] == 0 and "by_socket" in listed[1], listed
        # without a token: the call is rate-limited as its peer's, a unix one
        with grpc.insecure_channel(f"unix:{stack.matchmaker_socket}") as channel:
            stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
            assert stub.ListLadders(pb.ListLaddersRequest(), timeout=10).ladders
    finally:
        stack.cleanup()  # stopped as Ctrl-C stops it: gRPC removes its socket, a closed one is left
    assert (data / "matchmaker.sock").is_socket()
    down = host("agent", "list")
    assert says_down(down, data), down

    assert [(s.connections, bytes(s.received)) for s in strangers] == [(0, b"")] * 2


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
