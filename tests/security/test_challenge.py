"""Class 3: a challenge seats only the caller's own agent, built-in bots and agents that opted in;
deadlines have a floor; a late answer never ends an agent's stream; caller-chosen ids are
validated and can never take a ladder match's id; built-in bots think off the event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator

import grpc
import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import register_agent_token
from arena.proto.ohell.v1 import (
    challenge_pb2,
    challenge_pb2_grpc,
    match_pb2,
    rules_pb2,
    rules_service_pb2,
    rules_service_pb2_grpc,
)
from arena.rpc.auth import auth_metadata

from .agents import Agent, first_legal
from .conftest import HOST_TOKEN, Service

pytestmark = pytest.mark.slow  # service processes and whole matches

SHORT = rules_pb2.Rules(hand_sizes=[2])
CALLER = "caller-token-0123456789"


def seats(*specs: tuple[str, str]) -> list[challenge_pb2.ChallengeSeat]:
    return [challenge_pb2.ChallengeSeat(**{kind: value}) for kind, value in specs]


async def challenge(address: str, token: str, **fields: object) -> challenge_pb2.ChallengeResponse:
    async with grpc.aio.insecure_channel(address) as channel:
        stub = challenge_pb2_grpc.ChallengeServiceStub(channel)
        return await stub.Challenge(challenge_pb2.ChallengeRequest(**fields), metadata=auth_metadata(token), timeout=60)


async def refused(address: str, token: str, **fields: object) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await challenge(address, token, **fields)
    return error.value.code(), error.value.details() or ""


def test_who_may_be_seated_deadlines_and_late_answers(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    engine = start_service("services.engine")
    client = redis.Redis.from_url(redis_server.url)
    for name in ("attacker", "victim", "volunteer"):
        register_agent_token(client, name, f"{name}-token-0123456789")

    async def late(agent: Agent, request: match_pb2.DecisionRequest) -> match_pb2.Action:
        await asyncio.sleep(0.4)  # past the 100 ms deadline (no time bank): a TIMEOUT, then a late answer
        return first_legal(request)

    async def run() -> None:
        address = engine.address
        victim = await Agent(address, "victim-token-0123456789").start()
        volunteer = await Agent(address, "volunteer-token-0123456789", late, challenges_open=True).start()
        attacker = await Agent(address, "attacker-token-0123456789").start()
        token = "attacker-token-0123456789"
        bots = (("builtin", "random"), ("builtin", "random"))
        code, detail = await refused(address, token, rules=SHORT, seats=seats(("agent_id", "victim"), *bots))
        assert code == grpc.StatusCode.PERMISSION_DENIED and "does not accept challenges" in detail
        code, detail = await refused(address, token, rules=SHORT, seats=seats(("endpoint", "127.0.0.1:1"), *bots))
        assert code == grpc.StatusCode.PERMISSION_DENIED and "endpoint" in detail
        code, detail = await refused(
            address, token, rules=SHORT, seed=7, seats=seats(("agent_id", "attacker"), ("agent_id", "volunteer"), *bots)
        )
        assert code == grpc.StatusCode.PERMISSION_DENIED and "seed" in detail
        one_ms = match_pb2.TimeControl(decision_ms=1)
        code, detail = await refused(
            address, token, rules=SHORT, time_control=one_ms, seats=seats(("agent_id", "volunteer"), *bots)
        )
        assert code == grpc.StatusCode.INVALID_ARGUMENT and "decision_ms: 1" in detail
        # the floor itself is accepted; the volunteer answers late every time
        floor = match_pb2.TimeControl(decision_ms=100, time_bank_ms=1, max_faults=100)
        done = await challenge(
            address, token, rules=SHORT, time_control=floor, seats=seats(("agent_id", "volunteer"), *bots)
        )
        assert {f.kind for f in done.record.faults} == {match_pb2.FAULT_KIND_TIMEOUT}
        asked = len(volunteer.sent("decision", done.record.match_id))
        assert asked == len(done.record.faults)  # every decision timed out
        # each late answer is told it came too late: as many notices as decisions
        await volunteer.until(lambda agent: len(agent.notices) >= asked, f"{asked} notices")
        assert volunteer.alive and victim.alive and attacker.alive  # nobody's stream was ended
        assert len(volunteer.notices) == asked and {n.code for n in volunteer.notices} == {"FAILED_PRECONDITION"}
        for agent in (victim, volunteer, attacker):
            await agent.stop()

    asyncio.run(run())
    client.close()


@pytest.fixture
def caller_engine(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> Iterator[tuple[Service, redis.Redis]]:
    """An engine service and its Redis, where agent "caller" has the token ``CALLER``."""
    engine = start_service("services.engine")
    client = redis.Redis.from_url(redis_server.url)
    register_agent_token(client, "caller", CALLER)
    yield engine, client
    client.close()


def test_match_ids_are_validated_and_never_ladder_ids(caller_engine: tuple[Service, redis.Redis]) -> None:
    engine, client = caller_engine
    bots = seats(*(("builtin", "random"),) * 3)

    async def run() -> None:
        token = CALLER
        for bad in ("x" * 100_000, "ladder-5", "classic.v2-17", "bad id", "ünï"):
            code, detail = await refused(engine.address, token, rules=SHORT, seats=bots, match_id=bad)
            assert code == grpc.StatusCode.INVALID_ARGUMENT and "match_id" in detail
        done = await challenge(engine.address, token, rules=SHORT, seats=bots)
        assert "-" not in done.match_id  # a generated id has no '-': never "<ladder>-<n>"
        assert (await challenge(engine.address, token, rules=SHORT, seats=bots, match_id="mine.1")).match_id == "mine.1"

    asyncio.run(run())
    assert max((len(key) for key in client.scan_iter()), default=0) < 200  # no giant key was stored


def test_builtin_challenges_do_not_stall_other_callers(start_service: Callable[..., Service]) -> None:
    engine = start_service("services.engine")
    long_match = rules_pb2.Rules(hand_sizes=[13] * 40)
    strong = seats(*(("builtin", "strong"),) * 4)
    done = threading.Event()

    def play() -> None:
        with engine.channel() as channel, pytest.raises(grpc.RpcError):
            stub = challenge_pb2_grpc.ChallengeServiceStub(channel)
            request = challenge_pb2.ChallengeRequest(rules=long_match, seats=strong)
            stub.Challenge(request, metadata=auth_metadata(HOST_TOKEN), timeout=4)  # cut short by its deadline
        done.set()

    player = threading.Thread(target=play, daemon=True)
    player.start()
    with engine.channel() as channel:
        stub = rules_service_pb2_grpc.RulesServiceStub(channel)
        answered = 0
        while not done.is_set():  # before the fix, each of these waited for the whole match
            # as the host: an anonymous caller this fast meets the rate limit (100/s, burst 400)
            stub.ListPresets(rules_service_pb2.ListPresetsRequest(), metadata=auth_metadata(HOST_TOKEN), timeout=2)
            answered += 1
    player.join(10)
    assert answered >= 5


def test_challenge_time_controls_have_ceilings_the_host_is_not_held_to(
    caller_engine: tuple[Service, redis.Redis],
) -> None:
    """Up to an hour a decision and an hour of bank let a caller hold an opted-in agent in a
    match for days."""
    engine, _ = caller_engine
    bots = seats(*(("builtin", "random"),) * 3)

    async def run() -> None:
        token = CALLER
        for field, value in (("decision_ms", 60_001), ("time_bank_ms", 600_001)):
            time_control = match_pb2.TimeControl(**{field: value})
            code, detail = await refused(engine.address, token, rules=SHORT, seats=bots, time_control=time_control)
            assert code == grpc.StatusCode.INVALID_ARGUMENT and f"time_control.{field}: {value}" in detail
        at_most = match_pb2.TimeControl(decision_ms=60_000, time_bank_ms=600_000)
        assert await challenge(engine.address, token, rules=SHORT, seats=bots, time_control=at_most)
        over = match_pb2.TimeControl(decision_ms=120_000, time_bank_ms=1_200_000)
        assert await challenge(engine.address, HOST_TOKEN, rules=SHORT, seats=bots, time_control=over)

    asyncio.run(run())


def test_seat_names_are_plain_text(caller_engine: tuple[Service, redis.Redis]) -> None:
    """A challenger names its seats; the names go to every seated agent (the SDK logs them in its
    author's terminal: "match ... started: you sit in seat 1 of <names>") and to every spectator.
    Escape sequences, line breaks and bidi overrides were taken as they came (only the length was
    checked); agents' own names are letters, digits and _ . - only."""
    engine, _ = caller_engine

    async def run() -> None:
        for bad in ("\x1b]0;pwned\x07", "\x1b[2J", "two\nlines", "v1\u202eevil", "nul\x00"):
            named = [challenge_pb2.ChallengeSeat(builtin="random", name=bad)] + seats(*(("builtin", "random"),) * 2)
            code, detail = await refused(engine.address, CALLER, rules=SHORT, seats=named)
            assert code == grpc.StatusCode.INVALID_ARGUMENT and "seats[0].name" in detail, (bad, code, detail)
            assert bad not in detail
        fine = [challenge_pb2.ChallengeSeat(builtin="random", name="Mr. Random (v2)")] + seats(
            *(("builtin", "random"),) * 2
        )
        done = await challenge(engine.address, CALLER, rules=SHORT, seats=fine)
        assert '"Mr. Random (v2)"' in done.record.json

    asyncio.run(run())


def test_a_revoked_agent_is_not_seated_while_its_stream_is_not_ended_yet(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    """The gateway ends a revoked agent's stream within a few seconds; a challenge naming it meanwhile
    seated it."""
    from arena.ladder.redis_store import RedisStore

    engine = start_service("services.engine")
    store = RedisStore(redis.Redis.from_url(redis_server.url))
    agent, _ = store.register_agent("revoked", "connected")
    store.client.set(store.keys.agent_presence(agent.agent_id), "gw-1", ex=60)  # its stream, not ended yet
    store.set_token(agent.agent_id, rotate=False)
    table = seats(("agent_id", agent.agent_id), ("builtin", "random"), ("builtin", "random"))
    code, detail = asyncio.run(refused(engine.address, HOST_TOKEN, rules=SHORT, seats=table))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "revoked" in detail
    store.client.close()
