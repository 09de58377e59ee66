"""Faults are normal events: each match finishes, the fault is recorded, nothing hangs.

The match host runs here; the agents' streams are held by the engine service process."""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc
import pytest
import redis
import redis.asyncio as aioredis
from svc_helpers import DROP, EngineProcess, ScriptedAgent, card, first_legal, legal_policy, until

from arena.embedded_redis import free_port
from arena.keys import Keys
from arena.play.host import host_match
from arena.play.specs import SeatSpec, TimeControl
from arena.proto.ohell.v1 import match_pb2, spectate_pb2
from ohell.presets import preset
from ohell.referee import referee
from ohell.rules import Rules

SMALL = Rules(hand_sizes=(3, 2))


def host(redis_url: str, seats: list[SeatSpec], match_id: str, **time: int) -> Any:
    return host_match(match_id, SMALL, seats, seed=5, time_control=TimeControl(**time), redis_url=redis_url)


# a deadline no test waits out: a fault that waited on it instead of coming at once runs out GUARD_S,
# whatever the machine's speed (no test asserts on how many seconds a match took)
NEVER_MS = 3_600_000
GUARD_S = 120


def kinds_of(record: dict, seat: int) -> list[str]:
    return [fault["kind"] for fault in record["faults"] if fault["seat"] == seat]


