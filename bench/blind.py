"""The strong bot's exact bids by hand size and by bid, against 3 heuristic bots, 4 seats.

    python bench/blind.py [--games 100] [--first 0] [--jobs 1] [--rules river-blind]

Game ``g`` is dealt from seed ``g`` with the strong bot in seat ``g % 4``, as in bench/bots.py, so
its games are that bench's (the same deals and decisions). For each hand size: how often the
strong bot made its bid, and for each bid it chose, how often it chose it and how often it made
it; the same for its three heuristic opponents (the field) on the same hands. Under blind
bidding this shows which blind bids are easiest to make for each player, and whether the strong
bot's choices are the ones it makes most often.

The last line is ``blind: wins=<%> exact=<%> pts_per_hand=<..> field_exact=<%> field_pts_per_hand=<..>``.
"""

from __future__ import annotations

import argparse
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from ohell.bots import make_bot
from ohell.bots.base import Bot
from ohell.bots.strong import StrongBot
from ohell.match import play_game
from ohell.presets import PRESETS, preset
from ohell.state import Game

PLAYERS = 4


@dataclass
class Hands:
    """Per (hand size, bid): bids made and bids made exactly, for the strong bot and the field."""

    games: int = 0
    wins: float = 0.0
    bids: Counter[tuple[int, int]] = field(default_factory=Counter)
    exact: Counter[tuple[int, int]] = field(default_factory=Counter)
    points: int = 0
    field_bids: Counter[tuple[int, int]] = field(default_factory=Counter)
    field_exact: Counter[tuple[int, int]] = field(default_factory=Counter)
    field_points: int = 0

    def add(self, other: Hands) -> None:
        self.games += other.games
        self.wins += other.wins
        self.points += other.points
        self.field_points += other.field_points
        for name in ("bids", "exact", "field_bids", "field_exact"):
            getattr(self, name).update(getattr(other, name))


def play_one(job: tuple[str, int]) -> Hands:
    rules, game_index = job
    seat = game_index % PLAYERS
    bots: list[Bot] = [make_bot("heuristic", game_index * PLAYERS + s) for s in range(PLAYERS)]
    bots[seat] = StrongBot(game_index * PLAYERS + seat)
    state = play_game(Game(preset(rules), PLAYERS), bots, seed=game_index)
    hands = Hands(games=1, wins=1.0 / len(state.winners) if seat in state.winners else 0.0)
    for result in state.results:
        for s in result.participants:
            key = (result.size, result.bids[s])
            made = int(result.bids[s] == result.tricks_won[s])
            if s == seat:
                hands.bids[key] += 1
                hands.exact[key] += made
                hands.points += result.points[s]
            else:
                hands.field_bids[key] += 1
                hands.field_exact[key] += made
                hands.field_points += result.points[s]
    return hands


def by_bid(bids: Counter[tuple[int, int]], exact: Counter[tuple[int, int]], size: int) -> str:
    return " ".join(
        f"{bid}: {bids[size, bid]} x {100 * exact[size, bid] / bids[size, bid]:.0f}%"
        for bid in range(size + 1)
        if bids[size, bid]
    )


def percent(made: int, count: int) -> str:
    return f"{100 * made / count:.1f}" if count else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=100, help="games (default 100)")
    parser.add_argument("--first", type=int, default=0, help="seed of the first game (default 0)")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--rules", default="river-blind", choices=sorted(PRESETS), help="preset (default river-blind)")
    args = parser.parse_args()
    if args.games < 1 or args.first < 0 or args.jobs < 1:
        parser.error("--games and --jobs must be positive, --first not negative")
    total = Hands()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for one in pool.map(play_one, [(args.rules, g) for g in range(args.first, args.first + args.games)]):
            total.add(one)
    print(f"{args.rules}, {args.games} games from seed {args.first}: the strong bot against 3 heuristic bots")
    print(f"{'size':>4} {'exact %':>8} {'field %':>8}  strong bot's bids (count x exact %) | the field's")
    for size in sorted({size for size, _ in total.bids}):
        own = sum(n for (s, _), n in total.bids.items() if s == size)
        own_made = sum(n for (s, _), n in total.exact.items() if s == size)
        others = sum(n for (s, _), n in total.field_bids.items() if s == size)
        others_made = sum(n for (s, _), n in total.field_exact.items() if s == size)
        print(
            f"{size:>4} {percent(own_made, own):>8} {percent(others_made, others):>8}  "
            f"{by_bid(total.bids, total.exact, size)} | {by_bid(total.field_bids, total.field_exact, size)}"
        )
    hands = sum(total.bids.values())
    field_hands = sum(total.field_bids.values())
    print(
        f"blind: wins={100 * total.wins / total.games:.1f}% exact={percent(sum(total.exact.values()), hands)}% "
        f"pts_per_hand={total.points / hands:.2f} field_exact={percent(sum(total.field_exact.values()), field_hands)}% "
        f"field_pts_per_hand={total.field_points / field_hands:.2f}"
    )


if __name__ == "__main__":
    main()
