"""The matchmaker's gRPC API on a real server process: status codes, auth, queue streams."""

from __future__ import annotations

import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from arena.embedded_redis import EmbeddedRedis
from arena.ladder.model import Ladder
from arena.ladder.redis_store import RedisStore
from arena.ladder.store import StoreError
from arena.local.stack import PORT_LINE, Proc
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc, rules_pb2
from arena.proto.ohell.v1 import tournament_pb2 as tpb
from arena.rpc.auth import auth_metadata
from ohell.bots import BOT_FACTORIES
from services.matchmaker.base import naming_field

from ..ladder.helpers import wait_until

Stub = matchmaker_pb2_grpc.MatchmakerServiceStub
HOST_TOKEN = "test-host-token-0123456789"
HOST = auth_metadata(HOST_TOKEN)  # administration (registering agents, creating ladders) needs it


@pytest.fixture
def matchmaker_address(redis_server: EmbeddedRedis) -> Iterator[str]:
    """A matchmaker process that serves the API only (no forming loop), on port 0."""
    folder = Path(tempfile.mkdtemp(prefix="ohell-mm-"))
    log = folder / "matchmaker.log"
    proc = Proc(
        "matchmaker",
        [
            sys.executable,
            "-m",
            "services.matchmaker",
            "--address",
            "127.0.0.1:0",
            "--redis-url",
            redis_server.url,
            "--no-forming",
            "--database-url",
            f"sqlite:///{folder / 'archive.sqlite3'}",
        ],
        {"OHELL_HOST_TOKEN": HOST_TOKEN},
        log,
    )
    try:
        yield f"127.0.0.1:{int(proc.wait_for(PORT_LINE, 30).group(1))}"
    finally:
        proc.stop()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def stub(matchmaker_address: str) -> Iterator[Stub]:
    with grpc.insecure_channel(matchmaker_address) as channel:
        yield Stub(channel)


def code_of(call, *args, **kwargs) -> tuple[grpc.StatusCode, str]:  # type: ignore[no-untyped-def]
    with pytest.raises(grpc.RpcError) as error:
        call(*args, **kwargs)
    return error.value.code(), error.value.details()


def register(stub: Stub, name: str, kind: int = pb.AGENT_KIND_CONNECTED, **fields: str) -> pb.RegisterAgentResponse:
    return stub.RegisterAgent(pb.RegisterAgentRequest(name=name, kind=kind, **fields), metadata=HOST)


