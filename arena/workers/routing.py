"""Celery queue names and which one a match goes to."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

QUEUE_BUILTIN = "ohell.builtin"  # CPU-bound: every seat is a built-in bot, played in-process
QUEUE_REMOTE = "ohell.remote"  # I/O-bound: at least one seat is a connected or endpoint agent
QUEUE_RATINGS = "ohell.ratings"  # short rating updates
ALL_QUEUES = (QUEUE_BUILTIN, QUEUE_REMOTE, QUEUE_RATINGS)

RUN_MATCH = "ohell.run_match"
UPDATE_RATINGS = "ohell.update_ratings"


def queue_for(seats: Iterable[dict[str, Any]]) -> str:
    return QUEUE_BUILTIN if all(seat.get("kind") == "builtin" for seat in seats) else QUEUE_REMOTE
