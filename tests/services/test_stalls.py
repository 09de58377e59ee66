"""Stalls and blips: an agent that stops reading its stream, Redis going away mid-match, a
followed match that falls silent. The match goes on (faults are recorded); spectators stop waiting."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc
import pytest
import redis
import redis.asyncio as aioredis

from arena.embedded_redis import free_port
from arena.keys import Keys
from arena.play.events import FeedSilent, LocalEventLog, RedisEventLog
from arena.play.host import host_match
from arena.play.relay import HostLink, register_local_gateway, unregister_local_gateway
from arena.play.specs import SeatSpec, TimeControl
from arena.proto.ohell.v1 import match_pb2, relay_pb2, spectate_pb2
from ohell.rules import Rules
from services.engine.gateway import Connection, Gateway

pytestmark = pytest.mark.slow  # starts whole stacks of processes; `-m "not slow"` leaves it out

SMALL = Rules(hand_sizes=(3, 2))


class _UnreadStream:
    """A gRPC servicer context whose writes never complete: what ``context.write`` does once the
    agent has stopped reading and the flow-control window is full."""

    def __init__(self) -> None:
        self.writes_begun = 0

    async def write(self, message: Any) -> None:
        self.writes_begun += 1
        await asyncio.Event().wait()


def test_agent_not_reading_its_stream_is_disconnected_and_the_match_goes_on() -> None:
    async def run() -> tuple[dict, Connection, _UnreadStream]:
        gateway = Gateway(tokens=None)  # type: ignore[arg-type]  # no Connect call: no tokens needed
        gateway.loop = asyncio.get_running_loop()
        stream = _UnreadStream()
        connection = Connection("stuck", stream)  # type: ignore[arg-type]
        gateway.connections["stuck"] = connection
        register_local_gateway(gateway)
        try:
            seats = [SeatSpec.connected("stuck"), SeatSpec.builtin("random"), SeatSpec.builtin("random")]
            # a hang would run out this wait: the one bounded write (5 s for MatchStarted) ends far sooner
            record = await asyncio.wait_for(
                host_match(
                    "unread-1",
                    SMALL,
                    seats,
                    3,
                    time_control=TimeControl(decision_ms=300, time_bank_ms=0, max_faults=2),
                    spectate=False,
                ),
                30,
            )
            return record, connection, stream
        finally:
            unregister_local_gateway(gateway)

    record, connection, stream = asyncio.run(run())
    seat0 = [fault for fault in record["faults"] if fault["seat"] == 0]
    assert seat0 and seat0[0]["kind"] == "DISCONNECTED", record["faults"]
    assert "not reading its stream" in seat0[0]["detail"]
    assert record["forfeited"] == [0] and record["complete"]
    assert connection.closed.is_set() and connection.fatal is not None
    assert connection.fatal[0] == grpc.StatusCode.DEADLINE_EXCEEDED
    assert stream.writes_begun == 1  # the MatchStarted write hung; nothing more was queued behind it


def test_a_stuck_write_does_not_stall_the_agents_other_matches() -> None:
    async def run() -> tuple[str | None, str | None]:
        connection = Connection("busy", _UnreadStream())  # type: ignore[arg-type]
        event = match_pb2.AgentEvent(notice=match_pb2.Notice(code="X", message="hello"))
        # a write waiting for ever behind the stuck one would run out this wait
        first, second = await asyncio.wait_for(
            asyncio.gather(connection.send(event, 0.2), connection.send(event, 0.3)), 30
        )
        return first, second

    first, second = asyncio.run(run())
    assert first is not None and "not reading its stream (a write waited 0.2 s)" in first
    assert second is not None and "(a write waited 0.3 s)" in second, second  # its own allowance, lock included


def test_host_link_reports_redis_failure_instead_of_raising() -> None:
    async def run() -> str | None:
        client = aioredis.Redis(host="127.0.0.1", port=free_port(), socket_connect_timeout=1)
        try:
            return await HostLink(client).send("someone", match_pb2.AgentEvent())
        finally:
            await client.aclose()

    problem = asyncio.run(run())
    assert problem is not None and "Redis failed" in problem and "someone" in problem


def test_redis_going_away_mid_match_keeps_the_record(redis_server) -> None:
    """The agent's gateway (here a bare subscriber) never answers: every decision waits out its
    deadline, until Redis dies; from then on the seat is DISCONNECTED and the match still ends."""
    client = redis.Redis.from_url(redis_server.url)
    client.set(Keys().agent_presence("mute"), "gw-mute")
    gateway_side = client.pubsub()
    gateway_side.subscribe(Keys().gateway_channel("gw-mute"))

    async def run() -> dict:
        seats = [SeatSpec.connected("mute"), SeatSpec.builtin("random"), SeatSpec.builtin("random")]
        hosting = asyncio.create_task(
            host_match(
                "blip-1",
                Rules(hand_sizes=(5, 5, 5)),
                seats,
                2,
                time_control=TimeControl(decision_ms=40, time_bank_ms=0, max_faults=1000),
                redis_url=redis_server.url,
            )
        )
        # Redis dies once the mute seat has had a TIMEOUT (a fault in the public events)
        events = Keys().match_events("blip-1")

        def timed_out() -> bool:
            faults = [spectate_pb2.MatchEvent.FromString(fields[b"e"]) for _, fields in client.xrange(events)]
            return any(event.HasField("fault") for event in faults)

        deadline = asyncio.get_running_loop().time() + 30
        while not timed_out():
            assert asyncio.get_running_loop().time() < deadline and not hosting.done(), "no TIMEOUT before the end"
            await asyncio.sleep(0.02)
        redis_server.stop(kill=True)
        return await asyncio.wait_for(hosting, 30)

    try:
        record = asyncio.run(run())
    finally:
        gateway_side.close()
        client.close()
    kinds = [fault["kind"] for fault in record["faults"] if fault["seat"] == 0]
    assert record["complete"] and "TIMEOUT" in kinds and "DISCONNECTED" in kinds, kinds
    assert any("Redis failed" in fault["detail"] for fault in record["faults"])


def _started(match_id: str) -> spectate_pb2.MatchEvent:
    return spectate_pb2.MatchEvent(
        sequence=0, match_id=match_id, match_started=spectate_pb2.SpectateMatchStarted(match_id=match_id)
    )


async def _follow_until_silent(log: Any, match_id: str, silence_s: float) -> tuple[list, FeedSilent, float]:
    """Store a MatchStarted, then follow: the events seen, the FeedSilent that ended it, seconds taken
    (at least ``silence_s``; a follow that never ends runs out the 30 s wait)."""
    await log.append(match_id, _started(match_id))
    began = time.monotonic()
    seen: list = []

    async def follow() -> None:
        async for event in log.follow(match_id, 1.0, silence_s=silence_s):
            seen.append(event)

    with pytest.raises(FeedSilent) as caught:
        await asyncio.wait_for(follow(), 30)
    return seen, caught.value, time.monotonic() - began


def test_local_follow_ends_when_the_match_falls_silent() -> None:
    seen, silent, elapsed = asyncio.run(_follow_until_silent(LocalEventLog(), "quiet-1", 0.3))
    assert len(seen) == 1 and "quiet-1" in str(silent) and "no events for 0.3 s" in str(silent)
    assert elapsed > 0.25  # not before the silence was waited out


def test_local_follow_ends_when_the_match_is_evicted() -> None:
    async def run() -> FeedSilent:
        log = LocalEventLog(max_matches=1)
        await log.append("old-1", _started("old-1"))
        follow = log.follow("old-1", 1.0, silence_s=30)
        assert (await follow.__anext__()).match_id == "old-1"
        await log.append("new-1", _started("new-1"))  # evicts old-1
        with pytest.raises(FeedSilent) as caught:
            await asyncio.wait_for(follow.__anext__(), 5)
        return caught.value

    assert "evicted" in str(asyncio.run(run()))


def test_local_follow_of_matches_that_never_come_keeps_nothing() -> None:
    """A spectator may ask for any id: each one it waited for in vain must not stay in memory (a
    caller asking for fresh ids all day grew the engine without Redis by one entry per id)."""

    async def run() -> LocalEventLog:
        log = LocalEventLog()
        for number in range(100):
            with pytest.raises(LookupError):
                await log.follow(f"never-{number}", 0.001).__anext__()
        both = [log.follow("later-1", 5).__anext__() for _ in range(2)]  # two waiting for one match
        waiting = [asyncio.ensure_future(follow) for follow in both]
        async with asyncio.timeout(10):
            while log.waiting.get("later-1", 0) < 2:  # both followers wait for the match
                await asyncio.sleep(0)
        await log.append("later-1", _started("later-1"))
        assert [(await future).match_id for future in waiting] == ["later-1", "later-1"]
        return log

    log = asyncio.run(run())
    assert set(log.changed) == {"later-1"}


def test_redis_follow_ends_when_the_match_falls_silent(redis_server) -> None:
    async def run() -> tuple[list, FeedSilent, float]:
        client = aioredis.Redis.from_url(redis_server.url)
        try:
            return await _follow_until_silent(RedisEventLog(client), "quiet-2", 0.4)
        finally:
            await client.aclose()

    seen, silent, elapsed = asyncio.run(run())
    assert len(seen) == 1 and "quiet-2" in str(silent) and "no events for 0.4 s" in str(silent)
    assert elapsed > 0.35  # not before the silence was waited out


class _RecordedStream:
    """A gRPC servicer context whose writes complete at once; ``written`` is set on the first."""

    def __init__(self) -> None:
        self.written = asyncio.Event()

    async def write(self, message: Any) -> None:
        self.written.set()


def test_an_agent_not_reading_does_not_stall_relayed_events_of_other_agents(shared_redis_server) -> None:
    """Before, the gateway wrote relayed events (hosts in other processes: every ladder match) one
    after another from its Redis channel: an agent that stopped reading held up every other agent
    of that gateway for its whole write allowance (up to deadline + bank per event), so their
    decisions timed out and were charged to them."""

    async def run() -> tuple[bool, bool]:
        client = aioredis.Redis.from_url(shared_redis_server.url)
        keys = Keys(prefix="stall-relay:")
        gateway = Gateway(tokens=None, redis_client=client, keys=keys)  # type: ignore[arg-type]
        await gateway.start()
        stuck, fine = Connection("stuck", _UnreadStream()), Connection("fine", _RecordedStream())  # type: ignore[arg-type]
        gateway.connections.update(stuck=stuck, fine=fine)
        try:
            channel = keys.gateway_channel(gateway.gateway_id)
            for agent_id in ("stuck", "fine"):  # a decision allowing an hour to answer (and to write)
                event = match_pb2.AgentEvent()
                request = event.decision
                request.match_id, request.seat, request.decision_id, request.deadline_ms = "m", 0, 1, 3_600_000
                envelope = relay_pb2.RelayEnvelope(agent_id=agent_id, reply_channel="host-x", to_agent=event)
                await client.publish(channel, envelope.SerializeToString())
            await asyncio.wait_for(fine.context.written.wait(), 20)  # type: ignore[attr-defined]
            return fine.context.written.is_set(), stuck.closed.is_set()  # type: ignore[attr-defined]
        finally:
            await gateway.stop()
            await client.aclose()

    fine_written, stuck_closed = asyncio.run(run())
    assert fine_written and not stuck_closed  # the stuck write still waits: it held up nobody