def test_status_codes_name_the_problem(stub: Stub) -> None:
    alice = register(stub, "alice")
    assert alice.token and alice.agent.agent_id
    assert code_of(register, stub, "alice") == (grpc.StatusCode.ALREADY_EXISTS, "name: an agent named 'alice' exists")
    code, detail = code_of(register, stub, "bob", pb.AGENT_KIND_UNSPECIFIED)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "kind" in detail
    code, detail = code_of(register, stub, "bob", pb.AGENT_KIND_BUILTIN, bot="nobot")
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "nobot" in detail
    ladder = pb.Ladder(name="l", rules=rules_pb2.Rules(preset="classic"), seats=9)
    code, detail = code_of(stub.CreateLadder, pb.CreateLadderRequest(ladder=ladder), metadata=HOST)
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "ladder.seats: 9" in detail
    ladder.seats = 4
    code, detail = code_of(
        stub.CreateLadder,
        pb.CreateLadderRequest(ladder=pb.Ladder(name="l", rules=rules_pb2.Rules(preset="nope"))),
        metadata=HOST,
    )
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "nope" in detail
    created = stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=HOST).ladder
    assert created.rules.preset == "classic" and created.seats == 4
    join = pb.JoinQueueRequest(ladder="l", agent_id=alice.agent.agent_id)
    assert code_of(stub.JoinQueue, join)[0] == grpc.StatusCode.UNAUTHENTICATED
    assert code_of(stub.JoinQueue, join, metadata=auth_metadata("forged"))[0] == grpc.StatusCode.UNAUTHENTICATED
    bob = register(stub, "bob")
    code, detail = code_of(stub.JoinQueue, join, metadata=auth_metadata(bob.token))
    assert code == grpc.StatusCode.PERMISSION_DENIED and alice.agent.agent_id in detail
    code, detail = code_of(stub.JoinQueue, pb.JoinQueueRequest(ladder="nope"), metadata=auth_metadata(bob.token))
    assert code == grpc.StatusCode.NOT_FOUND and "nope" in detail
    assert stub.JoinQueue(join, metadata=auth_metadata(alice.token)).queued_at_ms > 0
    assert stub.GetLadder(pb.GetLadderRequest(name="l")).tickets_waiting == 1
    assert stub.LeaveQueue(pb.LeaveQueueRequest(ladder="l"), metadata=auth_metadata(alice.token)).left
    code, detail = code_of(stub.GetLeaderboard, pb.GetLeaderboardRequest(ladder="l", page_size=501))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "page_size" in detail
    code, detail = code_of(stub.GetLeaderboard, pb.GetLeaderboardRequest(ladder="l", page_token="x"))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "page_token" in detail
    assert code_of(stub.GetMatch, pb.GetMatchRequest(match_id="l-99"))[0] == grpc.StatusCode.NOT_FOUND
    assert code_of(stub.GetAgent, pb.GetAgentRequest(agent_id="a999"))[0] == grpc.StatusCode.NOT_FOUND
    version = pb.SetAgentVersionRequest(agent_id=alice.agent.agent_id, version="2.1")
    assert stub.SetAgentVersion(version, metadata=auth_metadata(alice.token)).agent.version == "2.1"
    assert (
        code_of(stub.SetAgentVersion, version, metadata=auth_metadata(bob.token))[0]
        == grpc.StatusCode.PERMISSION_DENIED
    )


def watching(stub: Stub, redis_server: EmbeddedRedis) -> tuple[RedisStore, str, Any]:
    """(the store, an agent's id, its WatchQueue stream on a new ladder "w" once its ticket is queued)."""
    import redis

    store = RedisStore(redis.Redis.from_url(redis_server.url))
    stub.CreateLadder(
        pb.CreateLadderRequest(ladder=pb.Ladder(name="w", rules=rules_pb2.Rules(preset="classic"))), metadata=HOST
    )
    agent = register(stub, "watcher")
    agent_id = agent.agent.agent_id
    call = stub.WatchQueue(pb.WatchQueueRequest(ladder="w", agent_id=agent_id), metadata=auth_metadata(agent.token))
    wait_until(lambda: store.has_ticket("w", agent_id), 10, "the stream to queue the agent")
    return store, agent_id, call


def test_closing_the_queue_stream_leaves_the_queue(stub: Stub, redis_server: EmbeddedRedis) -> None:
    store, agent_id, call = watching(stub, redis_server)
    call.cancel()  # as when the agent's connection dies
    wait_until(lambda: not store.has_ticket("w", agent_id) and store.queued("w") == 0, 10, "the ticket to go")


def test_deleting_a_ladder_ends_its_queue_streams_not_found(stub: Stub, redis_server: EmbeddedRedis) -> None:
    """The stream renews its ticket with the store: the refusal of a deleted ladder ended the stream
    UNKNOWN, quoting the store's exception class ("Unexpected <class '...NotFound'>")."""
    _, _, call = watching(stub, redis_server)
    assert stub.DeleteLadder(pb.DeleteLadderRequest(name="w"), metadata=HOST).deleted
    assert code_of(list, call) == (grpc.StatusCode.NOT_FOUND, "ladder: no ladder 'w'")


