"""Built-in bot strength and decision time, 4 seats.

    python bench/bots.py [--games 300] [--preset-games 100] [--jobs 2] [--budget-ms 1000]
                         [--presets classic,river-blind,online-anderson] [--first 0]

Match-ups on the ``classic`` preset (seed 000), each over the same ``--games`` deals (game ``g``
is dealt from seed ``g``): strong vs 3 heuristic, heuristic vs 3 random, random x 4; then strong
vs 3 heuristic on ``river-blind`` (blind bidding) and ``online-anderson`` (Anderson's rising
trick value) over ``--preset-games`` deals (0 skips them). ``--presets`` runs only the named
presets' match-ups (e.g. ``--presets river-blind`` for a blind-bidding study); ``--first`` shifts
the deals (game ``g`` is then dealt from seed ``first + g``). The bot under test sits in seat
``g % 4`` (seats rotated); the table reports it and, as the reference measured in the same run,
the average of its three opponents: exact-bid %, points per hand, game wins (a shared win counts
1 / winners) and the time of each of its decisions (p50 / p95, ms), and for the strong bot how
many of its searched decisions its ``--budget-ms`` ceiling cut short (its work per decision is
fixed; the ceiling is only a safety net). With ``--jobs 2`` games run in two processes: on a
shared 2-core machine decision times then include contention; measure time with ``--jobs 1``.

The last line is ``bots: strong_exact=<%> strong_pts_per_hand=<..> strong_wins=<%> p95_ms=<..>
pts_vs_heuristic=<strong points per hand / its heuristic opponents'> blind_wins=<%>
anderson_wins=<%> ceiling_hits=<cut short>/<searched>`` (the first five on classic, left out when
classic is not run).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator, Sequence
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
CLASSIC_MATCHUPS = (
    ("classic", "strong", "heuristic"),
    ("classic", "heuristic", "random"),
    ("classic", "random", "random"),
)
PRESET_MATCHUPS = (("river-blind", "strong", "heuristic"), ("online-anderson", "strong", "heuristic"))
PRESETS_RUN = ("classic", "river-blind", "online-anderson")


class TimedBot:
    """Wraps a bot and records how long each of its decisions takes."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot
        self.name = bot.name
        self.times: list[float] = []

    @property
    def ceiling(self) -> tuple[int, int]:
        """(decisions cut short by the ceiling, searched decisions) of a strong bot, else (0, 0)."""
        bot = self.bot
        return (bot.ceiling_hits, bot.decisions) if isinstance(bot, StrongBot) else (0, 0)

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
    ceiling_hits: int = 0
    searched: int = 0
    times: list[float] = field(default_factory=list)

    def add(self, other: Totals) -> None:
        for name in (
            "games", "hands", "exact", "points", "wins", "field_exact", "field_points", "field_wins", "ceiling_hits",
            "searched",
        ):  # fmt: skip
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.times.extend(other.times)


def build(name: str, seed: int, budget_ms: float) -> Bot:
    return StrongBot(seed, budget_ms=budget_ms) if name == "strong" else make_bot(name, seed)


def play_one(job: tuple[str, str, str, int, float]) -> Totals:
    """One game: the bot under test in seat ``game % 4``, the opponent bot elsewhere."""
    rules, tested, opponent, game_index, budget_ms = job
    seat = game_index % PLAYERS
    bots: list[Bot] = [build(opponent, game_index * PLAYERS + s, budget_ms) for s in range(PLAYERS)]
    timed = TimedBot(build(tested, game_index * PLAYERS + seat, budget_ms))
    bots[seat] = timed
    state = play_game(Game(preset(rules), PLAYERS), bots, seed=game_index)
    hits, searched = timed.ceiling
    totals = Totals(games=1, times=timed.times, ceiling_hits=hits, searched=searched)
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


