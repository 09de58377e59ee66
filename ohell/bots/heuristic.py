"""Rule-of-thumb bot: bids the tricks its high cards, trumps and short suits should take, and
plays to land exactly on its bid (win while it still needs tricks, duck once it has them)."""

from __future__ import annotations

from collections.abc import Callable

from ohell.cards import RANKS_PER_SUIT, beats, rank_of, suit_of, winning_card
from ohell.observation import Observation

_ACE, _KING, _QUEEN, _JACK = 12, 11, 10, 9


def trick_estimate(hand: tuple[int, ...], trump_suit: int, num_players: int) -> float:
    """Expected tricks of a hand, from high cards, trump length and short side suits."""
    lengths = [0, 0, 0, 0]
    for card in hand:
        lengths[suit_of(card)] += 1
    crowd = (num_players - 3) * 0.05  # more opponents: more chances to be overtaken or ruffed
    estimate = 0.0
    for card in hand:
        suit, rank = suit_of(card), rank_of(card)
        length = lengths[suit]
        if suit == trump_suit:
            value = {_ACE: 1.0, _KING: 0.85, _QUEEN: 0.65, _JACK: 0.5}.get(rank, 0.25 + 0.02 * rank)
            if length >= 3:
                value += 0.1
        elif rank == _ACE:
            value = 0.85 if length <= 3 else 0.6
        elif rank == _KING:
            value = 0.55 if length >= 2 else 0.3
            value -= 0.15 * (length >= 5)
        elif rank == _QUEEN:
            value = 0.25 if length >= 3 else 0.1
        else:
            value = 0.0
        estimate += max(0.0, value - crowd)
    if trump_suit >= 0:
        trumps = lengths[trump_suit]
        short_suits = sum(1 for s in range(4) if s != trump_suit and lengths[s] <= 1)
        estimate += 0.3 * min(short_suits, max(0, trumps - 1))
    return estimate


def choose_bid(estimate: float, legal: tuple[int, ...]) -> int:
    """The legal bid nearest the estimate (so a hooked dealer moves to the nearer side)."""
    return min(legal, key=lambda bid: (abs(bid - estimate), bid))


class HeuristicBot:
    name = "heuristic"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def bid(self, observation: Observation) -> int:
        if not observation.hand:  # blind bidding: only the hand size is known
            guess = observation.hand_size / observation.num_players
            return choose_bid(guess, observation.legal_bids)
        estimate = trick_estimate(observation.hand, observation.trump_suit, observation.num_players)
        return choose_bid(estimate, observation.legal_bids)

    def play(self, observation: Observation) -> int:
        legal = observation.legal_actions
        seat = observation.seat
        wants_tricks = observation.bids[seat] > observation.tricks_won[seat]
        trump = observation.trump_suit
        trick = observation.current_trick
        if not trick:
            return _lead(legal, trump, wants_tricks)
        best = winning_card(trick, trump)
        winners = [c for c in legal if beats(c, best, trump)]
        losers = [c for c in legal if not beats(c, best, trump)]
        last_to_play = len(trick) == len(observation.participants) - 1
        if wants_tricks:
            if winners:
                # last seat: cheapest win; otherwise the strongest, to survive later players
                return min(winners, key=_strength(trump)) if last_to_play else max(winners, key=_strength(trump))
            return min(losers, key=_strength(trump))
        if losers:
            return max(losers, key=_strength(trump))  # shed the most dangerous card that still loses
        return max(winners, key=_strength(trump)) if last_to_play else min(winners, key=_strength(trump))


def _strength(trump_suit: int) -> Callable[[int], int]:
    def key(card: int) -> int:
        return rank_of(card) + (RANKS_PER_SUIT if suit_of(card) == trump_suit else 0)

    return key


def _lead(legal: tuple[int, ...], trump_suit: int, wants_tricks: bool) -> int:
    strength = _strength(trump_suit)
    if wants_tricks:
        return max(legal, key=strength)
    side = [c for c in legal if suit_of(c) != trump_suit]
    return min(side or legal, key=strength)
