"""The strong bot against OpenSpiel's ISMCTS bot on single hands of ``oh_hell``, duplicate seating.

    python bench/ismcts.py [--deals 200] [--ratios 1,5] [--uct-c 10] [--seed 0] [--ours both|bid|play] [--flat]

Each deal is one hand for 4 seats: hand size ``1 + deal % 10``, dealer ``deal % 4``, cards from
``random.Random(seed * 1_000_003 + deal)``; the hook applies, and a hand scores as OpenSpiel scores
it (10 + tricks when exact, tricks otherwise; our ``positive`` scoring). Every deal is played
twice: the strong bot in seats 0 and 2 and ISMCTS in 1 and 3, then the other way round (duplicate
seating, so the cards even out). The figure per deal is our two seats' mean score less theirs,
averaged over the two seatings; the table gives its mean over the deals and a 95 % interval
(normal, from the spread over deals).

The strong bot plays with its defaults (fixed work per decision) but values only the hand's
points (``StrongBot(win_weight=0)``): a one-hand game has no game to win, and the bench's
measure is points. It sees only ``ohell.observation.observe`` of our engine, which plays the
same actions as OpenSpiel's state (the mapping and the forced deal come from
``arena.conformance``, which checks both engines agree on every legal set).

ISMCTS (``open_spiel.python.algorithms.ismcts``: UCT with ``--uct-c``, one random rollout per
leaf, the most visited action) runs simulations until its time is up. Its time per decision is
``ratio`` times the strong bot's mean time per searched decision, measured in the same run (the
mean so far, from a warm-up of the strong bot on the first deals). Its worlds come from our own
resampler, not from ``state.resample_from_infostate``: from OpenSpiel 2.0 on, ``oh_hell``'s
resampling keeps the opponents' real cards, which would hand ISMCTS hidden information. Ours
deals every card the player cannot see (the others' unplayed cards and the undealt pack, so
which cards were dealt at all stays hidden) uniformly at random among the deals that give every
player its card count and respect every void shown (rejection sampling; after 200 rejections a
deal that places each voided suit first, the pack taking any card), keeps the player's own
cards, the trump card and the dealer, and replays the public bids and plays. So ISMCTS searches
honest worlds. (Redealing only the cards of the other hands, as this bench first did, tells
ISMCTS which cards are in play: with one card each it knows the three cards the others hold.)

``--ours bid`` or ``--ours play`` makes hybrids to find where points are won or lost: the strong
bot then only bids (or only plays) in its seats and ISMCTS makes the other decisions there.
``--flat`` makes the strong bot play its cards by flat playouts instead of its tree search.

Think time is the currency here, so it is counted in CPU time of this process
(``time.process_time``: both bots run in it, one at a time), not wall time: on a shared machine
another job's load then neither shortens ISMCTS's search nor lengthens the strong bot's measured
time (it still slows the run, and cache contention still shifts both a little; note the load).
The last line is ``ismcts: diff_<ratio>x=<mean> ci_<ratio>x=<low>..<high> ... strong_ms=<mean>``.
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
import time
from typing import Any

from arena.conformance import OpenSpielTable, load_pyspiel
from ohell.bots.strong import StrongBot
from ohell.cards import NUM_CARDS
from ohell.observation import observe
from ohell.rules import Rules, Scoring
from ohell.state import BID_BASE, Phase

PLAYERS = 4
MAX_TRICKS = 10
_REJECTIONS = 200


class HonestResampler:
    """Worlds consistent with one player's information in an OpenSpiel ``oh_hell`` state."""

    def __init__(self, table: OpenSpielTable, rng: random.Random) -> None:
        self.table = table
        self.rng = rng
        self._cache: tuple[tuple[int, ...], Any] | None = None

    def _analyse(self, state: Any) -> Any:
        """Chance prefix, the public actions, who made each, cards played and voids per player."""
        history = tuple(state.history())
        if self._cache is not None and self._cache[0] == history:
            return self._cache[1]
        n = self.table.num_players
        tricks, dealer = history[0], history[1]
        dealt = history[2 : 2 + n * tricks]
        trump = history[2 + n * tricks]
        public = history[3 + n * tricks :]
        replay = self.table.game.new_initial_state()
        for action in history[: 3 + n * tricks]:
            replay.apply_action(action)
        played = [set() for _ in range(n)]
        void = [set() for _ in range(n)]
        lead_suit = -1
        in_trick = 0
        for action in public:
            player = replay.current_player()
            ours = self.table.to_ours[action]
            if ours < NUM_CARDS:
                suit = ours // 13
                if in_trick == 0:
                    lead_suit = suit
                elif suit != lead_suit:
                    void[player].add(lead_suit)
                played[player].add(action)
                in_trick = (in_trick + 1) % n
            replay.apply_action(action)
        hands = [[dealt[i] for i in range(p, n * tricks, n)] for p in range(n)]
        info = (tricks, dealer, trump, public, hands, played, void)
        self._cache = (history, info)
        return info

    def __call__(self, state: Any, player: int) -> Any:
        tricks, dealer, trump, public, hands, played, void = self._analyse(state)
        n = self.table.num_players
        to_ours = self.table.to_ours
        # every card the player cannot place: the others' unplayed cards and the undealt pack
        seen = set(hands[player]) | {trump}
        for p in range(n):
            seen |= played[p]
        pool = [c for c in sorted(to_ours) if to_ours[c] < NUM_CARDS and c not in seen]
        need = [0 if p == player else len(hands[p]) - len(played[p]) for p in range(n)]
        new_hands = self._deal(pool, need, void, to_ours)
        fresh = self.table.game.new_initial_state()
        fresh.apply_action(tricks)
        fresh.apply_action(dealer)
        full = []
        for p in range(n):
            if p == player:
                full.append(list(hands[p]))
            else:
                full.append(sorted(played[p]) + new_hands[p])
        for index in range(n * tricks):
            fresh.apply_action(full[index % n][index // n])
        fresh.apply_action(trump)
        for action in public:
            fresh.apply_action(action)
        return fresh

    def _deal(self, pool: list[int], need: list[int], void: list[set[int]], to_ours: dict[int, int]) -> list[list[int]]:
        n = len(need)
        rng = self.rng
        cards = list(pool)

        def fits(p: int, card: int) -> bool:
            return to_ours[card] // 13 not in void[p]

        for _ in range(_REJECTIONS):
            rng.shuffle(cards)
            out: list[list[int]] = []
            start = 0
            ok = True
            for p in range(n):
                part = cards[start : start + need[p]]
                start += need[p]
                if not all(fits(p, c) for c in part):
                    ok = False
                    break
                out.append(part)
            if ok:
                return out
        # fallback: the cards some player may not hold first, each to a random player with room
        while True:
            rng.shuffle(cards)
            cards.sort(key=lambda c: -sum(1 for p in range(n) if not fits(p, c)))
            room = [*need, len(cards) - sum(need)]  # the last is the undealt pack, which takes any card
            out = [[] for _ in range(n + 1)]
            for card in cards:
                open_seats = [p for p in range(n + 1) if room[p] and (p == n or fits(p, card))]
                if not open_seats:
                    break
                pick = rng.choices(open_seats, weights=[room[p] for p in open_seats])[0]
                out[pick].append(card)
                room[pick] -= 1
            else:
                return out[:n]


def make_ismcts(pyspiel: Any, table: OpenSpielTable, seed: int, uct_c: float) -> Any:
    import numpy as np
    from open_spiel.python.algorithms import ismcts, mcts

    class TimedISMCTS(ismcts.ISMCTSBot):
        """ISMCTS that runs simulations until ``self.budget_s`` has passed (at least two)."""

        budget_s = 0.01
        simulations: list[int] = []
        elapsed: list[float] = []

        def run_search(self, state: Any) -> Any:
            self.reset()
            legal = state.legal_actions()
            if len(legal) == 1:
                return [(legal[0], 1.0)]
            self._root_node = self.create_new_node(state)
            started = time.process_time()
            deadline = started + self.budget_s
            count = 0
            while count < 2 or time.process_time() < deadline:  # the first one only expands the root
                self.run_simulation(self.sample_root_state(state))
                count += 1
            self.simulations.append(count)
            self.elapsed.append(time.process_time() - started)
            return self.get_final_policy(state, self._root_node)

    random_state = np.random.RandomState(seed)
    bot = TimedISMCTS(
        table.game,
        mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=random_state),
        uct_c,
        max_simulations=1,
        random_state=random_state,
        final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
        use_observation_string=False,
        allow_inconsistent_action_sets=False,
    )
    bot.simulations = []
    bot.elapsed = []
    bot.set_resampler(HonestResampler(table, random.Random(seed)))
    return bot


class Meter:
    def __init__(self) -> None:
        self.times: list[float] = []
        self.ceiling_hits = 0
        self.decisions = 0

    def mean(self) -> float:
        return statistics.fmean(self.times) if self.times else 0.01


def play_deal(
    table: OpenSpielTable,
    deal: int,
    seed: int,
    ours_seats: tuple[int, ...],
    ismcts_bot: Any,
    budget_s: float,
    meter: Meter,
    phases: str = "both",
    tree: bool = True,
) -> tuple[list[float], list[bool]]:
    """One hand; returns each seat's OpenSpiel return and whether it was exact."""
    n = table.num_players
    rng = random.Random(seed * 1_000_003 + deal)
    size = 1 + deal % MAX_TRICKS
    dealer = deal % n
    deck = rng.sample(range(NUM_CARDS), n * size + 1)
    hands = [deck[s * size : (s + 1) * size] for s in range(n)]
    trump = deck[-1]
    theirs = table.game.new_initial_state()
    theirs.apply_action(size)
    theirs.apply_action(dealer)
    for index in range(n * size):
        theirs.apply_action(table.to_os[hands[index % n][index // n]])
    theirs.apply_action(table.to_os[trump])
    ours = table.ours(size).new_state()
    ours.choose_dealer(dealer)
    ours.deal_hands(hands, trump)
    strong = {s: StrongBot(seed * 7919 + deal * 8 + s, win_weight=0.0, tree=tree) for s in ours_seats}
    if ismcts_bot is not None:
        ismcts_bot.budget_s = budget_s
    while not theirs.is_terminal():
        seat = theirs.current_player()
        if seat != ours.current:
            raise RuntimeError(f"deal {deal}: OpenSpiel's turn is {seat}, ours {ours.current}")
        bidding = ours.phase == Phase.BID
        if seat in strong and (phases == "both" or (phases == "bid") == bidding):
            obs = observe(ours, seat)
            bot = strong[seat]
            started = time.process_time()
            action = BID_BASE + bot.bid(obs) if obs.is_bidding else bot.play(obs)
            elapsed = time.process_time() - started
            if len(obs.legal_actions) > 1:
                meter.times.append(elapsed)
        else:
            action = table.to_ours[ismcts_bot.step(theirs)]
        theirs.apply_action(table.to_os[action])
        ours.apply_action(action)
    for bot in strong.values():
        meter.decisions += bot.decisions
        meter.ceiling_hits += bot.ceiling_hits
    result = ours.results[0]
    exact = [result.bids[s] == result.tricks_won[s] for s in range(n)]
    return list(theirs.returns()), exact


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--ratios", default="1,5", help="ISMCTS time / strong bot's mean time (default 1,5)")
    parser.add_argument("--uct-c", type=float, default=10.0, help="ISMCTS exploration constant (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=10, help="deals the strong bot plays alone first")
    parser.add_argument(
        "--ours",
        choices=("both", "bid", "play"),
        default="both",
        help="what the strong bot decides in its seats; ISMCTS decides the rest there too (default both)",
    )
    parser.add_argument("--flat", action="store_true", help="the strong bot plays by flat playouts, not its tree")
    args = parser.parse_args()
    ratios = [float(r) for r in args.ratios.split(",")]
    pyspiel = load_pyspiel()
    table = OpenSpielTable(pyspiel, PLAYERS, rules=Rules(scoring=Scoring.POSITIVE))
    meter = Meter()
    started = time.perf_counter()
    # warm-up: the strong bot in every seat, to measure its time per decision before ISMCTS plays
    for deal in range(args.warmup):
        play_deal(table, 10_000 + deal, args.seed, tuple(range(PLAYERS)), None, 0.0, meter, "both", not args.flat)
    print(
        f"oh_hell single hands, {PLAYERS} seats, 1-{MAX_TRICKS} cards, hook, OpenSpiel scoring; "
        f"{args.deals} deals x 2 seatings per ratio; ISMCTS uct_c={args.uct_c}, honest resampler; "
        f"strong decides {args.ours}"
    )
    header = (
        f"{'ISMCTS time':<12} {'strong pts':>10} {'ISMCTS pts':>10} {'strong ex%':>10} {'ISMCTS ex%':>10} "
        f"{'diff/hand':>9} {'95% interval':>16} {'ms strong':>9} {'ms ISMCTS':>9} {'sims p50':>8}"
    )
    print(header)
    print("-" * len(header))
    summary = []
    for ratio in ratios:
        bot = make_ismcts(pyspiel, table, args.seed + int(ratio * 1000), args.uct_c)
        diffs: list[float] = []
        pts = {"strong": 0.0, "ismcts": 0.0}
        exact = {"strong": 0, "ismcts": 0}
        seats_played = 0
        for deal in range(args.deals):
            per_seating = []
            for ours_seats in ((0, 2), (1, 3)):
                budget = ratio * meter.mean()
                returns, hit = play_deal(
                    table, deal, args.seed, ours_seats, bot, budget, meter, args.ours, not args.flat
                )
                theirs_seats = [s for s in range(PLAYERS) if s not in ours_seats]
                mine = statistics.fmean(returns[s] for s in ours_seats)
                other = statistics.fmean(returns[s] for s in theirs_seats)
                per_seating.append(mine - other)
                pts["strong"] += sum(returns[s] for s in ours_seats)
                pts["ismcts"] += sum(returns[s] for s in theirs_seats)
                exact["strong"] += sum(hit[s] for s in ours_seats)
                exact["ismcts"] += sum(hit[s] for s in theirs_seats)
                seats_played += 2
            diffs.append(statistics.fmean(per_seating))
        mean = statistics.fmean(diffs)
        half = 1.96 * statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else math.inf
        sims = sorted(bot.simulations) or [0]
        strong_ms = 1000 * meter.mean()
        print(
            f"{f'{ratio:g}x strong':<12} {pts['strong'] / seats_played:>10.2f} {pts['ismcts'] / seats_played:>10.2f} "
            f"{100 * exact['strong'] / seats_played:>10.1f} {100 * exact['ismcts'] / seats_played:>10.1f} "
            f"{mean:>+9.2f} {f'{mean - half:+.2f} .. {mean + half:+.2f}':>16} {strong_ms:>9.1f} "
            f"{1000 * statistics.fmean(bot.elapsed or [0.0]):>9.1f} {sims[len(sims) // 2]:>8}",
            flush=True,
        )
        summary.append(f"diff_{ratio:g}x={mean:+.2f} ci_{ratio:g}x={mean - half:+.2f}..{mean + half:+.2f}")
    print(
        f"({time.perf_counter() - started:.0f} s; strong bot: {meter.decisions} searched decisions, "
        f"{meter.ceiling_hits} cut short by its ceiling)"
    )
    print(f"ismcts: {' '.join(summary)} strong_ms={1000 * meter.mean():.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
