"""Token auth on every agent RPC, one seat per agent, clear status codes, size limits."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from typing import Any

import grpc
import pytest
import redis
import svc_helpers
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from svc_helpers import ScriptedAgent, first_legal, until

from arena.keys import MATCH_EVENTS_TTL_S, Keys
from arena.play.host import host_match
from arena.play.players import CLOSED_UNREAD
from arena.play.specs import SeatSpec, TimeControl
from arena.proto.ohell.v1 import (
    agent_pb2,
    agent_pb2_grpc,
    challenge_pb2,
    challenge_pb2_grpc,
    match_pb2,
    rules_pb2,
    rules_service_pb2,
    rules_service_pb2_grpc,
    spectate_pb2,
    spectate_pb2_grpc,
)
from arena.rpc.auth import auth_metadata
from arena.sdk import serve_async
from ohell.bots import make_bot
from ohell.rules import Rules
from services.engine.challenge import RecentIds

HOST_TOKEN = svc_helpers.HOST_TOKEN


def test_connect_without_or_with_a_wrong_token_is_unauthenticated(engine_process) -> None:
    async def run(token: str) -> grpc.aio.AioRpcError | None:
        agent = ScriptedAgent(engine_process.address, token)
        await agent.start()
        await asyncio.wait_for(agent.task, 5)  # type: ignore[arg-type]
        return agent.error

    missing = asyncio.run(run(""))
    assert missing is not None and missing.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "authorization" in (missing.details() or "")
    wrong = asyncio.run(run("not-a-token"))
    assert wrong is not None and wrong.code() == grpc.StatusCode.UNAUTHENTICATED
    assert "unknown agent token" in (wrong.details() or "")


def test_acting_for_another_seat_is_refused(engine_process, make_agent, shared_redis_server) -> None:
    agent_id, token = make_agent("impostor")

    async def other_seat(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
        action = first_legal(request)
        action.seat = (request.seat + 1) % 3
        return action

    async def run() -> tuple[dict, ScriptedAgent]:
        agent = await ScriptedAgent(engine_process.address, token, other_seat).start()
        seats = [SeatSpec.builtin("random"), SeatSpec.connected(agent_id), SeatSpec.builtin("random")]
        record = await host_match(
            "impostor-1",
            Rules(hand_sizes=(2,)),
            seats,
            3,
            time_control=TimeControl(decision_ms=300, time_bank_ms=0, max_faults=2),
            redis_url=shared_redis_server.url,
        )
        await until(lambda: agent.ended.is_set(), 5)
        await agent.stop()
        return record, agent

    record, agent = asyncio.run(run())
    # a misdirected answer is refused with a notice; the stream (and the agent's other matches) go on
    assert agent.error is None and agent.ended.is_set()
    refusals = [n for n in agent.notices if n.code == "PERMISSION_DENIED"]
    assert refusals and f"agent {agent_id!r} sits in seat 1 of match 'impostor-1', not seat 2" in refusals[0].message
    assert [f["kind"] for f in record["faults"]] == ["TIMEOUT", "TIMEOUT"]
    assert record["forfeited"] == [1] and record["complete"]


def test_an_answer_reaches_the_host_without_what_the_agent_added(
    engine_process, make_agent, shared_redis_server
) -> None:
    """An answer is relayed to a host elsewhere through Redis; fields the Action does not have went
    along (protobuf keeps unknown fields): an agent could put up to 4 MiB through the platform's Redis
    with every answer, at the rate it answers."""
    agent_id, token = make_agent("padder")
    padding = b"\xca\x0c\x80\x89\x7a" + b"x" * 2_000_000  # field 201 (tag, then its length 2,000,000)

    async def padded(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
        action = first_legal(request)
        action.MergeFromString(padding)
        assert action.ByteSize() > 2_000_000
        return action

    client = redis.Redis.from_url(shared_redis_server.url)

    async def run() -> tuple[dict, ScriptedAgent]:
        agent = await ScriptedAgent(engine_process.address, token, padded).start()
        seats = [SeatSpec.builtin("random"), SeatSpec.connected(agent_id), SeatSpec.builtin("random")]
        record = await host_match("padded-1", Rules(hand_sizes=(1,)), seats, 3, redis_url=shared_redis_server.url)
        await until(lambda: agent.ended.is_set(), 5)
        await agent.stop()
        return record, agent

    before = client.info("stats")["total_net_input_bytes"]
    record, agent = asyncio.run(run())
    received = client.info("stats")["total_net_input_bytes"] - before
    client.close()
    assert record["complete"] and not record["faults"] and len(agent.decisions) == 2
    assert received < 1_000_000, f"Redis took in {received} bytes for a match of two decisions"


def test_acting_in_a_match_without_a_seat_is_refused(engine_process, make_agent) -> None:
    _, token = make_agent("stranger")

    async def run() -> ScriptedAgent:
        agent = await ScriptedAgent(engine_process.address, token).start()
        await agent.send(match_pb2.Action(match_id="", seat=0, decision_id=1, bid=0))
        await until(lambda: agent.notices)  # the first send was answered before the second goes
        await agent.send(match_pb2.Action(match_id="someone-elses", seat=0, decision_id=1, bid=0))
        await until(lambda: len(agent.notices) == 2)
        await agent.stop()
        return agent

    agent = asyncio.run(run())
    assert [n.code for n in agent.notices] == ["INVALID_ARGUMENT", "PERMISSION_DENIED"]
    assert "match_id" in agent.notices[0].message
    assert "has no seat in match 'someone-elses'" in agent.notices[1].message
    assert agent.error is None  # refused with a notice: the stream stays up


def test_a_notice_quotes_at_most_80_characters_of_the_action(engine_process, make_agent) -> None:
    """An action's match id of a megabyte came back whole in the notice (any error quotes at most 80
    characters of a caller's value)."""
    _, token = make_agent("long-ids")

    async def run() -> ScriptedAgent:
        agent = await ScriptedAgent(engine_process.address, token).start()
        await agent.send(match_pb2.Action(match_id="m" * 1_000_000, seat=0, decision_id=1, bid=0))
        await until(lambda: agent.notices)
        await agent.stop()
        return agent

    agent = asyncio.run(run())
    assert agent.notices[0].code == "PERMISSION_DENIED" and len(agent.notices[0].message) < 200
    assert f"has no seat in match {'m' * 80!r}" in agent.notices[0].message


