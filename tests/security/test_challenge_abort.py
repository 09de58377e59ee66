"""A challenge stopped by its caller (cancelled, or its deadline passed) tells its seats and its
spectators that the match was aborted, and the gateway keeps nothing of it to re-send."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import grpc
import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import register_agent_token
from arena.proto.ohell.v1 import (
    challenge_pb2,
    challenge_pb2_grpc,
    gateway_pb2,
    match_pb2,
    spectate_pb2,
    spectate_pb2_grpc,
)
from arena.rpc.auth import auth_metadata

from .agents import Agent
from .conftest import Service

pytestmark = pytest.mark.slow  # service processes

TOKEN = "sleeper-token-0123456789"


async def silent(agent: Agent, request: match_pb2.DecisionRequest) -> match_pb2.Action | None:
    return None  # never answers: the match waits on this seat until the caller gives up


async def spectate(address: str, match_id: str) -> list[spectate_pb2.MatchEvent]:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = spectate_pb2_grpc.SpectateServiceStub(channel)
        request = spectate_pb2.SpectateRequest(match_id=match_id, wait_ms=10_000)
        return [response.event async for response in stub.Spectate(request, timeout=30)]


def ended(agent: Agent, match_id: str) -> list[match_pb2.MatchEnded]:
    return [
        e.match_ended
        for e in agent.events
        if e.WhichOneof("event") == "match_ended" and e.match_ended.match_id == match_id
    ]


async def stop_midway(address: str, match_id: str, how: str, sleeper: Agent) -> None:
    seats = [challenge_pb2.ChallengeSeat(agent_id="sleeper")] + [challenge_pb2.ChallengeSeat(builtin="random")] * 2
    request = challenge_pb2.ChallengeRequest(
        seats=seats, match_id=match_id, time_control=match_pb2.TimeControl(decision_ms=30_000)
    )
    async with grpc.aio.insecure_channel(address) as channel:
        stub = challenge_pb2_grpc.ChallengeServiceStub(channel)
        call = stub.Challenge(request, metadata=auth_metadata(TOKEN), timeout=1.5 if how == "deadline" else 60)
        if how == "cancel":  # once the match is under way: the sleeper was asked
            await sleeper.until(lambda agent: agent.sent("decision", match_id), "the sleeper's first decision")
            call.cancel()
        with pytest.raises((grpc.aio.AioRpcError, asyncio.CancelledError)):
            await call


@pytest.mark.parametrize("how", ["deadline", "cancel"])
def test_a_stopped_challenge_ends_for_its_seats_and_spectators(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis, how: str
) -> None:
    engine = start_service("services.engine")
    client = redis.Redis.from_url(redis_server.url)
    register_agent_token(client, "sleeper", TOKEN)
    match_id = f"stopped.{how}"

    async def run() -> None:
        sleeper = await Agent(engine.address, TOKEN, silent).start()
        watching = asyncio.create_task(spectate(engine.address, match_id))
        await stop_midway(engine.address, match_id, how, sleeper)
        for _ in range(50):
            if ended(sleeper, match_id):
                break
            await asyncio.sleep(0.1)
        [result] = ended(sleeper, match_id)
        assert result.aborted and not result.winners
        events = await asyncio.wait_for(watching, 10)
        assert events[-1].WhichOneof("event") == "match_ended" and events[-1].match_ended.aborted
        # a new stream of the same agent gets nothing of the stopped match re-sent
        again = await Agent(engine.address, TOKEN, silent).start()
        # what a new stream is re-sent goes out before its actions are read: the notice refusing a
        # stray action comes after anything re-sent
        async with again.writing:
            await again.call.write(gateway_pb2.ConnectRequest(action=match_pb2.Action(match_id=match_id, bid=0)))
        await again.until(lambda agent: agent.notices or not agent.alive, "the stray action's notice")
        assert [e.WhichOneof("event") for e in again.events] == ["notice"], again.events
        for agent in (sleeper, again):
            await agent.stop()

    asyncio.run(run())
    client.close()
