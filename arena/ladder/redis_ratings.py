"""``RatingStore``: the ``RedisStore`` part over the ratings (applied from the match log by
``arena.ladder.ratings``) and the leaderboard read from them."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, cast

from arena.keys import stream_entries, text
from arena.ladder.model import Standing
from arena.ladder.ratings import MODEL, STAT_FIELDS, WIN_SHARE, catch_up, rebuild
from arena.ladder.redis_base import StoreBase


class RatingStore(StoreBase):
    """Ratings: catching up with the log, rebuilding, the leaderboard and one agent's standing."""

    def catch_up_ratings(self, ladder: str) -> int:
        """Apply the ladder's new log entries to its ratings, exactly once (``arena.ladder.ratings``)."""
        return catch_up(self.client, self.keys, ladder)

    def rebuild_ratings(self, ladder: str, archived: Iterable[tuple[str, dict[str, Any]]] = ()) -> int:
        """Recompute the ladder's ratings and statistics from its whole log (and the archive's
        (log id, summary) pairs when given); returns matches replayed."""
        return rebuild(self.client, self.keys, ladder, archived)

    def ratings_behind(self, ladder: str) -> bool:
        """Whether the ladder's log holds a match its ratings have not applied yet."""
        last = stream_entries(self.client.xrevrange(self.keys.log(ladder), count=1))
        if not last:
            return False
        rated = self.client.get(self.keys.rated(ladder))
        return rated is None or text(rated) != last[0][0]

    # ratings (read side) ----------------------------------------------------------------------
    def leaderboard(self, ladder: str, offset: int, limit: int) -> tuple[list[Standing], int]:
        self.get_ladder(ladder)
        total = self.client.zcard(self.keys.board(ladder))
        # without withscores ZREVRANGE gives members only; redis-py's return type also covers the pairs
        members = cast(list[bytes | str], self.client.zrevrange(self.keys.board(ladder), offset, offset + limit - 1))
        ids = [text(a) for a in members]
        return [self.standing(ladder, agent, rank=offset + i + 1) for i, agent in enumerate(ids)], total

    def standing(self, ladder: str, agent_id: str, rank: int = 0) -> Standing:
        agent = self.get_agent(agent_id)
        raw = self.client.hget(self.keys.ratings(ladder), agent_id)
        mu, sigma = json.loads(raw) if raw else (MODEL.mu, MODEL.sigma)
        counted = self.client.hget(self.keys.stats(ladder), agent_id)
        counts: dict[str, Any] = dict(zip(STAT_FIELDS, json.loads(counted) if counted else [0] * 7, strict=True))
        if not rank and raw:
            # without withscore ZREVRANK gives the rank only; redis-py's return type also covers [rank, score]
            position = cast(int | None, self.client.zrevrank(self.keys.board(ladder), agent_id))
            rank = position + 1 if position is not None else 0
        wins = counts.pop("win_shares") / WIN_SHARE
        return Standing(agent_id, agent.name, mu, sigma, wins=wins, rank=rank, **counts)
