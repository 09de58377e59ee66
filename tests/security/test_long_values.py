"""Class 6 continued: a caller's value of any length, or of digits that are not ASCII, is refused with
INVALID_ARGUMENT naming its field in a short message, on a real matchmaker process; before, an error
quoting a 100 KB value whole was itself too long to send (the caller got RESOURCE_EXHAUSTED "Stream
removed"), and a page token of "²" (a digit to ``str.isdigit``, not to ``int``) was UNKNOWN."""

from __future__ import annotations

from collections.abc import Callable

import grpc
import pytest

from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc, rules_pb2
from arena.proto.ohell.v1 import tournament_pb2 as tpb
from arena.rpc.auth import auth_metadata

from .conftest import HOST_TOKEN, Service

HOST = auth_metadata(HOST_TOKEN)
LONG = "x" * 100_000


def refusal(call: Callable[..., object], request: object, metadata: object = None) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as error:
        call(request, metadata=metadata, timeout=10)
    return error.value.code(), str(error.value.details())


@pytest.mark.slow
def test_long_or_unusual_values_are_refused_naming_the_field(start_service: Callable[..., Service]) -> None:
    with start_service("services.matchmaker").channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        classic = rules_pb2.Rules(preset="classic")
        open_ladder = pb.Ladder(name="open", rules=classic, entry=pb.LADDER_ENTRY_OPEN)
        stub.CreateLadder(pb.CreateLadderRequest(ladder=open_ladder), metadata=HOST)
        calls = [  # (call, request, metadata, the field its refusal names)
            (stub.GetLeaderboard, pb.GetLeaderboardRequest(ladder="open", page_token=LONG), None, "page_token"),
            (stub.ListAgents, pb.ListAgentsRequest(page_token=LONG), HOST, "page_token"),
            (stub.ListTournaments, tpb.ListTournamentsRequest(page_token="²"), None, "page_token"),
            (stub.ListTournaments, tpb.ListTournamentsRequest(page_token=LONG), None, "page_token"),
            (  # an anonymous caller while a ladder is open
                stub.RegisterAgent,
                pb.RegisterAgentRequest(name="b", kind=pb.AGENT_KIND_BUILTIN, bot=LONG),
                None,
                "bot",
            ),
            (stub.CreateLadder, pb.CreateLadderRequest(ladder=pb.Ladder(name=LONG, rules=classic)), HOST, "name"),
            (
                stub.CreateLadder,
                pb.CreateLadderRequest(ladder=pb.Ladder(name="long", rules=rules_pb2.Rules(preset=LONG))),
                HOST,
                "rules.preset",
            ),
            (  # every hand size out of range: the refusal quotes the list in part
                stub.CreateLadder,
                pb.CreateLadderRequest(
                    ladder=pb.Ladder(name="sizes", rules=rules_pb2.Rules(hand_sizes=[2**32 - 1] * 1000))
                ),
                HOST,
                "hand_sizes",
            ),
            (
                stub.CreateLadder,
                pb.CreateLadderRequest(ladder=pb.Ladder(name="l", rules=classic, house_bots=[LONG])),
                HOST,
                "ladder.house_bots: ",
            ),
        ]
        wrong = []
        for call, request, metadata, field in calls:
            code, details = refusal(call, request, metadata)
            if (
                code != grpc.StatusCode.INVALID_ARGUMENT or field not in details or len(details) > 1000
            ):  # bounded (a preset refusal lists the presets)
                wrong.append(f"{type(request).__name__}: {code.name} {details[:120]}")
        assert not wrong, "\n".join(wrong)


@pytest.mark.slow
def test_a_value_ending_in_a_line_break_is_refused(start_service: Callable[..., Service]) -> None:
    """Names and ids are checked against patterns ending in '$', which also matches before a final
    line break: anyone could self-register 'alice\\n', a second 'alice' on every page (HTML shows the
    break as a space) and an extra line in the host's terminal."""
    with start_service("services.matchmaker").channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        classic = rules_pb2.Rules(preset="classic", hand_sizes=[1])
        open_ladder = pb.Ladder(name="open", rules=classic, entry=pb.LADDER_ENTRY_OPEN)
        stub.CreateLadder(pb.CreateLadderRequest(ladder=open_ladder), metadata=HOST)
        entrants = [tpb.TournamentEntrant(bot="random", name=f"r{n}") for n in range(3)]
        calls = [  # (call, request, metadata, the field its refusal names)
            (stub.RegisterAgent, pb.RegisterAgentRequest(name="alice\n", kind=pb.AGENT_KIND_CONNECTED), None, "name"),
            (
                stub.RegisterAgent,
                pb.RegisterAgentRequest(name="ep", kind=pb.AGENT_KIND_ENDPOINT, endpoint="10.0.0.1:7000\n"),
                HOST,
                "endpoint",
            ),
            (stub.CreateLadder, pb.CreateLadderRequest(ladder=pb.Ladder(name="l\n", rules=classic)), HOST, "name"),
            (
                stub.CreateTournament,
                tpb.CreateTournamentRequest(tournament=tpb.Tournament(tournament_id="t\n", entrants=entrants)),
                HOST,
                "tournament_id",
            ),
            (
                stub.CreateTournament,
                tpb.CreateTournamentRequest(
                    tournament=tpb.Tournament(
                        tournament_id="t", entrants=[*entrants[:2], tpb.TournamentEntrant(bot="random", name="r\n")]
                    )
                ),
                HOST,
                "name",
            ),
            (stub.GetTournament, tpb.GetTournamentRequest(tournament_id="t\n"), None, "tournament_id"),
        ]
        wrong = []
        for call, request, metadata, field in calls:
            try:
                call(request, metadata=metadata, timeout=10)
                wrong.append(f"{type(request).__name__}: accepted")
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.INVALID_ARGUMENT or field not in str(error.details()):
                    wrong.append(f"{type(request).__name__}: {error.code().name} {str(error.details())[:120]}")
        assert not wrong, "\n".join(wrong)
        names = [agent.name for agent in stub.ListAgents(pb.ListAgentsRequest(), metadata=HOST).agents]
        assert not any("\n" in name for name in names), names


def test_a_challenge_id_ending_in_a_line_break_is_refused() -> None:
    from arena.play.specs import SeatSpecError
    from services.engine.challenge import check_match_id

    for match_id in ("x\n", "main-1\n"):
        with pytest.raises(SeatSpecError, match="match_id"):
            check_match_id(match_id)
