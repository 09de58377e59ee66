"""The matchmaker's tournament RPCs on the real stack (redis-server, matchmaker, Celery workers):
roles, validation naming the field, NOT_FOUND, deals kept secret until the end, and the standings
of a finished tournament agreeing with its published records."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from google.protobuf.json_format import MessageToDict

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys
from arena.local.stack import Stack, StackConfig
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc, rules_pb2
from arena.proto.ohell.v1 import tournament_pb2 as tpb
from arena.rpc.auth import auth_metadata
from arena.tournament.store import TournamentStore

from ..ladder.helpers import wait_until
from .test_stack import standings_from_records

pytestmark = pytest.mark.slow  # starts the matchmaker and Celery workers

SHORT = rules_pb2.Rules(preset="classic", hand_sizes=[3, 2, 1])


class Rpc:
    def __init__(self, stack: Stack, channel: grpc.Channel) -> None:
        self.stack = stack
        self.stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        self.host = auth_metadata(stack.host_token)
        self.store = TournamentStore(redis.Redis.from_url(stack.config.redis_url or ""), Keys(stack.config.prefix))

    def create(self, tourney: tpb.Tournament, metadata: Any = "host") -> tpb.CreateTournamentResponse:
        request = tpb.CreateTournamentRequest(tournament=tourney)
        return self.stub.CreateTournament(request, metadata=self.host if metadata == "host" else metadata)

    def get(self, tourney_id: str, replicates: int = 0, metadata: Any = None) -> tpb.GetTournamentResponse:
        request = tpb.GetTournamentRequest(tournament_id=tourney_id, replicates=replicates)
        return self.stub.GetTournament(request, metadata=metadata)

    def export(
        self, tourney_id: str, fmt: int, replicates: int = 0, metadata: Any = None
    ) -> tuple[str, list[tpb.ExportTournamentResponse]]:
        request = tpb.ExportTournamentRequest(tournament_id=tourney_id, format=fmt, replicates=replicates)
        pieces = list(self.stub.ExportTournament(request, metadata=metadata))
        return b"".join(piece.data for piece in pieces).decode(), pieces


@pytest.fixture(scope="module")
def rpc(shared_redis_server: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rpc]:
    config = StackConfig(
        redis_url=shared_redis_server.url,
        prefix=f"trpc{secrets.token_hex(4)}:",
        env={"OHELL_MATCH_LEASE_S": "1.5"},
        matchmaker_args=("--sweep-every", "0.5", "--tick", "0.02"),
        log_dir=str(tmp_path_factory.mktemp("tournament-rpc")),
        engine=False,
        remote_worker=False,  # tables with a connected entrant stay queued: a tournament that keeps running
    )
    stack = Stack(config).start()
    try:
        with grpc.insecure_channel(stack.matchmaker_address) as channel:
            yield Rpc(stack, channel)
    finally:
        stack.cleanup(graceful=False)


def bots(*names: str) -> list[tpb.TournamentEntrant]:
    return [tpb.TournamentEntrant(bot=name) for name in names]


def lists_in(value: Any) -> Iterator[list[Any]]:
    """Every list inside a JSON-like value."""
    if isinstance(value, list):
        yield value
        for item in value:
            yield from lists_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from lists_in(item)


def refused(call: Any, code: grpc.StatusCode, *words: str) -> str:
    with pytest.raises(grpc.RpcError) as caught:
        result = call()
        if isinstance(result, Iterator):
            list(result)
    error = caught.value
    assert error.code() == code, error.details()
    for word in words:
        assert word in error.details(), error.details()
    return str(error.details())


def test_roles_and_bad_input_are_refused_naming_the_field(rpc: Rpc) -> None:
    good = tpb.Tournament(tournament_id="roles", entrants=bots("random", "heuristic", "strong"), rules=SHORT, deals=1)
    refused(lambda: rpc.create(good, None), grpc.StatusCode.UNAUTHENTICATED, "authorization")
    refused(lambda: rpc.create(good, auth_metadata("not-a-token")), grpc.StatusCode.UNAUTHENTICATED)
    agent = rpc.stub.RegisterAgent(
        pb.RegisterAgentRequest(name="agent-r", kind=pb.AGENT_KIND_BUILTIN, bot="random"), metadata=rpc.host
    )
    refused(lambda: rpc.create(good, auth_metadata(agent.token)), grpc.StatusCode.PERMISSION_DENIED, "host token")
    resume = tpb.ResumeTournamentRequest(tournament_id="roles")
    refused(lambda: rpc.stub.ResumeTournament(resume), grpc.StatusCode.UNAUTHENTICATED)
    agent_meta = auth_metadata(agent.token)
    refused(lambda: rpc.stub.ResumeTournament(resume, metadata=agent_meta), grpc.StatusCode.PERMISSION_DENIED)

    def bad(field: str, **changes: Any) -> None:
        tourney = tpb.Tournament()
        tourney.CopyFrom(good)
        for name, value in changes.items():
            if isinstance(value, list):
                tourney.ClearField(name)
                getattr(tourney, name).extend(value)
            elif name == "rules":
                tourney.rules.CopyFrom(value)
            else:
                setattr(tourney, name, value)
        refused(lambda: rpc.create(tourney), grpc.StatusCode.INVALID_ARGUMENT, field)

    bad("tournament.tournament_id", tournament_id="Bad Id!")
    bad("tournament.tournament_id", tournament_id="x" * 41)
    bad("tournament.entrants", entrants=[])
    bad("tournament.entrants", entrants=bots(*["random"] * 201))
    bad("tournament.entrants[1]", entrants=[*bots("random"), tpb.TournamentEntrant(name="nobody"), *bots("strong")])
    bad("tournament.entrants[2].bot", entrants=bots("random", "heuristic", "no-such-bot"))
    bad("entrants[0].endpoint", entrants=[tpb.TournamentEntrant(endpoint="no-port"), *bots("random", "strong")])
    for port in ("0", "65536", "99999"):  # accepted before: every game of the entrant a dial that cannot connect
        bad(
            "entrants[0].endpoint",
            entrants=[tpb.TournamentEntrant(endpoint=f"h:{port}", name="e"), *bots("random", "strong")],
        )
    bad(
        "entrants[0].name",
        entrants=[tpb.TournamentEntrant(bot="random", name="bad name"), *bots("heuristic", "strong")],
    )
    bad("own name", entrants=bots("random", "random", "strong"))
    twice = [tpb.TournamentEntrant(agent_id=agent.agent.agent_id, name=name) for name in ("first", "second")]
    bad("entrants[1].agent_id", entrants=[*twice, *bots("strong")])
    bad("tournament.seats", seats=8)
    bad("seats", seats=4)  # more seats than entrants
    bad("tournament.deals", deals=51)
    bad("tournament.rounds", rounds=21)
    bad("rounds", rounds=2)  # a round robin is one round
    bad("tournament.format", format=7)
    bad("tournament.grace_seconds", grace_seconds=601)
    bad("tournament.grace_seconds", grace_seconds=math.nan)
    bad("tournament.grace_seconds", grace_seconds=-1)
    bad("tournament.rules.preset", rules=rules_pb2.Rules(preset="no-such-preset"))
    bad("hand_sizes", rules=rules_pb2.Rules(preset="classic", hand_sizes=[20]))  # 60 cards for 3 seats
    unknown = [tpb.TournamentEntrant(agent_id="a999"), *bots("random", "strong")]
    refused(
        lambda: rpc.create(tpb.Tournament(tournament_id="ghost", entrants=unknown)),
        grpc.StatusCode.NOT_FOUND,
        "tournament.entrants[0].agent_id: no registered agent 'a999'",
    )

    for call in (
        lambda: rpc.get("no-such"),
        lambda: rpc.export("no-such", tpb.EXPORT_FORMAT_CSV),
        lambda: rpc.stub.ResumeTournament(tpb.ResumeTournamentRequest(tournament_id="no-such"), metadata=rpc.host),
    ):
        refused(call, grpc.StatusCode.NOT_FOUND, "tournament_id: no tournament 'no-such'")
    refused(lambda: rpc.get("../etc"), grpc.StatusCode.INVALID_ARGUMENT, "tournament_id")
    refused(lambda: rpc.get("roles", replicates=10_001), grpc.StatusCode.INVALID_ARGUMENT, "replicates")
    # another number of resamples is a computation of its own (a second of CPU at 10 000): the host's only
    for caller in (None, agent_meta):
        refused(lambda m=caller: rpc.get("roles", 10_000, m), grpc.StatusCode.PERMISSION_DENIED, "replicates")
        refused(
            lambda m=caller: rpc.export("roles", tpb.EXPORT_FORMAT_CSV, 1, m),
            grpc.StatusCode.PERMISSION_DENIED,
            "replicates",
        )
    refused(lambda: rpc.export("roles", 9), grpc.StatusCode.INVALID_ARGUMENT, "format")
    for request in (tpb.ListTournamentsRequest(page_size=501), tpb.ListTournamentsRequest(page_token="x1")):
        refused(lambda r=request: rpc.stub.ListTournaments(r), grpc.StatusCode.INVALID_ARGUMENT, "page_")
    assert "roles" not in rpc.store.ids()  # nothing refused was created


def test_deals_stay_secret_while_running_then_standings_agree_with_records(rpc: Rpc) -> None:
    # a connected entrant whose table has no remote worker: the tournament keeps running
    agent = rpc.stub.RegisterAgent(
        pb.RegisterAgentRequest(name="away", kind=pb.AGENT_KIND_CONNECTED), metadata=rpc.host
    )
    waiting = tpb.Tournament(
        tournament_id="waiting",
        entrants=[*bots("random", "heuristic"), tpb.TournamentEntrant(agent_id=agent.agent.agent_id, name="away")],
        rules=SHORT,
        deals=2,
        grace_seconds=0,
    )
    created = rpc.create(waiting)
    assert created.tournament.grace_seconds == 0 and created.tournament.seats == 3
    assert created.progress.state == tpb.TOURNAMENT_STATE_RUNNING and created.progress.games_total == 6
    refused(
        lambda: rpc.create(waiting),
        grpc.StatusCode.ALREADY_EXISTS,
        "tournament.tournament_id: a tournament 'waiting' exists already",
    )
    running = rpc.get("waiting")
    assert [t.entrants for t in running.tables] == [["random", "heuristic", "away"]]
    assert (running.progress.tables, running.progress.tables_done, running.progress.games_done) == (1, 0, 0)
    text, pieces = rpc.export("waiting", tpb.EXPORT_FORMAT_JSON)
    document = json.loads(text)
    assert pieces[0].finished is False and set(document) == {"tournament", "state", "finished", "standings"}
    dealt = [list(cards) for deal_set in rpc.store.table_deals("waiting", "r1t0") for cards in deal_set.decks]
    listed = rpc.stub.ListTournaments(tpb.ListTournamentsRequest())
    answers = [document, MessageToDict(running), MessageToDict(listed)]
    assert not [found for answer in answers for found in lists_in(answer) if found in dealt]  # no deck anywhere
    assert dealt[0] in list(lists_in({"check": dealt}))  # (the search does find a deck)
    assert list(
        rpc.stub.ResumeTournament(tpb.ResumeTournamentRequest(tournament_id="waiting"), metadata=rpc.host).tables
    ) == ["r1t0"]

    final = tpb.Tournament(
        tournament_id="final", entrants=bots("strong", "heuristic", "random"), rules=SHORT, deals=2,
        format=tpb.TOURNAMENT_FORMAT_ROUND_ROBIN,
    )  # fmt: skip
    rpc.create(final)
    wait_until(lambda: rpc.get("final").progress.state == tpb.TOURNAMENT_STATE_FINISHED, 30, "the tournament to end")
    done = rpc.get("final", 500, rpc.host)
    assert (done.progress.tables_done, done.progress.games_done, done.progress.games_total) == (1, 6, 6)
    assert done.progress.finished_ms >= done.progress.created_ms > 0
    assert [(t.state, t.games_done, t.games) for t in done.tables] == [("finished", 6, 6)]
    text, pieces = rpc.export("final", tpb.EXPORT_FORMAT_JSON, 500, rpc.host)
    document = json.loads(text)
    assert pieces[0].finished and pieces[0].content_type == "application/json" and pieces[0].filename == "final.json"
    assert document["deals"] == rpc.store.deals("final") and len(document["records"]) == 6
    recomputed = standings_from_records(document["records"])
    assert [(s.entrant, s.mean_duplicate, s.ci_low, s.ci_high) for s in recomputed] == [
        (s.entrant, s.mean_duplicate, s.ci_low, s.ci_high) for s in done.standings
    ]
    assert [s.HasField("p_above_next") for s in done.standings] == [True, True, False]
    assert abs(sum(s.total_duplicate for s in done.standings)) < 1e-3  # duplicate points sum to zero (rounded)
    csv_text, _ = rpc.export("final", tpb.EXPORT_FORMAT_CSV, 500, rpc.host)
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert [(r["entrant"], float(r["ci_low"])) for r in rows] == [(s.entrant, s.ci_low) for s in done.standings]
    assert (
        list(rpc.stub.ResumeTournament(tpb.ResumeTournamentRequest(tournament_id="final"), metadata=rpc.host).tables)
        == []
    )

    first = rpc.stub.ListTournaments(tpb.ListTournamentsRequest(page_size=1))
    second = rpc.stub.ListTournaments(tpb.ListTournamentsRequest(page_size=1, page_token=first.next_page_token))
    assert [s.tournament.tournament_id for s in (*first.tournaments, *second.tournaments)] == ["final", "waiting"]
    assert second.next_page_token == "" and first.tournaments[0].progress.state == tpb.TOURNAMENT_STATE_FINISHED
    assert (first.tournaments[0].entrant_count, len(first.tournaments[0].tournament.entrants)) == (3, 0)
    shown = rpc.get("final")  # the list shows the definition without its entrants, from a stored summary
    shown.tournament.ClearField("entrants")
    assert (first.tournaments[0].tournament, first.tournaments[0].progress) == (shown.tournament, shown.progress)


def test_one_deal_claims_no_interval_nor_order(rpc: Rpc) -> None:
    """One deal set gives no spread between independent deals: the bootstrap drew that deal in every
    resample, so each "95 % interval" was the mean alone and P(above next) 1.0 after three games."""
    one = tpb.Tournament(tournament_id="one-deal", entrants=bots("strong", "heuristic", "random"), rules=SHORT, deals=1)
    rpc.create(one)
    wait_until(lambda: rpc.get("one-deal").progress.state == tpb.TOURNAMENT_STATE_FINISHED, 30, "the tournament to end")
    done = rpc.get("one-deal")
    assert [(s.games, s.deals) for s in done.standings] == [(3, 1)] * 3
    assert not [s for s in done.standings if s.HasField("ci_low") or s.HasField("ci_high")]
    assert not [s for s in done.standings if s.HasField("p_above_next")]
    rows = list(csv.DictReader(io.StringIO(rpc.export("one-deal", tpb.EXPORT_FORMAT_CSV)[0])))
    assert [(r["ci_low"], r["ci_high"], r["p_above_next"]) for r in rows] == [("", "", "")] * 3
    assert [r["entrant"] for r in rows] == [s.entrant for s in done.standings]


def test_host_commands_go_through_the_rpcs(
    rpc: Rpc, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``ohell tournament`` is a gRPC client of the matchmaker: without the host token it cannot create."""
    from arena.cli import main

    monkeypatch.delenv("OHELL_HOST_TOKEN", raising=False)
    monkeypatch.setenv("OHELL_DATA_DIR", str(tmp_path))  # no host-token file of `ohell up` there
    where = ["--matchmaker", rpc.stack.matchmaker_address]
    create = ["tournament", "create", "cli", "--entrant=builtin:random", "--entrant=builtin:heuristic=h"]
    create += ["--entrant=builtin:strong", "--deals", "1", "--option", "hand_sizes=[2,1]", *where]
    assert main(create) == 2
    assert "UNAUTHENTICATED" in capsys.readouterr().err
    assert main([*create, "--host-token-file", str(rpc.stack.host_token_path)]) == 0
    assert "3 games in all" in capsys.readouterr().out
    wait_until(lambda: rpc.get("cli").progress.state == tpb.TOURNAMENT_STATE_FINISHED, 30, "the tournament to end")
    assert main(["tournament", "list", *where]) == 0
    assert "cli\tfinished" in capsys.readouterr().out
    assert main(["tournament", "standings", "cli", *where]) == 0  # the shared standings: anyone
    shown = capsys.readouterr().out
    assert (
        "final standings" in shown and shown.count("needs") == 3
    )  # one deal: no interval (a narrow terminal wraps the cell)
    assert main(["tournament", "standings", "cli", "--replicates", "100", *where]) == 2
    assert "PERMISSION_DENIED" in capsys.readouterr().err
    token = ["--host-token-file", str(rpc.stack.host_token_path)]
    assert main(["tournament", "standings", "cli", "--replicates", "100", *token, *where]) == 0
    assert "final standings" in capsys.readouterr().out
    out = tmp_path / "cli.json"
    assert main(["tournament", "export", "cli", "--format", "json", "--out", str(out), *where]) == 0
    assert len(json.loads(out.read_text())["records"]) == 3
    capsys.readouterr()
    assert main(["tournament", "export", "cli", "--format", "json", "--out", "-", *where]) == 0  # not a file '-'
    assert len(json.loads(capsys.readouterr().out)["records"]) == 3 and not Path("-").exists()
    nowhere = tmp_path / "missing" / "cli.json"
    assert main(["tournament", "export", "cli", "--out", str(nowhere), *where]) == 2  # was an OSError traceback
    assert f"cannot write --out {nowhere}: No such file" in " ".join(capsys.readouterr().err.split())
    assert main(["tournament", "status", "nope", *where]) == 2
    assert "NOT_FOUND" in capsys.readouterr().err