async def _flood(agent: ScriptedAgent, count: int) -> None:
    """Send ``count`` actions for no pending decision, each once the last was answered (no write
    races the close), until the gateway ends the stream."""
    stray = match_pb2.Action(match_id="nobodys", seat=0, decision_id=1, bid=0)
    assert agent.task is not None
    for _ in range(count):
        answered = len(agent.notices)
        await agent.send(stray)
        while len(agent.notices) == answered and not agent.task.done():
            await asyncio.sleep(0.001)
        if agent.task.done():
            break
    await asyncio.wait_for(agent.task, 10)


@pytest.mark.slow
def test_a_flood_of_unusable_actions_closes_the_stream(engine_process, make_agent) -> None:
    # each answered with a notice, they took the gateway's loop from every other agent
    from services.engine.gateway import UNUSABLE_ACTIONS

    _, token = make_agent("flooder")

    async def run() -> tuple[ScriptedAgent, float]:
        agent = await ScriptedAgent(engine_process.address, token).start()
        began = time.monotonic()
        await _flood(agent, UNUSABLE_ACTIONS.burst * 3)
        return agent, time.monotonic() - began

    agent, flooding_s = asyncio.run(run())
    assert agent.error is not None and agent.error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "answered no pending decision" in (agent.error.details() or "")
    refilled = UNUSABLE_ACTIONS.rate * flooding_s
    assert UNUSABLE_ACTIONS.burst <= len(agent.notices) <= UNUSABLE_ACTIONS.burst + refilled + 1


@pytest.mark.slow
def test_a_flooder_reconnecting_does_not_get_a_fresh_allowance(engine_process, make_agent) -> None:
    """Before, the allowance of unusable actions belonged to the stream: an agent closed for
    flooding connected again (its calls allow 100 a second) and had 500 more at once, each time."""
    from services.engine.gateway import UNUSABLE_ACTIONS

    _, token = make_agent("reflooder")

    async def run() -> tuple[ScriptedAgent, float]:
        began = time.monotonic()
        await _flood(await ScriptedAgent(engine_process.address, token).start(), UNUSABLE_ACTIONS.burst * 3)
        again = await ScriptedAgent(engine_process.address, token).start()
        await _flood(again, UNUSABLE_ACTIONS.burst * 3)
        return again, time.monotonic() - began

    again, flooding_s = asyncio.run(run())
    assert again.error is not None and again.error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert len(again.notices) <= UNUSABLE_ACTIONS.rate * flooding_s + 1  # what refilled meanwhile, no more


