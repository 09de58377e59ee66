"""The in-process rate limit (GCRA) at every clock reading: it counted in an order that rounds when
the clock's milliseconds plus one step cross a power of two (uptime just under 35 min, 70 min, ...),
and a limit with a burst of one then refused about a quarter of first calls there (a flaky test)."""

from __future__ import annotations

import pytest

from arena.rpc.ratelimit import LocalLimiter, RateLimit


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
