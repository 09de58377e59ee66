"""Away marks of a tournament's connected entrants (docs/tournaments.md, "Away"): what a mark holds,
and the reads of them and of who is online. ``TournamentStore`` has these reads; its table scripts
write the marks (``decide_forfeits``), conditionally: a mark is set only if no table cleared the
entrant's mark since the look that saw it away (``AwaySighting``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

import redis

from arena.keys import Keys, text


@dataclass(frozen=True)
class AwayMark:
    """A connected entrant away in a tournament: not online at the end of a table's wait (it forfeited
    ``table``), away since ``since_ms`` (when that table's runner first saw it away)."""

    agent_id: str
    name: str
    since_ms: int
    table: str

    def to_json(self) -> str:
        return json.dumps({"name": self.name, "since_ms": self.since_ms, "table": self.table})

    @classmethod
    def from_json(cls, agent_id: str, raw: str | bytes) -> AwayMark:
        data = json.loads(raw)
        return cls(agent_id, str(data["name"]), int(data["since_ms"]), str(data["table"]))


@dataclass(frozen=True)
class AwaySighting:
    """A table's wait saw a connected entrant away, unmarked, at its last look, when the entrant's
    clear count (``Keys.tourney_away_clears``) was ``clears``: ``mark`` is set only if no table has
    cleared the entrant's mark since (its sighting online may be newer than this one)."""

    mark: AwayMark
    clears: int


@dataclass(frozen=True)
class Whereabouts:
    """One look at a tournament's connected entrants (``AwayReads.whereabouts``)."""

    online: set[str]  # agent ids with a gateway presence
    marks: dict[str, AwayMark]  # agent id -> its away mark
    clears: dict[str, int]  # agent id -> its clear count, read before the presences


class AwayReads:
    """The away reads of ``TournamentStore`` (a base of it: its Redis client and keys)."""

    client: redis.Redis
    keys: Keys

    def whereabouts(self, tourney_id: str | None, agent_ids: Sequence[str]) -> Whereabouts:
        """Which of ``agent_ids`` are online, their away marks and clear counts in the tournament, in
        one round trip; no marks read without ``tourney_id``. The clear counts are read first: a
        table that clears a mark after the presences were read changes them."""
        if not agent_ids:
            return Whereabouts(set(), {}, {})
        ids = list(agent_ids)
        pipe = self.client.pipeline(transaction=False)
        if tourney_id is not None:
            pipe.hmget(self.keys.tourney_away_clears(tourney_id), ids)
        for agent_id in ids:
            pipe.exists(self.keys.agent_presence(agent_id))
        if tourney_id is not None:
            pipe.hmget(self.keys.tourney_away(tourney_id), ids)
        replies = pipe.execute()
        if tourney_id is None:
            replies = [[None] * len(ids), *replies, [None] * len(ids)]
        clears, found, raw = replies[0], replies[1:-1], replies[-1]
        return Whereabouts(
            online={agent_id for agent_id, present in zip(ids, found, strict=True) if present},
            marks={agent_id: AwayMark.from_json(agent_id, v) for agent_id, v in zip(ids, raw, strict=True) if v},
            clears={agent_id: int(count or 0) for agent_id, count in zip(ids, clears, strict=True)},
        )

    def away_marks(self, tourney_id: str) -> list[AwayMark]:
        """The tournament's connected entrants marked away (each forfeited a table after its wait and has
        not been online at a table's start since), the longest away first."""
        raw = self.client.hgetall(self.keys.tourney_away(tourney_id))
        marks = [AwayMark.from_json(text(agent_id), value) for agent_id, value in raw.items()]
        return sorted(marks, key=lambda mark: (mark.since_ms, mark.name))
