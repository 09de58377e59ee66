"""Where the strong bot's exact bids are lost: the bid or the play, 4 seats.

    python bench/bids.py [--games 100] [--first 0] [--rules classic]

The strong bot plays against 3 heuristic bots (game ``g`` dealt from seed ``g``, the strong bot
in seat ``g % 4``, as in bench/bots.py). After each hand, its true deal is replayed with the
playout policy (``ohell.bots.playout``) for every seat, aiming at each possible bid of the strong
seat in turn, the other bids as made: a bid is *reachable in hindsight* when that replay lands
on it. Each hand the strong bot missed counts as a play failure (its bid was reachable), a bid
error (another bid was, not this one) or unreachable (no bid was). The reference, measured on the
same hands: how often the heuristic's own bid for the strong seat's hand (the legal bid nearest
its trick estimate) was reachable. Calibration: the bot's predicted chance of making its bid
(``StrongBot.last_bid_odds``) against how often it made it.

The last line is ``bids: exact=<%> reachable=<%> heuristic_reachable=<%> ratio=<reachable /
heuristic_reachable> play_failures=<%> bid_errors=<%> unreachable=<%> predicted=<%> made=<%>``
(shares of the strong seat's hands; predicted and made over its searched sequential bids).
"""

from __future__ import annotations

import argparse
import random
from dataclasses import dataclass

from ohell.bots import make_bot
from ohell.bots.base import Bot
from ohell.bots.heuristic import choose_bid, trick_estimate
from ohell.bots.playout import play_out
from ohell.bots.strong import StrongBot
from ohell.cards import cards_of
from ohell.observation import observe
from ohell.presets import PRESETS, preset
from ohell.rules import Scoring
from ohell.state import BID_BASE, Game, Phase, State

PLAYERS = 4


@dataclass
class Tally:
    hands: int = 0
    exact: int = 0
    reachable: int = 0  # the strong bot's bid was reachable in hindsight
    heuristic_reachable: int = 0  # the heuristic's bid for the same hand was
    play_failures: int = 0
    bid_errors: int = 0
    unreachable: int = 0
    predicted: float = 0.0  # summed predicted chance of the bids made
    calibrated: int = 0  # bids with a prediction
    calibrated_made: int = 0


@dataclass
class Pending:
    """The strong seat's bid of the hand in play, with the true deal."""

    bid: int
    hands: list[int]  # by position, as dealt
    trump: int
    heuristic_bid: int
    odds: float  # predicted chance of making the bid, -1 if none


def reachable(hands: list[int], bids: list[int], me: int, trump: int, over_wants: bool) -> set[int]:
    """The bids of position ``me`` the playout policy lands on when the true deal is replayed."""
    hit = set()
    for bid in range(hands[me].bit_count() + 1):
        table = list(bids)
        table[me] = bid
        won = [0] * len(hands)
        play_out(list(hands), table, won, 0, [], trump, over_wants)
        if won[me] == bid:
            hit.add(bid)
    return hit


def heuristic_bid(state: State, seat: int, legal: tuple[int, ...]) -> int:
    if not state.hands[seat]:
        return choose_bid(state.hand_size / PLAYERS, legal)
    estimate = trick_estimate(tuple(cards_of(state.hands[seat])), state.trump_suit, PLAYERS)
    return choose_bid(estimate, legal)


