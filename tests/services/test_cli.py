"""The engine's commands: ``ohell challenge`` against a running ``ohell engine``."""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any, cast

import grpc
import pytest
from svc_helpers import ROOT, EngineProcess

from ohell.errors import OhHellError
from ohell.referee import referee


def ohell(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args], cwd=ROOT, capture_output=True, text=True, timeout=60
    )


def test_challenge_command_plays_and_writes_the_record(engine_process, make_agent, tmp_path: Path) -> None:
    _, token = make_agent("cli")
    out = tmp_path / "record.json"
    done = ohell(
        "challenge",
        "--address",
        engine_process.address,
        "--token",
        token,
        "--rules",
        "online",
        "--seat",
        "builtin:heuristic",
        "--seat",
        "builtin:random",
        "--seat",
        "builtin:random",
        "--seed",
        "5",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "fault(s)" in done.stdout and "winners" in done.stdout
    record = json.loads(out.read_text())
    assert record["preset"] == "online" and record["seed"] == 5 and referee(record).valid


@pytest.mark.slow  # over a second: the quick subset stays quick
def test_challenge_takes_the_agent_token_from_the_environment_as_bot_run_does(engine_process, make_agent) -> None:
    """``ohell challenge`` required --token (on the command line, where ``ps`` shows it) though
    ``ohell bot run`` takes $OHELL_AGENT_TOKEN; its --seed help said "default 0", not that 0 draws one."""
    _, token = make_agent("env")
    seats = ("--seat", "builtin:random", "--seat", "builtin:random", "--seat", "builtin:random")
    command = [sys.executable, "-m", "arena.cli", "challenge", "--address", engine_process.address, *seats]
    env = {k: v for k, v in os.environ.items() if k != "OHELL_AGENT_TOKEN"}
    played = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env | {"OHELL_AGENT_TOKEN": token})
    assert played.returncode == 0 and "winners" in played.stdout, played.stderr
    missing = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
    assert missing.returncode == 2 and "error: give --token-file, set OHELL_AGENT_TOKEN" in missing.stderr
    assert "a secret one the engine draws" in " ".join(ohell("challenge", "--help").stdout.split())


def test_a_row_of_the_hosts_tokens_file_given_for_the_token_is_named(
    engine_process, make_agent, tmp_path: Path
) -> None:
    """A student handed a row of the host's tokens file (name,agent_id,token) and giving it whole was
    told 'the gateway refused your token ...: use the token the host gave you', which it was."""
    agent_id, token = make_agent("row")
    row = tmp_path / "my-token.csv"
    row.write_text(f"row,{agent_id},{token}\n")
    address = ("--address", engine_process.address)
    by_file = ohell("bot", "connect", "random", *address, "--token-file", str(row))
    assert by_file.returncode == 2 and token not in by_file.stderr, by_file.stderr
    assert by_file.stderr == (
        f"error: --token-file {row} holds a row of comma-separated fields, as the host's tokens file has them"
        " (name,agent_id,token): give the token alone, the row's last field\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OHELL_AGENT_TOKEN"} | {"OHELL_AGENT_TOKEN": row.read_text()}
    command = [sys.executable, "-m", "arena.cli", "challenge", *address, "--seat", f"agent:{agent_id}"]
    by_env = subprocess.run([*command, *("--seat", "builtin:random") * 2], capture_output=True, text=True, env=env)
    assert by_env.returncode == 2 and by_env.stderr.startswith("error: $OHELL_AGENT_TOKEN holds a row"), by_env.stderr


