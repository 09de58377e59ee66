"""Where the time to create a big tournament goes, on a real Redis with the real Celery sender:
the schedule (the balanced round-robin design), drawing the deal sets (now, and as before: a
``SystemRandom().sample`` per deck, one system call per card), the Lua call that stores it all, and
sending each table to the workers. Last line:

    tournament_create: tables=<n> schedule_s=<..> draw_s=<..> draw_before_s=<..> store_s=<..> send_s=<..> total_s=<..>

Usage: python bench/tournament_create.py [--entrants 200] [--seats 3] [--deals 1]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import TypeVar

import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys
from arena.ladder.routing import make_celery, tourney_dispatcher
from arena.play.specs import SeatSpec
from arena.tournament import jobs
from arena.tournament.deals import draw_deal_set
from arena.tournament.model import Tournament
from arena.tournament.store import TournamentStore
from ohell.state import Game

T = TypeVar("T")


def seconds(fn: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def draw_before(game: Game, count: int) -> None:
    """The decks as they were drawn before: a SystemRandom sample per deck (cuts left out)."""
    rng = random.SystemRandom()
    hands = len(draw_deal_set(game, random.Random(0)).decks)
    for _ in range(count):
        [rng.sample(range(52), 52) for _ in range(hands)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entrants", type=int, default=200)
    parser.add_argument("--seats", type=int, default=3)
    parser.add_argument("--deals", type=int, default=1)
    args = parser.parse_args()
    entrants = tuple(SeatSpec(kind="builtin", bot="random", name=f"b{i}") for i in range(args.entrants))
    tourney = Tournament("bench", entrants, seats=args.seats, deals=args.deals)
    schedule_s, tables = seconds(tourney.first_round)
    sets = len(tables) * args.deals
    game = Game(tourney.rules(), args.seats)
    draw_s, _ = seconds(lambda: [draw_deal_set(game) for _ in range(sets)])
    draw_before_s, _ = seconds(lambda: draw_before(game, sets))
    with EmbeddedRedis() as server:
        store = TournamentStore(redis.Redis.from_url(server.url), Keys("bench:"))
        dispatch = tourney_dispatcher(make_celery(server.url, prefix="bench:"), "bench:")
        store_s, plans = seconds(lambda: store.create(tourney))
        started = time.perf_counter()
        for plan in plans:
            jobs.send(store, tourney, plan, dispatch)
        send_s = time.perf_counter() - started
    total_s = store_s + send_s  # store.create schedules and draws too
    print(
        f"tournament_create: tables={len(tables)} schedule_s={schedule_s:.2f} draw_s={draw_s:.2f} "
        f"draw_before_s={draw_before_s:.2f} store_s={store_s - schedule_s - draw_s:.2f} send_s={send_s:.2f} "
        f"total_s={total_s:.2f}"
    )


if __name__ == "__main__":
    main()
