"""Away marks of a tournament's connected entrants (docs/tournaments.md, "Away"): what a mark holds,
and the reads of them and of who is online. ``TournamentStore`` has these reads; its table scripts
write the marks (``decide_forfeits``)."""

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


class AwayReads:
    """The away reads of ``TournamentStore`` (a base of it: its Redis client and keys)."""

    client: redis.Redis
    keys: Keys

    def whereabouts(self, tourney_id: str | None, agent_ids: Sequence[str]) -> tuple[set[str], dict[str, AwayMark]]:
        """(those of ``agent_ids`` online: a gateway presence, their away marks in the tournament), in
        one round trip; no marks read without ``tourney_id``."""
        if not agent_ids:
            return set(), {}
        pipe = self.client.pipeline(transaction=False)
        for agent_id in agent_ids:
            pipe.exists(self.keys.agent_presence(agent_id))
        if tourney_id is not None:
            pipe.hmget(self.keys.tourney_away(tourney_id), list(agent_ids))
        replies = pipe.execute()
        count = len(agent_ids)
        online = {agent_id for agent_id, found in zip(agent_ids, replies[:count], strict=True) if found}
        raw = replies[count] if tourney_id is not None else [None] * count
        marks = {agent_id: AwayMark.from_json(agent_id, v) for agent_id, v in zip(agent_ids, raw, strict=True) if v}
        return online, marks

    def away_marks(self, tourney_id: str) -> list[AwayMark]:
        """The tournament's connected entrants marked away (each forfeited a table after its wait and has
        not been online at a table's start since), the longest away first."""
        raw = self.client.hgetall(self.keys.tourney_away(tourney_id))
        marks = [AwayMark.from_json(text(agent_id), value) for agent_id, value in raw.items()]
        return sorted(marks, key=lambda mark: (mark.since_ms, mark.name))
