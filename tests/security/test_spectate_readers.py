"""Spectators against everyone else on the engine: each match followed is one reader blocked on
Redis, and those readers must not take the connections the gateway, the rate limits and the match
hosts need."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable

import grpc
import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys, register_agent_token
from arena.proto.ohell.v1 import spectate_pb2, spectate_pb2_grpc
from arena.rpc.auth import auth_metadata
from services.engine.spectate import MAX_FEEDS

from .agents import connect_outcomes
from .conftest import Service

WEB_TOKEN = "security-tests-web-token-0123456789"
AGENT_TOKEN = "security-tests-agent-token-0123"
FOLLOWED = 300  # matches followed at once, none of them there yet: each reader waits on Redis


@pytest.mark.slow  # a process of its own, and a few seconds of waiting readers
def test_spectators_do_not_take_the_engines_redis_connections(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    """Each followed match kept a blocking read on the engine's one Redis pool, whose 100 connections
    every token lookup, rate limit and relayed decision shares: 300 matches followed through the web
    app's token (uncapped there: the web app holds each visitor to 4) failed most other calls
    UNAVAILABLE (MaxConnectionsError), an agent's Connect among them. The readers have a pool of their
    own now, and past MAX_FEEDS matches at once a new one is RESOURCE_EXHAUSTED."""
    client = redis.Redis.from_url(redis_server.url)
    register_agent_token(client, "a1", AGENT_TOKEN, Keys())
    client.close()
    engine = start_service("services.engine", OHELL_WEB_TOKEN=WEB_TOKEN)

    async def attack() -> tuple[collections.Counter[str], collections.Counter[str]]:
        ended: collections.Counter[str] = collections.Counter()

        async def follow(stub: spectate_pb2_grpc.SpectateServiceStub, match_id: str) -> None:
            request = spectate_pb2.SpectateRequest(match_id=match_id, wait_ms=60_000)
            try:
                async for _ in stub.Spectate(request, metadata=auth_metadata(WEB_TOKEN)):
                    pass
            except grpc.aio.AioRpcError as error:
                ended[error.code().name] += 1

        async with grpc.aio.insecure_channel(engine.address) as channel:
            stub = spectate_pb2_grpc.SpectateServiceStub(channel)
            readers = [asyncio.create_task(follow(stub, f"nowhere.{n}")) for n in range(FOLLOWED)]
            await asyncio.sleep(2)  # every reader is waiting on Redis
            connects = await connect_outcomes(engine.address, AGENT_TOKEN)
            for reader in readers:
                reader.cancel()
        return connects, ended

    connects, ended = asyncio.run(attack())
    assert connects == {"connected": 20}
    assert ended == {"RESOURCE_EXHAUSTED": FOLLOWED - MAX_FEEDS}
