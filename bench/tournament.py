"""Duplicate against plain scoring: how sure each is of strong > heuristic > random after the same games.

    python bench/tournament.py [--deals 60] [--rules classic] [--hand-sizes 5,4,3,2,1] [--seed 1] [--jobs 2]

One 3-seat table of the built-in bots strong, heuristic and random, played in this process:

- duplicate: ``--deals`` deal sets, each played in the 3 seat rotations (3 x deals games); a game's
  points are the score minus the mean score of that seat on that deal; the bootstrap resamples deals;
- plain (the reference): the same number of games, each with fresh cards; a game's points are the
  score minus the game's mean score; the bootstrap resamples games.

Both report each bot's 95 % bootstrap interval of its mean points per game (2,000 resamples). The
last line is ``tournament: games=<n> ci_width_duplicate=<x> ci_width_plain=<y> ratio=<y/x>``
(mean interval width over the three bots): a ratio r means plain scoring needs about r^2 times as many
games for the same certainty. It also reports the fewest deals (games / 3) after which
strong > heuristic > random with intervals that do not overlap, for each scoring.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from arena.play.specs import SeatSpec  # noqa: E402
from arena.tournament.deals import DealSet, draw_deal_set, rotation  # noqa: E402
from arena.tournament.play import play_builtin_game  # noqa: E402
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


def play_one(args: tuple[str, Rules, tuple[str, ...], DealSet, str]) -> GameResult:
    game, rules, bots, deal_set, unit = args
    record = play_builtin_game(game, rules, [SeatSpec.builtin(bot) for bot in bots], deal_set)
    return GameResult(unit, bots, tuple(record["totals"]))


def separated(observations: Sequence[Observation]) -> bool:
    """strong > heuristic > random in the ranking, each interval wholly above the next one."""
    table = standings(observations, replicates=1000)
    if [row.entrant for row in table] != list(BOTS):
        return False
    return all(table[i].ci_low > table[i + 1].ci_high for i in range(len(table) - 1))


def fewest_deals(games: Sequence[GameResult], per_deal: int, score: type | object) -> int | None:
    """The first multiple of CHECK_EVERY deals after which the order holds with separate intervals."""
    for deals in range(CHECK_EVERY, len(games) // per_deal + 1, CHECK_EVERY):
        prefix = games[: deals * per_deal]
        if separated(score(prefix)):  # type: ignore[operator]
            return deals
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--deals", type=int, default=60)
    parser.add_argument("--rules", default="classic", help="rule preset (see 'ohell rules')")
    parser.add_argument("--hand-sizes", default="5,4,3,2,1", help="the rules option hand_sizes (short games)")
    parser.add_argument("--seed", type=int, default=1, help="seeds the deals of both scorings")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    rules = preset_with_options(args.rules, [f"hand_sizes=[{args.hand_sizes}]"])
    game = Game(rules, len(BOTS))
    rng = random.Random(args.seed)
    work = []
    for deal in range(args.deals):
        deal_set = draw_deal_set(game, rng)
        work += [(f"dup/{deal}/{turn}", rules, tuple(rotation(BOTS, turn)), deal_set, f"d{deal}") for turn in range(3)]
    for number in range(args.deals * 3):  # plain: fresh cards every game, seats rotated the same way
        unit = f"g{number}"
        work.append((f"plain/{number}", rules, tuple(rotation(BOTS, number % 3)), draw_deal_set(game, rng), unit))
    with ProcessPoolExecutor(args.jobs) as pool:
        results = list(pool.map(play_one, work, chunksize=4))
    duplicate, plain = results[: args.deals * 3], results[args.deals * 3 :]
    width, entrant_width = {}, {}
    for name, games, score in (
        ("duplicate", duplicate, duplicate_observations),
        ("plain", plain, plain_observations),
    ):
        observations = score(games)
        table = standings(observations)
        entrant_width[name] = mean_ci_width(table)
        gaps = difference_intervals(observations, BOTS)
        width[name] = sum(high - low for low, high in gaps) / len(gaps)
        print(f"{name}: {len(games)} games")
        for row in table:
            print(
                f"  {row.rank}. {row.entrant:<9} mean {row.mean_duplicate:+7.2f}  95% CI "
                f"[{row.ci_low:+7.2f}, {row.ci_high:+7.2f}]  P(above next) {row.p_above_next}"
            )
        for (low, high), upper, lower in zip(gaps, BOTS, BOTS[1:], strict=False):
            print(f"  {upper} - {lower}: 95% CI [{low:+.2f}, {high:+.2f}] (width {high - low:.2f})")
        first = fewest_deals(games, 3, score)
        print(f"  strong > heuristic > random, intervals apart, from {first and first * 3} games (None: not reached)")
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
