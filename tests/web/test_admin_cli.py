"""The host's commands (``ohell ladder ...``, ``ohell agent ...``, ``leaderboard``, ``matches``,
``match show``, ``ladder export``) as a host types them, against the real stack."""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import grpc
import pytest
from starlette.exceptions import StarletteDeprecationWarning
from starlette.requests import Request

from arena.embedded_redis import EmbeddedRedis
from arena.local.stack import Stack, StackConfig
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc
from arena.rpc.auth import auth_metadata
from arena.wire import rules_from_proto
from ohell.errors import OhHellError
from ohell.presets import preset
from services.web.api import Api
from services.web.app import create_app
from services.web.host import COOKIE

from .conftest import HOST_TOKEN, LADDER, Site, wait_until

pytestmark = pytest.mark.slow  # starts the whole stack


def ohell(site: Site | None, *args: str, address: str = "") -> subprocess.CompletedProcess[str]:
    address = address or (site.stack.matchmaker_address if site else "")
    env = os.environ | {"OHELL_HOST_TOKEN": HOST_TOKEN, "COLUMNS": "200"}
    command = [sys.executable, "-m", "arena.cli", *args, "--matchmaker", address]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)


def test_ladders(site: Site) -> None:
    made = ohell(
        site, "ladder", "create", "class", "--seats", "3", "--house-bots", "random", "--option", "hand_sizes=[3]"
    )
    # the rules named as on the web app: a classic ladder of short hands is not "classic"
    assert made.returncode == 0 and "ladder class created: classic, hand_sizes=3 rules, 3 seats" in made.stdout
    listed = ohell(site, "ladder", "list")
    assert "classic, hand_sizes=3" in listed.stdout and LADDER in listed.stdout, listed.stdout
    shown = ohell(site, "ladder", "show", "class")
    assert "ladder class: classic, hand_sizes=3 rules, 3 seats" in shown.stdout
    assert "house bots: random" in shown.stdout and "hand_sizes=[3]" in shown.stdout
    bad = ohell(site, "ladder", "create", "class2", "--seats", "9")
    assert bad.returncode == 2 and "INVALID_ARGUMENT" in bad.stderr and "seats" in bad.stderr
    taken = ohell(site, "ladder", "create", "class")
    assert taken.returncode == 2 and "ALREADY_EXISTS" in taken.stderr
    missing = ohell(site, "ladder", "show", "nope")
    assert missing.returncode == 2 and "NOT_FOUND" in missing.stderr and "nope" in missing.stderr
    paused = ohell(site, "ladder", "pause", "class")
    assert paused.returncode == 0, paused.stdout + paused.stderr
    assert site.stub.ListLadders(pb.ListLaddersRequest()).ladders  # still listed while paused
    assert re.search(r"class .*paused", ohell(site, "ladder", "list").stdout)  # the list said nothing of it
    empty = ohell(site, "leaderboard", "class")  # an empty table of headers before
    assert empty.returncode == 0 and "no agent has played on ladder class yet" in empty.stdout, empty.stdout
    none = ohell(site, "matches", "--ladder", "class", "--running")  # an empty table and "0 of 0" before
    assert none.returncode == 0 and none.stdout.strip() == "no running matches of ladder class", none.stdout
    resumed = ohell(site, "ladder", "resume", "class")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    gone = ohell(site, "ladder", "pause", "nope")
    assert gone.returncode == 2 and "NOT_FOUND" in gone.stderr