def test_the_whole_tokens_file_given_for_the_token_is_named(tmp_path: Path) -> None:
    """`ohell agent register NAME --tokens my-token.csv` (the host's, or an agent registering itself)
    writes a header and a row; given as --token-file it was "holds more than one line of printable
    ASCII", naming neither the file's kind nor which field is the token."""
    from arena.sdk.arguments import agent_token

    tokens = tmp_path / "my-token.csv"
    tokens.write_text("name,agent_id,token\ndave,a21,NOW1jVMeuNmedSTUJYZfqjc1eokCAnRa\n")
    lines, empty = tmp_path / "two-lines", tmp_path / "empty"
    lines.write_text("one\ntwo\n")
    empty.write_text("\n")
    said = {}
    for path in (tokens, lines, empty):
        with pytest.raises(OhHellError) as refused:
            agent_token(argparse.Namespace(token=None, token_file=str(path)))
        said[path] = str(refused.value)
    assert said[tokens] == (
        f"--token-file {tokens} is a tokens file (name,agent_id,token, a row per agent): give a file holding"
        " your token alone, the last field of your agent's row"
    )
    assert "NOW1j" not in said[tokens]
    assert (
        said[lines]
        == f"--token-file {lines}: holds more than one line of printable ASCII (it should hold the token alone)"
    )
    assert said[empty] == f"--token-file {empty} is empty"
    (tmp_path / "mine").write_text("NOW1jVMeuNmedSTUJYZfqjc1eokCAnRa\n")
    assert (
        agent_token(argparse.Namespace(token=None, token_file=str(tmp_path / "mine")))
        == "NOW1jVMeuNmedSTUJYZfqjc1eokCAnRa"
    )


@pytest.mark.slow  # starts an engine of its own
def test_tokens_come_from_files_off_the_command_line(shared_redis_server, tmp_path: Path) -> None:
    """``ohell engine --agent ID=TOKEN`` and ``--token`` put a token in the process list (``ps``), which
    every user of the machine reads: ``--agents-file`` and ``--token-file`` keep it off."""
    token = secrets.token_urlsafe(24)
    agents, mine = tmp_path / "agents", tmp_path / "token"
    agents.write_text(f"# the engine's own agents\n\nfile-agent={token}\n")
    mine.write_text(token + "\n")
    seats = ("--seat", "builtin:random") * 3
    engine = EngineProcess(shared_redis_server.url, "--agents-file", str(agents))
    try:
        played = ohell("challenge", "--address", engine.address, "--token-file", str(mine), *seats)
        assert played.returncode == 0 and "winners" in played.stdout, played.stderr
    finally:
        assert engine.stop() == 0
    missing = ohell("challenge", "--address", engine.address, "--token-file", str(tmp_path / "none"), *seats)
    assert missing.returncode == 2 and f"--token-file {tmp_path / 'none'}: No such file" in missing.stderr
    both = ohell("bot", "run", "random", "--ladder", "l", "--token", "t", "--token-file", str(mine))
    assert both.returncode == 2 and "not allowed with argument --token" in both.stderr, both.stderr
    agents.write_text(f"file-agent={token}\n{token}\n")
    refused = ohell("engine", "--address", "127.0.0.1:0", "--agents-file", str(agents))
    assert refused.returncode == 2 and "line 2 must look like AGENT_ID=TOKEN" in refused.stderr, refused.stderr
    assert token not in refused.stderr  # the line is named by its number, never shown


def test_challenge_command_reports_refusals(engine_process) -> None:
    done = ohell(
        "challenge",
        "--address",
        engine_process.address,
        "--token",
        "wrong",
        "--seat",
        "builtin:random",
        "--seat",
        "builtin:random",
        "--seat",
        "builtin:random",
    )
    assert done.returncode == 2
    assert "UNAUTHENTICATED" in done.stderr
    bad_seat = ohell("challenge", "--address", engine_process.address, "--token", "x", "--seat", "robot:1")
    message = " ".join(bad_seat.stderr.split())  # rich wraps long lines
    assert bad_seat.returncode == 2
    assert "'robot:1' must be builtin:NAME, agent:AGENT_ID or endpoint:HOST:PORT" in message


def test_an_out_path_that_cannot_be_written_is_one_line_before_the_match(engine_process, make_agent) -> None:
    """Before, the match was played and its record lost: a FileNotFoundError traceback at the end."""
    _, token = make_agent("cli-out")
    seats = ["--seat", "builtin:random"] * 3
    done = ohell(
        "challenge", "--address", engine_process.address, "--token", token, *seats, "--out", "/nonexistent/r.json"
    )
    assert done.returncode == 2 and "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert "--out" in done.stderr and "/nonexistent" in done.stderr and "totals" not in done.stdout


