"""Deals consistent with what one seat has seen, for the search bot.

``HiddenDeal.from_observation`` collects the seat's knowledge: its own hand (or nothing while
bidding blind), the turned trump card, every card played this hand, and the voids shown (a seat
that did not follow the led suit holds none of it). ``sample`` deals the unseen cards so that
every count and void holds; ``bid_fit`` says how well a sampled hand explains a bid made.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ohell.bots.heuristic import trick_estimate
from ohell.cards import FULL_DECK, NO_CARD, NUM_CARDS, SUIT_CARDS, SUIT_MASKS, cards_of
from ohell.observation import Observation
from ohell.rules import Bidding
from ohell.schedule import no_trump_hand
from ohell.state import Phase

_RETRIES = 20
BID_FIT_SPREAD = 0.25  # bid_fit: how far (in tricks) an estimate may stray past the bid's own range
BID_FIT_FLOOR = 0.01  # bid_fit never rules a deal out: players are not the model
BID_MISS = 1.0  # bid_fit: the most a bid other than the heuristic's own may weigh (0.05 measured worse)


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
        draw = rng.random
        cards.sort(key=lambda _card: draw())  # a uniform shuffle, cheaper than rng.shuffle
        constrained = any(a != FULL_DECK for a, n in zip(self.allowed, self.counts, strict=True) if n)
        if constrained:
            for _ in range(_RETRIES):
                hands = self._deal_with_voids(cards, rng)
                if hands is not None:
                    break
                cards.sort(key=lambda _card: draw())
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
        """Cards of suits someone is void in first, most constrained suit first, each to a
        seat that may hold it (or the pack) in proportion to the room left; then the other
        cards in their shuffled order. None when stuck."""
        k = len(self.counts)
        room = list(self.counts)
        pack_room = len(cards) - sum(room)
        hands = [0] * k
        eligible = [
            [pos for pos in range(k) if room[pos] and self.allowed[pos] & SUIT_MASKS[suit]] for suit in range(4)
        ]
        open_count = sum(1 for n in room if n)
        constrained = sorted((s for s in range(4) if len(eligible[s]) < open_count), key=lambda s: len(eligible[s]))
        free: list[int] = []
        if constrained:
            rank = {suit: index for index, suit in enumerate(constrained)}
            first = sorted((c for c in cards if c // 13 in rank), key=lambda c: rank[c // 13])
            free = [c for c in cards if c // 13 not in rank]
            for card in first:
                seats = eligible[card // 13]
                total = pack_room
                for pos in seats:
                    total += room[pos]
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
        else:
            free = cards
        start = 0
        for pos in range(k):
            for card in free[start : start + room[pos]]:
                hands[pos] |= 1 << card
            start += room[pos]
        return hands


def rejuvenate(
    hands: list[int], hidden: HiddenDeal, seat_fit: Callable[[int, int], float], rng: random.Random, steps: int
) -> Iterator[list[int]]:
    """Deals near ``hands`` (held now, by position), one after each ``steps`` Metropolis moves,
    forever: a move swaps one card between two holders (other seats, or the undealt pack) where
    the voids allow it, accepted with the ratio of ``seat_fit(position, hand)`` after to before
    (the pack weighs 1). The moves are symmetric and keep every count, so the deals stay drawn
    from the likely ones; a deal the resampling picked several times is searched as distinct
    neighbours instead of copies."""
    hands = list(hands)
    me = hidden.seat_pos
    holders = [pos for pos, count in enumerate(hidden.counts) if count and pos != me]
    dealt = 0
    for pos in holders:
        dealt |= hands[pos]
    pack = hidden.unknown & ~dealt
    if pack:
        holders.append(-1)
    held = {pos: (hands[pos] if pos >= 0 else pack) for pos in holders}
    fit = {pos: (seat_fit(pos, held[pos]) if pos >= 0 else 1.0) for pos in holders}
    allowed = {pos: (hidden.allowed[pos] if pos >= 0 else FULL_DECK) for pos in holders}
    n = len(holders)
    while True:
        for _ in range(steps if n > 1 else 0):
            a = holders[rng.randrange(n)]
            b = holders[rng.randrange(n - 1)]
            if b == a:
                b = holders[n - 1]
            give = _any_card(held[a], rng)
            take = _any_card(held[b], rng)
            if not (allowed[b] >> give) & 1 or not (allowed[a] >> take) & 1:
                continue
            swap = (1 << give) | (1 << take)
            new_a, new_b = held[a] ^ swap, held[b] ^ swap
            fit_a = seat_fit(a, new_a) if a >= 0 else 1.0
            fit_b = seat_fit(b, new_b) if b >= 0 else 1.0
            if fit_a * fit_b >= rng.random() * fit[a] * fit[b]:
                held[a], held[b], fit[a], fit[b] = new_a, new_b, fit_a, fit_b
        for pos in holders:
            if pos >= 0:
                hands[pos] = held[pos]
        yield list(hands)


def _any_card(mask: int, rng: random.Random) -> int:
    """A card of ``mask`` chosen uniformly."""
    index = rng.randrange(mask.bit_count())
    for _ in range(index):
        mask &= mask - 1
    return (mask & -mask).bit_length() - 1


def is_blind(obs: Observation) -> bool:
    """Whether the seat is bidding without seeing its hand."""
    return obs.phase == Phase.BID and obs.rules.bidding is Bidding.BLIND


def trump_is_turned(obs: Observation) -> bool:
    """Whether a trump card is turned this hand (known to every seat from the rules alone)."""
    if obs.sudden_death or no_trump_hand(obs.rules, obs.hand_number):
        return False
    return obs.hand_size * len(obs.participants) < NUM_CARDS


_suit_values: dict[tuple[int, bool, int], float] = {}


def _suit_value(pattern: int, is_trump: bool, num_players: int) -> float:
    """The heuristic's tricks for one suit's 13-bit pattern, without its short-suit bonus."""
    key = (pattern, is_trump, num_players)
    value = _suit_values.get(key)
    if value is None:
        cards = SUIT_CARDS[0][pattern]
        value = trick_estimate(cards, 0 if is_trump else -1, num_players)
        if is_trump:  # alone in a hand, a trump suit has three short side suits: take the bonus off
            value -= 0.3 * min(3, max(0, len(cards) - 1))
        _suit_values[key] = value
    return value


def estimate_tricks(hand: int, trump_suit: int, num_players: int) -> float:
    """``ohell.bots.heuristic.trick_estimate`` of a hand mask, memoised by suit pattern."""
    total = 0.0
    trumps = short = 0
    for suit in range(4):
        pattern = (hand >> (13 * suit)) & 0x1FFF
        if suit == trump_suit:
            trumps = pattern.bit_count()
        elif pattern & (pattern - 1) == 0:
            short += 1
        if pattern:
            total += _suit_value(pattern, suit == trump_suit, num_players)
    if trump_suit >= 0:
        total += 0.3 * min(short, max(0, trumps - 1))
    return total


def heuristic_bid(estimate: float, size: int, forbidden: int) -> int:
    """``ohell.bots.heuristic.choose_bid`` over the bids ``0..size`` less ``forbidden`` (-1 for
    none): the legal bid nearest ``estimate``, the lower on a tie."""
    bid = min(size, max(0, math.ceil(estimate - 0.5)))
    if bid != forbidden:
        return bid
    below, above = bid - 1, bid + 1
    if below < 0:
        return above
    if above > size:
        return below
    return below if estimate - below <= above - estimate else above


def bid_fit(dealt: int, trump_suit: int, bid: int, size: int, forbidden: int, num_players: int) -> float:
    """Likelihood (unnormalised) that a player dealt ``dealt`` bids ``bid`` among the bids
    ``0..size`` less ``forbidden`` (the hook; -1 for none): 1 when ``bid`` is what the heuristic
    bot would bid with that hand (the legal bid nearest its trick estimate, the lower on a tie),
    else ``BID_MISS`` falling off with how much further from the estimate it is than that bid
    (spread ``BID_FIT_SPREAD``), never below ``BID_FIT_FLOOR``."""
    estimate = estimate_tricks(dealt, trump_suit, num_players)
    choice = heuristic_bid(estimate, size, forbidden)
    if bid == choice:
        return 1.0
    excess = abs(estimate - bid) - abs(estimate - choice)
    return max(BID_FIT_FLOOR, BID_MISS * math.exp(-(excess * excess) / (2 * BID_FIT_SPREAD * BID_FIT_SPREAD)))
