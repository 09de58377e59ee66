"""An endpoint agent's address (the host:port of its author's own server) is the host's: the
matchmaker shows it to the host (and GetAgent to the agent itself), never to an anonymous caller,
the web app or another agent: not in GetAgent, a match's record (its seats, names and fault
details), a tournament's entrants or its export."""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import grpc
import pytest
import redis

from arena.clock import now_ms
from arena.embedded_redis import EmbeddedRedis
from arena.ladder.model import Ladder
from arena.ladder.redis_store import RedisStore
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc, rules_pb2
from arena.proto.ohell.v1 import tournament_pb2 as tpb
from arena.rpc.auth import PUBLIC_VIEW, auth_metadata
from ohell.record import RECORD_FORMAT

from ..web.conftest import start_web
from .conftest import HOST_TOKEN, Service

WEB_TOKEN = "security-tests-web-token-0123456789"
ADDRESS = "10.9.8.7:7000"  # never dialled: the matchmaker forms no tables here


def finished_match_with(store: RedisStore, endpoint_agent: str) -> str:
    """A finished ladder match where ``endpoint_agent`` sat, its record holding the seat's address
    and (as records made before this fix did) a fault detail naming it."""
    store.create_ladder(Ladder("epl", seats=3))
    others = [store.register_agent(f"bot{n}", "builtin", bot="random")[0].agent_id for n in range(2)]
    for agent_id in (endpoint_agent, *others):
        store.join("epl", agent_id, None)
    (match_id,) = store.claim("epl", [[endpoint_agent, *others]], now_ms())
    assert store.start_match(match_id, "test-runner", 5) == "run"
    seats = store.get_match(match_id).seats
    record = {
        "format": RECORD_FORMAT,
        "match_id": match_id,
        "seats": [seat.record_entry() for seat in seats],
        "hands": [],
        "totals": [0, 0, 0],
        "winners": [1],
        "faults": [{"seat": 0, "hand": 1, "kind": "DISCONNECTED", "detail": f"endpoint {ADDRESS} is not reachable"}],
        "forfeited": [],
    }
    assert ADDRESS in json.dumps(record)
    store.finish_match(match_id, record)
    return match_id