def play(rules_name: str, game_index: int, tally: Tally) -> None:
    """One game; every hand of the strong seat is counted into ``tally``."""
    rules = preset(rules_name)
    over_wants = rules.scoring is Scoring.POSITIVE
    seat = game_index % PLAYERS
    bots: list[Bot] = [make_bot("heuristic", game_index * PLAYERS + s) for s in range(PLAYERS)]
    strong = StrongBot(game_index * PLAYERS + seat)
    bots[seat] = strong
    rng = random.Random(game_index)
    state = Game(rules, PLAYERS).new_state()
    pending: Pending | None = None
    hit: set[int] | None = None  # the reachable bids, once the bids are final
    finished = 0
    while state.phase != Phase.GAME_OVER:
        if state.phase <= Phase.DEAL:
            state.chance_random(rng)
            continue
        actor = state.current
        observation = observe(state, actor)
        if state.phase == Phase.BID:
            searched = strong.decisions
            choice = bots[actor].bid(observation)
            if actor == seat and not state.rebid:
                odds = strong.last_bid_odds.get(choice, -1.0) if strong.decisions > searched else -1.0
                hands = [state.hands[s] for s in state.order]
                heuristic = heuristic_bid(state, seat, observation.legal_bids)
                pending, hit = Pending(choice, hands, state.trump_suit, heuristic, odds), None
            state.act(actor, BID_BASE + choice)
            continue
        if pending is not None and hit is None:  # the first card: the bids are final
            bids = [state.bids[s] for s in state.order]
            hit = reachable(pending.hands, bids, state.order.index(seat), pending.trump, over_wants)
        state.act(actor, bots[actor].play(observation))
        if len(state.results) > finished:
            finished = len(state.results)
            result = state.results[-1]
            if pending is not None and hit is not None and seat in result.participants:
                count(tally, pending, hit, result.bids[seat], result.tricks_won[seat])
            pending = None


def count(tally: Tally, pending: Pending, hit: set[int], bid: int, tricks: int) -> None:
    """One finished hand of the strong seat (``bid`` as final, after any rebid)."""
    exact = bid == tricks
    tally.hands += 1
    tally.exact += exact
    tally.reachable += bid in hit
    tally.heuristic_reachable += pending.heuristic_bid in hit
    if not exact:
        if bid in hit:
            tally.play_failures += 1
        elif hit:
            tally.bid_errors += 1
        else:
            tally.unreachable += 1
    if pending.odds >= 0 and pending.bid == bid:
        tally.calibrated += 1
        tally.predicted += pending.odds
        tally.calibrated_made += exact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=100, help="games (default 100)")
    parser.add_argument("--first", type=int, default=0, help="seed of the first game (default 0)")
    parser.add_argument("--rules", default="classic", choices=sorted(PRESETS), help="preset (default classic)")
    args = parser.parse_args()
    if not 1 <= args.games <= 100_000 or args.first < 0:
        parser.error("--games must be 1..100000 and --first not negative")
    tally = Tally()
    for game_index in range(args.first, args.first + args.games):
        play(args.rules, game_index, tally)
    n = tally.hands
    predicted = 100 * tally.predicted / tally.calibrated if tally.calibrated else 0.0
    made = 100 * tally.calibrated_made / tally.calibrated if tally.calibrated else 0.0
    print(
        f"{args.rules}, {args.games} games from seed {args.first}: the strong bot's {n} hands against 3 heuristic bots"
    )
    print(
        f"  exact {100 * tally.exact / n:.1f} %; its bid reachable in hindsight {100 * tally.reachable / n:.1f} %, "
        f"the heuristic's bid for the same hand {100 * tally.heuristic_reachable / n:.1f} %"
    )
    print(
        f"  missed: play failures {100 * tally.play_failures / n:.1f} %, "
        f"bid errors {100 * tally.bid_errors / n:.1f} %, unreachable {100 * tally.unreachable / n:.1f} % of hands"
    )
    print(f"  {tally.calibrated} searched bids: predicted {predicted:.1f} % exact, made {made:.1f} %")
    ratio = tally.reachable / tally.heuristic_reachable if tally.heuristic_reachable else 0.0
    print(
        f"bids: exact={100 * tally.exact / n:.1f}% reachable={100 * tally.reachable / n:.1f}% "
        f"heuristic_reachable={100 * tally.heuristic_reachable / n:.1f}% ratio={ratio:.2f}x "
        f"play_failures={100 * tally.play_failures / n:.1f}% bid_errors={100 * tally.bid_errors / n:.1f}% "
        f"unreachable={100 * tally.unreachable / n:.1f}% predicted={predicted:.1f}% made={made:.1f}%"
    )


if __name__ == "__main__":
    main()
