"""An agent that connects again gets its matches' MatchStarted and pending decisions re-sent first:
an event the hosts send while the new stream is still being set up (its presence written to Redis,
its headers sent) waits for them. It was written at once, ahead of the MatchStarted of its own
match (an SDK then decoded the decision with rules it did not have yet), and the early write sent
the headers itself, so the gateway's own send of them could fail and end the new stream."""

from __future__ import annotations

import asyncio
from typing import Any

from svc_helpers import ScriptedAgent

from arena.proto.ohell.v1 import match_pb2
from services.engine.server import start_engine


async def silent(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
    return None  # never answers: the decision stays pending, to be re-sent on the new stream


def decision(decision_id: int) -> match_pb2.AgentEvent:
    event = match_pb2.AgentEvent()
    event.decision.match_id, event.decision.seat, event.decision.decision_id = "m-1", 0, decision_id
    event.decision.kind, event.decision.deadline_ms = match_pb2.DECISION_KIND_BID, 60_000
    event.decision.legal_bids.extend([0, 1])
    return event


def test_events_sent_while_a_new_stream_is_set_up_come_after_what_is_re_sent(shared_redis_server) -> None:  # type: ignore[no-untyped-def]
    async def run() -> list[str]:
        engine = await start_engine(tokens={"again-token": "again"}, redis_url=shared_redis_server.url)
        gateway = engine.gateway
        held, release = False, asyncio.Event()
        real_set = gateway.redis.set

        async def slow_presence(key: Any, *args: Any, **kwargs: Any) -> Any:
            if held and "again" in str(key):
                await release.wait()  # the new stream's setup, held open
            return await real_set(key, *args, **kwargs)

        gateway.redis.set = slow_presence
        first = await ScriptedAgent(f"127.0.0.1:{engine.port}", "again-token", silent).start()
        started = match_pb2.AgentEvent()
        started.match_started.match_id, started.match_started.seat = "m-1", 0
        ignore = lambda *args: None  # noqa: E731
        assert await gateway.deliver("again", started, ignore) is None
        assert await gateway.deliver("again", decision(1), ignore) is None
        async with asyncio.timeout(10):
            while not first.decisions:
                await asyncio.sleep(0.01)
        old = gateway.connections["again"]
        held = True
        second = ScriptedAgent(f"127.0.0.1:{engine.port}", "again-token", silent)
        connecting = asyncio.create_task(second.start())
        async with asyncio.timeout(10):
            while gateway.connections.get("again") is old:  # the new stream took over; its setup waits
                await asyncio.sleep(0.01)
        later = asyncio.create_task(gateway.deliver("again", decision(2), ignore))
        turn = gateway.connections["again"].write_lock
        async with asyncio.timeout(10):  # queued behind the setup's turn (before the fix: written at once)
            while not later.done() and not turn._waiting:
                await asyncio.sleep(0.01)
        release.set()
        await connecting
        assert await asyncio.wait_for(later, 10) is None
        async with asyncio.timeout(10):
            while len(second.events) < 3 and second.error is None:
                await asyncio.sleep(0.01)
        await first.stop()
        await second.stop()
        await engine.stop(0)
        assert second.error is None, second.error
        return [
            f"{event.WhichOneof('event')}{event.decision.decision_id if event.HasField('decision') else ''}"
            for event in second.events
        ]

    assert asyncio.run(run()) == ["match_started", "decision1", "decision2"]
