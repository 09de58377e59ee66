"""Duplicate against plain scoring: how sure each is of strong > heuristic > random after the same games.

    python bench/tournament.py [--deals 60] [--bots strong,heuristic,random] [--bot-seeds hand]
                               [--rules classic] [--hand-sizes 5,4,3,2,1] [--seed 1] [--jobs 2]

One table of the built-in bots named by ``--bots`` (one seat each, best first; a bot named twice
is two entrants, e.g. ``heuristic`` and ``heuristic-2``), played in this process through the
tournament's own code (``arena.tournament.play``, ``deals.seating``, ``standings``):

- duplicate: ``--deals`` deal sets, each played in the n seat rotations (n x deals games), the
  bots seeded per seat of the deal set as a tournament does (``--bot-seeds hand``: common random
  numbers) or per game (``--bot-seeds game``: how tournaments seeded them before); a game's points
  are the score minus the mean score of that seat on that deal; the bootstrap resamples deals;
- plain (the reference): the same number of games, each with fresh cards and fresh bot seeds; a
  game's points are the score minus the game's mean score; the bootstrap resamples games.

Both report each bot's 95 % bootstrap interval of its mean points per game (2,000 resamples). The
last line is ``tournament: games=<n> ci_width_duplicate=<x> ci_width_plain=<y> ratio=<y/x>``
(the mean width of the intervals of the differences between neighbours in ``--bots`` order, the
comparisons that rank them): a ratio r means plain scoring needs about r^2 times as many
games for the same certainty. It also reports, for each scoring, the fewest games from which on
(checked every 5 deals) the ``--bots`` order holds with per-entrant intervals that do not overlap.

For each neighbour pair it also prints rho, the correlation of the pair's score difference between
two rotations of one deal set, and the ratio that implies (``rotation_correlation``).

``--bots strong,heuristic,heuristic`` measures a field of competitive entrants; the default field
includes the random bot, whose own noise no deal can repeat (docs/tournaments.md).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.play.specs import SeatSpec  # noqa: E402
from arena.tournament.deals import DealSet, draw_deal_set, seating  # noqa: E402
from arena.tournament.play import hand_seeds, play_builtin_game  # noqa: E402
from arena.tournament.standings import (  # noqa: E402
    GameResult,
    Observation,
    difference_intervals,
    duplicate_observations,
    mean_ci_width,
    plain_observations,
    standings,
)
from ohell.presets import preset_with_options  # noqa: E402
from ohell.rules import Rules  # noqa: E402
from ohell.state import Game  # noqa: E402

BOTS = ("strong", "heuristic", "random")
CHECK_EVERY = 5  # deals between two checks of the intervals


Work = tuple[str, Rules, tuple[str, ...], DealSet, str, tuple[int, ...]]


def play_one(args: Work) -> GameResult:
    game, rules, names, deal_set, unit, seeds = args
    seats = [SeatSpec.builtin(name.partition("-")[0], name) for name in names]  # "heuristic-2": a second heuristic
    record = play_builtin_game(game, rules, seats, deal_set, seeds)
    return GameResult(unit, names, tuple(record["totals"]))


def entrant_names(bots: Sequence[str]) -> tuple[str, ...]:
    return tuple(bot if bots.index(bot) == index else f"{bot}-{index}" for index, bot in enumerate(bots))


def separated(observations: Sequence[Observation], order: Sequence[str] = BOTS) -> bool:
    """The entrants ranked in ``order`` (strong > heuristic > random), each interval wholly above the next."""
    table = standings(observations, replicates=1000)
    if [row.entrant for row in table] != list(order):
        return False
    ends = [(row.ci_low, row.ci_high) for row in table]
    return all(
        low is not None and high is not None and low > high for (low, _), (_, high) in zip(ends, ends[1:], strict=False)
    )


def fewest_deals(
    games: Sequence[GameResult],
    per_deal: int,
    score: Callable[[Sequence[GameResult]], list[Observation]],
    order: Sequence[str] = BOTS,
) -> int | None:
    """The fewest deals (a multiple of CHECK_EVERY) from which on, at every later check, the order
    holds with intervals apart (None: not by the end)."""
    since = None
    for deals in range(CHECK_EVERY, len(games) // per_deal + 1, CHECK_EVERY):
        if separated(score(games[: deals * per_deal]), order):
            since = since or deals
        else:
            since = None
    return since


def rotation_correlation(games: Sequence[GameResult], upper: str, lower: str) -> float:
    """How the score difference ``upper - lower`` in one rotation of a deal set moves with the
    same difference in the deal set's other rotations (their pooled correlation over deal sets).

    Each entrant holds every seat of a deal set once, so the seat means cancel from a difference
    and a duplicate difference is the mean of the rotations' differences. Over n rotations its
    variance is sigma^2 (1 + (n - 1) rho) / n against sigma^2 / n for n games with fresh cards:
    duplicate narrows the pair's interval by 1 / sqrt(1 + (n - 1) rho), and only the cards, by
    making rho negative, can narrow it."""
    per_deal: dict[str, list[float]] = {}
    for game in games:
        scores = dict(zip(game.seats, game.scores, strict=True))
        per_deal.setdefault(game.unit, []).append(scores[upper] - scores[lower])
    values = [value for diffs in per_deal.values() for value in diffs]
    mean = sum(values) / len(values)
    variance = sum((value - mean) ** 2 for value in values) / len(values)
    products, count = 0.0, 0
    for diffs in per_deal.values():
        for i, first in enumerate(diffs):
            for j, second in enumerate(diffs):
                if i != j:
                    products += (first - mean) * (second - mean)
                    count += 1
    return products / count / variance if count and variance else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=60)
    parser.add_argument("--rules", default="classic", help="rule preset (see 'ohell rules')")
    parser.add_argument("--hand-sizes", default="5,4,3,2,1", help="the rules option hand_sizes (short games)")
    parser.add_argument("--seed", type=int, default=1, help="seeds the deals of both scorings")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--bots", default=",".join(BOTS), help="the entrants, one per seat, expected order (best first)"
    )
    parser.add_argument(
        "--bot-seeds", choices=("hand", "game"), default="hand", help="duplicate: seed per seat or game"
    )
    args = parser.parse_args()
    names = entrant_names(args.bots.split(","))
    n = len(names)
    rules = preset_with_options(args.rules, [f"hand_sizes=[{args.hand_sizes}]"])
    game = Game(rules, n)
    rng = random.Random(args.seed)
    work: list[Work] = []
    for deal in range(args.deals):
        deal_set = draw_deal_set(game, rng)
        for turn in range(n):
            unit = f"d{deal}"
            seeds = hand_seeds(unit if args.bot_seeds == "hand" else f"{unit}/r{turn}", deal_set, n)
            work.append((f"dup/{deal}/{turn}", rules, tuple(seating(names, deal, turn)), deal_set, unit, tuple(seeds)))
    for number in range(args.deals * n):  # plain: fresh cards and bot seeds every game, seats rotated the same way
        deal_set, unit = draw_deal_set(game, rng), f"g{number}"
        seats = tuple(seating(names, number // n, number % n))
        work.append((f"plain/{number}", rules, seats, deal_set, unit, tuple(hand_seeds(unit, deal_set, n))))
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(play_one, work, chunksize=4))
    duplicate, plain = results[: args.deals * n], results[args.deals * n :]
    width, entrant_width = {}, {}
    for name, games, score in (
        ("duplicate", duplicate, duplicate_observations),
        ("plain", plain, plain_observations),
    ):
        observations = score(games)
        table = standings(observations)
        entrant_width[name] = mean_ci_width(table)
        gaps = difference_intervals(observations, names)
        width[name] = sum(high - low for low, high in gaps) / len(gaps)
        print(f"{name}: {len(games)} games")
        for row in table:
            print(
                f"  {row.rank}. {row.entrant:<11} mean {row.mean_duplicate:+7.2f}  95% CI "
                f"[{row.ci_low:+7.2f}, {row.ci_high:+7.2f}]  P(above next) {row.p_above_next}"
            )
        for (low, high), upper, lower in zip(gaps, names, names[1:], strict=False):
            print(f"  {upper} - {lower}: 95% CI [{low:+.2f}, {high:+.2f}] (width {high - low:.2f})")
        if name == "duplicate":
            for upper, lower in zip(names, names[1:], strict=False):
                rho = rotation_correlation(games, upper, lower)
                gain = (1 + (n - 1) * rho) ** -0.5 if 1 + (n - 1) * rho > 0 else float("inf")
                print(
                    f"  {upper} - {lower}: rotations of a deal set correlate rho={rho:+.3f}, so duplicate "
                    f"narrows by about {gain:.2f}x (1.4x needs rho <= {(1 / 1.96 - 1) / (n - 1):+.3f})"
                )
        first = fewest_deals(games, n, score, names)
        print(f"  {' > '.join(names)} with intervals apart from {first and first * n} games on (None: never)")
    ratio = width["plain"] / width["duplicate"] if width["duplicate"] else float("inf")
    print(
        f"per-entrant intervals (mean width): duplicate {entrant_width['duplicate']:.3f} "
        f"plain {entrant_width['plain']:.3f} ratio {entrant_width['plain'] / entrant_width['duplicate']:.2f}"
    )
    print(
        f"tournament: games={len(duplicate)} ci_width_duplicate={width['duplicate']:.3f} "
        f"ci_width_plain={width['plain']:.3f} ratio={ratio:.2f}"
    )


if __name__ == "__main__":
    main()
