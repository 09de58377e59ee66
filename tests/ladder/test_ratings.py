"""Ratings from the match log: ranks, exactly-once application, concurrent updates, rebuild."""

from __future__ import annotations

import random
import threading
from typing import Any

import redis

from arena.clock import now_ms
from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys
from arena.ladder.matchlog import read_log
from arena.ladder.model import Ladder
from arena.ladder.ratings import MODEL, WRITE_RATED_SHA, catch_up, ranks, rate_match, rebuild, replay, stored_ratings
from arena.ladder.redis_store import RedisStore


def test_ranks_share_ties_and_put_forfeits_last() -> None:
    assert ranks([30, 10, 30, 20]) == [1, 4, 1, 3]
    assert ranks([30, 10, 30, 20], forfeited=[0]) == [4, 3, 1, 2]
    assert ranks([5, 5, 5], forfeited=[1, 2]) == [1, 2, 2]


def test_a_tie_moves_tied_agents_alike() -> None:
    summary = {
        "agents": ["a", "b", "c"],
        "totals": [10, 10, 0],
        "forfeited": [],
        "winners": [0, 1],
        "hands": [2, 2, 2],
        "exact": [1, 2, 0],
        "faults": [0, 0, 0],
    }
    ratings, stats = replay([summary])
    # games, hands, exact, faults, forfeits, win shares (x420), points
    assert stats == {"a": [1, 2, 1, 0, 0, 210, 10], "b": [1, 2, 2, 0, 0, 210, 10], "c": [1, 2, 0, 0, 0, 0, 0]}
    assert ratings["a"] == ratings["b"] and ratings["a"][0] > MODEL.mu > ratings["c"][0]


def log_matches(store: RedisStore, ladder: str, players: list[str], count: int, seed: int = 7) -> None:
    """``count`` finished matches, each with players[0] and two others, random scores and forfeits."""
    rng = random.Random(seed)
    for _ in range(count):
        seated = [players[0], *rng.sample(players[1:], 2)]
        for agent in seated:
            store.join(ladder, agent, None)
        (match_id,) = store.claim(ladder, [seated], now_ms())
        assert match_id is not None
        totals = [rng.choice([0, 10, 12, 20]) for _ in seated]
        forfeited = [1] if rng.random() < 0.1 else []
        hands = [{"bids": [1, 0, 2], "tricks_won": [1, 1, 1], "sudden_death": False}]
        store.finish_match(
            match_id,
            {
                "match_id": match_id,
                "hands": hands,
                "totals": totals,
                "forfeited": forfeited,
                "winners": [totals.index(max(totals))],
                "faults": [],
            },
        )


