"""Class 7: what a caller makes up. A made-up bearer token is no new caller: it shares its peer's
rate limit and spectator share. Ids shaped like another key of the store (``a1:gateway``,
``<match>:events``) or far too long are NOT_FOUND with a short message, never UNKNOWN with a
Redis error nor an error too long to send."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable

import grpc
import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc, rules_pb2, spectate_pb2, spectate_pb2_grpc
from arena.rpc.auth import auth_metadata

from .conftest import HOST_TOKEN, Service

pytestmark = pytest.mark.slow  # service processes

HOST = auth_metadata(HOST_TOKEN)


def made_up() -> tuple[tuple[str, str], ...]:
    return auth_metadata(secrets.token_urlsafe(16))


def test_made_up_tokens_share_their_peers_rate_limit(start_service: Callable[..., Service]) -> None:
    with start_service("services.matchmaker", OHELL_RATE_LIMIT="0.5:6").channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        admitted = 0
        with pytest.raises(grpc.RpcError) as limited:
            for _ in range(20):  # a fresh token on every call: still one caller
                stub.ListLadders(pb.ListLaddersRequest(), metadata=made_up(), timeout=10)
                admitted += 1
        assert limited.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert admitted == 6  # the burst of the peer they all come from
        # a registered agent's token is its own caller, with its own budget
        agent = stub.RegisterAgent(pb.RegisterAgentRequest(name="a", kind=pb.AGENT_KIND_CONNECTED), metadata=HOST)
        for _ in range(6):
            stub.ListLadders(pb.ListLaddersRequest(), metadata=auth_metadata(agent.token), timeout=10)


def test_made_up_tokens_share_their_peers_spectator_share(start_service: Callable[..., Service]) -> None:
    from services.engine.spectate import MAX_SPECTATES_PER_CALLER

    with start_service("services.engine").channel() as channel:
        stub = spectate_pb2_grpc.SpectateServiceStub(channel)
        streams = []
        for number in range(MAX_SPECTATES_PER_CALLER + 1):
            request = spectate_pb2.SpectateRequest(match_id=f"later{number}", wait_ms=30_000)
            streams.append(stub.Spectate(request, metadata=made_up(), timeout=60))
        try:
            deadline = time.monotonic() + 10
            while not any(call.done() for call in streams) and time.monotonic() < deadline:
                time.sleep(0.05)
            refused = [call for call in streams if call.done()]
            assert len(refused) == 1, f"{len(refused)} of {len(streams)} streams with made-up tokens refused"
            assert refused[0].code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        finally:
            for call in streams:
                call.cancel()


def test_ids_shaped_like_other_keys_or_too_long_are_not_found(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    keys = Keys()
    with start_service("services.matchmaker").channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        ladder = pb.Ladder(name="main", rules=rules_pb2.Rules(preset="classic"))
        stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=HOST)
        agent = stub.RegisterAgent(pb.RegisterAgentRequest(name="a", kind=pb.AGENT_KIND_CONNECTED), metadata=HOST)
        agent_id = agent.agent.agent_id
        client.set(keys.agent_presence(agent_id), "gateway")  # as while the agent is connected
        client.xadd(keys.match_events("main-1"), {"e": b""})  # as while its match is spectated
        huge = "x" * 100_000
        calls = [
            (stub.GetAgent, pb.GetAgentRequest(agent_id=f"{agent_id}:gateway"), "agent"),
            (stub.GetAgent, pb.GetAgentRequest(agent_id=huge), "agent"),
            (stub.GetAgent, pb.GetAgentRequest(agent_id=agent_id, ladder=huge), "ladder"),
            (stub.GetMatch, pb.GetMatchRequest(match_id="main-1:events"), "match"),
            (stub.GetLadder, pb.GetLadderRequest(name=huge), "ladder"),
            (stub.GetLeaderboard, pb.GetLeaderboardRequest(ladder=huge), "ladder"),
            (stub.GetRatingHistory, pb.GetRatingHistoryRequest(ladder="main", agent_id=f"{agent_id}:gateway"), "agent"),
            (stub.PauseLadder, pb.PauseLadderRequest(name=huge), "ladder"),
            (stub.RotateAgentToken, pb.RotateAgentTokenRequest(agent_id=f"{agent_id}:gateway"), "agent"),
        ]
        for call, request, what in calls:
            with pytest.raises(grpc.RpcError) as missing:
                call(request, metadata=HOST, timeout=10)
            code, details = missing.value.code(), missing.value.details() or ""
            assert code == grpc.StatusCode.NOT_FOUND and f"no {what}" in details, (request, code, details[:300])
            assert len(details) < 300 and "WRONGTYPE" not in details
        # a value refused for what it is, not looked up: the error names the field, briefly
        as_agent = auth_metadata(agent.token)
        refusals = [
            (
                stub.JoinQueue,
                pb.JoinQueueRequest(ladder="main", agent_id=huge),
                as_agent,
                "PERMISSION_DENIED",
                "agent_id",
            ),
            (stub.ListMatches, pb.ListMatchesRequest(ladder="main", state=huge), None, "INVALID_ARGUMENT", "state"),
            (
                stub.RegisterAgent,
                pb.RegisterAgentRequest(name=huge, kind=pb.AGENT_KIND_CONNECTED),
                HOST,
                "INVALID_ARGUMENT",
                "name",
            ),
        ]
        for call, request, metadata, code_name, field in refusals:
            with pytest.raises(grpc.RpcError) as refused:
                call(request, metadata=metadata, timeout=10)
            code, details = refused.value.code(), refused.value.details() or ""
            assert code.name == code_name and field in details and len(details) < 300, (code, details[:300])
        # the real ones are still found
        assert stub.GetAgent(pb.GetAgentRequest(agent_id=agent_id), timeout=10).agent.name == "a"
    client.close()
