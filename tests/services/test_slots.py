"""Per-caller slots without Redis, and with Redis away: this process's own count, never a refusal of
everyone (the counting across replicas is tests/security/test_replica_limits.py)."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from arena.keys import Keys
from services.engine.slots import Slots


async def _claim_all(slots: Slots) -> None:
    held = [await slots.claim("t:caller") for _ in range(3)]
    assert held[0] is not None and held[1] is not None and held[2] is None  # the limit is 2
    assert await slots.claim("t:another") is not None  # every caller has a share of its own
    await held[0].release()
    again = await slots.claim("t:caller")
    assert again is not None  # a released slot is free again
    await again.release()


def test_slots_without_redis_are_counted_in_process() -> None:
    asyncio.run(_claim_all(Slots("challenge", 2, None, Keys())))


def test_slots_with_redis_away_fall_back_to_the_process_count() -> None:
    async def run() -> None:
        # nothing listens there; no retries, so each call fails at once (the default retries took 20 s)
        client = aioredis.Redis(port=1, socket_connect_timeout=1, retry=Retry(NoBackoff(), 0))
        try:
            await _claim_all(Slots("spectate", 2, client, Keys()))
        finally:
            await client.aclose()

    asyncio.run(run())
