"""Deadlines kept by one timer (``relay.Watchdog``): the host's wait for a decision and the gateway's
writes expire when they should, and only then (pure asyncio, no server)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from arena.play.relay import HostLink, Reply, Watchdog
from arena.proto.ohell.v1 import match_pb2
from services.engine.gateway import Connection


def test_watchdog_expires_each_key_at_its_deadline_and_never_an_unwatched_one() -> None:
    """The timer's times, not the machine's speed: each key expires no sooner than its deadline, in
    the deadlines' order, and the timer is armed for the earliest (a late start makes no key early)."""

    async def run() -> tuple[list[tuple[str, float]], list[float]]:
        loop = asyncio.get_running_loop()
        began = loop.time()
        expired: list[tuple[str, float]] = []
        both = asyncio.Event()

        def expire(key: str) -> None:
            expired.append((key, loop.time() - began))
            if len(expired) == 2:
                both.set()

        watchdog = Watchdog(expire)
        armed = []
        watchdog.watch("late", began + 0.15)
        armed.append(watchdog._timer.when() - began if watchdog._timer else -1.0)
        watchdog.watch("early", began + 0.05)  # before the armed timer: re-armed earlier
        armed.append(watchdog._timer.when() - began if watchdog._timer else -1.0)
        watchdog.watch("answered", began + 0.02)
        watchdog.unwatch("answered")
        await asyncio.wait_for(both.wait(), 30)
        await asyncio.sleep(0)  # a third expiry (the unwatched key) would come in the same turn
        return expired, armed

    expired, armed = asyncio.run(run())
    assert armed == [pytest.approx(0.15), pytest.approx(0.05)]
    assert [key for key, _ in expired] == ["early", "late"]
    assert expired[0][1] >= 0.05 and expired[1][1] >= 0.15


def test_a_decision_gets_its_reply_before_the_deadline_and_none_after_it() -> None:
    async def run() -> tuple[Reply | None, Reply | None, float]:
        loop = asyncio.get_running_loop()
        link = HostLink()
        answered = link.expect("a", 1, loop.time() + 0.05)
        link.answer("a", 1, match_pb2.Action(decision_id=1), "")
        began = loop.time()
        unanswered = link.expect("a", 2, began + 0.05)
        late = await asyncio.wait_for(unanswered, 30)  # a wait past its deadline would run this out
        waited = loop.time() - began
        link.forget("a", 2)
        link.answer("a", 2, match_pb2.Action(decision_id=2), "")  # too late: nobody waits for it
        return await answered, late, waited

    reply, late, waited = asyncio.run(run())
    assert reply is not None and reply.action is not None and reply.action.decision_id == 1
    assert late is None and waited >= 0.05  # None at the deadline, not before it


class _Stuck:
    async def write(self, message: Any) -> None:
        await asyncio.Event().wait()


def test_a_write_cancelled_by_its_caller_is_not_taken_for_a_stalled_agent() -> None:
    async def run() -> Connection:
        connection = Connection("slow", _Stuck())  # type: ignore[arg-type]
        event = match_pb2.AgentEvent(notice=match_pb2.Notice(code="X", message="hello"))
        task = asyncio.create_task(connection.send(event, 5.0))
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert connection.fatal is None and not connection.closed.is_set()
        assert await connection.send(event, 0.05) is not None  # this one does stall: past its deadline
        return connection

    connection = asyncio.run(run())
    assert connection.fatal is not None and "not reading its stream" in connection.fatal[1]


class _Written:
    """A servicer context that keeps what is written."""

    def __init__(self) -> None:
        self.written: list[Any] = []

    async def write(self, message: Any) -> None:
        self.written.append(message)