def test_not_found_names_the_request_field(stub: Stub) -> None:
    """A NOT_FOUND said what was missing ("no ladder 'x'", "no tournament 'x'") but not in which field
    of the request: GetLadder's `name`, JoinQueue's `ladder`, a tournament entrant's `agent_id`..."""
    alice = register(stub, "alice")
    stub.CreateLadder(pb.CreateLadderRequest(ladder=pb.Ladder(name="l")), metadata=HOST)
    agent = auth_metadata(alice.token)
    me = alice.agent.agent_id
    entrants = [tpb.TournamentEntrant(bot="random"), tpb.TournamentEntrant(bot="strong")]
    ghost = tpb.Tournament(tournament_id="g", entrants=[*entrants, tpb.TournamentEntrant(agent_id="a99")])
    calls: list[tuple[Any, Any, Any, str]] = [
        (stub.GetLadder, pb.GetLadderRequest(name="nope"), None, "name: no ladder 'nope'"),
        (stub.PauseLadder, pb.PauseLadderRequest(name="nope"), HOST, "name: no ladder 'nope'"),
        (stub.DeleteLadder, pb.DeleteLadderRequest(name="nope"), HOST, "name: no ladder 'nope'"),
        (stub.UpdateLadder, pb.UpdateLadderRequest(ladder=pb.Ladder(name="nope")), HOST, "ladder.name: no ladder"),
        (stub.GetLeaderboard, pb.GetLeaderboardRequest(ladder="nope"), None, "ladder: no ladder 'nope'"),
        (stub.JoinQueue, pb.JoinQueueRequest(ladder="nope", agent_id=me), agent, "ladder: no ladder 'nope'"),
        (stub.ListMatches, pb.ListMatchesRequest(ladder="nope"), None, "ladder: no ladder 'nope'"),
        (stub.GetAgent, pb.GetAgentRequest(agent_id="a99"), None, "agent_id: no agent 'a99'"),
        (stub.GetAgent, pb.GetAgentRequest(agent_id=me, ladder="nope"), None, "ladder: no ladder 'nope'"),
        (stub.RevokeAgentToken, pb.RevokeAgentTokenRequest(agent_id="a99"), HOST, "agent_id: no agent 'a99'"),
        (stub.GetMatch, pb.GetMatchRequest(match_id="l-99"), None, "match_id: no match 'l-99'"),
        (stub.GetTournament, tpb.GetTournamentRequest(tournament_id="t"), None, "tournament_id: no tournament 't'"),
        (
            stub.ResumeTournament,
            tpb.ResumeTournamentRequest(tournament_id="t"),
            HOST,
            "tournament_id: no tournament 't'",
        ),
        (
            stub.CancelTournament,
            tpb.CancelTournamentRequest(tournament_id="t"),
            HOST,
            "tournament_id: no tournament 't'",
        ),
        (
            lambda r, metadata: list(stub.ExportTournament(r, metadata=metadata)),
            tpb.ExportTournamentRequest(tournament_id="t"),
            None,
            "tournament_id: no tournament 't'",
        ),
        (
            stub.CreateTournament,
            tpb.CreateTournamentRequest(tournament=ghost),
            HOST,
            "tournament.entrants[2].agent_id: no registered agent 'a99'",
        ),
    ]
    for call, request, metadata, words in calls:
        code, detail = code_of(call, request, metadata=metadata)
        assert code == grpc.StatusCode.NOT_FOUND and detail.startswith(words), detail