def test_ladder_update_changes_the_settings_given_and_keeps_the_others(site: Site) -> None:
    """A ladder could be changed (opened to agents that registered themselves, given house bots, ...)
    only through the raw UpdateLadder RPC, which takes the whole definition."""

    def stored() -> pb.Ladder:
        return site.stub.GetLadder(pb.GetLadderRequest(name="changing")).ladder

    made = ohell(site, "ladder", "create", "changing", "--seats", "3", "--house-bots", "random", "--fill-after", "5")
    assert made.returncode == 0, made.stdout + made.stderr
    assert ohell(site, "ladder", "pause", "changing").returncode == 0
    opened = ohell(site, "ladder", "update", "changing", "--entry", "open", "--option", "hand_sizes=[3,2]")
    assert opened.returncode == 0, opened.stdout + opened.stderr
    lines = opened.stdout.splitlines()
    assert lines[:3] == [
        "ladder changing updated:",
        "  rules: classic -> classic, hand_sizes=3,2",
        "  entry: host (only agents the host registered queue) -> open (agents may register themselves without a"
        " token, and queue here)",
    ], opened.stdout
    ladder = stored()
    assert ladder.entry == pb.LADDER_ENTRY_OPEN and ladder.paused  # pause and resume alone change that
    assert (ladder.seats, list(ladder.house_bots), ladder.house_fill, ladder.fill_after_seconds) == (
        3,
        ["random"],
        True,
        5,
    )
    more = ohell(
        site, "ladder", "update", "changing", "--option", "scoring=squares", "--seats", "4", "--house-bots", "none",
        "--base-window", "20", "--widen-per-second", "0.5",
    )  # fmt: skip
    assert more.returncode == 0 and "  seats: 3 -> 4" in more.stdout, more.stdout + more.stderr
    assert "  house bots: random -> none" in more.stdout and "  base window: 5 -> 20" in more.stdout
    ladder = stored()
    rules = rules_from_proto(ladder.rules)
    assert ladder.rules.preset == "classic" and rules.hand_sizes == (3, 2) and rules.scoring.name.lower() == "squares"
    assert (ladder.seats, list(ladder.house_bots), ladder.house_fill) == (4, [], False)
    assert (ladder.base_window, ladder.widen_per_second, ladder.entry) == (20, 0.5, pb.LADDER_ENTRY_OPEN)
    later = ohell(site, "ladder", "update", "changing", "--fill-after", "3")  # kept for house bots given later
    assert later.returncode == 0 and "  fill after: 5 s -> 3 s" in later.stdout, later.stdout + later.stderr
    same = ohell(site, "ladder", "update", "changing", "--entry", "open")
    assert same.returncode == 0 and same.stdout.strip() == "ladder changing unchanged: it has these settings already"
    replaced = ohell(site, "ladder", "update", "changing", "--rules", "classic")  # a preset: its options dropped
    assert replaced.returncode == 0 and "  rules: classic, " in replaced.stdout and "-> classic\n" in replaced.stdout
    assert rules_from_proto(stored().rules) == preset("classic")
    for args, code, says in (
        ((), "", "nothing to change: give one or more of --rules, --option, --seats"),
        (("--seats", "9"), "INVALID_ARGUMENT", "seats"),
        (("--option", "nosuch=1"), "", "--option: "),
        (("--house-bots", "nosuch"), "INVALID_ARGUMENT", "house_bots"),
        (("--base-window", "0"), "", "0 is not a number above 0"),
    ):
        refused = ohell(site, "ladder", "update", "changing", *args)
        assert refused.returncode == 2 and code in refused.stderr and says in refused.stderr, (args, refused.stderr)
    assert stored().seats == 4  # none of them changed it
    missing = ohell(site, "ladder", "update", "nope", "--entry", "open")
    assert missing.returncode == 2 and "NOT_FOUND" in missing.stderr and "nope" in missing.stderr


def test_agents_and_tokens(site: Site, tmp_path: Path) -> None:
    one = ohell(site, "agent", "register", "solo")
    assert one.returncode == 0 and "agent solo registered as a" in one.stdout
    token = one.stdout.split("token ", 1)[1].split()[0]
    agent_id = one.stdout.split("registered as ", 1)[1].split()[0]
    reply = site.stub.SetAgentVersion(
        pb.SetAgentVersionRequest(agent_id=agent_id, version="1"), metadata=auth_metadata(token)
    )
    assert reply.agent.name == "solo"

    names = tmp_path / "class.csv"
    names.write_text("name,email\nann,a@x\nben,b@x\ncy,c@x\n")
    tokens = tmp_path / "tokens.csv"
    imported = ohell(site, "agent", "import", str(names), "--tokens", str(tokens))
    assert imported.returncode == 0 and "3 of 3 agents registered" in imported.stdout, imported.stdout
    rows = list(csv.DictReader(tokens.open()))
    assert [r["name"] for r in rows] == ["ann", "ben", "cy"] and tokens.stat().st_mode & 0o777 == 0o600
    again = ohell(site, "agent", "import", str(names), "--tokens", str(tokens))
    assert again.returncode == 2 and "exists" in again.stderr  # never overwrites tokens
    names.write_text("dee\nben\n")
    partly = ohell(site, "agent", "import", str(names), "--tokens", str(tmp_path / "t2.csv"))
    assert partly.returncode == 1 and "1 of 2 agents registered" in partly.stdout and "ben" in partly.stdout
    names.write_text("eve\neve\n")
    twice = ohell(site, "agent", "import", str(names), "--tokens", str(tmp_path / "t3.csv"))
    assert twice.returncode == 2 and "'eve' appears more than once" in twice.stderr
    bad_name = ohell(site, "agent", "register", "no spaces")
    assert bad_name.returncode == 2 and "INVALID_ARGUMENT" in bad_name.stderr


