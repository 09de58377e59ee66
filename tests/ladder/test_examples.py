"""The bot author's path end to end on a whole stack (redis-server, matchmaker, engine, Celery
workers): each example bot (Python SDK, Node.js from the protos) enters a ladder by itself and
plays at least 3 matches; a bot that raises on every fifth decision finishes its matches; a wrong
token or an unknown ladder ends an example with one readable line."""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.ladder.redis_store import RedisStore
from arena.local.stack import Stack
from arena.proto.ohell.v1 import matchmaker_pb2, matchmaker_pb2_grpc
from arena.sdk import run_on_ladder_async
from ohell.referee import referee

from ..buggy_bots import RaisesEveryFifth
from ..needs import missing, offline
from .helpers import builtin_ladder, leave_all, register_connected, wait_until

pytestmark = pytest.mark.slow  # starts whole stacks of processes

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "examples" / "node"
MATCHES = 3


def node_ready() -> None:
    """Node.js and the example's packages, installed once: a skip saying why where node, npm or the
    npm registry is missing (a failure in CI, ``tests.needs``). pytest-xdist's workers share
    examples/node: each waits on one lock file and looks again under it, so one runs npm install
    and no worker starts the example on a half-written node_modules."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        missing("node and npm are not installed", "apt-get install nodejs npm (.ci/run does)")
    lock_path = Path(tempfile.gettempdir()) / f"ohell-npm-{hashlib.sha256(bytes(NODE_DIR)).hexdigest()[:16]}.lock"
    with lock_path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if all((NODE_DIR / "node_modules" / "@grpc" / name).exists() for name in ("grpc-js", "proto-loader")):
            return
        result = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=NODE_DIR,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if result.returncode != 0:
            offline(f"npm install failed (registry unreachable?): {result.stderr[-300:]}", "the npm registry in reach")


def python_example(stack: Stack, token: str, ladder: str) -> list[str]:
    """The command with the token in its arguments (the examples' older form: ps shows it)."""
    return [
        sys.executable,
        str(ROOT / "examples" / "python_bot.py"),
        stack.engine_address,
        stack.matchmaker_address,
        token,
        ladder,
    ]


def node_example(stack: Stack, token: str, ladder: str, *extra: str) -> list[str]:
    return ["node", str(NODE_DIR / "bot.js"), stack.engine_address, stack.matchmaker_address, token, ladder, *extra]


def token_in_env(command: list[str], token: str) -> tuple[list[str], dict[str, str]]:
    """The command as the docs give it: the token in $OHELL_AGENT_TOKEN, not among its arguments."""
    return command[:4] + command[5:], os.environ | {"OHELL_AGENT_TOKEN": token}


def without_env_token() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "OHELL_AGENT_TOKEN"}


def finished_matches(stack: Stack, agent_id: str) -> list[str]:
    """The agent's finished matches, through the matchmaker (archived or not yet)."""
    with grpc.insecure_channel(stack.matchmaker_address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        reply = stub.ListMatches(matchmaker_pb2.ListMatchesRequest(agent_id=agent_id, page_size=500))
    return [m.match_id for m in reply.matches]


def record_of(stack: Stack, match_id: str) -> dict[str, Any]:
    with grpc.insecure_channel(stack.matchmaker_address) as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        reply = stub.GetMatch(matchmaker_pb2.GetMatchRequest(match_id=match_id))
    return dict(json.loads(reply.record_json))


def seat_of(record: dict[str, Any], agent_id: str) -> int:
    return next(i for i, seat in enumerate(record["seats"]) if seat.get("agent_id") == agent_id)


def test_example_bots_and_a_buggy_bot_enter_a_ladder_and_play(
    make_stack: Callable[..., Stack], store: RedisStore, tmp_path: Path
) -> None:
    node_ready()
    stack = make_stack(engine=True)
    builtins = builtin_ladder(store, "kit", bots=("heuristic", "random") * 3)
    python_id, python_token = register_connected(stack, "python-example")
    node_id, node_token = register_connected(stack, "node-example")
    buggy_id, buggy_token = register_connected(stack, "buggy")
    logs = {name: (tmp_path / f"{name}.log").open("w+") for name in ("python", "node")}
    commands = {
        "python": token_in_env(python_example(stack, python_token, "kit"), python_token),
        "node": token_in_env(node_example(stack, node_token, "kit"), node_token),
    }
    assert not any(python_token in part or node_token in part for command, _ in commands.values() for part in command)
    processes = {
        name: subprocess.Popen(command, env=env, stdout=logs[name], stderr=subprocess.STDOUT)
        for name, (command, env) in commands.items()
    }
    buggy = RaisesEveryFifth()
    try:
        session = asyncio.run(
            asyncio.wait_for(
                run_on_ladder_async(
                    buggy, stack.engine_address, stack.matchmaker_address, buggy_token, "kit", matches=MATCHES
                ),
                180,
            )
        )
        for agent in (python_id, node_id):
            wait_until(lambda agent=agent: len(finished_matches(stack, agent)) >= MATCHES, 180, f"{agent} to play")
        assert all(process.poll() is None for process in processes.values()), "an example exited early"
    finally:
        for process in processes.values():
            process.terminate()
            process.wait(10)
        leave_all(store, "kit", builtins)
    for name, agent in (("python", python_id), ("node", node_id)):
        for match_id in finished_matches(stack, agent):
            record = record_of(stack, match_id)
            assert referee(record).valid and record["complete"]
            seat = seat_of(record, agent)
            # the example's own answers are never wrong; a stream dropped on a starved machine (the
            # gateway bounds its writes) may cost DISCONNECTED/TIMEOUT faults, never a forfeit
            wrong = [f for f in record["faults"] if f["seat"] == seat and f["kind"] not in ("DISCONNECTED", "TIMEOUT")]
            assert wrong == [] and seat not in record["forfeited"], (name, record["faults"])
        logs[name].seek(0)
        text = logs[name].read()
        assert "queued on ladder" in text and "seated at match" in text and "ended: totals" in text, text[-2000:]
    assert session.matches_ended >= MATCHES and session.errors == buggy.decisions // 5 > 0
    faults = []
    for match_id in finished_matches(stack, buggy_id):
        record = record_of(stack, match_id)
        seat = seat_of(record, buggy_id)
        assert record["complete"] and seat not in record["forfeited"]
        faults += [f for f in record["faults"] if f["seat"] == seat]
    assert {f["kind"] for f in faults} == {"BOT_ERROR"} and len(faults) == session.errors


def test_examples_print_one_line_for_a_wrong_token_or_an_unknown_ladder(
    make_stack: Callable[..., Stack], store: RedisStore
) -> None:
    node_ready()
    stack = make_stack(engine=True)
    builtin_ladder(store, "kit", bots=("random",) * 3)
    _, token = register_connected(stack, "errors")
    cases = {
        "wrong token": ("not-a-token", "kit", "refused your token"),
        "unknown ladder": (token, "nope", "no ladder 'nope'"),
    }
    for case, (given, ladder, expected) in cases.items():
        for command in (python_example(stack, given, ladder), node_example(stack, given, ladder)):
            result = subprocess.run(command, capture_output=True, text=True, timeout=60, env=without_env_token())
            lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
            assert result.returncode == 2, (case, command[1], result.stderr[-1500:])
            assert len(lines) == 1 and expected in lines[0] and "Traceback" not in result.stderr, (case, result.stderr)


def test_with_the_env_token_a_token_among_the_arguments_is_refused_with_the_usage() -> None:
    """Before, node took the token given third as the ladder name (and sent it to the matchmaker) when
    $OHELL_AGENT_TOKEN was set too; the Python example already exits with its usage there."""
    node_ready()
    env = os.environ | {"OHELL_AGENT_TOKEN": "env-token"}
    addresses = ["127.0.0.1:1", "127.0.0.1:2"]
    commands = {
        "python": [sys.executable, str(ROOT / "examples" / "python_bot.py"), *addresses, "argument-token", "kit"],
        "node": ["node", str(NODE_DIR / "bot.js"), *addresses, "argument-token", "kit"],
        "node, the env token again": ["node", str(NODE_DIR / "bot.js"), *addresses, "env-token", "3"],
    }
    for case, command in commands.items():
        result = subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)
        assert result.returncode != 0 and "usage" in result.stderr.lower(), (case, result.stderr[-1500:])