def test_a_connected_entrant_without_a_name_is_named_as_its_agent_is_registered(rpc: Rpc) -> None:
    """(Last in this module: the tournaments it makes would show in the lists above.)
    `--entrant connected:a12` stood in the standings as 'a12': a host entering a class had to
    write `=alice` after each agent id to see their students' names."""
    agent = rpc.stub.RegisterAgent(
        pb.RegisterAgentRequest(name="student-n", kind=pb.AGENT_KIND_CONNECTED), metadata=rpc.host
    ).agent
    entrants = [tpb.TournamentEntrant(agent_id=agent.agent_id), *bots("random", "heuristic")]
    made = rpc.create(tpb.Tournament(tournament_id="named", entrants=entrants, rules=SHORT, deals=1))
    assert [entrant.name for entrant in made.tournament.entrants] == ["student-n", "random", "heuristic"]
    assert rpc.get("named").tournament.entrants[0].name == "student-n"
    given = [tpb.TournamentEntrant(agent_id=agent.agent_id, name="nick"), *bots("random", "heuristic")]
    made = rpc.create(tpb.Tournament(tournament_id="nicknamed", entrants=given, rules=SHORT, deals=1))
    assert made.tournament.entrants[0].name == "nick"  # a name given stays
    clash = [tpb.TournamentEntrant(agent_id=agent.agent_id), tpb.TournamentEntrant(bot="random", name="student-n")]
    tourney = tpb.Tournament(tournament_id="clash", entrants=[*clash, *bots("strong")], rules=SHORT, deals=1)
    refused(lambda: rpc.create(tourney), grpc.StatusCode.INVALID_ARGUMENT, "'student-n' is given twice", "=NAME")


