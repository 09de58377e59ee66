"""Who is at fault when a connected seat goes away: the platform when the engine service holding the
agent's stream dies (its presence names a gateway nobody listens for), the agent when it hangs up on
a live gateway, however many seats do it (two agents of one author leaving a match they are losing
must not void it: ``spoiled_by_platform``). A gateway remembered from an earlier event that died
while the agent moved to another is asked for again, not charged to anyone."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from svc_helpers import DROP, EngineProcess, ScriptedAgent, first_legal

from arena.ladder.jobs import spoiled_by_platform
from arena.play.host import host_match
from arena.play.relay import PLATFORM_FAULT
from arena.play.specs import SeatSpec, TimeControl
from arena.proto.ohell.v1 import match_pb2
from ohell.presets import preset_with_options

pytestmark = pytest.mark.slow  # engine service processes, killed on purpose

RULES = preset_with_options("classic", ["hand_sizes=[3,3,3]"])
TIME = TimeControl(decision_ms=400, time_bank_ms=0, max_faults=2)


async def until(condition: Callable[[], bool], what: str, timeout: float = 20) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def details(record: dict[str, Any]) -> list[str]:
    return [str(fault["detail"]) for fault in record["faults"]]


def play(url: str, match_id: str, seats: list[SeatSpec], time: TimeControl = TIME) -> asyncio.Task[dict[str, Any]]:
    return asyncio.create_task(host_match(match_id, RULES, seats, seed=5, time_control=time, redis_url=url))


def test_a_dead_engine_service_is_the_platforms_fault(shared_redis_server, make_agent) -> None:  # type: ignore[no-untyped-def]
    engine = EngineProcess(shared_redis_server.url)
    (a_id, a_token), (b_id, b_token) = make_agent("lost"), make_agent("lost")

    async def run() -> dict[str, Any]:
        a = await ScriptedAgent(engine.address, a_token).start()
        b = await ScriptedAgent(engine.address, b_token).start()
        match = play(
            shared_redis_server.url,
            "gw-dead-1",
            [SeatSpec.connected(a_id), SeatSpec.connected(b_id), SeatSpec.builtin("random")],
        )
        await until(lambda: len(a.decisions) >= 2 and len(b.decisions) >= 2, "both agents to play")
        engine.process.kill()
        engine.process.wait()
        return await asyncio.wait_for(match, 60)

    try:
        record = asyncio.run(run())
    finally:
        engine.stop()
    assert any(detail.startswith(PLATFORM_FAULT) and "is gone" in detail for detail in details(record)), record[
        "faults"
    ]
    assert spoiled_by_platform(record).startswith("the gateway holding a seat's agent went away")


def test_agents_that_hang_up_on_a_live_gateway_are_at_fault(engine_process, shared_redis_server, make_agent) -> None:  # type: ignore[no-untyped-def]
    (a_id, a_token), (b_id, b_token) = make_agent("quit"), make_agent("quit")

    async def quit_after_two(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
        return DROP if len(agent.decisions) > 2 else first_legal(request)

    async def run() -> dict[str, Any]:
        for token in (a_token, b_token):
            await ScriptedAgent(engine_process.address, token, quit_after_two).start()
        seats = [SeatSpec.connected(a_id), SeatSpec.connected(b_id), SeatSpec.builtin("random")]
        return await asyncio.wait_for(play(shared_redis_server.url, "gw-quit-1", seats), 60)

    record = asyncio.run(run())
    assert sorted(record["forfeited"]) == [0, 1]
    assert {fault["kind"] for fault in record["faults"]} == {"DISCONNECTED"}
    assert not any(detail.startswith(PLATFORM_FAULT) for detail in details(record)), record["faults"]
    assert spoiled_by_platform(record) == ""  # played out and rated: the forfeits are theirs


def test_an_agent_that_moved_to_another_gateway_is_reached_there(shared_redis_server, make_agent) -> None:  # type: ignore[no-untyped-def]
    first, second = EngineProcess(shared_redis_server.url), EngineProcess(shared_redis_server.url)
    agent_id, token = make_agent("moved")

    async def run() -> tuple[dict[str, Any], ScriptedAgent]:
        async def then_silent(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
            return first_legal(request) if len(agent.decisions) <= 2 else None  # the match waits for the move

        old = await ScriptedAgent(first.address, token, then_silent).start()
        seats = [SeatSpec.connected(agent_id), SeatSpec.builtin("random"), SeatSpec.builtin("random")]
        match = play(shared_redis_server.url, "gw-moved-1", seats, TimeControl(decision_ms=400, time_bank_ms=0))
        await until(lambda: len(old.decisions) >= 2, "the agent's first decisions")
        moved = await ScriptedAgent(second.address, token).start()  # connected: its presence names the second
        first.process.kill()
        first.process.wait()
        return await asyncio.wait_for(match, 60), moved

    try:
        record, moved = asyncio.run(run())
    finally:
        first.stop()
        second.stop()
    assert moved.decisions, "the agent was never asked on its new gateway"
    assert moved.events[0].WhichOneof("event") == "match_started"  # its first decision came without it
    assert not any("is gone" in detail for detail in details(record)), record["faults"]
    assert record["forfeited"] == []
