"""The ladder store's errors and guarantees. ``arena.ladder.redis_store.RedisStore`` is its one
implementation; the matchmaker, the forming loop, the jobs and the tools use only its methods
(none reaches into its Redis client or keys).

Guarantees:
- agent names are unique; a token is shown once (only its SHA-256 is stored);
- one ticket per agent per ladder; ``join`` again renews the lease and keeps the place;
  a ticket whose lease runs out is gone (its holder stopped renewing it: connection died);
- ``claim`` is atomic per table: a table forms only if every queued agent in it still holds a
  ticket and sits at no other table, and its ladder still exists; otherwise nothing of that table changes;
- ``delete_ladder`` is atomic: it refuses while a match of the ladder is in play, and no match is
  claimed on the ladder once it is gone;
- ``finish_match`` is idempotent: the first call logs the match, later calls change nothing;
- ratings move only through the match log (``arena.ladder.ratings``), exactly once per match;
- a finished match waits in the archive's backlog until the SQL archive holds it
  (``arena.ladder.archiving``), then Redis keeps only its log entry.
"""

from __future__ import annotations


def shown(value: str) -> str:
    """A caller's value as an error quotes it: at most 80 characters (a long one made the error
    itself too long to send)."""
    return repr(value[:80]) + ("..." if len(value) > 80 else "")


class StoreError(Exception):
    """A request the store refuses; ``field`` names the bad input."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class NotFound(StoreError):
    pass


class AlreadyExists(StoreError):
    pass


class Unauthenticated(StoreError):
    pass


class PermissionDenied(StoreError):
    pass


class LimitReached(StoreError):
    """A bound on how much a caller may create (ladders): RESOURCE_EXHAUSTED."""


class InUse(StoreError):
    """The thing is in use (a ladder with matches in play): FAILED_PRECONDITION."""


class Revoked(StoreError):
    """The agent's token was revoked: it is seated nowhere until the host rotates it (FAILED_PRECONDITION)."""