def test_bytes_that_are_no_request_end_the_stream_saying_so(engine_process, make_agent) -> None:
    """Before, the stream ended with status OK and no word: the agent could not tell why it was
    dropped (and its matches' decisions were DISCONNECTED faults)."""
    from arena.sdk.connection import CONNECT_METHOD

    _, token = make_agent("garbler")

    async def run() -> tuple[grpc.StatusCode, str]:
        async with grpc.aio.insecure_channel(engine_process.address) as channel:
            connect = channel.stream_stream(CONNECT_METHOD, request_serializer=bytes, response_deserializer=bytes)
            call = connect(metadata=auth_metadata(token))
            await call.initial_metadata()
            await call.write(b"\xff\xff\xff\xff\x0f")
            with contextlib.suppress(grpc.aio.AioRpcError):
                async for _ in call:
                    pass
            return await call.code(), await call.details() or ""

    code, details = asyncio.run(run())
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "not a ConnectRequest" in details, (code, details)


def _challenge(address: str, request: challenge_pb2.ChallengeRequest, token: str | None) -> Any:
    with grpc.insecure_channel(address) as channel:
        stub = challenge_pb2_grpc.ChallengeServiceStub(channel)
        return stub.Challenge(request, metadata=auth_metadata(token) if token else None, timeout=30)


def _seats(*specs: tuple[str, str]) -> list[challenge_pb2.ChallengeSeat]:
    return [challenge_pb2.ChallengeSeat(**{kind: value}) for kind, value in specs]


def test_challenge_plays_connected_endpoint_and_builtin_seats(engine_process, make_agent) -> None:
    agent_id, token = make_agent("challenger")

    async def run() -> challenge_pb2.ChallengeResponse:
        agent = await ScriptedAgent(engine_process.address, token).start()
        endpoint = await serve_async(make_bot("heuristic", 1), token="endpoint-secret")
        request = challenge_pb2.ChallengeRequest(
            rules=rules_pb2.Rules(preset="classic", hand_sizes=[3, 1]),
            seed=9,
            match_id="challenge-ok",
            seats=_seats(("agent_id", agent_id), ("endpoint", f"127.0.0.1:{endpoint.port}"), ("builtin", "random")),
        )
        # only the host may seat an endpoint address (an agent gets PERMISSION_DENIED)
        response = await asyncio.to_thread(_challenge, engine_process.address, request, HOST_TOKEN)
        await agent.stop()
        await endpoint.server.stop(0)
        return response

    response = asyncio.run(run())
    record = json.loads(response.record.json)
    assert response.match_id == "challenge-ok" and record["complete"] and len(record["hands"]) == 2
    assert response.record.hands_played == 2 and response.record.complete
    assert [s.kind for s in response.record.seats] == ["connected", "endpoint", "builtin"]
    # the endpoint wants a token the challenge did not give: its seat is DISCONNECTED, not the match
    assert {f["seat"] for f in record["faults"]} == {1}
    assert {f["kind"] for f in record["faults"]} == {"DISCONNECTED"} and len(record["faults"]) == 6  # 2 bids, 4 cards
    # each decision redials; grpc.aio reports some refusals as INTERNAL with no reason (a write racing the
    # abort: about 1 in 4, and all six at once now and then under load), which the host words as such
    refused = [
        f["detail"] for f in record["faults"] if "UNAUTHENTICATED" in f["detail"] or f["detail"] == CLOSED_UNREAD
    ]
    assert len(refused) == 6, record["faults"]
    assert list(response.record.totals) == record["totals"] and len(response.record.faults) == len(record["faults"])
    assert response.record.faults[0].kind == match_pb2.FAULT_KIND_DISCONNECTED