def test_built_in_agents_registered_with_join_play_on_the_ladder(site: Site, tmp_path: Path) -> None:
    """No host command queued a registered built-in agent: it never played until something called
    JoinQueue with its token."""
    made = ohell(site, "ladder", "create", "joined", "--seats", "3", "--option", "hand_sizes=[2]")
    assert made.returncode == 0, made.stdout + made.stderr
    one = ohell(site, "agent", "register", "jo-1", "--kind", "builtin", "--bot", "random", "--join", "joined")
    assert one.returncode == 0 and "agent jo-1 queued on ladder joined" in one.stdout, one.stdout + one.stderr
    names = tmp_path / "bots.csv"
    names.write_text("jo-2\njo-3\n")
    tokens = str(tmp_path / "tokens.csv")
    two = ohell(
        site,
        "agent",
        "import",
        str(names),
        "--tokens",
        tokens,
        "--kind",
        "builtin",
        "--bot",
        "heuristic",
        "--join",
        "joined",
    )
    assert two.returncode == 0 and "agent jo-3 queued on ladder joined" in two.stdout, two.stdout + two.stderr

    def played() -> set[str]:
        board = site.stub.GetLeaderboard(pb.GetLeaderboardRequest(ladder="joined"))
        return {standing.name for standing in board.standings if standing.games > 0}

    wait_until(lambda: played() == {"jo-1", "jo-2", "jo-3"}, 60, "the joined agents' first match")
    connected = ohell(site, "agent", "register", "jo-4", "--join", "joined")
    assert connected.returncode == 2 and "--join is for built-in agents" in connected.stderr
    endpoint = ohell(
        site, "agent", "register", "jo-6", "--kind", "endpoint", "--endpoint", "127.0.0.1:7", "--join", "joined"
    )
    assert endpoint.returncode == 2 and "ohell bot run --serve HOST:PORT" in endpoint.stderr, endpoint.stderr
    missing = ohell(site, "agent", "register", "jo-5", "--kind", "builtin", "--bot", "random", "--join", "nope")
    assert missing.returncode == 2 and "--join nope: no such ladder" in missing.stderr, missing.stderr
    listed = ohell(site, "agent", "list")
    assert "jo-1" in listed.stdout and not {"jo-4", "jo-5", "jo-6"} & set(listed.stdout.split())


def test_tokens_appended_to_a_file_others_may_read_make_it_private(site: Site, tmp_path: Path) -> None:
    """A tokens file the host made itself (mode 644 under the usual umask) kept its mode when
    ``register``/``rotate --tokens`` appended a token: the secret was readable by every local user."""
    tokens = tmp_path / "mine.csv"
    tokens.write_text("name,agent_id,token\n")
    tokens.chmod(0o644)
    done = ohell(site, "agent", "register", "private", "--tokens", str(tokens))
    assert done.returncode == 0, done.stdout + done.stderr
    assert next(csv.DictReader(tokens.open()))["name"] == "private" and tokens.stat().st_mode & 0o777 == 0o600


def test_tokens_file_lines_end_without_a_carriage_return(tmp_path: Path) -> None:
    """tokens.csv had CSV's CRLF line ends: a token cut from it by a shell (``cut -d, -f3``) kept
    the carriage return, and the Node example bot (grpc-js) and the Python SDK refused to send it."""
    from arena.local.admin_commands import _tokens_file

    tokens = tmp_path / "tokens.csv"
    with _tokens_file(str(tokens), append=False) as save:
        save(["alice", "a1", "token-1"])
    with _tokens_file(str(tokens), append=True) as save:
        save(["bob", "a2", "token-2"])
    assert tokens.read_bytes() == b"name,agent_id,token\nalice,a1,token-1\nbob,a2,token-2\n"


