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
from services.engine import spectate
from services.engine.server import start_engine
from services.engine.spectate import MAX_FEEDS

from .agents import connect_outcomes
from .conftest import HOST_TOKEN, Service
from .feeds import start_matches

WEB_TOKEN = "security-tests-web-token-0123456789"
AGENT_TOKEN = "security-tests-agent-token-0123"
FOLLOWED = 300  # matches followed at once, each one started: each reader waits on Redis for more


async def follow_to_the_end(
    stub: spectate_pb2_grpc.SpectateServiceStub, match_id: str, ended: collections.Counter[str], wait_ms: int = 60_000
) -> None:
    request = spectate_pb2.SpectateRequest(match_id=match_id, wait_ms=wait_ms)
    try:
        async for _ in stub.Spectate(request, metadata=auth_metadata(WEB_TOKEN)):
            ended["event"] += 1
    except grpc.aio.AioRpcError as error:
        ended[error.code().name] += 1


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
    start_matches(redis_server.url, [f"running.{n}" for n in range(FOLLOWED)])
    engine = start_service("services.engine", OHELL_WEB_TOKEN=WEB_TOKEN)

    async def attack() -> tuple[collections.Counter[str], collections.Counter[str]]:
        ended: collections.Counter[str] = collections.Counter()
        async with grpc.aio.insecure_channel(engine.address) as channel:
            stub = spectate_pb2_grpc.SpectateServiceStub(channel)
            readers = [asyncio.create_task(follow_to_the_end(stub, f"running.{n}", ended)) for n in range(FOLLOWED)]
            await asyncio.sleep(2)  # every reader is waiting on Redis
            connects = await connect_outcomes(engine.address, AGENT_TOKEN)
            for reader in readers:
                reader.cancel()
        return connects, ended

    connects, ended = asyncio.run(attack())
    assert connects == {"connected": 20}
    assert ended == {"event": MAX_FEEDS, "RESOURCE_EXHAUSTED": FOLLOWED - MAX_FEEDS}


@pytest.mark.slow
def test_waits_for_matches_that_never_come_leave_the_readers_to_real_matches(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    """A follower of a match not there yet (wait_ms up to 60 s) held a reader for its whole wait:
    MAX_FEEDS such waits (32 addresses of 8 streams, or 64 web visitors of 4) made every live view
    RESOURCE_EXHAUSTED. A wait costs no reader now: the engine looks for the match before following
    it, so a match that has started is followed whatever number of waits are open."""
    start_matches(redis_server.url, ["running"])
    engine = start_service("services.engine", OHELL_WEB_TOKEN=WEB_TOKEN)

    async def attack() -> tuple[collections.Counter[str], collections.Counter[str]]:
        waited: collections.Counter[str] = collections.Counter()
        live: collections.Counter[str] = collections.Counter()
        async with grpc.aio.insecure_channel(engine.address) as channel:
            stub = spectate_pb2_grpc.SpectateServiceStub(channel)
            waits = [asyncio.create_task(follow_to_the_end(stub, f"nowhere.{n}", waited)) for n in range(FOLLOWED)]
            await asyncio.sleep(2)  # every wait is open
            viewers = [
                asyncio.create_task(follow_to_the_end(stub, "running", live, wait_ms)) for wait_ms in (60_000, 0)
            ]
            for _ in range(200):  # 10 s at most
                if sum(live.values()) == len(viewers):
                    break
                await asyncio.sleep(0.05)
            for task in [*waits, *viewers]:
                task.cancel()
        return waited, live

    waited, live = asyncio.run(attack())
    assert live == {"event": 2}  # wait_ms 0 ("do not wait") too: the match is there
    assert waited == {}  # still waiting, none refused


def test_waits_for_matches_not_there_are_capped_and_others_cannot_shut_out_the_web_app(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The web app's token and the host's may open any number of spectate streams: each could be a wait
    for a match that never comes (up to 60 s), a stream held and an id in every look for arrivals, without
    bound. Past MAX_AWAITED_PER_CALLER of a caller's, or MAX_AWAITED of the other callers' together, a wait
    is RESOURCE_EXHAUSTED naming the cap; a wait that ends frees its place. Agents (or addresses) filling
    the engine's cap do not refuse the web app's waits (every visitor's live view) or the host's: counted
    in it, 512 addresses holding their 8 streams each did. (Caps lowered: the engine in-process.)"""
    monkeypatch.setattr(spectate, "MAX_AWAITED_PER_CALLER", 3)
    monkeypatch.setattr(spectate, "MAX_AWAITED", 5)
    agents = {f"security-tests-waiter-{n}-0123456789": f"waiter{n}" for n in range(3)}
    first, second, third = agents

    async def attack() -> list[str]:
        engine = await start_engine(tokens=agents, host_token=HOST_TOKEN, web_token=WEB_TOKEN)
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{engine.port}") as channel:
                stub = spectate_pb2_grpc.SpectateServiceStub(channel)

                async def drain(token: str, match_id: str, wait_ms: int) -> grpc.aio.AioRpcError | None:
                    request = spectate_pb2.SpectateRequest(match_id=match_id, wait_ms=wait_ms)
                    try:
                        async for _ in stub.Spectate(request, metadata=auth_metadata(token)):
                            pass
                    except grpc.aio.AioRpcError as error:
                        return error
                    return None

                async def refused(token: str, count: int) -> str:
                    """``count`` waits more of ``token``: the one refusal among them (the others wait on)."""
                    made = [
                        asyncio.create_task(drain(token, f"nowhere.{token[-15:]}.{n}", 60_000)) for n in range(count)
                    ]
                    opened.extend(made)
                    done, _ = await asyncio.wait(made, timeout=30, return_when=asyncio.FIRST_COMPLETED)
                    assert len(done) == 1
                    task = done.pop()
                    opened.remove(task)
                    error = task.result()
                    assert error is not None and error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error
                    return error.details() or ""

                opened: list[asyncio.Task[grpc.aio.AioRpcError | None]] = []
                seen = [await refused(first, 4), await refused(second, 3)]  # 3 + 2 waits: the engine's 5
                seen += [await refused(WEB_TOKEN, 4), await refused(HOST_TOKEN, 4)]  # each its own 3 still
                opened.pop(0).cancel()  # one of the first agent's ends: its place is free
                for _ in range(500):
                    error = await drain(third, "nowhere.now", 0)
                    if error is not None and error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                        break
                    await asyncio.sleep(0.01)
                seen.append(error.details() if error is not None else "")
                for task in opened:
                    task.cancel()
                return seen
        finally:
            await engine.stop(0)

    per_caller, in_all, web, host, freed = asyncio.run(attack())
    mine = "3 waits of yours for matches not started yet are open on this engine: close one first"
    assert per_caller == web == host == mine
    assert in_all == "5 waits for matches not started yet are open on this engine: try again shortly"
    assert freed == "match_id: no match 'nowhere.now' (waited 0 ms)"