@pytest.mark.slow
def test_serving_on_an_address_it_cannot_listen_on_is_one_line(engine_process) -> None:
    """``ohell bot connect --serve``: a port taken (here the engine's) or an address that is not
    HOST:PORT ended in a ConfigError traceback."""
    for address in (engine_process.address, "nonsense", "127.0.0.1:99999"):
        done = ohell("bot", "connect", "--serve", "--address", address)
        assert done.returncode == 2 and "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
        last = done.stderr.strip().splitlines()[-1]  # after gRPC's own log line, for a port taken
        assert last.startswith("error:") and address in last


def test_counts_a_bot_command_cannot_use_are_usage_errors_naming_the_flag() -> None:
    """``--matches 0`` or below was taken (the agent queued, then left on its first event); ``--games 0``
    checked nothing."""
    for args, refusal in (
        (("bot", "run", "random", "--ladder", "main", "--matches", "0"), "--matches: 0 is not a whole number from 1"),
        (("bot", "check", "random", "--games", "-1"), "--games: -1 is not a whole number from 1"),
    ):
        done = ohell(*args)
        assert done.returncode == 2 and refusal in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_bot_run_refuses_an_engine_address_it_would_not_use() -> None:
    """``ohell bot run --serve``: the platform dials the endpoint, so the --engine given with it was
    ignored without a word (the bot served, and the author wondered why it never reached that engine)."""
    args = ("bot", "run", "random", "--ladder", "main", "--matchmaker", "127.0.0.1:1", "--token", "t")
    done = ohell(*args, "--serve", "127.0.0.1:0", "--engine", "127.0.0.1:50061")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "--engine: not allowed with argument --serve" in done.stderr, done.stderr


@pytest.mark.slow  # over a second: the quick subset stays quick
def test_command_help_shows_the_defaults() -> None:
    """``--help`` showed ``--address ADDRESS`` with no word of the address used without it."""
    for args, shown in (
        (("challenge", "--help"), ("127.0.0.1:50051", "default classic", "default 600.0")),
        (("bot", "connect", "--help"), ("127.0.0.1:50051", "default heuristic")),
        # ohell bot run's addresses, ohell ladder create's rules, seats and wait had none either
        # and given none, the stack's sockets when their files are in the data folder
        (
            ("bot", "run", "--help"),
            ("socket engine.sock", "else 127.0.0.1:50051)", "else 127.0.0.1:50052)", "(default 0)"),
        ),
        (("ladder", "create", "--help"), ("default classic", "(default 4)", "(default 10)")),
        (("demo", "--help"), ("(default 150)", "default classic", "3..7 (default 4)")),
        (("bot", "check", "--help"), ("every game; default 8)", "(default 1)")),
        # the rebuild found ohell up's Redis URL through data_dir in ohell.toml too, and did not say so
        (
            ("ladder", "rebuild", "--help"),
            ("redis-url in its data folder: $OHELL_DATA_DIR, else data_dir in ohell.toml",),
        ),
        (("engine", "--help"), ("(default 127.0.0.1:50051)", "(default 1000)", "(default 10000)", "(default 10)")),
        (("matchmaker", "--help"), ("(default 127.0.0.1:50052)", "else redis://127.0.0.1:6379/0")),
        (
            ("tournament", "create", "--help"),
            ("(3-7; default 3)", "default round-robin", "(default 1)", "rotation (default 2)", "(default 30)"),
        ),
    ):
        done = ohell(*args)
        text = " ".join(done.stdout.split())  # argparse wraps the help at the terminal's width
        assert done.returncode == 0 and all(default in text for default in shown), done.stdout


