"""Rating updates per second through the ladder's storage path (read the match log from Redis,
OpenSkill Plackett-Luce, write ratings, statistics, leaderboard and cursor in MULTI/EXEC) beside
raw openskill ``rate`` calls on the same matches in the same run. Last line:

    ratings: stored_per_s=<..> raw_openskill_per_s=<..> ratio=<stored/raw>

Usage: python bench/ratings.py [--matches 5000] [--agents 200]
"""

from __future__ import annotations

import argparse
import random
import time

import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys
from arena.ladder.matchlog import encode
from arena.ladder.ratings import MODEL, catch_up, ranks


def summaries(count: int, agents: int, rng: random.Random) -> list[dict[str, object]]:
    out = []
    for index in range(count):
        seated = rng.sample([f"a{i}" for i in range(agents)], 4)
        totals = [rng.choice([0, 11, 12, 13, 24, 36]) for _ in seated]
        out.append(
            {
                "match_id": f"bench-{index}",
                "ladder": "bench",
                "agents": seated,
                "totals": totals,
                "winners": [totals.index(max(totals))],
                "forfeited": [],
                "hands": [5] * 4,
                "exact": [rng.randint(0, 5) for _ in seated],
                "faults": [0] * 4,
            }
        )
    return out


def raw_openskill(matches: list[dict[str, object]]) -> float:
    """The reference: ``MODEL.rate`` over the same matches, ratings kept in a dict of objects."""
    ratings: dict[str, object] = {}
    started = time.perf_counter()
    for summary in matches:
        agents = summary["agents"]
        teams = [[ratings.get(a) or MODEL.rating()] for a in agents]  # type: ignore[union-attr]
        new = MODEL.rate(teams, ranks=ranks(summary["totals"]))  # type: ignore[arg-type]
        for agent, (rating,) in zip(agents, new, strict=True):  # type: ignore[call-overload]
            ratings[agent] = rating
    return len(matches) / (time.perf_counter() - started)


def stored(client: redis.Redis, keys: Keys, matches: list[dict[str, object]]) -> float:
    with client.pipeline(transaction=False) as pipe:  # the log as the workers leave it (not timed)
        for summary in matches:
            pipe.xadd(keys.log("bench"), {"match": str(summary["match_id"]), "summary": encode(summary)})
        pipe.execute()
    started = time.perf_counter()
    applied = catch_up(client, keys, "bench")
    seconds = time.perf_counter() - started
    assert applied == len(matches), applied
    return applied / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=5000)
    parser.add_argument("--agents", type=int, default=200)
    args = parser.parse_args()
    matches = summaries(args.matches, args.agents, random.Random(3))
    with EmbeddedRedis() as server:
        client = redis.Redis.from_url(server.url)
        raw = raw_openskill(matches)
        ours = stored(client, Keys(), matches)
        raw = max(raw, raw_openskill(matches))  # best of two for the reference: the ratio errs low
        client.close()
    print(f"{args.matches} matches of 4 among {args.agents} agents")
    print(f"ratings: stored_per_s={ours:.0f} raw_openskill_per_s={raw:.0f} ratio={ours / raw:.2f}")


if __name__ == "__main__":
    main()
