"""Deals consistent with what one seat has seen, for the search bot.

``HiddenDeal.from_observation`` collects the seat's knowledge: its own hand (or nothing while
bidding blind), the turned trump card, every card played this hand, and the voids shown (a seat
that did not follow the led suit holds none of it). ``sample`` deals the unseen cards so that
every count and void holds; ``bid_weight`` says how well a sampled hand explains a bid made.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from ohell.bots.heuristic import trick_estimate
from ohell.cards import FULL_DECK, NO_CARD, NUM_CARDS, SUIT_MASKS, cards_of
from ohell.observation import Observation
from ohell.rules import Bidding
from ohell.schedule import no_trump_hand
from ohell.state import Phase

_RETRIES = 20
BID_SPREAD = 1.0  # how far (in tricks) a bid may stray from the trick estimate of its hand


@dataclass(frozen=True)
class HiddenDeal:
    """What is unknown to one seat, by position (0 = first to act in the hand)."""

    seat_pos: int
    known: tuple[int, ...]  # per position: cards known to be held now (own hand), else 0
    counts: tuple[int, ...]  # per position: how many unknown cards it holds now
    allowed: tuple[int, ...]  # per position: cards it may hold (voids removed)
    played: tuple[int, ...]  # per position: cards it played this hand
    unknown: int  # cards whose place is not known (other hands, undealt pack, hidden trump)
    trump_hidden: bool  # the trump card is turned but not visible (blind bidding)

    @classmethod
    def from_observation(cls, obs: Observation) -> HiddenDeal:
        order = obs.participants
        k = len(order)
        pos_of = {seat: pos for pos, seat in enumerate(order)}
        me = pos_of[obs.seat]
        played = [0] * k
        allowed = [FULL_DECK] * k
        tricks = [(t.leader, t.cards) for t in obs.tricks]
        if obs.current_trick:
            tricks.append((obs.trick_leader, obs.current_trick))
        for leader, cards in tricks:
            lead_suit = cards[0] // 13
            first = pos_of[leader]
            for index, card in enumerate(cards):
                pos = (first + index) % k
                played[pos] |= 1 << card
                if card // 13 != lead_suit:
                    allowed[pos] &= ~SUIT_MASKS[lead_suit]
        seen = 0
        for mask in played:
            seen |= mask
        own = 0
        for card in obs.hand:
            own |= 1 << card
        blind = is_blind(obs)
        trump_hidden = False
        if obs.trump_card != NO_CARD:
            seen |= 1 << obs.trump_card
        elif blind:
            trump_hidden = trump_is_turned(obs)
        counts = [obs.hand_size - played[pos].bit_count() for pos in range(k)]
        known = [0] * k
        if not blind:
            known[me] = own
            counts[me] = 0
            seen |= own
        return cls(
            seat_pos=me,
            known=tuple(known),
            counts=tuple(counts),
            allowed=tuple(allowed),
            played=tuple(played),
            unknown=FULL_DECK & ~seen,
            trump_hidden=trump_hidden,
        )

    def sample(self, rng: random.Random) -> tuple[list[int], int]:
        """Hands now held (by position) and the trump card (NO_CARD unless it is hidden)."""
        cards = cards_of(self.unknown)
        rng.shuffle(cards)
        constrained = any(a != FULL_DECK for a, n in zip(self.allowed, self.counts, strict=True) if n)
        if constrained:
            for _ in range(_RETRIES):
                hands = self._deal_with_voids(cards, rng)
                if hands is not None:
                    break
                rng.shuffle(cards)
            else:  # not expected: the true deal satisfies every constraint
                hands = self._deal_in_order(cards)
        else:
            hands = self._deal_in_order(cards)
        trump = NO_CARD
        if self.trump_hidden:
            dealt = 0
            for hand in hands:
                dealt |= hand
            trump = next(c for c in cards if not (dealt >> c) & 1)
        for pos, mask in enumerate(self.known):
            hands[pos] |= mask
        return hands, trump

    def _deal_in_order(self, cards: list[int]) -> list[int]:
        hands = [0] * len(self.counts)
        start = 0
        for pos, count in enumerate(self.counts):
            for card in cards[start : start + count]:
                hands[pos] |= 1 << card
            start += count
        return hands

    def _deal_with_voids(self, cards: list[int], rng: random.Random) -> list[int] | None:
        """Most constrained cards first, each to a seat that may hold it, chosen in proportion
        to the room it has left; the rest stay in the pack. None when stuck."""
        k = len(self.counts)
        room = list(self.counts)
        pack_room = len(cards) - sum(room)
        hands = [0] * k
        eligible = {
            suit: [pos for pos in range(k) if room[pos] and self.allowed[pos] & SUIT_MASKS[suit]]
            for suit in range(4)
        }
        for card in sorted(cards, key=lambda c: len(eligible[c // 13])):
            seats = [pos for pos in eligible[card // 13] if room[pos]]
            total = sum(room[pos] for pos in seats) + pack_room
            if total == 0:
                return None
            pick = rng.randrange(total)
            for pos in seats:
                pick -= room[pos]
                if pick < 0:
                    hands[pos] |= 1 << card
                    room[pos] -= 1
                    break
            else:
                pack_room -= 1
        return hands


def is_blind(obs: Observation) -> bool:
    """Whether the seat is bidding without seeing its hand."""
    return obs.phase == Phase.BID and obs.rules.bidding is Bidding.BLIND


def trump_is_turned(obs: Observation) -> bool:
    """Whether a trump card is turned this hand (known to every seat from the rules alone)."""
    if obs.sudden_death or no_trump_hand(obs.rules, obs.hand_number):
        return False
    return obs.hand_size * len(obs.participants) < NUM_CARDS


def bid_weight(dealt: int, trump_suit: int, bid: int, num_players: int) -> float:
    """Likelihood (unnormalised) that a player dealt ``dealt`` bids ``bid``."""
    estimate = trick_estimate(tuple(cards_of(dealt)), trump_suit, num_players)
    return math.exp(-((estimate - bid) ** 2) / (2 * BID_SPREAD * BID_SPREAD))