@pytest.mark.slow  # over a second: the quick subset stays quick
def test_agent_sleeping_past_its_deadline_times_out(engine_process, make_agent, shared_redis_server) -> None:
    agent_id, token = make_agent("sleeper")

    async def sleepy(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
        if len(agent.decisions) <= 2:
            await asyncio.sleep(0.6)  # past 150 ms + the 100 ms bank
        return first_legal(request)

    async def run() -> tuple[dict, ScriptedAgent]:
        agent = await ScriptedAgent(engine_process.address, token, sleepy).start()
        seats = [SeatSpec.connected(agent_id), SeatSpec.builtin("random"), SeatSpec.builtin("heuristic")]
        record = await host(shared_redis_server.url, seats, "sleep-1", decision_ms=150, time_bank_ms=100)
        await asyncio.wait_for(agent.ended.wait(), 5)
        await agent.stop()
        return record, agent

    record, agent = asyncio.run(run())
    assert record["complete"] and referee(record).valid
    assert kinds_of(record, 0)[:2] == ["TIMEOUT", "TIMEOUT"]
    first = record["faults"][0]
    assert first["hand"] == 1 and "no action within 250 ms" in first["detail"]  # deadline + bank
    assert "no action within 150 ms" in record["faults"][1]["detail"]  # the bank is spent
    assert record["forfeited"] == []
    # the first decision's observation carried the whole bank; later ones show it spent
    assert agent.decisions[0].observation.time_bank_ms == 100 and agent.decisions[0].deadline_ms == 150
    assert agent.decisions[-1].observation.time_bank_ms == 0


def test_illegal_and_garbage_actions_are_faults(engine_process, make_agent, shared_redis_server) -> None:
    agent_id, token = make_agent("cheat")

    async def cheat(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
        n = len(agent.decisions) - 1
        action = match_pb2.Action(match_id=request.match_id, seat=request.seat, decision_id=request.decision_id)
        held = {(c.suit, c.rank) for c in request.observation.hand}
        if n == 0:
            return action  # neither bid nor card: GARBAGE
        if n == 1:
            action.card.rank = 5  # a card without a suit: GARBAGE
            return action
        if n == 2:
            missing = next(i for i in range(52) if (card(i).suit, card(i).rank) not in held)
            action.card.CopyFrom(card(missing))  # a card it does not hold: ILLEGAL
            return action
        if n == 3:
            action.bid = 1  # a bid answering a play request: the wrong kind of answer, GARBAGE
            return action
        if n == 4:
            action.bid = 9  # 9 tricks in a 2-card hand: ILLEGAL
            return action
        return first_legal(request)

    async def run() -> dict:
        agent = await ScriptedAgent(engine_process.address, token, cheat).start()
        seats = [SeatSpec.builtin("random"), SeatSpec.connected(agent_id), SeatSpec.builtin("random")]
        record = await host(shared_redis_server.url, seats, "cheat-1", decision_ms=1000)
        await agent.stop()
        return record

    record = asyncio.run(run())
    assert record["complete"] and referee(record).valid
    faults = [f for f in record["faults"] if f["seat"] == 1]
    assert [f["kind"] for f in faults] == ["GARBAGE", "GARBAGE", "ILLEGAL", "GARBAGE", "ILLEGAL"]
    assert [f["hand"] for f in faults] == [1, 1, 1, 1, 2]
    assert "neither bid nor card" in faults[0]["detail"]
    assert "suit: 0" in faults[1]["detail"]
    assert "does not hold" in faults[2]["detail"]
    assert "action.bid: set, but the decision is a play" in faults[3]["detail"]
    assert "bid 9" in faults[4]["detail"]
    # the default action was played for it: bid 0 in hand 1 (the first bid was garbage)
    assert record["hands"][0]["bids"][1] == 0
    # spectators got each fault, in order, just before the default action it caused
    client = redis.Redis.from_url(shared_redis_server.url)
    entries = client.xrange(Keys().match_events("cheat-1"))
    client.close()
    events = [spectate_pb2.MatchEvent.FromString(fields[b"e"]) for _, fields in entries]
    assert [e.sequence for e in events] == list(range(len(events)))
    kinds = [e.WhichOneof("event") for e in events]
    assert kinds.count("fault") == 5
    first = kinds.index("fault")
    assert kinds[first + 1] == "bid_made" and events[first + 1].bid_made.seat == 1
    assert events[first + 1].bid_made.bid == 0


def test_agent_disconnecting_mid_hand_is_disconnected_then_forfeits(
    engine_process, make_agent, shared_redis_server
) -> None:
    agent_id, token = make_agent("quitter")

    async def quit_after_one(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
        return DROP if len(agent.decisions) == 2 else first_legal(request)  # bids, then hangs up at its 1st card

    async def run() -> dict:
        agent = await ScriptedAgent(engine_process.address, token, quit_after_one).start()
        seats = [SeatSpec.builtin("heuristic"), SeatSpec.builtin("random"), SeatSpec.connected(agent_id)]
        hosting = host(shared_redis_server.url, seats, "quit-1", decision_ms=NEVER_MS, max_faults=3)
        record = await asyncio.wait_for(hosting, GUARD_S)
        await agent.stop()
        return record

    record = asyncio.run(run())
    assert record["complete"] and referee(record).valid
    faults = [f for f in record["faults"] if f["seat"] == 2]
    assert [f["kind"] for f in faults] == ["DISCONNECTED"] * 3  # not TIMEOUT; then it forfeits: no more asking
    assert faults[0]["hand"] == 1
    assert record["forfeited"] == [2] and 2 not in record["winners"]


@pytest.mark.slow  # over a second: the quick subset stays quick
def test_agent_reconnecting_plays_on(engine_process, make_agent, shared_redis_server) -> None:
    agent_id, token = make_agent("flaky")
    slow_id, slow_token = make_agent("slow")

    async def run() -> tuple[dict, ScriptedAgent]:
        gone = asyncio.Event()

        async def drop_once(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
            if len(agent.decisions) == 2:
                gone.set()
                return DROP
            return first_legal(request)

        async def slow(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
            await asyncio.sleep(0.15)  # keeps the match going while the flaky agent comes back
            return first_legal(request)

        first = await ScriptedAgent(engine_process.address, token, drop_once).start()
        other = await ScriptedAgent(engine_process.address, slow_token, slow).start()
        seats = [SeatSpec.connected(agent_id), SeatSpec.connected(slow_id), SeatSpec.builtin("random")]
        hosting = asyncio.create_task(host(shared_redis_server.url, seats, "flaky-1", decision_ms=2000))
        await asyncio.wait_for(gone.wait(), 10)
        await first.stop()
        second = await ScriptedAgent(engine_process.address, token, legal_policy).start()
        record = await asyncio.wait_for(hosting, 20)
        await asyncio.wait_for(second.ended.wait(), 5)
        await second.stop()
        await other.stop()
        return record, second

    record, second = asyncio.run(run())
    assert record["complete"] and referee(record).valid
    kinds = kinds_of(record, 0)
    assert kinds and set(kinds) == {"DISCONNECTED"} and record["forfeited"] == []
    assert second.decisions, "the reconnected agent was asked again"
    assert second.events[0].WhichOneof("event") == "match_started"  # the start is re-sent to it
    # every decision of its seat (2 bids, 5 plays): 1 answered, then faults, then the new stream's
    assert 1 + len(kinds) + len(second.decisions) == 2 + 5


def test_new_stream_replaces_old_and_gets_the_pending_decision(engine_process, make_agent, shared_redis_server) -> None:
    agent_id, token = make_agent("twice")

    async def run() -> tuple[dict, ScriptedAgent, ScriptedAgent]:
        asked = asyncio.Event()

        async def silent(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
            asked.set()
            return None  # never answers: a newer stream takes over

        old = await ScriptedAgent(engine_process.address, token, silent).start()
        seats = [SeatSpec.connected(agent_id), SeatSpec.builtin("random"), SeatSpec.builtin("random")]
        hosting = asyncio.create_task(host(shared_redis_server.url, seats, "twice-1", decision_ms=3000))
        await asyncio.wait_for(asked.wait(), 10)
        new = await ScriptedAgent(engine_process.address, token, legal_policy).start()
        record = await asyncio.wait_for(hosting, 20)
        await asyncio.wait_for(old.task, 5)  # type: ignore[arg-type]
        await new.stop()
        return record, old, new

    record, old, new = asyncio.run(run())
    assert record["faults"] == [] and record["complete"]
    assert old.error is not None and old.error.code() == grpc.StatusCode.ABORTED
    assert new.decisions[0].decision_id == old.decisions[0].decision_id  # re-sent on the new stream


def test_unreachable_endpoint_is_disconnected_and_forfeits(shared_redis_server) -> None:
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    seats = [SeatSpec.endpoint(address), SeatSpec.builtin("random"), SeatSpec.builtin("random")]
    hosting = host(shared_redis_server.url, seats, "nowhere-1", decision_ms=NEVER_MS, max_faults=2)
    record = asyncio.run(asyncio.wait_for(hosting, GUARD_S))
    assert kinds_of(record, 0) == ["DISCONNECTED", "DISCONNECTED"]  # refused at once, not TIMEOUT
    assert record["faults"][0]["detail"] == "UNAVAILABLE: the endpoint is not reachable"  # the record is public
    assert record["seats"][0] == {"name": "endpoint", "kind": "endpoint", "address": address}  # for the host
    assert record["forfeited"] == [0] and record["complete"]


def test_matches_hosted_on_threads_leave_no_grpc_work_to_a_closed_event_loop(caplog: pytest.LogCaptureFixture) -> None:
    """The remote worker hosts matches on a pool of threads, each in an event loop of its own that closes
    when its match ends. The endpoint's stream reader was cancelled at the end while its read was still
    pending in gRPC: that read ended after the loop had closed, and whichever loop was running then
    logged "Exception in callback PollerCompletionQueue._handle_events ... Event loop is closed"."""
    from arena.play.host import host_match_sync

    address = f"127.0.0.1:{free_port()}"  # nothing listens there: each decision dials again, in vain
    seats = [SeatSpec.endpoint(address), SeatSpec.builtin("random"), SeatSpec.builtin("random")]

    def play(match: int) -> dict[str, Any]:
        return host_match_sync(f"threads-{match}", Rules(hand_sizes=(2, 1)), seats, match, spectate=False)

    with caplog.at_level(logging.WARNING), ThreadPoolExecutor(2) as pool:
        records = list(pool.map(play, range(24)))
    assert all(record["complete"] and kinds_of(record, 0) for record in records)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


def against_endpoint(redis_url: str, servicer: Any, match_id: str, **time: int) -> dict:
    """A match with ``servicer`` (an AgentService) served as the endpoint agent in seat 0."""
    from arena.proto.ohell.v1 import agent_pb2, agent_pb2_grpc
    from arena.rpc.server import Service, create_server, stop_server

    async def run() -> dict:
        name = agent_pb2.DESCRIPTOR.services_by_name["AgentService"].full_name
        served = await create_server(
            "127.0.0.1:0", [Service(name, lambda s: agent_pb2_grpc.add_AgentServiceServicer_to_server(servicer, s))]
        )
        try:
            seats = [
                SeatSpec.endpoint(f"127.0.0.1:{served.port}"),
                SeatSpec.builtin("random"),
                SeatSpec.builtin("random"),
            ]
            return await host(redis_url, seats, match_id, **time)
        finally:
            await stop_server(served, 0)

    return asyncio.run(run())


def test_an_endpoints_oversized_answers_do_not_bloat_the_record(shared_redis_server) -> None:
    """An endpoint (no gateway checks its answers) that echoes a 1 MB match id: each GARBAGE fault's
    detail names it, and the finished record (served by GetMatch, replayed on the web) stays small."""
    from arena.proto.ohell.v1 import agent_pb2, agent_pb2_grpc

    class Bloater(agent_pb2_grpc.AgentServiceServicer):
        async def Play(self, requests: Any, context: Any) -> Any:
            async for request in requests:
                if request.event.WhichOneof("event") == "decision":
                    action = first_legal(request.event.decision)
                    action.match_id = "x" * 1_000_000
                    yield agent_pb2.PlayResponse(action=action)

    record = against_endpoint(shared_redis_server.url, Bloater(), "bloat-1", decision_ms=5_000, max_faults=3)
    assert kinds_of(record, 0) == ["GARBAGE"] * 3 and record["forfeited"] == [0]
    assert all(len(fault["detail"]) < 300 for fault in record["faults"]), [len(f["detail"]) for f in record["faults"]]
    assert "expected match 'bloat-1' seat 0" in record["faults"][0]["detail"]


def test_an_endpoints_own_error_text_reaches_the_record_as_printable_text(shared_redis_server) -> None:
    """A DISCONNECTED fault's detail carries the status an endpoint ends its call with, its text
    chosen by the endpoint's author; ``ohell match show`` prints the detail in the host's terminal,
    where escape sequences in it were played (the title set, the screen cleared)."""
    from arena.proto.ohell.v1 import agent_pb2, agent_pb2_grpc

    class Hostile(agent_pb2_grpc.AgentServiceServicer):
        async def Play(self, requests: Any, context: Any) -> Any:
            # ends the call once asked, when the host waits for an answer: an abort racing the host's
            # write of the match's start made grpc.aio report INTERNAL instead of this status
            async for request in requests:
                if request.event.WhichOneof("event") == "decision":
                    await context.abort(grpc.StatusCode.PERMISSION_DENIED, "no\x1b]0;pwned\x07\x1b[2J\u202eway\nout")
            yield agent_pb2.PlayResponse()  # never reached: makes Play a stream

    record = against_endpoint(shared_redis_server.url, Hostile(), "hostile-1", decision_ms=2_000, max_faults=2)
    details = [fault["detail"] for fault in record["faults"] if fault["seat"] == 0]
    assert details and all(detail.isprintable() for detail in details), details
    assert any("PERMISSION_DENIED: no" in detail and "way" in detail for detail in details), details


def test_an_endpoint_answering_bytes_that_are_no_message_is_disconnected_at_once(
    shared_redis_server, caplog: pytest.LogCaptureFixture
) -> None:
    """Before, each such answer logged gRPC's traceback in the host's log, the stream's reader died
    on AttributeError, and every later decision waited out its deadline: TIMEOUT faults, no reason."""
    from arena.proto.ohell.v1 import agent_pb2
    from arena.rpc.server import Service, create_server, stop_server

    name = agent_pb2.DESCRIPTOR.services_by_name["AgentService"].full_name

    async def play(requests: Any, context: grpc.aio.ServicerContext) -> Any:
        async for request in requests:
            if agent_pb2.PlayRequest.FromString(request).event.WhichOneof("event") == "decision":
                yield b"\xff\xff\xff\xff\x0f"  # corrupt wire format

    async def run() -> dict:
        handlers = {"Play": grpc.stream_stream_rpc_method_handler(play, response_serializer=bytes)}
        register = lambda server: server.add_generic_rpc_handlers(  # noqa: E731
            (grpc.method_handlers_generic_handler(name, handlers),)
        )
        served = await create_server("127.0.0.1:0", [Service(name, register)])
        try:
            seats = [SeatSpec.endpoint(f"127.0.0.1:{served.port}"), SeatSpec.builtin("random")]
            seats.append(SeatSpec.builtin("random"))
            return await host(shared_redis_server.url, seats, "corrupt-1", decision_ms=5_000, max_faults=2)
        finally:
            await stop_server(served, 0)

    with caplog.at_level(logging.WARNING):
        record = asyncio.run(run())
    assert kinds_of(record, 0) == ["DISCONNECTED", "DISCONNECTED"] and record["forfeited"] == [0]
    assert record["faults"][0]["detail"] == "the endpoint sent a message that is not a PlayResponse"
    assert not [r for r in caplog.records if r.name == "grpc._common"]


def test_an_endpoint_flooding_answers_to_nothing_is_disconnected(shared_redis_server) -> None:
    """Before, an endpoint streaming answers that matched no decision kept the host's loop parsing
    them for the whole match (only each decision's deadline ended a wait: TIMEOUT faults); the
    gateway closes a connected agent's stream for the same flood."""
    from arena.proto.ohell.v1 import agent_pb2, agent_pb2_grpc

    class Flooder(agent_pb2_grpc.AgentServiceServicer):
        async def Play(self, requests: Any, context: Any) -> Any:
            while True:
                yield agent_pb2.PlayResponse(action=match_pb2.Action(decision_id=10**9, bid=0))

    record = against_endpoint(shared_redis_server.url, Flooder(), "flood-1", decision_ms=5_000, max_faults=2)
    assert kinds_of(record, 0) == ["DISCONNECTED", "DISCONNECTED"] and record["forfeited"] == [0]
    assert record["faults"][0]["detail"] == "more than 500 answers (or 50 a second) to no pending decision"


def test_duplicate_answer_gets_a_notice(engine_process, make_agent, shared_redis_server) -> None:
    agent_id, token = make_agent("twice-answer")

    async def answer_twice(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
        await agent.send(first_legal(request))
        return first_legal(request)  # the same decision again: not pending any more

    async def run() -> ScriptedAgent:
        agent = await ScriptedAgent(engine_process.address, token, answer_twice).start()
        seats = [SeatSpec.connected(agent_id), SeatSpec.builtin("random"), SeatSpec.builtin("random")]
        record = await host(shared_redis_server.url, seats, "dup-1", decision_ms=2000)
        assert record["faults"] == []
        await asyncio.wait_for(agent.ended.wait(), 5)
        await agent.stop()
        return agent

    agent = asyncio.run(run())
    assert agent.notices and all(n.code == "FAILED_PRECONDITION" for n in agent.notices)
    assert "is not pending" in agent.notices[0].message and "action.decision_id: " in agent.notices[0].message


def test_agent_process_killed_mid_match_is_noticed_at_once(engine_process, make_agent, shared_redis_server) -> None:
    """``ohell bot connect`` (a built-in bot over the SDK) is SIGKILLed while the match runs."""
    agent_id, token = make_agent("killed")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena.cli",
            "bot",
            "connect",
            "--bot",
            "random",
            "--address",
            engine_process.address,
            "--token",
            token,
        ],
        stdout=subprocess.DEVNULL,
    )
    client = redis.Redis.from_url(shared_redis_server.url)
    try:
        deadline = time.monotonic() + 20
        while client.get(Keys().agent_presence(agent_id)) is None:
            assert time.monotonic() < deadline and process.poll() is None, "the agent never connected"
            time.sleep(0.05)

        async def run() -> dict:
            seats = [SeatSpec.connected(agent_id), SeatSpec.builtin("heuristic"), SeatSpec.builtin("random")]
            hosting = asyncio.create_task(
                host_match(
                    "killed-1",
                    preset("classic"),
                    seats,
                    4,
                    time_control=TimeControl(decision_ms=NEVER_MS, max_faults=200),
                    redis_url=shared_redis_server.url,
                )
            )
            # Kill once play has begun (the public stream has events): a fixed sleep let a fast
            # machine finish the whole match first.
            events = aioredis.Redis.from_url(shared_redis_server.url)
            try:
                while not await events.xlen(Keys().match_events("killed-1")) and not hosting.done():
                    await asyncio.sleep(0.002)
            finally:
                await events.aclose()
            process.kill()
            return await asyncio.wait_for(hosting, GUARD_S)

        record = asyncio.run(run())
    finally:
        process.kill()
        process.wait()
        client.close()
    kinds = kinds_of(record, 0)
    assert kinds and set(kinds) == {"DISCONNECTED"} and record["complete"] and referee(record).valid


def test_a_reconnected_agent_is_not_asked_again_in_a_finished_match(
    engine_process, make_agent, shared_redis_server
) -> None:
    """A decision left unanswered (timed out, then the seat forfeited) stayed pending at the
    gateway after its match ended, and was sent again on the agent's next stream."""
    agent_id, token = make_agent("forfeiter")

    async def silent(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
        return None

    async def run() -> ScriptedAgent:
        first = await ScriptedAgent(engine_process.address, token, silent).start()
        seats = [SeatSpec.connected(agent_id), SeatSpec.builtin("random"), SeatSpec.builtin("random")]
        record = await host(shared_redis_server.url, seats, "forfeit-1", decision_ms=200, time_bank_ms=0, max_faults=1)
        assert record["forfeited"] == [0] and len(first.decisions) == 1
        await asyncio.wait_for(first.ended.wait(), 5)
        again = await ScriptedAgent(engine_process.address, token).start()  # replaces the first stream
        # what a new stream is re-sent goes out before its actions are read: the notice refusing this
        # stray action comes after anything re-sent
        await again.send(match_pb2.Action(match_id="forfeit-1", seat=0, decision_id=1, bid=0))
        await until(lambda: again.notices or again.error)
        await first.stop()
        await again.stop()
        return again

    again = asyncio.run(run())
    assert again.error is None and [event.WhichOneof("event") for event in again.events] == ["notice"]
    assert again.notices[0].code == "FAILED_PRECONDITION", again.notices


@pytest.mark.slow  # a second engine process
def test_connecting_at_another_engine_replaces_the_stream_held_at_the_first(
    engine_process, make_agent, shared_redis_server
) -> None:
    """Engines run replicated (deploy/k8s: 2): an agent that reconnects lands on either. The older
    stream went on at its engine, which put the agent's presence back every 2 s: hosts sent its
    decisions to either stream by turns (to a dead connection, until keepalive noticed: faults)."""
    agent_id, token = make_agent("roamer")
    other_engine = EngineProcess(shared_redis_server.url)
    presence = redis.Redis.from_url(shared_redis_server.url)
    try:

        async def run() -> tuple[ScriptedAgent, ScriptedAgent, list[bytes], list[int]]:
            first = await ScriptedAgent(engine_process.address, token).start()
            second = await ScriptedAgent(other_engine.address, token, challenges_open=True).start()
            holders, open_to_challenges = [], []
            for _ in range(80):  # 4 s: two presence refreshes of each engine
                await asyncio.sleep(0.05)
                holders.append(presence.get(Keys().agent_presence(agent_id)))
                open_to_challenges.append(presence.exists(Keys().challengeable(agent_id)))
            seats = [SeatSpec.connected(agent_id), SeatSpec.builtin("random"), SeatSpec.builtin("random")]
            record = await host(shared_redis_server.url, seats, "roam-1", decision_ms=2000)
            assert record["faults"] == [], record["faults"]
            await first.stop()
            await second.stop()
            return first, second, holders, open_to_challenges

        first, second, holders, open_to_challenges = asyncio.run(run())
    finally:
        presence.close()
        assert other_engine.stop() == 0
    assert first.error is not None and first.error.code() == grpc.StatusCode.ABORTED, first.error
    assert len(set(holders)) == 1, holders  # one gateway held it all along
    assert all(open_to_challenges), "the replaced stream's end took the newer stream's opt-in along"
    assert second.decisions and not first.decisions
