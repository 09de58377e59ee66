"""A caller's challenges in play and spectate streams are bounded across engine replicas sharing one
Redis (deploy/k8s runs two), not per replica; a replica that dies frees its slots within a lease."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import grpc
import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys, register_agent_token
from arena.proto.ohell.v1 import challenge_pb2, match_pb2, spectate_pb2, spectate_pb2_grpc
from arena.rpc.auth import auth_metadata
from services.engine.challenge import MAX_CHALLENGES_PER_CALLER
from services.engine.slots import SLOT_LEASE_MS
from services.engine.spectate import MAX_SPECTATES_PER_CALLER

from .agents import Agent
from .conftest import Service
from .test_challenge import SHORT, challenge, refused, seats

pytestmark = pytest.mark.slow  # two engine processes each

TOKEN = "replica-caller-token-0123456789"
BOTS = (("builtin", "random"),) * 3
HOLD = match_pb2.TimeControl(decision_ms=60_000)  # the caller's silent agent holds its challenges this long


async def silent(agent: Agent, request: match_pb2.DecisionRequest) -> match_pb2.Action | None:
    return None


def two_engines(start_service: Callable[..., Service], redis_server: EmbeddedRedis) -> tuple[Service, Service]:
    client = redis.Redis.from_url(redis_server.url)
    register_agent_token(client, "caller", TOKEN)
    client.close()
    return start_service("services.engine"), start_service("services.engine")


async def hold_challenges(agent: Agent, engines: list[Service]) -> list[asyncio.Task[challenge_pb2.ChallengeResponse]]:
    """One challenge in play per engine of ``engines``, each waiting on the silent ``agent``."""
    held = [
        asyncio.create_task(
            challenge(
                engine.address,
                TOKEN,
                rules=SHORT,
                time_control=HOLD,
                seats=seats(("agent_id", "caller"), ("builtin", "random"), ("builtin", "random")),
            )
        )
        for engine in engines
    ]
    deadline = time.monotonic() + 20
    while len({event.decision.match_id for event in agent.events if event.HasField("decision")}) < len(engines):
        assert time.monotonic() < deadline, "the held challenges never asked the agent"
        await asyncio.sleep(0.05)
    return held


def test_a_callers_challenges_are_bounded_across_replicas(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    assert MAX_CHALLENGES_PER_CALLER == 2
    first, second = two_engines(start_service, redis_server)

    async def run() -> None:
        agent = await Agent(first.address, TOKEN, silent).start()
        held = await hold_challenges(agent, [first, second])
        for engine in (first, second):
            code, detail = await refused(engine.address, TOKEN, rules=SHORT, seats=seats(*BOTS))
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED, detail
            assert "2 of your challenges are in play" in detail
        for task in held:
            task.cancel()
        await asyncio.wait(held, timeout=10)
        await agent.stop()

    asyncio.run(run())


def test_a_dead_replicas_challenge_slots_are_free_within_the_lease(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    """On Redis's clock, not the machine's speed: no lease of the dead replica's outlives the kill by
    more than SLOT_LEASE_MS (nothing renews it), and a refusal comes only while one is unexpired."""
    doomed, survivor = two_engines(start_service, redis_server)
    client = redis.Redis.from_url(redis_server.url)

    def redis_ms() -> int:
        seconds, micros = client.time()
        return int(seconds) * 1000 + int(micros) // 1000

    async def run() -> None:
        agent = await Agent(doomed.address, TOKEN, silent).start()
        held = await hold_challenges(agent, [doomed, doomed])
        code, _ = await refused(survivor.address, TOKEN, rules=SHORT, seats=seats(*BOTS))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
        doomed.proc.popen.kill()  # SIGKILL: its leases are never released, only left to expire
        killed_ms = redis_ms()
        (slots,) = client.keys(Keys().slots("challenge", "*"))  # the caller's, as the engine names it
        assert client.zcard(slots) == 2
        await asyncio.wait(held, timeout=10)
        await agent.stop()
        while True:
            asked_ms = redis_ms()
            try:
                await challenge(survivor.address, TOKEN, rules=SHORT, seats=seats(*BOTS))
                return
            except grpc.aio.AioRpcError as error:
                assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error.details()
            # refused: a lease expiring after asked_ms is there; a renewal the replica sent as it died
            # may land just after the kill (1 s allowed), none later
            expiries = [score for _, score in client.zrange(slots, 0, -1, withscores=True)]
            assert expiries and max(expiries) > asked_ms, "refused with no lease unexpired"
            assert max(expiries) <= killed_ms + SLOT_LEASE_MS + 1000, "a dead replica's lease was renewed"
            await asyncio.sleep(max(0.05, (min(expiries) - asked_ms) / 1000))  # until the next one expires

    try:
        asyncio.run(asyncio.wait_for(run(), SLOT_LEASE_MS / 1000 + 60))  # a lease that never ends runs this out
    finally:
        client.close()


def test_a_callers_spectate_streams_are_bounded_across_replicas(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    engines = two_engines(start_service, redis_server)
    channels = [grpc.insecure_channel(engine.address) for engine in engines]
    stubs = [spectate_pb2_grpc.SpectateServiceStub(channel) for channel in channels]
    streams = []
    try:
        for number in range(MAX_SPECTATES_PER_CALLER + 1):  # by turns: 5 at one replica, 4 at the other
            request = spectate_pb2.SpectateRequest(match_id=f"later{number}", wait_ms=30_000)
            streams.append(stubs[number % 2].Spectate(request, metadata=auth_metadata(TOKEN), timeout=60))
        # every stream decided: the 8 taken slots in Redis (claimed by one script each) and a refusal
        client = redis.Redis.from_url(redis_server.url)
        try:
            held = lambda: sum(client.zcard(key) for key in client.keys(Keys().slots("spectate", "*")))  # noqa: E731
            deadline = time.monotonic() + 30
            while held() < MAX_SPECTATES_PER_CALLER or not any(call.done() for call in streams):
                assert time.monotonic() < deadline, f"{held()} slots held, no stream refused"
                time.sleep(0.05)
            assert held() == MAX_SPECTATES_PER_CALLER
        finally:
            client.close()
        refused_calls = [call for call in streams if call.done()]
        assert len(refused_calls) == 1, f"{len(refused_calls)} of {len(streams)} streams refused"
        assert refused_calls[0].code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "8 spectate streams of yours are open" in (refused_calls[0].details() or "")
    finally:
        for call in streams:
            call.cancel()
        for channel in channels:
            channel.close()