@pytest.mark.slow  # a bot process and a match: over a second
def test_bot_connect_plays_a_bot_file_online_on_the_gateway(engine_process, make_agent, tmp_path: Path) -> None:
    """A connected entrant of a tournament must be online on the gateway when its table starts, but
    `ohell bot connect` took only built-in bots ('unknown bot mybot.py:MyBot') and `ohell bot run`
    needs a ladder: a bot author had no command to bring a bot file online."""
    agent_id, token = make_agent("file")
    command = [sys.executable, "-m", "arena.cli", "bot", "connect", "--bot", "examples/python_bot.py:HighCards"]
    command += ["--address", engine_process.address, "--token", token]
    online = subprocess.Popen(command, cwd=ROOT, stderr=subprocess.PIPE, text=True)
    try:
        assert online.stderr is not None
        greeting = online.stderr.readline()  # names the agent the token is (it did not: a bot file's author guessed)
        assert f"connected to the gateway at {engine_process.address} as agent {agent_id}" in greeting, greeting
        seats = ("--seat", f"agent:{agent_id}", "--seat", "builtin:random", "--seat", "builtin:random")
        out = tmp_path / "record.json"
        played = ohell("challenge", "--address", engine_process.address, "--token", token, *seats, "--out", str(out))
        assert played.returncode == 0 and "winners" in played.stdout, played.stdout + played.stderr
        record = json.loads(out.read_text())
        assert record["seats"][0]["kind"] == "connected" and record["faults"] == [], record["faults"]
    finally:
        online.terminate()
        online.wait(10)


def test_one_token_given_to_two_agents_is_refused_naming_both_places(tmp_path: Path) -> None:
    """The later agent took the token silently: whoever held it played as that agent."""
    from services.engine.__main__ import _tokens

    agents = tmp_path / "agents"
    agents.write_text("alice=shared-secret\nbob=own-secret\ncarol=shared-secret\n")
    assert _tokens(["alice=shared-secret"] * 2) == {"shared-secret": "alice"}  # the same pair twice is no clash
    with pytest.raises(OhHellError) as refused:
        _tokens([], str(agents))
    message = str(refused.value)
    assert f"--agents-file {agents}: line 3" in message and "--agents-file" in message and "line 1" in message
    assert "'carol'" in message and "'alice'" in message and "shared-secret" not in message
    assert _tokens(["alice=a", "alice=b"]) == {"a": "alice", "b": "alice"}  # an agent may have two tokens
    for pairs in (["alice=s3cret-token", "bob=s3cret-token"], ["alice=a", "s3cret-token"]):
        with pytest.raises(OhHellError) as refused:  # an --agent is named by its number, never its text
            _tokens(pairs)
        assert "--agent #2" in str(refused.value) and "s3cret-token" not in str(refused.value)


def test_bot_connect_takes_the_bot_as_bot_run_does(capsys: pytest.CaptureFixture[str]) -> None:
    """``ohell bot run BOT`` takes the bot first; ``ohell bot connect BOT`` ended with argparse's
    "unrecognized arguments: BOT" under the usage of every ``ohell`` command: only --bot was read."""
    from arena.cli import main

    nowhere = ["--address", "127.0.0.1:1"]  # every case is refused before dialling
    for args, said in (
        (["nobot"], "error: BOT: unknown bot 'nobot'; built-in bots: heuristic, random, strong"),
        (["--bot", "nobot"], "error: --bot: unknown bot 'nobot'"),
        (["random", "--bot", "strong"], "error: give the bot once: random or --bot strong"),
        (
            ["--serve", "0.0.0.0:7000"],
            "error: ohell bot connect --serve listens on --address: --serve --address 0.0.0.0:7000",
        ),
    ):
        assert main(["bot", "connect", *args, *nowhere]) == 2
        assert capsys.readouterr().err.startswith(said), args