def test_an_answer_after_its_deadline_gets_a_notice_and_never_reaches_the_host() -> None:
    """Before, the decision stayed pending at the gateway until the match's next decision or its end:
    an answer in between was handed to a host that had already recorded TIMEOUT and played the default,
    and the agent was told nothing (docs/protocol.md promises FAILED_PRECONDITION for a late answer)."""
    from arena.proto.ohell.v1 import gateway_pb2
    from services.engine.gateway import Gateway

    replies: list[Any] = []

    async def run() -> list[match_pb2.AgentEvent]:
        gateway = Gateway(tokens=None)  # type: ignore[arg-type]
        gateway.loop = asyncio.get_running_loop()
        stream = _Written()
        connection = gateway.connections["late"] = Connection("late", stream)  # type: ignore[arg-type]
        event = match_pb2.AgentEvent()
        event.decision.match_id, event.decision.seat, event.decision.decision_id = "m", 1, 7
        assert await gateway.deliver("late", event, lambda *reply: replies.append(reply), 0.02) is None
        await asyncio.sleep(0.05)  # past the decision's 20 ms
        action = match_pb2.Action(match_id="m", seat=1, decision_id=7, bid=0)
        await gateway._on_action(connection, gateway_pb2.ConnectRequest(action=action))
        return [match_pb2.AgentEvent.FromString(data[2:]) for data in stream.written[1:]]  # after the decision

    notices = asyncio.run(run())
    assert replies == []
    assert [n.notice.code for n in notices] == ["FAILED_PRECONDITION"], notices
    assert "decision_id: 7" in notices[0].notice.message and "timed out" in notices[0].notice.message


def test_the_decisions_of_matches_the_gateway_forgot_are_forgotten_too() -> None:
    """Before, the gateway forgot the seats of all but the latest 256 matches of an agent but kept
    their pending decisions: each match whose host died with a decision pending (no MatchEnded
    came) left its decision, request and all, for as long as the agent's stream lived."""
    from services.engine.gateway import _MATCHES_REMEMBERED, Gateway

    async def run() -> Connection:
        gateway = Gateway(tokens=None)  # type: ignore[arg-type]
        gateway.loop = asyncio.get_running_loop()
        connection = gateway.connections["busy"] = Connection("busy", _Written())  # type: ignore[arg-type]
        for number in range(_MATCHES_REMEMBERED + 50):
            event = match_pb2.AgentEvent()
            event.decision.match_id, event.decision.decision_id = f"m{number}", 1
            await gateway.deliver("busy", event, lambda *reply: None, 60)
        return connection

    connection = asyncio.run(run())
    assert len(connection.seats) == _MATCHES_REMEMBERED and len(connection.pending) <= _MATCHES_REMEMBERED


def test_write_turns_go_in_order_and_a_cancelled_writer_never_keeps_or_loses_the_turn() -> None:
    """The gateway's ``WriteTurn`` (one write at a time on an agent's stream, taken with no coroutine
    when free): writers get it in the order they asked; one cancelled while waiting drops out, one
    cancelled just as it was handed the turn passes it on, so no write waits for ever."""
    from services.engine.gateway import WriteTurn

    async def run() -> tuple[list[str], bool]:
        turn, order = WriteTurn(), []
        assert turn.take_now() and not turn.take_now()  # held: the next writer must wait

        async def writer(name: str) -> None:
            async with turn:
                order.append(name)
                await asyncio.sleep(0)

        first, dropped, second = (asyncio.create_task(writer(n)) for n in ("first", "dropped", "second"))
        await asyncio.sleep(0)  # all three wait, in this order
        dropped.cancel()
        turn.give()
        await asyncio.wait_for(asyncio.gather(first, second), 1)
        handed = asyncio.create_task(writer("handed"))
        last = asyncio.create_task(writer("last"))
        assert turn.take_now()
        await asyncio.sleep(0)
        turn.give()  # to "handed", which is cancelled before it runs: "last" must still get it
        handed.cancel()
        await asyncio.wait_for(last, 1)
        with pytest.raises(asyncio.CancelledError):
            await dropped
        with pytest.raises(asyncio.CancelledError):
            await handed
        return order, turn.held

    order, held = asyncio.run(run())
    assert order == ["first", "second", "last"] and not held
