"""The bot commands reach ``ohell up``'s engine service and matchmaker through the unix sockets in its
data folder (mode 700) when given no address, as the host commands reach the matchmaker. Until 3 Dec
2026 ``ohell bot run``, ``ohell bot connect`` and ``ohell challenge`` sent the agent's token to whatever
listened at 127.0.0.1:50051 and :50052, and while the stack was down any user of the machine could
listen there.

The commands run in the test's process, so that what they dial at those two addresses reaches the
test's listeners on free ports instead (the real ports may be a running stack's, never the tests')."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.cli import main
from arena.local.stack import Stack, StackConfig
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc, rules_pb2
from arena.rpc.auth import auth_metadata
from arena.rpc.unix_socket import leave_closed

from .keepers import Keeper, PlantedSocket, local_keeper, ohell_in_process

pytestmark = pytest.mark.slow  # bot processes, a stack

TOKEN = "an-agent-token-of-the-authors-0123"


def author_env(data: Path) -> dict[str, str]:
    """A bot author's environment beside ``ohell up``: the agent token in $OHELL_AGENT_TOKEN, no address."""
    env = {k: v for k, v in os.environ.items() if k not in ("OHELL_ENGINE_ADDRESS", "OHELL_MATCHMAKER_ADDRESS")}
    return env | {"OHELL_DATA_DIR": str(data), "OHELL_AGENT_TOKEN": TOKEN, "COLUMNS": "200"}


def ohell(monkeypatch: pytest.MonkeyPatch, capsys: Any, data: Path, *args: str, token: str = TOKEN) -> tuple[int, str]:
    """``ohell ARGS`` as a bot author types it beside ``ohell up``: the agent token in $OHELL_AGENT_TOKEN,
    no address in the environment. Its exit status and what it wrote to stderr."""
    status, _, errors = ohell_in_process(monkeypatch, capsys, data, *args, env={"OHELL_AGENT_TOKEN": token})
    return status, errors


def says_down(done: tuple[int, str], path: Path) -> bool:
    status, errors = done
    return status == 2 and f"the local stack is not running: nothing answers on unix:{path}" in " ".join(errors.split())


