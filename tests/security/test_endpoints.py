"""Class 5: the platform authenticates itself to endpoint agents (it presents the agent's token),
dials only endpoints the host registered, and keeps network error details to itself."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import grpc
import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import register_agent_token
from arena.ladder.redis_store import RedisStore
from arena.proto.ohell.v1 import challenge_pb2, challenge_pb2_grpc, match_pb2, matchmaker_pb2_grpc, rules_pb2
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.rpc.auth import auth_metadata

from ..ladder.helpers import match_state
from .conftest import HOST_TOKEN, Service
from .stacks import endpoint_ladder, endpoint_process, free_port, start_stack, wait_until

pytestmark = pytest.mark.slow  # a whole stack


def test_ladder_dials_endpoints_with_their_token(redis_server: EmbeddedRedis) -> None:
    stack = start_stack(redis_server, engine=False)
    store = RedisStore(redis.Redis.from_url(redis_server.url))
    try:
        with grpc.insecure_channel(stack.matchmaker_address) as channel:
            stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
            port = free_port()
            agent = endpoint_ladder(stub, stack.host_token, port)
            with endpoint_process("heuristic", agent.token, port):  # it accepts only its own token
                join = pb.JoinQueueRequest(ladder="ep", agent_id=agent.agent.agent_id, lease_seconds=60)
                stub.JoinQueue(join, metadata=auth_metadata(agent.token))
                finished = lambda: match_state(stack, store, "ep-1")[0] == "finished"  # noqa: E731 (Redis, then the archive)
                wait_until(finished, 60, "the endpoint's match to finish", stack)
            record = json.loads(stub.GetMatch(pb.GetMatchRequest(match_id="ep-1")).record_json)
        assert record["faults"] == []  # the endpoint saw its token on every call
        assert [seat["kind"] for seat in record["seats"]].count("endpoint") == 1
    finally:
        stack.cleanup(graceful=False)
        store.client.close()


def test_agents_cannot_make_the_engine_dial_and_errors_hide_the_network(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    engine = start_service("services.engine")
    client = redis.Redis.from_url(redis_server.url)
    register_agent_token(client, "prober", "prober-token-0123456789")
    closed = free_port()  # nothing listens here
    seats = [challenge_pb2.ChallengeSeat(endpoint=f"127.0.0.1:{closed}")] + [
        challenge_pb2.ChallengeSeat(builtin="random") for _ in range(2)
    ]
    request = challenge_pb2.ChallengeRequest(
        rules=rules_pb2.Rules(hand_sizes=[2]), seats=seats, time_control=match_pb2.TimeControl(decision_ms=500)
    )

    async def run() -> tuple[grpc.StatusCode, challenge_pb2.ChallengeResponse]:
        async with grpc.aio.insecure_channel(engine.address) as channel:
            stub = challenge_pb2_grpc.ChallengeServiceStub(channel)
            try:
                await stub.Challenge(request, metadata=auth_metadata("prober-token-0123456789"), timeout=30)
                code = grpc.StatusCode.OK
            except grpc.aio.AioRpcError as error:
                code = error.code()
            return code, await stub.Challenge(request, metadata=auth_metadata(HOST_TOKEN), timeout=30)

    code, hosted = asyncio.run(run())
    client.close()
    assert code == grpc.StatusCode.PERMISSION_DENIED  # an agent cannot make the engine dial anything
    faults = json.loads(hosted.record.json)["faults"]
    assert faults and {f["kind"] for f in faults} == {"DISCONNECTED"}
    for fault in faults:  # the seat's own record says it was unreachable, never how the network answered
        assert "not reachable" in fault["detail"], fault["detail"]
        for leak in ("refused", "errno", "Connection", "failed to connect", "ipv4:", f"127.0.0.1:{closed}"):
            assert leak not in fault["detail"], fault["detail"]  # the record is public; the address the host's