def test_a_tokens_file_that_cannot_be_made_is_said_before_any_agent_is_registered(tmp_path: Path) -> None:
    """The file was opened after the last agent was registered: a --tokens in a missing folder lost
    every token issued. Nothing is registered now; a new file no row went into is not left behind."""
    from types import SimpleNamespace
    from typing import Any, cast

    from arena.local.admin_commands import agent_import

    class Matchmaker:
        calls = 0

        def call(self, method: str, **fields: Any) -> Any:
            Matchmaker.calls += 1
            if fields["name"] == "bob":
                raise OhHellError("name: 'bob' is taken")
            return SimpleNamespace(agent=SimpleNamespace(name=fields["name"], agent_id="a1"), token="token-1")

    names = tmp_path / "names.csv"
    names.write_text("ann\nbob\n")
    nowhere = tmp_path / "missing" / "tokens.csv"
    args = SimpleNamespace(csv=str(names), tokens=str(nowhere), kind="connected", bot="", join=None)
    with pytest.raises(OhHellError, match=f"^--tokens {nowhere}: No such file or directory$"):
        agent_import(cast(Any, Matchmaker()), cast(Any, args))
    assert Matchmaker.calls == 0
    args.csv, args.tokens = str(names), str(tmp_path / "tokens.csv")
    names.write_text("bob\n")
    assert agent_import(cast(Any, Matchmaker()), cast(Any, args)) == 1  # bob refused: no token issued
    assert not (tmp_path / "tokens.csv").exists()


def test_a_refused_register_leaves_no_tokens_file_it_made(tmp_path: Path) -> None:
    """``ohell agent register bob --tokens new.csv`` refused by the matchmaker left an empty new.csv, which
    ``ohell agent import --tokens new.csv`` then refused as a file that exists; one the host had is kept."""
    from types import SimpleNamespace
    from typing import Any, cast

    from arena.local.admin_commands import agent_register

    class Refusing:
        def call(self, method: str, **fields: Any) -> Any:
            raise OhHellError(f"name: {fields['name']!r} is taken")

    new, kept = tmp_path / "new.csv", tmp_path / "kept.csv"
    kept.write_text("")
    for tokens in (new, kept):
        args = SimpleNamespace(name="bob", kind="connected", bot="", endpoint="", tokens=str(tokens), join=None)
        with pytest.raises(OhHellError, match="is taken"):
            agent_register(cast(Any, Refusing()), cast(Any, args))
    assert not new.exists() and kept.read_text() == ""


def test_a_revoked_built_in_agent_is_queued_again_with_its_new_token(site: Site) -> None:
    """Revoking drops a built-in agent's tickets; rotating gave it a token but queued it nowhere, and
    JoinQueue takes that token: no host command could put it back on its ladder."""
    assert ohell(site, "ladder", "create", "rejoin", "--seats", "3").returncode == 0  # no house bots: it waits

    def waiting() -> int:
        return site.stub.GetLadder(pb.GetLadderRequest(name="rejoin")).tickets_waiting

    made = ohell(site, "agent", "register", "rj-1", "--kind", "builtin", "--bot", "random", "--join", "rejoin")
    agent_id = made.stdout.split("registered as ", 1)[1].split()[0]
    assert waiting() == 1 and ohell(site, "agent", "revoke", agent_id).returncode == 0 and waiting() == 0
    back = ohell(site, "agent", "rotate", agent_id, "--join", "rejoin")
    assert back.returncode == 0 and "agent rj-1 queued on ladder rejoin" in back.stdout, back.stdout + back.stderr
    assert back.stdout.startswith("token ") and waiting() == 1
    connected = ohell(site, "agent", "register", "rj-2").stdout.split("registered as ", 1)[1].split()[0]
    refused = ohell(site, "agent", "rotate", connected, "--join", "rejoin")
    assert refused.returncode == 2 and "--join is for built-in agents" in refused.stderr, refused.stderr