def test_the_host_cancels_a_tournament_that_could_never_finish(rpc: Rpc) -> None:
    """A connected entrant never online and no remote worker: its table stays queued, sent again by
    the sweep forever. Cancelled, it ends: state cancelled everywhere, exports published, no resume."""
    agent = rpc.stub.RegisterAgent(
        pb.RegisterAgentRequest(name="never", kind=pb.AGENT_KIND_CONNECTED), metadata=rpc.host
    )
    entrants = [*bots("random", "heuristic"), tpb.TournamentEntrant(agent_id=agent.agent.agent_id)]
    rpc.create(tpb.Tournament(tournament_id="stuck", entrants=entrants, rules=SHORT, deals=1, grace_seconds=0))
    cancel = tpb.CancelTournamentRequest(tournament_id="stuck")
    refused(lambda: rpc.stub.CancelTournament(cancel), grpc.StatusCode.UNAUTHENTICATED, "authorization")
    agent_meta = auth_metadata(agent.token)
    refused(lambda: rpc.stub.CancelTournament(cancel, metadata=agent_meta), grpc.StatusCode.PERMISSION_DENIED, "host")
    web_meta = auth_metadata(rpc.stack.web_token or "")
    refused(lambda: rpc.stub.CancelTournament(cancel, metadata=web_meta), grpc.StatusCode.PERMISSION_DENIED, "host")
    assert rpc.get("stuck").progress.state == tpb.TOURNAMENT_STATE_RUNNING  # nothing refused changed it
    for tourney_id, code in (("no-such", grpc.StatusCode.NOT_FOUND), ("Bad Id!", grpc.StatusCode.INVALID_ARGUMENT)):
        request = tpb.CancelTournamentRequest(tournament_id=tourney_id)
        refused(lambda r=request: rpc.stub.CancelTournament(r, metadata=rpc.host), code, "tournament_id")

    reply = rpc.stub.CancelTournament(cancel, metadata=rpc.host)
    assert reply.tables_cancelled == 1 and reply.progress.state == tpb.TOURNAMENT_STATE_CANCELLED
    assert reply.progress.finished_ms >= reply.progress.created_ms > 0 and reply.progress.games_total == 3
    shown = rpc.get("stuck")
    assert shown.progress == reply.progress and [t.state for t in shown.tables] == ["cancelled"]
    listed = rpc.stub.ListTournaments(tpb.ListTournamentsRequest(page_size=500)).tournaments
    assert [s.progress.state for s in listed if s.tournament.tournament_id == "stuck"] == [
        tpb.TOURNAMENT_STATE_CANCELLED
    ]
    text, pieces = rpc.export("stuck", tpb.EXPORT_FORMAT_JSON)
    document = json.loads(text)
    assert pieces[0].finished and document["state"] == "cancelled" and document["records"] == {}
    assert len(document["deals"]["r1t0"]) == 1  # nothing more is played: the deals are no longer secret
    again = refused(lambda: rpc.stub.CancelTournament(cancel, metadata=rpc.host), grpc.StatusCode.FAILED_PRECONDITION)
    assert again == "tournament_id: the tournament 'stuck' was cancelled already: nothing to cancel"
    resume = tpb.ResumeTournamentRequest(tournament_id="stuck")
    refused(
        lambda: rpc.stub.ResumeTournament(resume, metadata=rpc.host),
        grpc.StatusCode.FAILED_PRECONDITION,
        "tournament_id: the tournament 'stuck' was cancelled",
    )
    rpc.create(
        tpb.Tournament(tournament_id="ended", entrants=bots("random", "heuristic", "strong"), rules=SHORT, deals=1)
    )
    wait_until(lambda: rpc.get("ended").progress.state == tpb.TOURNAMENT_STATE_FINISHED, 30, "the tournament to end")
    finished = tpb.CancelTournamentRequest(tournament_id="ended")
    refused(
        lambda: rpc.stub.CancelTournament(finished, metadata=rpc.host),
        grpc.StatusCode.FAILED_PRECONDITION,
        "tournament_id: the tournament 'ended' has finished already",
    )
    assert rpc.get("ended").progress.state == tpb.TOURNAMENT_STATE_FINISHED