@pytest.mark.parametrize(
    ("seats", "rules", "code", "words"),
    [
        (_seats(("builtin", "random"), ("builtin", "random")), None, "INVALID_ARGUMENT", "3 to 7 seats, got 2"),
        (
            _seats(("builtin", "nobody"), ("builtin", "random"), ("builtin", "random")),
            None,
            "INVALID_ARGUMENT",
            "seats[0].bot: 'nobody'",
        ),
        (
            [challenge_pb2.ChallengeSeat(name="x")] + _seats(("builtin", "random"), ("builtin", "random")),
            None,
            "INVALID_ARGUMENT",
            "seats[0]: sets none of",
        ),
        (
            _seats(("builtin", "random"), ("builtin", "random"), ("builtin", "random")),
            rules_pb2.Rules(preset="nonesuch"),
            "INVALID_ARGUMENT",
            "rules.preset: 'nonesuch'",
        ),
        (
            _seats(("builtin", "random"), ("builtin", "random"), ("builtin", "random")),
            rules_pb2.Rules(min_cards=99),
            "INVALID_ARGUMENT",
            "rules.min_cards: 99",
        ),
        (
            _seats(("builtin", "random"), ("builtin", "random"), ("builtin", "random"), ("builtin", "random")),
            rules_pb2.Rules(hand_sizes=[14]),
            "INVALID_ARGUMENT",
            "rules.hand_sizes: a hand of 14 cards, more than the 13 a deck gives each of 4 players",
        ),
        (
            _seats(("builtin", "random"), ("builtin", "random"), ("builtin", "random"), ("builtin", "random")),
            rules_pb2.Rules(min_cards=17),
            "INVALID_ARGUMENT",
            "rules.min_cards: 17 exceeds",
        ),
        (
            _seats(("agent_id", "ghost"), ("builtin", "random"), ("builtin", "random")),
            None,
            "PERMISSION_DENIED",
            "seats[0].agent_id: 'ghost' is not yours and does not accept challenges",
        ),
        (  # names of 1 MB each: the match was played, then its record was too large to return
            [challenge_pb2.ChallengeSeat(builtin="random", name=str(n) * 1_000_000) for n in range(3)],
            rules_pb2.Rules(hand_sizes=[1]),
            "INVALID_ARGUMENT",
            "seats[0].name: 1000000 characters",
        ),
        (
            _seats(("builtin", "random"), ("builtin", "random"), ("agent_id", "g" * 100_000)),
            None,
            "INVALID_ARGUMENT",
            "seats[2].agent_id: 100000 characters",
        ),
    ],
)
def test_bad_challenges_are_refused_with_the_right_code(engine_process, make_agent, seats, rules, code, words) -> None:
    _, token = make_agent("asker")
    request = challenge_pb2.ChallengeRequest(seats=seats, rules=rules)
    with pytest.raises(grpc.RpcError) as refused:
        _challenge(engine_process.address, request, token)
    assert refused.value.code().name == code
    assert words in refused.value.details()


def test_an_agent_takes_one_seat_of_a_challenge(engine_process, make_agent) -> None:
    # a gateway tells an agent's seats apart by the match id its answers carry
    agent_id, token = make_agent("twice")
    request = challenge_pb2.ChallengeRequest(
        seats=_seats(("agent_id", agent_id), ("builtin", "random"), ("agent_id", agent_id))
    )
    with pytest.raises(grpc.RpcError) as refused:
        _challenge(engine_process.address, request, token)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert f"seats[2].agent_id: {agent_id!r} already sits in seats[0]" in refused.value.details()


def test_challenge_needs_a_token_and_a_fresh_match_id(engine_process, make_agent) -> None:
    _, token = make_agent("asker")
    request = challenge_pb2.ChallengeRequest(
        seats=_seats(("builtin", "random"), ("builtin", "random"), ("builtin", "random")),
        rules=rules_pb2.Rules(hand_sizes=[1]),
        match_id="once",
    )
    with pytest.raises(grpc.RpcError) as refused:
        _challenge(engine_process.address, request, None)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert _challenge(engine_process.address, request, token).match_id == "once"
    with pytest.raises(grpc.RpcError) as again:
        _challenge(engine_process.address, request, token)
    assert again.value.code() == grpc.StatusCode.ALREADY_EXISTS and "match_id: 'once'" in again.value.details()


def test_a_refused_challenge_does_not_use_up_its_match_id(engine_process, make_agent, shared_redis_server) -> None:
    _, token = make_agent("retrier")
    seats = _seats(("builtin", "random"), ("builtin", "random"), ("builtin", "random"), ("builtin", "random"))
    match_id = f"retry-{uuid.uuid4().hex[:8]}-x"  # never "<ladder>-<n>", which challenges may not use
    bad = challenge_pb2.ChallengeRequest(seats=seats, rules=rules_pb2.Rules(hand_sizes=[14]), match_id=match_id)
    with pytest.raises(grpc.RpcError) as refused:
        _challenge(engine_process.address, bad, token)
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "rules.hand_sizes" in refused.value.details()
    good = challenge_pb2.ChallengeRequest(seats=seats, rules=rules_pb2.Rules(hand_sizes=[13]), match_id=match_id)
    assert _challenge(engine_process.address, good, token).record.hands_played == 1
    client = redis.Redis.from_url(shared_redis_server.url)
    try:  # the id is reserved in Redis for as long as the match's events are kept, not forever
        assert 0 < client.ttl(Keys().challenge_id(match_id)) <= MATCH_EVENTS_TTL_S
    finally:
        client.close()


