"""Built-in bot strength and decision time on the ``classic`` preset (seed 000), 4 seats.

    python bench/bots.py [--games 300] [--jobs 2] [--budget-ms 80]

Three match-ups, each over the same ``--games`` deals (game ``g`` is dealt from seed ``g``):
strong vs 3 heuristic, heuristic vs 3 random, random x 4. The bot under test sits in seat
``g % 4`` (seats rotated); the table reports it and, as the reference measured in the same run,
the average of its three opponents: exact-bid %, points per hand, game wins (a shared win counts
1 / winners) and the time of each of its decisions (p50 / p95, ms). With ``--jobs 2`` games run in
two processes: on a shared 2-core machine decision times then include contention.

The last line is ``bots: strong_exact=<%> strong_pts_per_hand=<..> strong_wins=<%> p95_ms=<..>
pts_vs_heuristic=<strong points per hand / its heuristic opponents'>``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from ohell.bots import make_bot
from ohell.bots.base import Bot
from ohell.bots.strong import DEFAULT_BUDGET_MS, StrongBot
from ohell.match import play_game
from ohell.observation import Observation
from ohell.presets import preset
from ohell.state import Game

PLAYERS = 4
MATCHUPS = (("strong", "heuristic"), ("heuristic", "random"), ("random", "random"))


class TimedBot:
    """Wraps a bot and records how long each of its decisions takes."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.name = bot.name
        self.times: list[float] = []

    def bid(self, observation: Observation) -> int:
        started = time.perf_counter()
        choice = self.bot.bid(observation)
        self.times.append(time.perf_counter() - started)
        return choice

    def play(self, observation: Observation) -> int:
        started = time.perf_counter()
        choice = self.bot.play(observation)
        self.times.append(time.perf_counter() - started)
        return choice


@dataclass
class Totals:
    games: int = 0
    hands: int = 0
    exact: int = 0
    points: int = 0
    wins: float = 0.0
    field_exact: int = 0  # the three opponents, summed over seats
    field_points: int = 0
    field_wins: float = 0.0
    times: list[float] = field(default_factory=list)

    def add(self, other: Totals) -> None:
        for name in ("games", "hands", "exact", "points", "wins", "field_exact", "field_points", "field_wins"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.times.extend(other.times)


def build(name: str, seed: int, budget_ms: float) -> Bot:
    return StrongBot(seed, budget_ms=budget_ms) if name == "strong" else make_bot(name, seed)


def play_one(job: tuple[str, str, int, float]) -> Totals:
    """One game: the bot under test in seat ``game % 4``, the opponent bot elsewhere."""
    tested, opponent, game_index, budget_ms = job
    seat = game_index % PLAYERS
    bots: list[Bot] = [build(opponent, game_index * PLAYERS + s, budget_ms) for s in range(PLAYERS)]
    timed = TimedBot(build(tested, game_index * PLAYERS + seat, budget_ms))
    bots[seat] = timed
    state = play_game(Game(preset("classic"), PLAYERS), bots, seed=game_index)
    totals = Totals(games=1, times=timed.times)
    for result in state.results:
        totals.hands += 1
        for s in result.participants:
            exact = int(result.bids[s] == result.tricks_won[s])
            if s == seat:
                totals.exact += exact
                totals.points += result.points[s]
            else:
                totals.field_exact += exact
                totals.field_points += result.points[s]
    share = 1.0 / len(state.winners)
    totals.wins = share if seat in state.winners else 0.0
    totals.field_wins = share * sum(1 for s in state.winners if s != seat)
    return totals


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


def run(games: int, jobs: int, budget_ms: float) -> Iterator[tuple[str, str, Totals]]:
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for tested, opponent in MATCHUPS:
            totals = Totals()
            work = [(tested, opponent, g, budget_ms) for g in range(games)]
            for one in pool.map(play_one, work, chunksize=4):
                totals.add(one)
            yield tested, opponent, totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=300, help="games per match-up (default 300)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--budget-ms", type=float, default=DEFAULT_BUDGET_MS, help="strong bot's ceiling")
    args = parser.parse_args()
    if args.games < 1 or args.jobs < 1 or args.budget_ms <= 0:
        parser.error("--games, --jobs and --budget-ms must be positive")
    header = (
        f"{'match-up':<26} {'exact %':>8} {'pts/hand':>9} {'wins %':>7} "
        f"{'field exact %':>14} {'field pts/hand':>15} {'field wins %':>13} {'p50 ms':>8} {'p95 ms':>8}"
    )
    print(f"classic preset, {PLAYERS} seats, {args.games} games per match-up, seats rotated, same deals")
    print(header)
    print("-" * len(header))
    strong: Totals | None = None
    started = time.perf_counter()
    for tested, opponent, t in run(args.games, args.jobs, args.budget_ms):
        label = f"{tested} x 4" if tested == opponent else f"{tested} vs 3 {opponent}"
        opponents_hands = 3 * t.hands
        print(
            f"{label:<26} {100 * t.exact / t.hands:>8.1f} {t.points / t.hands:>9.2f} "
            f"{100 * t.wins / t.games:>7.1f} {100 * t.field_exact / opponents_hands:>14.1f} "
            f"{t.field_points / opponents_hands:>15.2f} {100 * t.field_wins / (3 * t.games):>13.1f} "
            f"{1000 * percentile(t.times, 0.5):>8.3f} {1000 * percentile(t.times, 0.95):>8.3f}",
            flush=True,
        )
        if tested == "strong":
            strong = t
    assert strong is not None
    print(f"({time.perf_counter() - started:.0f} s, {args.jobs} job(s); field = the 3 opponents, per seat)")
    field_pts = strong.field_points / (3 * strong.hands)
    print(
        f"bots: strong_exact={100 * strong.exact / strong.hands:.1f}% "
        f"strong_pts_per_hand={strong.points / strong.hands:.2f} "
        f"strong_wins={100 * strong.wins / strong.games:.1f}% "
        f"p95_ms={1000 * percentile(strong.times, 0.95):.1f} "
        f"pts_vs_heuristic={strong.points / strong.hands / field_pts:.2f}x"
    )


if __name__ == "__main__":
    main()