def test_concurrent_updates_for_one_agent_lose_nothing(store: RedisStore, redis_server: EmbeddedRedis) -> None:
    store.create_ladder(Ladder("l", seats=3))
    players = [store.register_agent(f"p{i}", "builtin", bot="random")[0].agent_id for i in range(6)]
    log_matches(store, "l", players, 90)
    applied: list[int] = []
    start = threading.Barrier(6)

    def rater() -> None:
        client = redis.Redis.from_url(redis_server.url)
        start.wait()
        applied.append(catch_up(client, store.keys, "l", batch=2))  # small batches: many interleavings
        client.close()

    threads = [threading.Thread(target=rater) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(applied) == 90  # every match applied once, by exactly one of the racers
    entries = list(read_log(store.client, store.keys, "l"))
    expected, stats = replay(summary for _, summary in entries)
    assert stored_ratings(store.client, store.keys, "l") == expected  # same as one sequential pass
    assert store.standing("l", players[0]).games == 90 == stats[players[0]][0]
    assert store.standing("l", players[0]).hands == 90 and store.standing("l", players[0]).exact == 90
    assert catch_up(store.client, store.keys, "l") == 0  # nothing left: exactly once


class MovesARatingBeforeEachWrite(redis.Redis):  # type: ignore[type-arg]
    """A real client that, right before each rating write script, lets another writer set an
    agent's rating (as a rebuild would, leaving the cursor where it was)."""

    def __init__(self, url: str, keys: Keys, ladder: str, agent: str) -> None:
        super().__init__(connection_pool=redis.ConnectionPool.from_url(url))
        self.target = (keys.ratings(ladder), agent)
        self.moves = 0

    def evalsha(self, sha: str, numkeys: int, *keys_and_args: Any) -> Any:  # type: ignore[override]
        if sha == WRITE_RATED_SHA and self.moves < 2:
            self.moves += 1
            redis.Redis(connection_pool=self.connection_pool).hset(*self.target, f"[{20.0 + self.moves}, 5.0]")
        return super().evalsha(sha, numkeys, *keys_and_args)


def test_a_rating_moved_between_read_and_write_is_read_again(store: RedisStore, redis_server: EmbeddedRedis) -> None:
    store.create_ladder(Ladder("l", seats=3))
    players = [store.register_agent(f"p{i}", "builtin", bot="random")[0].agent_id for i in range(4)]
    log_matches(store, "l", players, 5)
    client = MovesARatingBeforeEachWrite(redis_server.url, store.keys, "l", players[0])
    assert catch_up(client, store.keys, "l") == 5  # two writes refused (nothing written), the third applies
    assert client.moves == 2
    entries = [summary for _, summary in read_log(store.client, store.keys, "l")]
    start = {players[0]: MODEL.rating(mu=22.0, sigma=5.0)}  # the last rating the other writer set
    for summary in entries:
        rate_match(start, summary)
    assert stored_ratings(store.client, store.keys, "l")[players[0]] == (start[players[0]].mu, start[players[0]].sigma)
    assert store.standing("l", players[0]).games == 5  # statistics counted once
    assert catch_up(store.client, store.keys, "l") == 0


def test_rebuild_from_the_log_is_identical(store: RedisStore) -> None:
    store.create_ladder(Ladder("l", seats=3))
    players = [store.register_agent(f"p{i}", "builtin", bot="random")[0].agent_id for i in range(5)]
    log_matches(store, "l", players, 30)
    catch_up(store.client, store.keys, "l", batch=7)
    before = stored_ratings(store.client, store.keys, "l")
    board_before = store.leaderboard("l", 0, 10)
    stats_before = store.client.hgetall(store.keys.stats("l"))
    store.client.delete(store.keys.ratings("l"))  # damage: lose the ratings
    assert rebuild(store.client, store.keys, "l") == 30
    assert stored_ratings(store.client, store.keys, "l") == before
    assert store.leaderboard("l", 0, 10) == board_before
    assert store.client.hgetall(store.keys.stats("l")) == stats_before
    log_matches(store, "l", players, 3, seed=8)  # the cursor survived: new matches apply once
    assert catch_up(store.client, store.keys, "l") == 3


def test_rebuild_command(store: RedisStore, redis_server: EmbeddedRedis, capsys) -> None:  # type: ignore[no-untyped-def]
    from arena.cli import main

    store.create_ladder(Ladder("l", seats=3))
    players = [store.register_agent(f"p{i}", "builtin", bot="random")[0].agent_id for i in range(4)]
    log_matches(store, "l", players, 12)
    catch_up(store.client, store.keys, "l")
    before = stored_ratings(store.client, store.keys, "l")
    store.client.hset(store.keys.ratings("l"), players[0], "[1.0, 1.0]")  # a damaged rating
    assert main(["ladder", "rebuild", "--redis-url", redis_server.url]) == 0
    assert "l: ratings rebuilt from 12 logged matches" in capsys.readouterr().out
    assert stored_ratings(store.client, store.keys, "l") == before
    assert main(["ladder", "rebuild", "--redis-url", redis_server.url, "--ladder", "nope"]) == 2
