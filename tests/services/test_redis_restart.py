"""The relay survives a Redis restart: the gateway subscribes again and re-marks its agents."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis
from svc_helpers import EngineProcess, ScriptedAgent

from arena.keys import Keys, register_agent_token
from arena.play.host import host_match
from arena.play.specs import SeatSpec, TimeControl
from ohell.rules import Rules

pytestmark = pytest.mark.slow  # starts whole stacks of processes; `-m "not slow"` leaves it out


def test_relay_works_again_after_redis_restarts(redis_server) -> None:
    client = redis.Redis.from_url(redis_server.url)
    register_agent_token(client, "survivor", "survivor-token")
    engine = EngineProcess(redis_server.url)
    seats = [SeatSpec.connected("survivor"), SeatSpec.builtin("random"), SeatSpec.builtin("random")]

    async def play(match_id: str) -> dict:
        return await host_match(
            match_id,
            Rules(hand_sizes=(2,)),
            seats,
            1,
            time_control=TimeControl(decision_ms=2000),
            redis_url=redis_server.url,
        )

    async def run() -> tuple[dict, dict]:
        agent = await ScriptedAgent(engine.address, "survivor-token").start()
        before = await play("before-restart")
        redis_server.stop(kill=True)  # presence keys and subscriptions are gone
        redis_server.start()
        client.delete(Keys().agent_presence("survivor"))  # whatever the AOF kept: the gateway must re-mark it
        deadline = time.monotonic() + 10
        while client.get(Keys().agent_presence("survivor")) is None or not client.pubsub_channels("ohell:gateway:*"):
            assert time.monotonic() < deadline, "the gateway did not come back to Redis"
            await asyncio.sleep(0.05)
        after = await play("after-restart")
        await agent.stop()
        return before, after

    try:
        before, after = asyncio.run(run())
    finally:
        assert engine.stop() == 0
        client.close()
    assert before["faults"] == [] and after["faults"] == [] and after["complete"]