def run(
    games: int, preset_games: int, jobs: int, budget_ms: float, presets: Sequence[str] = PRESETS_RUN, first: int = 0
) -> Iterator[tuple[str, str, str, Totals]]:
    matchups = [(m, games) for m in CLASSIC_MATCHUPS] + [(m, preset_games) for m in PRESET_MATCHUPS if preset_games]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for (rules, tested, opponent), count in matchups:
            if rules not in presets:
                continue
            totals = Totals()
            work = [(rules, tested, opponent, g, budget_ms) for g in range(first, first + count)]
            for one in pool.map(play_one, work, chunksize=4):
                totals.add(one)
            yield rules, tested, opponent, totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=300, help="games per classic match-up (default 300)")
    parser.add_argument(
        "--preset-games", type=int, default=100, help="games on river-blind and online-anderson (default 100; 0 skips)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--budget-ms", type=float, default=DEFAULT_BUDGET_MS, help="strong bot's ceiling")
    parser.add_argument(
        "--presets",
        default=",".join(PRESETS_RUN),
        help=f"the presets to run, comma-separated (default {','.join(PRESETS_RUN)})",
    )
    parser.add_argument("--first", type=int, default=0, help="seed of the first game's deal (default 0)")
    args = parser.parse_args()
    presets = [name for name in args.presets.split(",") if name]
    if args.games < 1 or args.jobs < 1 or args.budget_ms <= 0 or args.preset_games < 0 or args.first < 0:
        parser.error("--games, --jobs and --budget-ms must be positive, --preset-games and --first not negative")
    if not presets or any(name not in PRESETS_RUN for name in presets):
        parser.error(f"--presets takes names among {', '.join(PRESETS_RUN)}")
    header = (
        f"{'preset':<16} {'match-up':<22} {'exact %':>8} {'pts/hand':>9} {'wins %':>7} "
        f"{'field exact %':>14} {'field pts/hand':>15} {'field wins %':>13} {'p50 ms':>8} {'p95 ms':>8} {'cut':>7}"
    )
    print(
        f"{PLAYERS} seats, {args.games} games per classic match-up, {args.preset_games} on the other presets, "
        "seats rotated, same deals per preset"
    )
    print(header)
    print("-" * len(header))
    strong: dict[str, Totals] = {}
    started = time.perf_counter()
    for rules, tested, opponent, t in run(
        args.games, args.preset_games, args.jobs, args.budget_ms, presets, args.first
    ):
        label = f"{tested} x 4" if tested == opponent else f"{tested} vs 3 {opponent}"
        opponents_hands = 3 * t.hands
        cut = f"{t.ceiling_hits}/{t.searched}" if tested == "strong" else "-"
        print(
            f"{rules:<16} {label:<22} {100 * t.exact / t.hands:>8.1f} {t.points / t.hands:>9.2f} "
            f"{100 * t.wins / t.games:>7.1f} {100 * t.field_exact / opponents_hands:>14.1f} "
            f"{t.field_points / opponents_hands:>15.2f} {100 * t.field_wins / (3 * t.games):>13.1f} "
            f"{1000 * percentile(t.times, 0.5):>8.3f} {1000 * percentile(t.times, 0.95):>8.3f} {cut:>7}",
            flush=True,
        )
        if tested == "strong":
            strong[rules] = t
    print(f"({time.perf_counter() - started:.0f} s, {args.jobs} job(s); field = the 3 opponents, per seat)")
    others = " ".join(
        f"{name}_wins={100 * strong[rules].wins / strong[rules].games:.1f}%"
        for rules, name in (("river-blind", "blind"), ("online-anderson", "anderson"))
        if rules in strong
    )
    hits = sum(t.ceiling_hits for t in strong.values())
    searched = sum(t.searched for t in strong.values())
    classic = strong.get("classic")
    head = ""
    if classic is not None:
        field_pts = classic.field_points / (3 * classic.hands)
        head = (
            f"strong_exact={100 * classic.exact / classic.hands:.1f}% "
            f"strong_pts_per_hand={classic.points / classic.hands:.2f} "
            f"strong_wins={100 * classic.wins / classic.games:.1f}% "
            f"p95_ms={1000 * percentile(classic.times, 0.95):.1f} "
            f"pts_vs_heuristic={classic.points / classic.hands / field_pts:.2f}x "
        )
    print(f"bots: {head}{others} ceiling_hits={hits}/{searched}")


if __name__ == "__main__":
    main()