def test_token_rotation_revocation_listing_and_deletion(site: Site, tmp_path: Path) -> None:
    one = ohell(site, "agent", "register", "rota")
    old = one.stdout.split("token ", 1)[1].split()[0]
    agent_id = one.stdout.split("registered as ", 1)[1].split()[0]
    tokens = tmp_path / "rotated.csv"
    rotated = ohell(site, "agent", "rotate", agent_id, "--tokens", str(tokens))
    assert rotated.returncode == 0 and "the old one no longer works" in rotated.stdout, rotated.stdout
    new = next(csv.DictReader(tokens.open()))["token"]

    def set_version(token: str) -> object:
        request = pb.SetAgentVersionRequest(agent_id=agent_id, version="2")
        return site.stub.SetAgentVersion(request, metadata=auth_metadata(token))

    import grpc

    with pytest.raises(grpc.RpcError) as refused:
        set_version(old)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    set_version(new)
    assert ohell(site, "agent", "revoke", agent_id).returncode == 0
    with pytest.raises(grpc.RpcError) as revoked:
        set_version(new)
    assert revoked.value.code() == grpc.StatusCode.UNAUTHENTICATED
    listed = ohell(site, "agent", "list")
    assert listed.returncode == 0 and agent_id in listed.stdout and "rota" in listed.stdout
    assert ohell(site, "agent", "rotate", "a-none").returncode == 2
    assert ohell(site, "ladder", "create", "short_lived").returncode == 0
    missing = ohell(site, "ladder", "delete", "no_such_ladder")  # said before --yes is asked for
    assert missing.returncode == 2 and "ladder delete no_such_ladder: no such ladder" in missing.stderr
    assert "--yes" not in missing.stderr
    unasked = ohell(site, "ladder", "delete", "short_lived")  # no terminal to ask: refused
    assert unasked.returncode == 2 and "--yes" in unasked.stderr
    assert ohell(site, "ladder", "delete", "short_lived", "--yes").returncode == 0
    assert "short_lived" not in {ladder.name for ladder in site.stub.ListLadders(pb.ListLaddersRequest()).ladders}


def test_results(site: Site, tmp_path: Path) -> None:
    board = ohell(site, "leaderboard", LADDER)
    assert board.returncode == 0 and all(name in board.stdout for name in site.agents.values())
    listed = ohell(site, "matches", "--ladder", LADDER, "--limit", "3")
    newest = site.stub.ListMatches(pb.ListMatchesRequest(ladder=LADDER, page_size=3)).matches
    assert len(newest) == 3 and all(m.match_id in listed.stdout for m in newest)
    assert all(name in listed.stdout for name in newest[0].agent_names)  # seats by name, as on the leaderboard
    assert newest[0].agent_ids[0] not in listed.stdout
    counted = re.search(r"3 of (\d+) finished matches", listed.stdout)
    assert counted and int(counted.group(1)) >= 8, listed.stdout
    assert ohell(site, "matches").returncode == 2
    agent_id, name = next(iter(site.agents.items()))
    assert ohell(site, "matches", "--agent", agent_id).returncode == 0
    # a name for the id listed 'no finished matches of agent NAME' and exit 0, as if the agent had played none
    named = ohell(site, "matches", "--agent", name)
    assert named.returncode == 2 and not named.stdout, named.stdout
    assert f"error: no agent has the id '{name}': --agent takes an agent's id" in named.stderr, named.stderr
    match_id = newest[0].match_id
    # the id a tournament's agent is told its game by was 'no match' and no more
    game = ohell(site, "match", "show", "final/r1t0/d1/r2")
    assert game.returncode == 2 and game.stderr == (
        "error: GetMatch: NOT_FOUND: match_id: no match 'final/r1t0/d1/r2': that is the id of a game of tournament"
        " final, not of a ladder match: its record is in `ohell tournament export final --format json` once the"
        " tournament has ended (its records, under 'r1t0/d1/r2')\n"
    ), game.stderr
    missing = ohell(site, "match", "show", f"{LADDER}-999999")
    assert missing.returncode == 2 and "tournament" not in missing.stderr and "NOT_FOUND" in missing.stderr
    shown = ohell(site, "match", "show", match_id, "--referee", "--tricks", "--out", str(tmp_path / "m.json"))
    assert shown.returncode == 0 and "referee: valid" in shown.stdout and "trick 1:" in shown.stdout, shown.stdout
    record = json.loads((tmp_path / "m.json").read_text())
    total_line = next(line for line in shown.stdout.splitlines() if line.strip("│ ").startswith("total"))
    assert [int(cell) for cell in total_line.split("│")[4:-1]] == record["totals"]
    out = tmp_path / "out"
    exported = ohell(site, "ladder", "export", LADDER, "--out", str(out), "--limit", "8")
    assert exported.returncode == 0, exported.stdout
    records = [json.loads(line) for line in (out / "matches.jsonl").read_text().splitlines()]
    newest8 = [m.match_id for m in site.stub.ListMatches(pb.ListMatchesRequest(ladder=LADDER, page_size=8)).matches]
    assert [r["match_id"] for r in records] == newest8[::-1]  # the newest eight, oldest first
    results = list(csv.DictReader((out / "results.csv").open()))
    assert [int(r["points"]) for r in results[: len(records[0]["seats"])]] == records[0]["totals"]
    board = list(csv.DictReader((out / "leaderboard.csv").open()))
    assert {row["name"] for row in board} >= set(site.agents.values())
    assert ohell(site, "ladder", "export", "no-such", "--out", str(tmp_path / "x")).returncode == 2
    assert not (tmp_path / "x").exists()  # an unknown ladder makes no folder