def test_recent_ids_forget_the_oldest_beyond_capacity() -> None:
    recent = RecentIds(capacity=3)
    assert all(recent.add(name) for name in "abcd")
    assert not recent.add("d") and len(recent) == 3
    assert "a" not in recent and {"b", "c", "d"} == set(recent.ids)


def test_spectate_codes(engine_process) -> None:
    with grpc.insecure_channel(engine_process.address) as channel:
        stub = spectate_pb2_grpc.SpectateServiceStub(channel)
        with pytest.raises(grpc.RpcError) as empty:
            list(stub.Spectate(spectate_pb2.SpectateRequest(), timeout=5))
        assert empty.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "match_id" in empty.value.details()
        with pytest.raises(grpc.RpcError) as missing:
            list(stub.Spectate(spectate_pb2.SpectateRequest(match_id="never", wait_ms=100), timeout=5))
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND and "'never'" in missing.value.details()


def test_health_reflection_and_message_size_limit(engine_process) -> None:
    with grpc.insecure_channel(engine_process.address, options=[("grpc.max_send_message_length", -1)]) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", "ohell.v1.AgentGatewayService", "ohell.v1.RulesService"):
            status = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status
            assert status == health_pb2.HealthCheckResponse.SERVING
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        answer = next(reflection.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")])))
        names = {service.name for service in answer.list_services_response.service}
        assert {
            "ohell.v1.AgentGatewayService",
            "ohell.v1.ChallengeService",
            "ohell.v1.RulesService",
            "ohell.v1.SpectateService",
        } <= names
        rules = rules_service_pb2_grpc.RulesServiceStub(channel)
        with pytest.raises(grpc.RpcError) as too_big:
            rules.RefereeRecord(rules_service_pb2.RefereeRecordRequest(record_json="x" * (5 * 1024 * 1024)), timeout=10)
        assert too_big.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_sdk_endpoint_refuses_an_observation_without_a_phase() -> None:
    async def run() -> grpc.aio.AioRpcError:
        endpoint = await serve_async(make_bot("random", 1))
        request = match_pb2.AgentEvent()
        request.decision.kind = match_pb2.DECISION_KIND_BID
        request.decision.legal_bids.append(0)
        table = request.decision.observation  # a table that can be, its phase left PHASE_UNSPECIFIED
        table.num_players, table.bids[:], table.tricks_won[:], table.scores[:] = 3, [-1] * 3, [0] * 3, [0] * 3
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{endpoint.port}") as channel:
                call = agent_pb2_grpc.AgentServiceStub(channel).Play(iter([agent_pb2.PlayRequest(event=request)]))
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    async for _ in call:
                        pass
                return refused.value
        finally:
            await endpoint.server.stop(0)

    error = asyncio.run(run())
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT and "observation.phase: 0" in (error.details() or "")


def test_without_redis_made_up_tokens_share_their_peers_rate_limit() -> None:
    # without Redis the limit is this process's: a token counts as its own caller only when the
    # service's token store knows it, else a fresh token on every call would be a fresh budget
    from arena.rpc.ratelimit import RateLimit
    from services.engine.server import start_engine

    async def run() -> None:
        engine = await start_engine(tokens={"known-token": "agent-1"}, rate_limit=RateLimit(0.5, 6))
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{engine.port}") as channel:
                stub = rules_service_pb2_grpc.RulesServiceStub(channel)
                request = rules_service_pb2.ListPresetsRequest()
                admitted = 0
                with pytest.raises(grpc.aio.AioRpcError) as limited:
                    for _ in range(20):
                        await stub.ListPresets(request, metadata=auth_metadata(uuid.uuid4().hex), timeout=10)
                        admitted += 1
                assert limited.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert admitted == 6  # the burst of the one peer they all come from
                for _ in range(6):  # a token the service knows is a caller of its own
                    await stub.ListPresets(request, metadata=auth_metadata("known-token"), timeout=10)
        finally:
            await engine.stop()

    asyncio.run(run())