def test_every_refusal_names_the_request_field_once(stub: Stub, redis_server: EmbeddedRedis) -> None:
    """ALREADY_EXISTS, FAILED_PRECONDITION and PERMISSION_DENIED from the ladder store named no field
    ("an agent named 'alice' exists"), and some that did said it twice ("ladder.name: ladder name
    'Bad!' ...", "rules.hand_sizes: ladder.rules.hand_sizes: ...", "(entrant 'a99')" after its id)."""
    import redis

    store = RedisStore(redis.Redis.from_url(redis_server.url))
    classic = rules_pb2.Rules(preset="classic")
    register(stub, "alice")
    stub.CreateLadder(pb.CreateLadderRequest(ladder=pb.Ladder(name="l", rules=classic, seats=3)), metadata=HOST)
    stub.CreateLadder(pb.CreateLadderRequest(ladder=pb.Ladder(name="open", entry=pb.LADDER_ENTRY_OPEN)), metadata=HOST)
    visitor = stub.RegisterAgent(pb.RegisterAgentRequest(name="visitor", kind=pb.AGENT_KIND_CONNECTED))
    bots = [register(stub, f"b{n}", pb.AGENT_KIND_BUILTIN, bot="random").agent.agent_id for n in range(3)]
    for agent_id in bots:
        store.join("l", agent_id, None)
    assert store.claim("l", [bots], int(time.time() * 1000))[0]  # a match in play: the ladder stays
    entrants = [tpb.TournamentEntrant(bot="random"), tpb.TournamentEntrant(bot="strong")]
    ghost = tpb.Tournament(tournament_id="g", entrants=[*entrants, tpb.TournamentEntrant(agent_id="a99")])
    named = tpb.Tournament(tournament_id="g", entrants=[*entrants, tpb.TournamentEntrant(agent_id="a99", name="x")])
    four = [tpb.TournamentEntrant(bot="random", name=f"r{n}") for n in range(4)]
    big_hands = tpb.Tournament(tournament_id="h", entrants=four, seats=4, rules=rules_pb2.Rules(hand_sizes=[14]))
    known = ", ".join(sorted(BOT_FACTORIES))

    def create(**fields: Any) -> tuple[Any, pb.CreateLadderRequest, Any]:
        return stub.CreateLadder, pb.CreateLadderRequest(ladder=pb.Ladder(**fields)), HOST

    calls: list[tuple[tuple[Any, Any, Any], grpc.StatusCode, str]] = [
        (
            (stub.RegisterAgent, pb.RegisterAgentRequest(name="alice", kind=pb.AGENT_KIND_CONNECTED), HOST),
            grpc.StatusCode.ALREADY_EXISTS,
            "name: an agent named 'alice' exists",
        ),
        (create(name="l"), grpc.StatusCode.ALREADY_EXISTS, "ladder.name: a ladder named 'l' exists"),
        (
            create(name="Bad!"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "ladder.name: 'Bad!' must be 1-64 characters of a-z, 0-9, '_' and '.', the first a letter or digit "
            "(no '-': match ids are <ladder>-<n>)",
        ),
        (create(name="x", seats=9), grpc.StatusCode.INVALID_ARGUMENT, "ladder.seats: 9 must be from 3 to 7"),
        (  # the store's and the engine's words read on after the field ("bot: 'x': only ...", "has 14 cards")
            (stub.RegisterAgent, pb.RegisterAgentRequest(name="c", kind=pb.AGENT_KIND_CONNECTED, bot="random"), HOST),
            grpc.StatusCode.INVALID_ARGUMENT,
            "bot: 'random' is for builtin agents only: a connected agent plays its own bot",
        ),
        (
            create(name="x", house_bots=["strnog"]),
            grpc.StatusCode.INVALID_ARGUMENT,
            f"ladder.house_bots: 'strnog' is not a built-in bot (built-in bots: {known})",
        ),
        (
            create(name="x", seats=4, rules=rules_pb2.Rules(hand_sizes=[14])),
            grpc.StatusCode.INVALID_ARGUMENT,
            "ladder.rules.hand_sizes: a hand of 14 cards, more than the 13 a deck gives each of 4 players",
        ),
        (
            (stub.CreateTournament, tpb.CreateTournamentRequest(tournament=big_hands), HOST),
            grpc.StatusCode.INVALID_ARGUMENT,
            "tournament.rules.hand_sizes: a hand of 14 cards, more than the 13 a deck gives each of 4 players",
        ),
        (
            create(name="x", rules=rules_pb2.Rules(hand_sizes=[1] * 101)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "ladder.rules.hand_sizes: a schedule of 101 hands is over 100",
        ),
        (
            (stub.DeleteLadder, pb.DeleteLadderRequest(name="l"), HOST),
            grpc.StatusCode.FAILED_PRECONDITION,
            "name: ladder 'l' has 1 match(es) in play: pause it and retry",
        ),
        (
            (stub.JoinQueue, pb.JoinQueueRequest(ladder="l"), auth_metadata(visitor.token)),
            grpc.StatusCode.PERMISSION_DENIED,
            "ladder: 'l' admits only agents the host registered; this agent registered itself, so it queues"
            " only on open ladders (open)",
        ),
        (
            (stub.CreateTournament, tpb.CreateTournamentRequest(tournament=ghost), HOST),
            grpc.StatusCode.NOT_FOUND,
            "tournament.entrants[2].agent_id: no registered agent 'a99'",
        ),
        (
            (stub.CreateTournament, tpb.CreateTournamentRequest(tournament=named), HOST),
            grpc.StatusCode.NOT_FOUND,
            "tournament.entrants[2].agent_id: no registered agent 'a99' (entrant 'x')",
        ),
    ]
    said = [code_of(call, request, metadata=metadata) for (call, request, metadata), _, _ in calls]
    assert said == [(code, words) for _, code, words in calls]


def test_every_refusal_says_its_field_first_and_alike(stub: Stub) -> None:
    """The refusals named their field three ways, "ladder.seats=9 must be ...", "agent_id: no agent ..."
    and "match_id must be ..." (a tournament's also "tournament_id='t': no such tournament"): one
    style now, ``FIELD: what is wrong``, so the field is always where a reader or a script looks."""
    bob = register(stub, "bob")
    agent = auth_metadata(bob.token)
    classic = rules_pb2.Rules(preset="classic")
    stub.CreateLadder(pb.CreateLadderRequest(ladder=pb.Ladder(name="l", rules=classic)), metadata=HOST)
    bots = [tpb.TournamentEntrant(bot="random", name=f"r{number}") for number in range(3)]

    def ladder(**fields: Any) -> pb.CreateLadderRequest:
        return pb.CreateLadderRequest(ladder=pb.Ladder(name="x", **fields))

    def tournament(**fields: Any) -> tpb.CreateTournamentRequest:
        return tpb.CreateTournamentRequest(
            tournament=tpb.Tournament(**{"tournament_id": "t", "entrants": bots, **fields})
        )

    calls: list[tuple[Any, Any, Any, str]] = [
        (stub.GetMatch, pb.GetMatchRequest(match_id=""), None, "match_id"),
        (stub.GetMatch, pb.GetMatchRequest(match_id="l-9"), None, "match_id"),
        (stub.ListMatches, pb.ListMatchesRequest(since_ms=-1), None, "since_ms"),
        (stub.ListMatches, pb.ListMatchesRequest(until_ms=-1), None, "until_ms"),
        (stub.ListMatches, pb.ListMatchesRequest(agent_id="a" * 65), None, "agent_id"),
        (stub.ListMatches, pb.ListMatchesRequest(state="done"), None, "state"),
        (stub.ListMatches, pb.ListMatchesRequest(page_size=999_999), None, "page_size"),
        (stub.GetLeaderboard, pb.GetLeaderboardRequest(ladder="l", page_token="x"), None, "page_token"),
        (stub.RegisterAgent, pb.RegisterAgentRequest(name="y", kind=99), HOST, "kind"),
        (stub.RegisterAgent, pb.RegisterAgentRequest(name="al ice", kind=pb.AGENT_KIND_CONNECTED), HOST, "name"),
        (stub.SetAgentVersion, pb.SetAgentVersionRequest(version="=1"), agent, "version"),
        (stub.JoinQueue, pb.JoinQueueRequest(ladder="l", lease_seconds=-1), agent, "lease_seconds"),
        (stub.JoinQueue, pb.JoinQueueRequest(ladder="l", agent_id="a999"), agent, "agent_id"),
        (stub.CreateLadder, ladder(seats=9), HOST, "ladder.seats"),
        (stub.CreateLadder, ladder(entry=99), HOST, "ladder.entry"),
        (stub.CreateLadder, ladder(rules=rules_pb2.Rules(preset="nope")), HOST, "ladder.rules.preset"),
        (stub.CreateLadder, ladder(rules=rules_pb2.Rules(min_cards=99)), HOST, "ladder.rules.min_cards"),
        (stub.GetTournament, tpb.GetTournamentRequest(tournament_id="t"), None, "tournament_id"),
        (stub.GetTournament, tpb.GetTournamentRequest(tournament_id="t", table_page_size=501), None, "table_page_size"),
        (stub.CreateTournament, tournament(seats=9), HOST, "tournament.seats"),
        (stub.CreateTournament, tournament(format=99), HOST, "tournament.format"),
        (stub.CreateTournament, tournament(rounds=2), HOST, "tournament.rounds"),
        (stub.CreateTournament, tournament(tournament_id="T!"), HOST, "tournament.tournament_id"),
    ]
    for call, request, metadata, field in calls:
        _, detail = code_of(call, request, metadata=metadata)
        assert detail.startswith(f"{field}: "), (field, detail)


def test_streams_dropped_as_their_tickets_are_queued_leave_the_queue(stub: Stub, redis_server: EmbeddedRedis) -> None:
    """Agents whose connection dies just as the stream has queued their ticket (its headers came):
    the stream left the queue only from its main loop on, so some 15 % of such tickets stayed for
    their whole lease (30 s), and a table could be formed for an agent no longer there."""
    import redis

    store = RedisStore(redis.Redis.from_url(redis_server.url))
    stub.CreateLadder(
        pb.CreateLadderRequest(ladder=pb.Ladder(name="w", rules=rules_pb2.Rules(preset="classic"))), metadata=HOST
    )
    for number in range(40):
        agent = register(stub, f"dropped{number}")
        request = pb.WatchQueueRequest(ladder="w", agent_id=agent.agent.agent_id)
        call = stub.WatchQueue(request, metadata=auth_metadata(agent.token))
        call.initial_metadata()  # the ticket is queued
        call.cancel()
    wait_until(lambda: store.queued("w") == 0, 10, "every dropped stream's ticket to go")


def test_get_tournament_gives_its_tables_a_page_at_a_time(stub: Stub, redis_server: EmbeddedRedis) -> None:
    """GetTournament sent every table in one answer: up to 6,800 of them (about 1.5 MB), for every
    reader of a tournament's page every few seconds. 100 by default now, up to 500."""
    import redis

    from arena.play.specs import SeatSpec
    from arena.tournament import jobs
    from arena.tournament.model import Tournament
    from arena.tournament.store import TournamentStore

    client = redis.Redis.from_url(redis_server.url)
    entrants = tuple(SeatSpec.builtin("random", f"r{number}") for number in range(30))
    plans = jobs.start(TournamentStore(client), Tournament("big", entrants, seats=3, deals=1), lambda *sent: None)
    client.close()
    assert len(plans) == 150

    def get(size: int = 0, token: str = "") -> Any:
        request = tpb.GetTournamentRequest(tournament_id="big", table_page_size=size, table_page_token=token)
        return stub.GetTournament(request)

    first = get()
    assert len(first.tables) == 100 and first.next_table_page_token and first.progress.tables == 150
    assert len(first.standings) == 0 and len(first.tournament.entrants) == 30  # the rest is whole
    seen, token = [], ""
    while True:
        reply = get(64, token)
        seen += [table.table_id for table in reply.tables]
        token = reply.next_table_page_token
        if not token:
            break
    assert seen == [plan.table_id for plan in plans]  # round by round, each table once
    assert len(get(500).tables) == 150 and not get(500).next_table_page_token
    assert code_of(get, 501) == (grpc.StatusCode.INVALID_ARGUMENT, "table_page_size: 501 is over 500")
    code, detail = code_of(get, 0, "x")
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "table_page_token: 'x'" in detail


def test_a_refused_host_command_names_the_token_it_sent(
    matchmaker_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A host command the matchmaker refused said only "UNAUTHENTICATED: unknown token in
    'authorization'" (or "missing metadata"): not which token went, from where, or what to give."""
    from arena.cli import main

    monkeypatch.delenv("OHELL_HOST_TOKEN", raising=False)
    monkeypatch.setenv("OHELL_DATA_DIR", str(tmp_path))  # no host-token file of `ohell up` there
    command = ["agent", "list", "--matchmaker", matchmaker_address]
    assert main(command) == 2
    assert f"was sent no host token (no --host-token-file, no $OHELL_HOST_TOKEN, no {tmp_path}/host-token)" in (
        capsys.readouterr().err
    )
    monkeypatch.setenv("OHELL_HOST_TOKEN", "not-the-host-token-0123")
    assert main(command) == 2
    assert "was sent the host token from $OHELL_HOST_TOKEN; give the running stack's" in capsys.readouterr().err
    (tmp_path / "token").write_text(HOST_TOKEN + "\n")
    assert main([*command, "--host-token-file", str(tmp_path / "token")]) == 0


def test_another_users_host_token_file_leaves_the_public_commands_working(
    matchmaker_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A second user of the machine with $OHELL_DATA_DIR at the host's data folder, whose host-token
    is the host's alone (mode 600): every command, the public reads too (ladder list, leaderboard,
    tournament status), ended "--host-token-file D/host-token: Permission denied", naming a flag
    not given. A host-token the user cannot read is no token: reads go on as anyone's."""
    from arena.cli import main

    monkeypatch.delenv("OHELL_HOST_TOKEN", raising=False)
    monkeypatch.setenv("OHELL_DATA_DIR", str(tmp_path))
    (tmp_path / "host-token").mkdir()  # cannot be read, even by root (who reads a file of mode 000)
    assert main(["ladder", "list", "--matchmaker", matchmaker_address]) == 0
    assert main(["agent", "list", "--matchmaker", matchmaker_address]) == 2
    error = capsys.readouterr().err
    assert (
        f"was sent no host token (no --host-token-file, no $OHELL_HOST_TOKEN; host token file {tmp_path}/host-token: "
        in error
    )
    assert (
        main(["agent", "list", "--matchmaker", matchmaker_address, "--host-token-file", str(tmp_path / "host-token")])
        == 2
    )
    assert f"error: --host-token-file {tmp_path}/host-token: " in capsys.readouterr().err  # given: its error as before


def test_ladder_show_says_when_house_bots_do_not_fill(
    matchmaker_address: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ladder with house bots and house_fill off (made over the RPC, or on the host page when its
    box was left unticked) showed "house bots: heuristic (fill after 10 s)"; no table was ever filled."""
    from arena.cli import main

    monkeypatch.setenv("OHELL_HOST_TOKEN", HOST_TOKEN)
    with grpc.insecure_channel(matchmaker_address) as channel:
        for name, fill in (("idle", False), ("filling", True)):
            ladder = pb.Ladder(
                name=name,
                rules=rules_pb2.Rules(preset="classic"),
                seats=4,
                house_bots=["heuristic"],
                house_fill=fill,
                fill_after_seconds=10,
            )
            Stub(channel).CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=HOST)
    for name, shown in (
        ("idle", "heuristic (not filling tables: house_fill off)"),
        ("filling", "heuristic (fill after 10 s)"),
    ):
        assert main(["ladder", "show", name, "--matchmaker", matchmaker_address]) == 0
        out = capsys.readouterr().out
        assert f"house bots: {shown}" in out
        # the rules as `ohell rules` lists them, not a dict of the message's enum names ('DIRECTION_DOWN')
        assert "rules: direction=down, rebound=True, min_cards=1, max_cards_auto=classic" in out, out


def test_ladder_show_says_a_ladder_is_paused(
    matchmaker_address: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ohell ladder show`` of a paused ladder read as a running one (its agents queue, and wait)."""
    from arena.cli import main

    monkeypatch.setenv("OHELL_HOST_TOKEN", HOST_TOKEN)
    show = ["ladder", "show", "main", "--matchmaker", matchmaker_address]
    with grpc.insecure_channel(matchmaker_address) as channel:
        ladder = pb.Ladder(name="main", rules=rules_pb2.Rules(preset="classic"), seats=4)
        Stub(channel).CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=HOST)
        assert main(show) == 0 and "paused" not in capsys.readouterr().out
        Stub(channel).PauseLadder(pb.PauseLadderRequest(name="main"), metadata=HOST)
    assert main(show) == 0
    assert "paused: no tables are formed until `ohell ladder resume main`" in capsys.readouterr().out


def test_ladder_create_opens_a_ladder_to_self_registered_agents(
    matchmaker_address: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Open self-registration needed a ladder whose entry is LADDER_ENTRY_OPEN, which only a host
    writing its own CreateLadder call could make: `ohell ladder create` had no option for it, and
    `ladder show|list` did not say who may queue."""
    from arena.cli import main

    monkeypatch.setenv("OHELL_HOST_TOKEN", HOST_TOKEN)
    address = ["--matchmaker", matchmaker_address]
    assert main(["ladder", "create", "closed", *address]) == 0
    assert main(["ladder", "create", "anyone", "--entry", "open", *address]) == 0
    assert "entry: open (agents may register themselves" in capsys.readouterr().out
    assert main(["ladder", "show", "closed", *address]) == 0
    assert "entry: host (only agents the host registered queue)" in capsys.readouterr().out
    assert main(["ladder", "list", *address]) == 0
    assert re.search(r"anyone .* open .* running", capsys.readouterr().out)
    with grpc.insecure_channel(matchmaker_address) as channel:  # a stranger registers itself, no token
        made = Stub(channel).RegisterAgent(pb.RegisterAgentRequest(name="stranger", kind=pb.AGENT_KIND_CONNECTED))
        join = pb.JoinQueueRequest(ladder="anyone", agent_id=made.agent.agent_id)
        assert Stub(channel).JoinQueue(join, metadata=auth_metadata(made.token)).queued_at_ms > 0


def test_a_refusal_is_taken_to_name_its_field_only_by_the_whole_word() -> None:
    """A message that began with a longer word ('names ...' for the field 'name') went out naming no field."""
    assert naming_field(StoreError("names must be unique", field="name")) == "name: names must be unique"
    assert naming_field(StoreError("name='x' is taken", field="name")) == "name: 'x' is taken"


def test_running_matches_are_listed_a_page_at_a_time(stub: Stub, redis_server: EmbeddedRedis) -> None:
    """ListMatches(state="running") gave its first page only (50 by default) and no next page's
    token, so a reader never saw the rest of the matches in play."""
    import redis

    from arena.clock import now_ms
    from arena.ladder.model import Ladder

    from .test_store import agents, fake_record

    store = RedisStore(redis.Redis.from_url(redis_server.url))
    store.create_ladder(Ladder("busy", seats=3))
    ids = agents(store, 15)
    for agent in ids:
        store.join("busy", agent, None)
    formed = store.claim("busy", [ids[i : i + 3] for i in range(0, 15, 3)], now_ms())
    assert all(formed)

    def listed(token: str = "") -> Any:
        return stub.ListMatches(pb.ListMatchesRequest(ladder="busy", state="running", page_size=2, page_token=token))

    seen, token, pages = [], "", 0
    while True:
        reply = listed(token)
        assert reply.total_size == 5 and len(reply.matches) <= 2
        seen += [match.match_id for match in reply.matches]
        token, pages = reply.next_page_token, pages + 1
        if not token:
            break
    assert pages == 3 and seen == sorted(m for m in formed if m)
    first = listed()
    assert store.finish_match(first.matches[0].match_id, fake_record(first.matches[0].match_id, 3))[0]
    # a match ending meanwhile moves no other onto the page already read
    assert [m.match_id for m in listed(first.next_page_token).matches] == seen[2:4]
    for bad in ("x", "1:busy-1", "running-after:", "zrunning-after:busy-1"):
        code, detail = code_of(listed, bad)
        assert (code, detail) == (grpc.StatusCode.INVALID_ARGUMENT, "page_token: not one this service gave")


def test_update_ladder_keeps_the_settings_its_message_cannot_carry(stub: Stub, store: RedisStore) -> None:
    """The Ladder message has no think_ms (the demo and tests set it in the store), and its paused is
    read only: an update that took the message as the whole definition set think_ms back to 0."""
    store.create_ladder(Ladder("paced", overrides={"hand_sizes": [2, 1]}, think_ms=40))
    store.set_paused("paced", True)
    ladder = stub.GetLadder(pb.GetLadderRequest(name="paced")).ladder
    ladder.seats, ladder.paused = 3, False
    updated = stub.UpdateLadder(pb.UpdateLadderRequest(ladder=ladder), metadata=HOST).ladder
    assert updated.seats == 3 and updated.paused
    stored = store.get_ladder("paced")
    assert (stored.seats, stored.think_ms, stored.paused) == (3, 40, True)