def test_unreachable_matchmaker_is_named() -> None:
    result = ohell(None, "ladder", "list", address="127.0.0.1:1")
    assert result.returncode == 2 and "cannot reach the matchmaker at 127.0.0.1:1" in result.stderr


def test_list_matches_state_is_checked(site: Site) -> None:
    import grpc

    with pytest.raises(grpc.RpcError) as caught:
        site.stub.ListMatches(pb.ListMatchesRequest(ladder=LADDER, state="bogus"))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "state" in caught.value.details()
    assert not site.stub.ListMatches(pb.ListMatchesRequest(ladder=LADDER, state="running")).matches  # all done


def test_a_matchmaker_without_its_redis_is_told_from_an_unreachable_one(
    redis_server: EmbeddedRedis, tmp_path: Path
) -> None:
    """A matchmaker that has lost its Redis answers UNAVAILABLE too: the CLI said it could not reach
    the matchmaker and asked whether `ohell up` ran. Now one line says the matchmaker is up and why
    it cannot serve, with no traceback."""
    config = StackConfig(
        redis_url=redis_server.url, builtin_workers=0, remote_worker=False, log_dir=str(tmp_path), host_token=HOST_TOKEN
    )
    stack = Stack(config).start()
    try:
        redis_server.stop(kill=True)
        result = ohell(None, "ladder", "list", address=stack.matchmaker_address)
    finally:
        stack.cleanup(graceful=False)
    assert result.returncode == 2, result.stdout + result.stderr
    line = f"ListLadders: UNAVAILABLE: the matchmaker at {stack.matchmaker_address} is up but says: "
    assert line in result.stderr and "Redis" in result.stderr and "cannot reach the matchmaker" not in result.stderr
    assert "Traceback" not in result.stdout + result.stderr


def test_the_matches_in_play_are_listed_of_every_ladder_when_no_ladder_or_agent_is_given(
    redis_server: EmbeddedRedis, tmp_path: Path
) -> None:
    """`ohell matches --running` refused to run without --ladder or --agent, though ListMatches lists
    every ladder's matches in play (one page, by id; reading them costs the matchmaker what --agent
    alone does). A stack with no workers: the tables formed stay in play, queued for none."""
    config = StackConfig(
        redis_url=redis_server.url,
        builtin_workers=0,
        remote_worker=False,
        engine=False,
        log_dir=str(tmp_path),
        host_token=HOST_TOKEN,
        matchmaker_args=("--tick", "0.02"),
    )
    stack = Stack(config).start()
    try:
        channel = grpc.insecure_channel(stack.matchmaker_address)
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        host = auth_metadata(HOST_TOKEN)
        for ladder in ("one", "two"):
            stub.CreateLadder(pb.CreateLadderRequest(ladder=pb.Ladder(name=ladder, seats=3)), metadata=host)
            for index in range(3):
                request = pb.RegisterAgentRequest(
                    name=f"player-{ladder}{index}", kind=pb.AGENT_KIND_BUILTIN, bot="random"
                )
                reply = stub.RegisterAgent(request, metadata=host)
                join = pb.JoinQueueRequest(ladder=ladder, agent_id=reply.agent.agent_id)
                stub.JoinQueue(join, metadata=auth_metadata(reply.token))

        def in_play() -> list[str]:
            return [m.match_id for m in stub.ListMatches(pb.ListMatchesRequest(state="running")).matches]

        wait_until(lambda: len(in_play()) == 2, 60, "a table formed on each ladder")
        playing = in_play()
        listed = ohell(None, "matches", "--running", address=stack.matchmaker_address)
        finished = ohell(None, "matches", address=stack.matchmaker_address)
        channel.close()
    finally:
        stack.cleanup(graceful=False)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert sorted(in_play_ids(listed.stdout, ("one", "two"))) == sorted(playing), listed.stdout
    assert listed.stdout.rstrip().endswith("2 of 2 running matches"), listed.stdout
    assert finished.returncode == 2 and "finished matches are listed of a ladder or an agent" in finished.stderr
    assert "--running alone lists the matches in play on every ladder" in finished.stderr


