"""The durable match log: one compact summary per finished match, in a Redis stream per ladder.

The summary holds everything ratings and agent statistics are computed from, so they can be
rebuilt from the log alone (``ohell ladder rebuild``). The full record is kept beside it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import redis

from arena.keys import Keys, stream_entries


def summarize(record: dict[str, Any], ladder: str, agent_ids: Sequence[str]) -> dict[str, Any]:
    """The log entry of a finished match, from its record and the agent in each seat."""
    seats = len(agent_ids)
    hands, exact, faults = [0] * seats, [0] * seats, [0] * seats
    for hand in record.get("hands", ()):
        if hand.get("sudden_death"):
            continue
        for seat, bid in enumerate(hand.get("bids", ())):
            if isinstance(bid, int) and bid >= 0 and seat < seats:
                hands[seat] += 1
                exact[seat] += bid == hand["tricks_won"][seat]
    for fault in record.get("faults", ()):
        seat = fault.get("seat")
        if isinstance(seat, int) and 0 <= seat < seats:
            faults[seat] += 1
    return {
        "match_id": record.get("match_id"),
        "ladder": ladder,
        "agents": list(agent_ids),
        "totals": list(record.get("totals", [0] * seats)),
        "winners": list(record.get("winners", ())),
        "forfeited": list(record.get("forfeited", ())),
        "hands": hands,
        "exact": exact,
        "faults": faults,
    }


def encode(summary: dict[str, Any]) -> str:
    return json.dumps(summary, separators=(",", ":"), sort_keys=True)


def read_log(
    client: redis.Redis, keys: Keys, ladder: str, after: str = "0-0", batch: int = 1000
) -> Iterator[tuple[str, dict[str, Any]]]:
    """(stream id, summary) for every log entry after ``after``, oldest first."""
    cursor = after
    while True:
        entries = stream_entries(client.xrange(keys.log(ladder), min=f"({cursor}", count=batch))
        if not entries:
            return
        for entry_id, fields in entries:
            yield entry_id, json.loads(fields[b"summary"])
        cursor = entries[-1][0]