@pytest.mark.slow
def test_only_the_host_and_the_agent_itself_see_an_endpoints_address(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    matchmaker = start_service("services.matchmaker", OHELL_WEB_TOKEN=WEB_TOKEN)
    store = RedisStore(redis.Redis.from_url(redis_server.url))
    host = auth_metadata(HOST_TOKEN)
    with matchmaker.channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        endpoint = stub.RegisterAgent(
            pb.RegisterAgentRequest(name="ep", kind=pb.AGENT_KIND_ENDPOINT, endpoint=ADDRESS), metadata=host
        )
        other = stub.RegisterAgent(pb.RegisterAgentRequest(name="other", kind=pb.AGENT_KIND_CONNECTED), metadata=host)
        assert endpoint.agent.endpoint == ADDRESS  # the host registered it
        agent_id = endpoint.agent.agent_id
        match_id = finished_match_with(store, agent_id)
        stub.CreateTournament(
            tpb.CreateTournamentRequest(
                tournament=tpb.Tournament(
                    tournament_id="ept",
                    entrants=[
                        tpb.TournamentEntrant(bot="random"),
                        tpb.TournamentEntrant(bot="heuristic"),
                        tpb.TournamentEntrant(endpoint="10.9.8.7:7001"),  # given by address alone
                    ],
                    rules=rules_pb2.Rules(hand_sizes=[1]),
                    deals=1,
                )
            ),
            metadata=host,
            timeout=60,
        )
        others: dict[str, tuple[tuple[str, str], ...]] = {
            "anonymous": (),
            "the web app": auth_metadata(WEB_TOKEN),
            "another agent": auth_metadata(other.token),
            "the host reading as anyone": (*host, PUBLIC_VIEW),  # the web app's reads without a web token
        }
        for caller, metadata in others.items():
            shown = stub.GetAgent(pb.GetAgentRequest(agent_id=agent_id), metadata=metadata).agent
            assert shown.kind == pb.AGENT_KIND_ENDPOINT and shown.endpoint == "", caller
            match = stub.GetMatch(pb.GetMatchRequest(match_id=match_id), metadata=metadata)
            record = json.loads(match.record_json)
            assert "10.9.8.7" not in match.record_json, (caller, match.record_json)
            assert [seat["kind"] for seat in record["seats"]][0] == "endpoint" and record["seats"][0]["name"] == "ep"
            assert record["faults"][0]["kind"] == "DISCONNECTED"
            tourney = stub.GetTournament(tpb.GetTournamentRequest(tournament_id="ept"), metadata=metadata)
            assert "10.9.8.7" not in str(tourney), (caller, tourney)
            assert tourney.tournament.entrants[2].WhichOneof("player") == "endpoint"  # the kind stays
        own = stub.GetAgent(pb.GetAgentRequest(agent_id=agent_id), metadata=auth_metadata(endpoint.token)).agent
        assert own.endpoint == ADDRESS
        assert stub.GetAgent(pb.GetAgentRequest(agent_id=agent_id), metadata=host).agent.endpoint == ADDRESS
        hosted = json.loads(stub.GetMatch(pb.GetMatchRequest(match_id=match_id), metadata=host).record_json)
        assert hosted["seats"][0]["address"] == ADDRESS
        tourney = stub.GetTournament(tpb.GetTournamentRequest(tournament_id="ept"), metadata=host)
        assert tourney.tournament.entrants[2].endpoint == "10.9.8.7:7001"
    store.client.close()


@pytest.mark.slow
def test_a_wrong_token_is_no_way_to_the_address(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    """GetAgent is public: a made-up token reads what an anonymous caller reads, no error."""
    matchmaker = start_service("services.matchmaker")
    with matchmaker.channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        endpoint = stub.RegisterAgent(
            pb.RegisterAgentRequest(name="ep", kind=pb.AGENT_KIND_ENDPOINT, endpoint=ADDRESS),
            metadata=auth_metadata(HOST_TOKEN),
        )
        request = pb.GetAgentRequest(agent_id=endpoint.agent.agent_id)
        try:
            shown = stub.GetAgent(request, metadata=auth_metadata("made-up-token-0123456789")).agent
        except grpc.RpcError as error:
            raise AssertionError(f"{error.code()}: {error.details()}") from None
        assert shown.name == "ep" and shown.endpoint == ""


@pytest.mark.slow  # over a second: the quick subset stays quick
def test_the_web_app_reading_as_the_host_shows_its_visitors_no_address(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis, tmp_path: Path
) -> None:
    """A web app given the host token and no web token reads with the host token (its visitors are
    not one anonymous caller at the services); what it serves them is still what anyone may read."""
    matchmaker = start_service("services.matchmaker")
    store = RedisStore(redis.Redis.from_url(redis_server.url))
    with matchmaker.channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        endpoint = stub.RegisterAgent(
            pb.RegisterAgentRequest(name="ep", kind=pb.AGENT_KIND_ENDPOINT, endpoint=ADDRESS),
            metadata=auth_metadata(HOST_TOKEN),
        )
        match_id = finished_match_with(store, endpoint.agent.agent_id)
    env = {key: value for key, value in os.environ.items() if key != "OHELL_WEB_TOKEN"}
    site = SimpleNamespace(matchmaker_address=matchmaker.address, engine_address="127.0.0.1:9")
    web, url = start_web(site, tmp_path / "web.log", env | {"OHELL_HOST_TOKEN": HOST_TOKEN})  # type: ignore[arg-type]
    try:
        for path in (f"/matches/{match_id}/record.json", f"/matches/{match_id}"):
            with urllib.request.urlopen(url + path, timeout=30) as reply:
                body = reply.read().decode()
            assert reply.status == 200 and "10.9.8.7" not in body, (path, body[:2000])
        with urllib.request.urlopen(f"{url}/matches/{match_id}/record.json", timeout=30) as reply:
            assert json.loads(reply.read())["seats"][0]["name"] == "ep"
    finally:
        web.terminate()
        web.wait(10)
    store.client.close()