def test_a_row_of_the_tokens_file_given_as_the_token_is_refused_naming_the_last_field() -> None:
    """Both examples sent a row of the host's tokens file (name,agent_id,token) as the token and
    ended with the service's 'refused your token', where ``ohell bot run`` says to give the last field."""
    node_ready()
    row = "alice,a7,tok-123"
    addresses = ["127.0.0.1:1", "127.0.0.1:2"]  # nothing listens: the check comes before any call
    for script in ([sys.executable, str(ROOT / "examples" / "python_bot.py")], ["node", str(NODE_DIR / "bot.js")]):
        for given, arguments, env in (
            ("$OHELL_AGENT_TOKEN", [*addresses, "kit"], os.environ | {"OHELL_AGENT_TOKEN": row}),
            ("the token argument", [*addresses, row, "kit"], without_env_token()),
        ):
            result = subprocess.run([*script, *arguments], capture_output=True, text=True, timeout=60, env=env)
            assert result.returncode == 2 and result.stderr == (
                f"error: {given} is a row of the host's tokens file (name,agent_id,token):"
                " give the token alone, the row's last field\n"
            ), (script[0], given, result.stderr[-1500:])


def test_node_without_the_protos_says_where_it_looked_in_one_line(tmp_path: Path) -> None:
    """bot.js copied out of the repository, or $OHELL_PROTOS at a wrong folder, ended with protobufjs's
    stack trace ("ENOENT: no such file or directory, open 'ohell/v1/gateway.proto'"), naming no folder."""
    node_ready()
    copied = tmp_path / "my" / "bot" / "bot.js"  # the default: two folders up, protos/
    copied.parent.mkdir(parents=True)
    shutil.copy(NODE_DIR / "bot.js", copied)
    env = {k: v for k, v in without_env_token().items() if k != "OHELL_PROTOS"}  # a token set: the usage instead
    env |= {"NODE_PATH": str(NODE_DIR / "node_modules")}
    arguments = ["127.0.0.1:1", "127.0.0.1:2", "a-token", "kit"]
    cases = {
        "copied": (copied, env, f"in {tmp_path / 'protos'} (the default, as no $OHELL_PROTOS is set)"),
        "env": (NODE_DIR / "bot.js", env | {"OHELL_PROTOS": str(tmp_path)}, f"in {tmp_path} ($OHELL_PROTOS)"),
    }
    for case, (script, case_env, where) in cases.items():
        result = subprocess.run(
            ["node", str(script), *arguments], capture_output=True, text=True, timeout=60, env=case_env
        )
        assert result.returncode == 2 and len(result.stderr.splitlines()) == 1, (case, result.stderr[-1500:])
        assert result.stderr.startswith("error: cannot find ohell/v1/gateway.proto"), (case, result.stderr)
        assert where in result.stderr and "set OHELL_PROTOS to the folder" in result.stderr, (case, result.stderr)
