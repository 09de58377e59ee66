"""Challenges against everyone else on the engine: the host of a challenge with a connected seat
listens on Redis for the agent's answers for as long as the match lasts, and those listeners must
not take the connections the gateway and the token lookups need."""

from __future__ import annotations

import asyncio
import collections
import contextlib
from collections.abc import Callable

import grpc
import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys, register_agent_token
from arena.proto.ohell.v1 import challenge_pb2, challenge_pb2_grpc, match_pb2, rules_pb2
from arena.rpc.auth import auth_metadata

from .agents import Agent, connect_outcomes
from .conftest import HOST_TOKEN, Service

SLOW_TOKEN = "security-tests-slow-agent-token-0"  # a1: connected, never answers
OTHER_TOKEN = "security-tests-other-agent-token-1"  # a2: connects while the challenges play
CHALLENGES = 110


async def never(agent: Agent, request: match_pb2.DecisionRequest) -> None:
    return None


def started(agent: Agent) -> int:
    return sum(event.HasField("match_started") for event in agent.events)


def slow_challenge(agent_id: str = "a1") -> challenge_pb2.ChallengeRequest:
    """A challenge of a1 (SLOW_TOKEN's: it never answers) and two built-in bots, a minute per decision."""
    seats = [
        challenge_pb2.ChallengeSeat(agent_id=agent_id),
        challenge_pb2.ChallengeSeat(builtin="random"),
        challenge_pb2.ChallengeSeat(builtin="random"),
    ]
    return challenge_pb2.ChallengeRequest(
        rules=rules_pb2.Rules(hand_sizes=[1]), seats=seats, time_control=match_pb2.TimeControl(decision_ms=60_000)
    )