def test_a_stack_that_is_down_gets_no_agent_token_sent_to_its_tcp_ports(
    strangers: list[Keeper], monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    for name in ("engine.sock", "matchmaker.sock"):  # what a stopped stack leaves (the next test stops one)
        leave_closed(str(data / name))
    seats = ("--seat", "builtin:random", "--seat", "builtin:random", "--seat", "builtin:random")
    done = {
        "matchmaker.sock": [
            ohell(monkeypatch, capsys, data, "bot", "run", "random", "--ladder", "main", "--matches", "1"),
            ohell(monkeypatch, capsys, data, "bot", "run", "random", "--ladder", "main", "--serve", "127.0.0.1:0"),
        ],
        "engine.sock": [
            ohell(monkeypatch, capsys, data, "bot", "connect", "--bot", "random"),
            ohell(monkeypatch, capsys, data, "challenge", *seats),
        ],
    }
    for stranger in strangers:
        assert (stranger.connections, bytes(stranger.received)) == (0, b""), bytes(stranger.received)
    for name, results in done.items():
        for result in results:
            assert says_down(result, data / name), result


def test_a_socket_in_a_folder_others_may_write_in_is_not_dialled(
    strangers: list[Keeper], monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path
) -> None:
    """$OHELL_DATA_DIR at a folder others may write in: a socket there may be anyone's."""
    data = tmp_path / "data"
    data.mkdir()
    data.chmod(0o777)
    planted = PlantedSocket(data / "engine.sock")
    try:
        status, errors = ohell(monkeypatch, capsys, data, "bot", "connect", "--bot", "random")
    finally:
        planted.close()
    for keeper in (planted, *strangers):
        assert (keeper.connections, bytes(keeper.received)) == (0, b"")
    assert status == 2 and f"others may write in {data}: the bot commands do not dial" in errors, errors


def test_an_address_given_is_dialled_as_it_is(tmp_path: Path) -> None:
    """--engine and --matchmaker: the sockets in the data folder do not matter (a guard: so it was before)."""
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    for name in ("engine.sock", "matchmaker.sock"):
        leave_closed(str(data / name))
    engine, matchmaker = local_keeper(), local_keeper()
    given = [f"127.0.0.1:{keeper.listener.getsockname()[1]}" for keeper in (engine, matchmaker)]
    run = [sys.executable, "-m", "arena.cli", "bot", "run", "random", "--ladder", "main", "--matchmaker", given[1]]
    # the ticket waits for the gateway: an endpoint (--serve) queues at once
    commands = [[*run, "--engine", given[0]], [*run, "--serve", "127.0.0.1:0"]]
    calls = [(engine, b"/ohell.v1.AgentGatewayService/Connect"), (matchmaker, b"/ohell.v1.MatchmakerService/")]
    bots = [subprocess.Popen(command, env=author_env(data), stdout=subprocess.DEVNULL) for command in commands]
    try:
        deadline = time.monotonic() + 30
        while not all(call in keeper.received for keeper, call in calls):
            assert time.monotonic() < deadline, "the addresses given were not dialled"
            time.sleep(0.05)
    finally:
        for bot in bots:
            bot.kill()
            bot.wait(10)
        for keeper in (engine, matchmaker):
            keeper.close()


def test_bot_run_plays_over_the_stacks_sockets(
    strangers: list[Keeper], monkeypatch: pytest.MonkeyPatch, capsys: Any, caplog: Any, tmp_path: Path
) -> None:
    """A match played by ``ohell bot run`` given no address: over the sockets, whose calls
    (JoinQueue, WatchQueue, the gateway's Connect) each service serves there as on TCP."""
    data = tmp_path / "data"
    stack = Stack(StackConfig(log_dir=str(data), builtin_workers=0)).start()  # the remote worker plays
    try:
        with grpc.insecure_channel(stack.matchmaker_address) as channel:
            stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
            host = auth_metadata(stack.host_token)
            ladder = pb.Ladder(name="main", rules=rules_pb2.Rules(hand_sizes=[2]), seats=3, base_window=50)
            stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=host)
            request = pb.RegisterAgentRequest(name="mine", kind=pb.AGENT_KIND_CONNECTED)
            agent = stub.RegisterAgent(request, metadata=host)
            for index in range(2):
                request = pb.RegisterAgentRequest(name=f"b{index}", kind=pb.AGENT_KIND_BUILTIN, bot="random")
                bot = stub.RegisterAgent(request, metadata=host)
                stub.JoinQueue(pb.JoinQueueRequest(ladder="main"), metadata=auth_metadata(bot.token))
        caplog.set_level(logging.INFO, logger="arena.sdk")
        args = ("bot", "run", "random", "--ladder", "main", "--matches", "1")
        status, errors = ohell(monkeypatch, capsys, data, *args, token=agent.token)
        logged = caplog.text
        assert status == 0, errors + logged + stack.log_tails()
        assert f"connected to the gateway at unix:{data / 'engine.sock'}" in logged, logged
        assert f"at the matchmaker unix:{data / 'matchmaker.sock'}" in logged, logged
        assert "main-1 ended" in logged, logged
        assert stack.engine_socket == data / "engine.sock"
    finally:
        stack.cleanup()  # stopped as Ctrl-C stops it: each service leaves a closed socket
    for stranger in strangers:
        assert (stranger.connections, bytes(stranger.received)) == (0, b"")
    assert (data / "engine.sock").is_socket()
    down = ohell(monkeypatch, capsys, data, "bot", "connect", "--bot", "random")
    assert says_down(down, data / "engine.sock"), down


def test_the_data_folder_of_ohell_toml_is_found_as_the_host_commands_find_it(
    strangers: list[Keeper], monkeypatch: pytest.MonkeyPatch, capsys: Any, tmp_path: Path
) -> None:
    """Beside ``ohell up`` run with ``data_dir`` in ./ohell.toml (no $OHELL_DATA_DIR), the host commands
    found its sockets, and the bot commands looked in the default data folder and dialled 127.0.0.1:50051
    (`cannot reach the gateway at 127.0.0.1:50051 after 10 s`)."""
    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    for name in ("engine.sock", "matchmaker.sock"):  # a stopped stack's: said to be down, not dialled
        leave_closed(str(data / name))
    config = tmp_path / "ohell.toml"
    config.write_text(f'data_dir = "{data}"\n')
    config.chmod(0o600)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "elsewhere"))  # the default folder: nothing there
    for name in ("OHELL_DATA_DIR", "OHELL_CONFIG", "OHELL_ENGINE_ADDRESS", "OHELL_MATCHMAKER_ADDRESS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OHELL_AGENT_TOKEN", TOKEN)
    seats = ("--seat", "builtin:random", "--seat", "builtin:random", "--seat", "builtin:random")
    for name, args in (
        ("matchmaker.sock", ["bot", "run", "random", "--ladder", "main", "--matches", "1"]),
        ("engine.sock", ["bot", "connect", "--bot", "random"]),
        ("engine.sock", ["challenge", *seats]),
    ):
        capsys.readouterr()
        try:
            status = main(args)
        except SystemExit as exit:  # the SDK's blocking calls exit on an AgentError
            status = int(exit.code or 0)
        assert says_down((status, capsys.readouterr().err), data / name), args
    for stranger in strangers:
        assert (stranger.connections, bytes(stranger.received)) == (0, b"")