def test_an_argument_a_command_does_not_take_is_refused_under_its_own_usage(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``ohell ladder rebuild class`` (its ladder was --ladder only) was refused as "ohell: error:
    unrecognized arguments: class" under the usage of every ohell command, which shows none of
    rebuild's own options. (It takes the name so now: ``ladder show class extra`` is the example.)"""
    from arena.cli import main

    for argv, command in ((["ladder", "show", "class", "extra"], "ladder show"), (["rules", "extra"], "rules")):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        err = capsys.readouterr().err
        assert exited.value.code == 2 and err.startswith(f"usage: ohell {command} "), err
        assert err.endswith(f"ohell {command}: error: unrecognized arguments: {argv[-1]}\n"), err


def test_an_import_stopped_by_ctrl_c_keeps_the_tokens_already_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C during a long import (up to 5000 names) lost every token given before it: they were
    written once the last name was registered, and those agents then had no token anyone knew."""
    from types import SimpleNamespace

    from arena.local.admin_commands import agent_import

    class Matchmaker:
        def __init__(self) -> None:
            self.given = 0
            self.channel, self.address = grpc.insecure_channel("127.0.0.1:1"), "127.0.0.1:1"  # never dialled

        def call(self, method: str, **fields: Any) -> Any:
            if self.given == 2:
                raise KeyboardInterrupt
            self.given += 1
            agent = SimpleNamespace(name=fields["name"], agent_id=f"a{self.given}")
            return SimpleNamespace(agent=agent, token=f"token-{self.given}")

    names, tokens = tmp_path / "names.csv", tmp_path / "tokens.csv"
    names.write_text("ann\nbob\ncat\ndan\n")
    args = argparse.Namespace(csv=str(names), tokens=str(tokens), kind="connected", bot="", join=None)
    try:
        code = agent_import(cast(Any, Matchmaker()), args)
    except KeyboardInterrupt:  # raised, the import would say neither the tokens saved nor the names left
        pytest.fail("Ctrl-C escaped agent import")
    assert code == 1  # it ends as a lost matchmaker does: said, not raised
    assert tokens.read_text().splitlines() == ["name,agent_id,token", "ann,a1,token-1", "bob,a2,token-2"]
    said = " ".join(capsys.readouterr().out.split())
    assert f"2 of 4 agents registered; tokens in {tokens}" in said, said
    assert "not registered cat, dan: stopped (Ctrl-C; cat may be registered without its token)" in said, said


def test_an_import_whose_matchmaker_is_lost_before_any_agent_keeps_the_refusals_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The matchmaker lost after it refused the first names, before any agent was registered: the
    import raised the Unreachable error alone, and why those names were refused was never said."""
    from arena.local.admin_client import CallError, Unreachable
    from arena.local.admin_commands import agent_import

    class Matchmaker:
        def call(self, method: str, **fields: Any) -> Any:
            if fields["name"] == "ann":
                raise CallError("ALREADY_EXISTS: name: 'ann' is taken", "ALREADY_EXISTS")
            raise Unreachable("cannot reach the matchmaker at 127.0.0.1:1")

    names, tokens = tmp_path / "names.csv", tmp_path / "tokens.csv"
    names.write_text("ann\nbob\ncat\n")
    args = argparse.Namespace(csv=str(names), tokens=str(tokens), kind="connected", bot="", join=None)
    assert agent_import(cast(Any, Matchmaker()), args) == 1
    said = " ".join(capsys.readouterr().out.split())
    assert "none registered" in said, said
    assert "not registered ann: ALREADY_EXISTS: name: 'ann' is taken" in said, said
    assert "not registered bob, cat: cannot reach the matchmaker at 127.0.0.1:1" in said, said
    assert not tokens.exists()  # made for the import, removed with no token in it


def test_an_import_of_agents_that_play_their_own_bot_refuses_a_bot_before_registering_any(tmp_path: Path) -> None:
    """``ohell agent import names.csv --kind connected --bot random`` registered each agent and dropped
    the bot; the matchmaker now refuses such a bot, so the command says it once, before any call."""
    from arena.local.admin_commands import agent_import

    names = tmp_path / "names.csv"
    names.write_text("ann\n")
    args = argparse.Namespace(csv=str(names), tokens=str(tmp_path / "t.csv"), kind="connected", bot="random", join=None)
    with pytest.raises(OhHellError, match="^--bot is for --kind builtin only: a connected agent plays its own bot$"):
        agent_import(cast(Any, None), args)  # no matchmaker: refused before the first call


def test_bot_connect_serves_no_tokenless_endpoint_to_other_machines_unless_told() -> None:
    """``ohell bot connect --serve --address 0.0.0.0:PORT`` with no token served anyone who dialled it."""
    done = ohell("bot", "connect", "--serve", "--address", "0.0.0.0:0")
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "error: serving on 0.0.0.0:0 with no token" in done.stderr and "--open-to-anyone" in done.stderr
    done = ohell("bot", "connect", "--open-to-anyone")
    assert done.returncode == 2 and "--open-to-anyone is for an endpoint (--serve)" in done.stderr, done.stderr