@pytest.mark.slow  # a process of its own, and a few seconds of challenges in play
def test_challenges_in_play_do_not_take_the_engines_redis_connections(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    """Each challenge with a connected seat held a Redis connection of the engine's one pool (100)
    for its whole length, the pool of every token lookup: 110 challenges of an agent that takes its
    time failed every other agent's Connect UNAVAILABLE (MaxConnectionsError). Agents can hold that
    many (two each; an agent's challenge may last hours). The challenges' hosts have a pool of their own now."""
    client = redis.Redis.from_url(redis_server.url)
    register_agent_token(client, "a1", SLOW_TOKEN, Keys())
    register_agent_token(client, "a2", OTHER_TOKEN, Keys())
    client.close()
    engine = start_service("services.engine")

    async def attack() -> collections.Counter[str]:
        slow = await Agent(engine.address, SLOW_TOKEN, never).start()
        request = slow_challenge()
        async with grpc.aio.insecure_channel(engine.address) as channel:
            stub = challenge_pb2_grpc.ChallengeServiceStub(channel)

            async def keep_playing() -> None:  # a challenge that fails is asked again at once
                while True:
                    with contextlib.suppress(grpc.aio.AioRpcError):
                        await stub.Challenge(request, metadata=auth_metadata(HOST_TOKEN))

            challenges = [asyncio.create_task(keep_playing()) for _ in range(CHALLENGES)]
            await slow.until(lambda agent: started(agent) >= 90, "the matches to start", timeout_s=60)
            connects = await connect_outcomes(engine.address, OTHER_TOKEN)
            for task in challenges:
                task.cancel()
            await asyncio.wait(challenges)
        await slow.stop()
        return connects

    assert asyncio.run(attack()) == {"connected": 20}


@pytest.mark.slow  # some seconds of challenges in play
def test_challenges_past_the_hosts_pool_are_refused_in_plain_words(
    redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the hosts' pool (HOST_CONNECTIONS) a challenge failed UNKNOWN ('Unexpected error', a
    traceback in the engine's log) as its host found no connection to listen on; the engine holds at
    most MAX_HOSTED challenges in play now and refuses the next RESOURCE_EXHAUSTED. An engine of its
    own with the pool and the cap scaled down (8 connections, 4 challenges)."""
    from services.engine import challenge, server

    monkeypatch.setattr(server, "HOST_CONNECTIONS", 8)
    monkeypatch.setattr(challenge, "MAX_HOSTED", 4)
    client = redis.Redis.from_url(redis_server.url)
    register_agent_token(client, "a1", SLOW_TOKEN, Keys())
    client.close()

    async def attack() -> collections.Counter[str]:
        engine = await server.start_engine(redis_url=redis_server.url, host_token=HOST_TOKEN, keys=Keys())
        address = f"127.0.0.1:{engine.port}"
        slow = await Agent(address, SLOW_TOKEN, never).start()
        request = slow_challenge()
        ended: collections.Counter[str] = collections.Counter()
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = challenge_pb2_grpc.ChallengeServiceStub(channel)

                async def play() -> None:
                    try:
                        await stub.Challenge(request, metadata=auth_metadata(HOST_TOKEN))
                    except grpc.aio.AioRpcError as error:
                        ended[error.code().name] += 1

                challenges = [asyncio.create_task(play()) for _ in range(12)]
                await slow.until(lambda agent: started(agent) >= 4, "the matches to start", timeout_s=30)
                await asyncio.sleep(2)  # the others are refused, or fail
                for task in challenges:
                    task.cancel()
                await asyncio.wait(challenges)
        finally:
            await slow.stop()
            await engine.stop()
        return ended

    assert asyncio.run(attack()) == {"RESOURCE_EXHAUSTED": 8}


@pytest.mark.slow  # some seconds of challenges in play
def test_self_registered_agents_hold_only_their_share_of_the_engines_challenges(
    redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Anyone may register agents while a ladder is open, and each holds 2 challenges for as long as its
    own seat takes: 128 self-registered agents held every challenge the engine hosts (MAX_HOSTED), the
    host's and its agents' too. Theirs are MAX_SELF_REGISTERED_HOSTED of them now. An engine of its own
    with the caps scaled down (4 challenges, 2 of self-registered agents)."""
    from services.engine import challenge, server

    monkeypatch.setattr(challenge, "MAX_HOSTED", 4)
    monkeypatch.setattr(challenge, "MAX_SELF_REGISTERED_HOSTED", 2)
    tokens = {"a1": SLOW_TOKEN, "a2": OTHER_TOKEN, "a3": "security-tests-host-registered-token-3"}
    client = redis.Redis.from_url(redis_server.url)
    for agent_id, token in tokens.items():
        register_agent_token(client, agent_id, token, Keys())
    for agent_id in ("a1", "a2"):  # strangers' agents
        client.hset(Keys().agent(agent_id), "self_registered", 1)
    client.close()

    async def attack() -> tuple[collections.Counter[str], list[str]]:
        engine = await server.start_engine(redis_url=redis_server.url, host_token=HOST_TOKEN, keys=Keys())
        address = f"127.0.0.1:{engine.port}"
        agents = {agent_id: await Agent(address, token, never).start() for agent_id, token in tokens.items()}
        ended: collections.Counter[str] = collections.Counter()
        refusals: list[str] = []
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                stub = challenge_pb2_grpc.ChallengeServiceStub(channel)

                async def play(agent_id: str) -> None:
                    try:
                        await stub.Challenge(slow_challenge(agent_id), metadata=auth_metadata(tokens[agent_id]))
                    except grpc.aio.AioRpcError as error:
                        ended[error.code().name] += 1
                        refusals.append(error.details() or "")

                strangers = [asyncio.create_task(play(agent_id)) for agent_id in ("a1", "a1", "a2", "a2")]
                await agents["a1"].until(
                    lambda _: started(agents["a1"]) + started(agents["a2"]) >= 2 and len(refusals) >= 2,
                    "two strangers' matches to start and two to be refused",
                    timeout_s=30,
                )
                invited = asyncio.create_task(play("a3"))  # the host's agent: a place is left for it
                await agents["a3"].until(lambda agent: started(agent) >= 1, "the host's agent's match", timeout_s=30)
                for task in [*strangers, invited]:
                    task.cancel()
                await asyncio.wait([*strangers, invited])
        finally:
            for agent in agents.values():
                await agent.stop()
            await engine.stop()
        return ended, refusals

    ended, refusals = asyncio.run(attack())
    assert ended == {"RESOURCE_EXHAUSTED": 2}, (ended, refusals)
    assert all("challenges of self-registered agents are in play" in refusal for refusal in refusals), refusals