def in_play_ids(text: str, ladders: tuple[str, ...]) -> list[str]:
    """The match ids of ``ladders`` in a table ``ohell matches`` printed: one of each, else fails."""
    found = [re.findall(rf"\b{ladder}-\d+\b", text) for ladder in ladders]
    assert all(len(ids) == 1 for ids in found), (found, text)
    return [ids[0] for ids in found]


def test_host_page_refuses_to_queue_on_a_missing_ladder_before_registering_anyone(site: Site) -> None:
    """The host page's 'queue on ladder' with a ladder deleted since the page was drawn registered
    every agent, said 'registered 2 agent(s), queued on ladder gone' and listed each agent as failed."""
    with warnings.catch_warnings():  # Starlette would have httpx2 for its test client
        warnings.simplefilter("ignore", StarletteDeprecationWarning)
        from starlette.testclient import TestClient

    app = create_app(Api(site.stack.matchmaker_address, read_token=HOST_TOKEN), host_token=HOST_TOKEN)
    with TestClient(app) as client:
        client.post("/host/login", data={"token": HOST_TOKEN}, follow_redirects=False)
        session = next(cookie.value for cookie in client.cookies.jar if cookie.name == COOKIE)
        request = Request({"type": "http", "headers": [(b"cookie", f"{COOKIE}={session}".encode())]})
        csrf = str(app.state.host.csrf(request))
        names = "gone-1\ngone-2"
        form = {"csrf": csrf, "names": names, "kind": "builtin", "bot": "random", "join": "gone"}
        answer = client.post("/host/agents", data=form)
    assert "nobody registered" in answer.text and "queued on ladder gone" not in answer.text, answer.text[-3000:]
    listed = site.stub.ListAgents(pb.ListAgentsRequest(), metadata=auth_metadata(HOST_TOKEN))
    assert not {"gone-1", "gone-2"} & {agent.name for agent in listed.agents}


def test_a_kind_without_what_it_needs_is_refused_before_any_call(tmp_path: Path) -> None:
    """`agent import --kind endpoint` has no way to give each agent its address, and `--kind builtin`
    without --bot: the matchmaker refused every row, one error line per name."""
    names = tmp_path / "names.csv"
    names.write_text("name\nx\ny\n")
    tokens = str(tmp_path / "tokens.csv")
    nowhere = "127.0.0.1:1"  # refused before any call: no stack needed
    for args, says in (
        (
            ("agent", "import", str(names), "--tokens", tokens, "--kind", "endpoint"),
            "ohell agent register NAME --kind endpoint --endpoint HOST:PORT",
        ),
        (
            ("agent", "import", str(names), "--tokens", tokens, "--kind", "builtin"),
            "--kind builtin needs --bot: heuristic, random, strong",
        ),
        (("agent", "register", "z", "--kind", "endpoint"), "--kind endpoint needs the address"),
    ):
        done = ohell(None, *args, address=nowhere)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and says in done.stderr, done.stderr


@pytest.mark.parametrize("where", ["ohell.toml", "environment"])
def test_the_host_commands_read_the_host_token_file_ohell_up_was_given(
    where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ohell up`` with host_token_file in ohell.toml (or $OHELL_HOST_TOKEN_FILE) serves that file's
    token; the host commands run beside it looked only in its data folder: "no host-token", every
    admin call UNAUTHENTICATED. A file not there reads as no token (public reads go on)."""
    from arena.local.admin_client import host_token

    for name in list(os.environ):
        if name.startswith("OHELL_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))  # the default data folder: empty
    monkeypatch.chdir(tmp_path)
    kept = tmp_path / "secret" / "host.token"
    kept.parent.mkdir()
    kept.write_text("h" * 43 + "\n")
    if where == "environment":
        monkeypatch.setenv("OHELL_HOST_TOKEN_FILE", str(kept))
    else:
        (tmp_path / "ohell.toml").write_text(f'data_dir = "{tmp_path / "data"}"\nhost_token_file = "{kept}"\n')
        (tmp_path / "ohell.toml").chmod(0o600)
    args = argparse.Namespace(host_token_file=None)
    assert host_token(args) == ("h" * 43, str(kept))
    kept.unlink()
    token, said = host_token(args)
    assert token == "" and str(kept) in said
