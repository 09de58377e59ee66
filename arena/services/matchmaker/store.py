"""The matchmaker's storage interface. ``RedisStore`` is the implementation; the servicer, the
forming loop and the workers see only these operations.

Guarantees every implementation must give:
- agent names are unique; a token is shown once (only its SHA-256 is stored);
- one ticket per agent per ladder; ``join`` again renews the lease and keeps the place;
  a ticket whose lease runs out is gone (its holder stopped renewing it: connection died);
- ``claim`` is atomic per table: a table forms only if every queued agent in it still holds a
  ticket and sits at no other table; otherwise nothing of that table changes;
- ``finish_match`` is idempotent: the first call logs the match, later calls change nothing;
- ratings move only through the match log (``arena.ladder.ratings``), exactly once per match.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from arena.services.matchmaker.forming import HouseBot, Ticket
from arena.services.matchmaker.model import Agent, Ladder, MatchInfo, Standing


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


class MatchmakerStore(Protocol):
    # agents
    def register_agent(self, name: str, kind: str, version: str = "", bot: str = "",
                       endpoint: str = "", house: bool = False) -> tuple[Agent, str]: ...  # fmt: skip
    def authenticate(self, agent_id: str, token: str) -> Agent: ...
    def agent_for_token(self, token: str) -> Agent | None: ...
    def get_agent(self, agent_id: str) -> Agent: ...
    def set_version(self, agent_id: str, version: str) -> Agent: ...

    # ladders
    def create_ladder(self, ladder: Ladder) -> Ladder: ...
    def get_ladder(self, name: str) -> Ladder: ...
    def list_ladders(self) -> list[Ladder]: ...
    def house_bots(self, ladder: str) -> list[HouseBot]: ...

    # queue
    def join(self, ladder: str, agent_id: str, lease_s: float | None, enroll: bool = False) -> float: ...
    def leave(self, ladder: str, agent_id: str) -> bool: ...
    def snapshot(self, ladder: str, now_ms: int) -> list[Ticket]: ...
    def claim(self, ladder: str, tables: Sequence[Sequence[str]], now_ms: int) -> list[str | None]: ...

    # matches
    def start_match(self, match_id: str, runner: str, lease_s: float) -> str: ...
    def renew_match(self, match_id: str, runner: str, lease_s: float) -> bool: ...
    def finish_match(self, match_id: str, record: dict[str, Any]) -> tuple[bool, str]: ...
    def fail_match(self, match_id: str, error: str) -> bool: ...
    def get_match(self, match_id: str) -> MatchInfo: ...
    def get_record(self, match_id: str) -> dict[str, Any]: ...
    def list_matches(self, ladder: str, agent_id: str, offset: int, limit: int) -> list[MatchInfo]: ...
    def active_matches(self) -> list[MatchInfo]: ...

    # ratings (read side)
    def leaderboard(self, ladder: str, offset: int, limit: int) -> tuple[list[Standing], int]: ...
    def standing(self, ladder: str, agent_id: str) -> Standing: ...