def test_a_games_record_is_read_once_the_tournament_has_ended_never_while_it_runs(rpc: Rpc) -> None:
    """GetTournamentGame: the replay of one game. The bots' table plays its games while the tables
    of a connected entrant never online stay queued, so the tournament runs with games recorded:
    none is readable (nor are their ids listed) until the host cancels it."""
    agent = rpc.stub.RegisterAgent(
        pb.RegisterAgentRequest(name="late-g", kind=pb.AGENT_KIND_CONNECTED), metadata=rpc.host
    )
    entrants = [*bots("random", "heuristic", "strong"), tpb.TournamentEntrant(agent_id=agent.agent.agent_id)]
    rpc.create(tpb.Tournament(tournament_id="replays", entrants=entrants, rules=SHORT, deals=1, grace_seconds=0))
    played_out = lambda: [t for t in rpc.get("replays").tables if t.games_done == 3]  # noqa: E731
    wait_until(played_out, 30, "the bots' table to play its games")  # (the tables as read up to 2 s ago)
    running = rpc.get("replays")
    assert running.progress.state == tpb.TOURNAMENT_STATE_RUNNING
    [played] = [t.table_id for t in running.tables if t.games_done == 3]
    assert [list(t.game_ids) for t in running.tables] == [[]] * 4  # no id listed while it runs

    def game(game_id: str, tourney_id: str = "replays", metadata: Any = None) -> tpb.GetTournamentGameResponse:
        request = tpb.GetTournamentGameRequest(tournament_id=tourney_id, game_id=game_id)
        return rpc.stub.GetTournamentGame(request, metadata=metadata)

    card = re.compile(r"\b(?:[2-9TJQKA]|10)[CDHS♣♦♥♠]")  # a card as records ("TH") or pages ("10♥") write it
    for metadata in (None, rpc.host):  # not even the host reads it while the deals are in play
        said = refused(lambda m=metadata: game(f"{played}/d0/r0", metadata=m), grpc.StatusCode.FAILED_PRECONDITION)
        assert "still running" in said and not card.search(said), said
    for game_id in ("r1t0/d0", "r1t0/d0/r0/x", "../r1t0/d0/r0", "R1T0/D0/R0", "r1t0/d0/r0" + "0" * 40, ""):
        refused(lambda g=game_id: game(g), grpc.StatusCode.INVALID_ARGUMENT, "game_id")
    refused(lambda: game("r1t0/d0/r0", "Bad Id!"), grpc.StatusCode.INVALID_ARGUMENT, "tournament_id")
    refused(lambda: game("r1t0/d0/r0", "x" * 41), grpc.StatusCode.INVALID_ARGUMENT, "tournament_id")
    refused(lambda: game("r1t0/d0/r0", "no-such"), grpc.StatusCode.NOT_FOUND, "tournament_id")

    # a runner still holding a table of the tournament once cancelled plays on with its deal sets
    held = rpc.store.keys.tourney_lease("replays", played)
    rpc.store.client.set(held, "runner-x", px=60_000)
    rpc.stub.CancelTournament(tpb.CancelTournamentRequest(tournament_id="replays"), metadata=rpc.host)
    said = refused(lambda: game(f"{played}/d0/r1"), grpc.StatusCode.FAILED_PRECONDITION, "game_id", "still plays")
    assert not card.search(said), said
    exported = json.loads(rpc.export("replays", tpb.EXPORT_FORMAT_JSON)[0])  # nor does the export show them
    assert exported["state"] == "cancelled" and played not in exported["deals"] and exported["records"] == {}
    rpc.store.client.delete(held)

    ended = rpc.get("replays")
    expected = [f"{played}/d0/r{turn}" for turn in range(3)]
    assert {t.table_id: list(t.game_ids) for t in ended.tables if t.game_ids} == {played: expected}
    records = rpc.store.records("replays")
    for game_id in expected:
        record = json.loads(game(game_id).record_json)
        assert record == records[game_id] and record["match_id"] == f"replays/{game_id}"
        assert [hand["deal"] for hand in record["hands"]]  # the hands dealt, for the replay
    refused(lambda: game(f"{played}/d1/r0"), grpc.StatusCode.NOT_FOUND, "game_id", "no game")
    other = next(t.table_id for t in ended.tables if t.table_id != played)
    refused(lambda: game(f"{other}/d0/r0"), grpc.StatusCode.NOT_FOUND, "game_id")

    def table(table_id: str) -> tpb.GetTournamentResponse:  # one table alone (revision 15)
        request = tpb.GetTournamentRequest(tournament_id="replays", table_id=table_id, table_page_size=1)
        return rpc.stub.GetTournament(request)

    alone = table(played)
    assert [(t.table_id, list(t.game_ids)) for t in alone.tables] == [(played, expected)]
    assert alone.next_table_page_token == "" and alone.standings == ended.standings
    assert [t.table_id for t in table(other).tables] == [other]
    for table_id in ("R1T0", "r1t0/d0", "r1", "r1t0" + "0" * 10):
        refused(lambda i=table_id: table(i), grpc.StatusCode.INVALID_ARGUMENT, "table_id")
    refused(lambda: table("r1t99"), grpc.StatusCode.NOT_FOUND, "table_id", "no table")
