"""OpenSkill ratings of a ladder, applied from its match log exactly once and in log order.

``catch_up`` applies every log entry after the ladder's cursor (``rated:{ladder}``) in one
MULTI/EXEC guarded by WATCH on that cursor: ratings, statistics, leaderboard and the cursor move
together, so a match is rated exactly once, and two workers rating matches of the same agent at
the same time cannot lose an update (the loser's transaction fails and it re-reads). Applying in
log order makes ``rebuild`` reproduce the stored ratings bit for bit.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

import redis
from openskill.models import PlackettLuce

from arena.ladder.keys import Keys
from arena.ladder.matchlog import _text

# tau keeps sigma from collapsing on a long ladder, so ratings still follow an agent that improves.
# It must be given to the model: rate(..., tau=0) is silently ignored by openskill.
MODEL = PlackettLuce(tau=25.0 / 300.0)
STAT_FIELDS = ("games", "hands", "exact", "faults", "forfeits", "win_shares", "points")
WIN_SHARE = 420  # a win shared by k seats (k <= 7) counts 420 / k: statistics stay integers

Rating = tuple[float, float]  # (mu, sigma)


def ranks(totals: Sequence[int], forfeited: Iterable[int] = ()) -> list[int]:
    """1-based places (lower is better): by total points, ties share a place, forfeits last."""
    out = set(forfeited)
    standing = [total for seat, total in enumerate(totals) if seat not in out]
    last = len(standing) + 1
    return [
        last if seat in out else 1 + sum(other > total for other in standing)
        for seat, total in enumerate(totals)
    ]


def rate_match(ratings: dict[str, Rating], summary: dict[str, Any]) -> None:
    """Update ``ratings`` in place with one match (agents missing from it start at the default)."""
    agents = summary["agents"]
    teams = []
    for agent in agents:
        mu, sigma = ratings.get(agent) or (MODEL.mu, MODEL.sigma)
        teams.append([MODEL.rating(mu=mu, sigma=sigma)])
    new = MODEL.rate(teams, ranks=ranks(summary["totals"], summary["forfeited"]))
    for agent, (rating,) in zip(agents, new, strict=True):
        ratings[agent] = (rating.mu, rating.sigma)


def stat_increments(summary: dict[str, Any]) -> dict[str, int]:
    """``{"agent:field": increment}`` for the statistics of one match."""
    winners = summary["winners"]
    forfeited = set(summary["forfeited"])
    inc: dict[str, int] = {}
    for seat, agent in enumerate(summary["agents"]):
        values = {
            "games": 1, "hands": summary["hands"][seat], "exact": summary["exact"][seat],
            "faults": summary["faults"][seat], "forfeits": int(seat in forfeited),
            "win_shares": WIN_SHARE // len(winners) if seat in winners else 0, "points": summary["totals"][seat],
        }  # fmt: skip
        for name, value in values.items():
            key = f"{agent}:{name}"
            inc[key] = inc.get(key, 0) + value
    return inc


def catch_up(client: redis.Redis, keys: Keys, ladder: str, batch: int = 500) -> int:
    """Apply the log entries not rated yet; returns how many this call applied."""
    applied = 0
    while True:
        done = _apply_batch(client, keys, ladder, batch)
        if done is None:
            continue  # another worker moved the cursor first: re-read
        if done == 0:
            return applied
        applied += done


def _apply_batch(client: redis.Redis, keys: Keys, ladder: str, batch: int) -> int | None:
    with client.pipeline() as pipe:
        try:
            pipe.watch(keys.rated(ladder))
            cursor = _text(pipe.get(keys.rated(ladder)) or b"0-0")
            entries = pipe.xrange(keys.log(ladder), min=f"({cursor}", count=batch)
            if not entries:
                return 0
            summaries = [json.loads(fields[b"summary"]) for _, fields in entries]
            agents = sorted({agent for summary in summaries for agent in summary["agents"]})
            stored = pipe.hmget(keys.ratings(ladder), agents)
            ratings: dict[str, Rating] = {
                agent: tuple(json.loads(raw)) for agent, raw in zip(agents, stored, strict=True) if raw
            }
            increments: dict[str, int] = {}
            for summary in summaries:
                rate_match(ratings, summary)
                for key, value in stat_increments(summary).items():
                    increments[key] = increments.get(key, 0) + value
            pipe.multi()
            _write(pipe, keys, ladder, ratings, agents)
            for key, value in increments.items():
                if value:
                    pipe.hincrby(keys.stats(ladder), key, value)
            pipe.set(keys.rated(ladder), _text(entries[-1][0]))
            pipe.execute()
            return len(entries)
        except redis.WatchError:
            return None


def _write(pipe: Any, keys: Keys, ladder: str, ratings: dict[str, Rating], agents: Iterable[str]) -> None:
    encoded = {agent: json.dumps(list(ratings[agent])) for agent in agents}
    if encoded:
        pipe.hset(keys.ratings(ladder), mapping=encoded)
        pipe.zadd(keys.board(ladder), {agent: ratings[agent][0] - 3 * ratings[agent][1] for agent in encoded})


def replay(summaries: Iterable[dict[str, Any]]) -> tuple[dict[str, Rating], dict[str, int]]:
    """Ratings and statistics from scratch, from summaries in log order (pure)."""
    ratings: dict[str, Rating] = {}
    stats: dict[str, int] = {}
    for summary in summaries:
        rate_match(ratings, summary)
        for key, value in stat_increments(summary).items():
            stats[key] = stats.get(key, 0) + value
    return ratings, stats


def rebuild(client: redis.Redis, keys: Keys, ladder: str) -> int:
    """Recompute the ladder's ratings, statistics and leaderboard from its log; returns entries."""
    from arena.ladder.matchlog import read_log

    while True:
        with client.pipeline() as pipe:
            try:
                pipe.watch(keys.rated(ladder))
                entries = list(read_log(pipe, keys, ladder))
                ratings, stats = replay(summary for _, summary in entries)
                pipe.multi()
                pipe.delete(keys.ratings(ladder), keys.stats(ladder), keys.board(ladder), keys.rated(ladder))
                _write(pipe, keys, ladder, ratings, ratings)
                for key, value in stats.items():
                    if value:
                        pipe.hincrby(keys.stats(ladder), key, value)
                if entries:
                    pipe.set(keys.rated(ladder), entries[-1][0])
                pipe.execute()
                return len(entries)
            except redis.WatchError:
                continue


def stored_ratings(client: redis.Redis, keys: Keys, ladder: str) -> dict[str, Rating]:
    raw = client.hgetall(keys.ratings(ladder))
    return {_text(agent): tuple(json.loads(value)) for agent, value in raw.items()}
