"""The in-process rate limit (GCRA) at every clock reading: it counted in an order that rounds when
the clock's milliseconds plus one step cross a power of two (uptime just under 35 min, 70 min, ...),
and a limit with a burst of one then refused about a quarter of first calls there (a flaky test)."""

from __future__ import annotations

import asyncio
import time

import pytest
import redis.asyncio

from arena.embedded_redis import EmbeddedRedis
from arena.rpc.ratelimit import Limiter, LocalLimiter, RateLimit


@pytest.mark.parametrize("power", [21, 22, 30, 40])
@pytest.mark.parametrize("limit", [RateLimit(0.01, 1), RateLimit(3.0, 1), RateLimit(100.0, 400)])
def test_a_first_burst_is_admitted_whatever_the_clock_reads(
    monkeypatch: pytest.MonkeyPatch, limit: RateLimit, power: int
) -> None:
    refused = []
    for k in range(1, 400):  # clock readings within one step below 2**power milliseconds
        now_ms = 2.0**power - k * limit.step_ms / 400
        monkeypatch.setattr("arena.rpc.ratelimit.time.monotonic", lambda now_ms=now_ms: now_ms / 1000)
        limiter = LocalLimiter(limit)
        if any(limiter.wait_ms("caller") > 0 for _ in range(limit.burst)):
            refused.append(now_ms)
    assert not refused, f"{len(refused)} clock readings refused a call of the first burst, e.g. {refused[0]!r}"
    assert limiter.wait_ms("caller") > 0  # and the call after the burst is refused


@pytest.mark.parametrize("limit", [RateLimit(2000.0, 1), RateLimit(3.0, 1)])
def test_the_shared_limit_refuses_a_wait_under_a_millisecond(redis_server: EmbeddedRedis, limit: RateLimit) -> None:
    """Redis turns a Lua number into an integer reply: a wait of 0.5 ms came back as 0, read as
    allowed although the script had not counted the call, so a caller at the limit of a rate with a
    fractional step (the web app's 2000/s: 0.5 ms) had every call free until the next millisecond."""

    async def calls() -> tuple[int, float]:
        client = redis.asyncio.Redis.from_url(redis_server.url)
        limiter = Limiter(limit, client)
        start = time.monotonic()
        allowed = [await limiter.wait_ms("caller") == 0 for _ in range(300)]
        elapsed_ms = (time.monotonic() - start) * 1000
        await client.aclose()
        return sum(allowed), elapsed_ms

    allowed, elapsed_ms = asyncio.run(calls())
    # the burst, and a call a step since, counting whole milliseconds of Redis's clock at each end
    most = limit.burst + (elapsed_ms + 2) / limit.step_ms + 1
    assert allowed <= most, f"{allowed} of 300 calls in {elapsed_ms:.1f} ms allowed; the limit allows {most:.0f}"
