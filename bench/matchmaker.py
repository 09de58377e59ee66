"""Tickets seated at tables per second by the matchmaker's forming round on a real Redis
(snapshot script, pure forming, atomic claim script), beside Redis PING round trips per second
measured in the same run. Last line:

    matchmaker: tickets_per_s=<..> redis_rtt_per_s=<..>

Usage: python bench/matchmaker.py [--tickets 8000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time

import redis

from arena.embedded_redis import EmbeddedRedis
from arena.ladder.loop import form_once
from arena.ladder.model import Ladder
from arena.ladder.redis_store import RedisStore


def redis_rtt_per_s(client: redis.Redis, count: int = 5000) -> float:
    started = time.perf_counter()
    for _ in range(count):
        client.ping()
    return count / (time.perf_counter() - started)


def fill_queue(store: RedisStore, ladder: str, agent_ids: list[str], rng: random.Random) -> None:
    """Queue every agent (pipelined; not timed) with a spread of ratings and game counts."""
    with store.client.pipeline(transaction=False) as pipe:
        now = int(time.time() * 1000)
        for agent in agent_ids:
            pipe.set(store.keys.ticket(ladder, agent), str(now))
            pipe.zadd(store.keys.queue(ladder), {agent: now - rng.randint(0, 20_000)})
            pipe.hset(store.keys.ratings(ladder), agent, json.dumps([rng.gauss(25, 6), 5.0]))
            pipe.hset(store.keys.stats(ladder), agent, json.dumps([rng.randint(0, 40)] + [0] * 6))
        pipe.execute()


def seat_everyone(store: RedisStore, ladder: Ladder) -> tuple[int, float]:
    """Forming rounds until no table forms; returns (tickets seated, seconds)."""
    seated = 0
    started = time.perf_counter()
    while True:
        created = form_once(store, ladder, dispatch=None)
        if not created:
            return seated, time.perf_counter() - started
        seated += len(created) * ladder.seats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tickets", type=int, default=8000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(1)
    with EmbeddedRedis() as server:  # AOF on, fsync every second: the production setting
        client = redis.Redis.from_url(server.url)
        store = RedisStore(client)
        agent_ids = []
        with client.pipeline(transaction=False) as pipe:  # agents registered directly: setup, not timed
            for index in range(args.tickets):
                agent_id = f"b{index}"
                pipe.hset(
                    store.keys.agent(agent_id),
                    mapping={"agent_id": agent_id, "name": agent_id, "kind": "builtin", "bot": "random"},
                )
                agent_ids.append(agent_id)
            pipe.execute()
        rates, rtts = [], []
        for round_number in range(args.rounds):
            ladder = store.create_ladder(Ladder(f"bench{round_number}", seats=4))
            fill_queue(store, ladder.name, agent_ids, rng)
            rtts.append(redis_rtt_per_s(client))
            seated, seconds = seat_everyone(store, ladder)
            rates.append(seated / seconds)
            print(
                f"round {round_number}: {seated} of {args.tickets} tickets seated in {seconds * 1000:.0f} ms "
                f"({seated / seconds:,.0f}/s); redis ping {rtts[-1]:,.0f}/s",
                flush=True,
            )
            client.delete(*(store.keys.busy(agent) for agent in agent_ids))  # matches are not played here
        client.close()
    print(f"matchmaker: tickets_per_s={statistics.median(rates):.0f} redis_rtt_per_s={statistics.median(rtts):.0f}")


if __name__ == "__main__":
    main()
