"""Streams that outlive their token: rotating or revoking an agent's token ends every stream opened
with the old one, not only the gateway's. Whoever held a leaked token must not keep the agent
queued once the host has rotated it."""

from __future__ import annotations

import time
from collections.abc import Callable

import grpc
import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.ladder.redis_store import RedisStore
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc, rules_pb2
from arena.rpc.auth import auth_metadata

from .conftest import HOST_TOKEN, Service
from .stacks import wait_until

HOST = auth_metadata(HOST_TOKEN)


@pytest.mark.slow  # a few seconds: the stream sees the rotation at its next check of the token
def test_a_rotated_token_ends_its_queue_stream(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    """A WatchQueue stream opened with a token the host then rotated renewed the agent's ticket for
    as long as its holder kept it open: the agent was queued (and seated, once its author connected
    with the new token) by whoever had the old one. It ends UNAUTHENTICATED now, and its ticket goes."""
    store = RedisStore(redis.Redis.from_url(redis_server.url))
    with start_service("services.matchmaker").channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        ladder = pb.Ladder(name="main", rules=rules_pb2.Rules(hand_sizes=[1]), seats=3)
        stub.CreateLadder(pb.CreateLadderRequest(ladder=ladder), metadata=HOST)
        agent = stub.RegisterAgent(pb.RegisterAgentRequest(name="leaky", kind=pb.AGENT_KIND_CONNECTED), metadata=HOST)
        agent_id = agent.agent.agent_id
        stream = stub.WatchQueue(pb.WatchQueueRequest(ladder="main"), metadata=auth_metadata(agent.token), timeout=20)
        stream.initial_metadata()  # queued
        assert store.has_ticket("main", agent_id)
        rotated_at = time.monotonic()
        stub.RotateAgentToken(pb.RotateAgentTokenRequest(agent_id=agent_id), metadata=HOST)
        with pytest.raises(grpc.RpcError) as ended:
            list(stream)
        assert time.monotonic() - rotated_at < 10
        assert ended.value.code() == grpc.StatusCode.UNAUTHENTICATED, ended.value.details()
        assert "rotated" in ended.value.details()
        wait_until(lambda: not store.has_ticket("main", agent_id), 5, "the old stream's ticket to go")
    store.client.close()
