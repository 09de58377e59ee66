"""Wall-clock time as the platform stores it: the ladder's and the tournaments' time stamps."""

from __future__ import annotations

import time


def now_ms() -> int:
    """Wall-clock milliseconds since the epoch: the time stamps of tickets, matches and tournaments."""
    return int(time.time() * 1000)
