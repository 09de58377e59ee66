"""When a recovery sweep (the ladder's, the tournaments') sends a match's or a table's task again,
the caller having found its lease lapsed: at once when a runner started it since the last copy and
died, else once the last copy has waited its turn, twice as long for each copy before it that no
worker started (a queue no worker takes from, the remote worker down say, got a copy every
``--redispatch-after`` for as long as it lasted: 2,880 a day each, every one kept by the broker and
started, to no purpose, once a worker came back)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MAX_DOUBLINGS = 6  # a task no worker starts is sent again at most every 64 x --redispatch-after
FIELDS = ("dispatched_ms", "dispatched_after", "unstarted")  # a Sent in its match's or table's hash


@dataclass(frozen=True)
class Sent:
    """The last copy sent: when (ms), after how many started runs, and how many copies sent
    before it since the last start that no worker started."""

    at_ms: int = 0
    after: int = 0
    unstarted: int = 0

    @classmethod
    def parse(cls, values: Iterable[str | bytes | None]) -> Sent:
        """From the values of ``FIELDS`` as stored (missing: 0)."""
        return cls(*(int(value or 0) for value in values))


@dataclass(frozen=True)
class Due:
    died: bool  # a runner started it since the last copy and is gone: send now
    waited: bool  # the last copy has waited its turn
    unstarted: int  # to be stored with a copy sent now


def due(last: Sent, attempts: int, running: bool, now_ms: int, redispatch_after_s: float) -> Due:
    """Whether a task whose lease is not held is due again: ``attempts`` runs of it have started,
    ``running`` its state says so."""
    died = running and last.after < attempts
    unstarted = last.unstarted if last.after == attempts else 0  # a start begins the count again
    wait_ms = redispatch_after_s * 1000 * 2 ** min(unstarted, MAX_DOUBLINGS)
    return Due(died, now_ms - last.at_ms >= wait_ms, 0 if died else unstarted + 1)
