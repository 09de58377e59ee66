"""The vocabulary of play: phases, the action numbering, and records of finished tricks and hands.

Actions share one int space: ``0..51`` play that card (``ohell.cards``: ``suit * 13 + rank``, suits
clubs, diamonds, hearts, spades), ``52 + n`` bids ``n`` tricks. What matches OpenSpiel's ``oh_hell``
is the layout (cards below 52, bid ``n`` is ``52 + n``); its card numbers differ: they are
rank-major, ``rank * 4 + suit``, with its suits in the order clubs, diamonds, spades, hearts. So our
``2C``, ``2D``, ``AS`` are 0, 13, 51 and OpenSpiel's are 0, 1, 50. ``openspiel_action`` and
``action_from_openspiel`` convert (``tests/engine/test_conformance.py`` checks them against
OpenSpiel's own card names).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Final

from ohell.cards import NUM_CARDS, RANKS_PER_SUIT, card_str

BID_BASE: Final = NUM_CARDS


class Phase(IntEnum):
    CUT = 0  # chance: cards cut for first dealer
    DEAL = 1  # chance: the next hand's deal
    BID = 2
    PLAY = 3
    GAME_OVER = 4


# The members as module constants: the engine's hot paths compare phases by identity with these
# (a state's phase is always one of the members), which compiled code reads without a lookup.
PHASE_CUT: Final = Phase.CUT
PHASE_DEAL: Final = Phase.DEAL
PHASE_BID: Final = Phase.BID
PHASE_PLAY: Final = Phase.PLAY
PHASE_GAME_OVER: Final = Phase.GAME_OVER


def bid_action(tricks: int) -> int:
    return BID_BASE + tricks


_OPENSPIEL_SUITS: Final = (0, 1, 3, 2)  # our suit -> OpenSpiel's, and back (hearts and spades swap)


def openspiel_action(action: int) -> int:
    """OpenSpiel's number for our ``action``: a card renumbered, a bid unchanged."""
    if not 0 <= action < NUM_CARDS:
        if action < 0:
            raise ValueError(f"action {action} is negative")
        return action
    return (action % RANKS_PER_SUIT) * 4 + _OPENSPIEL_SUITS[action // RANKS_PER_SUIT]


def action_from_openspiel(number: int) -> int:
    """Our action for OpenSpiel's ``number`` (the inverse of ``openspiel_action``)."""
    if not 0 <= number < NUM_CARDS:
        if number < 0:
            raise ValueError(f"OpenSpiel action {number} is negative")
        return number
    return _OPENSPIEL_SUITS[number % 4] * RANKS_PER_SUIT + number // 4


def describe_action(action: int) -> str:
    if 0 <= action < NUM_CARDS:
        return f"play {card_str(action)}"
    if action >= BID_BASE:
        return f"bid {action - BID_BASE}"
    return f"take action {action}"


@dataclass(frozen=True, slots=True)
class Trick:
    leader: int
    cards: tuple[int, ...]  # in play order, starting with the leader
    winner: int


@dataclass(frozen=True, slots=True)
class HandResult:
    """Everything that happened in one finished hand."""

    number: int  # 1-based; sudden-death hands continue the count
    dealer: int
    size: int
    participants: tuple[int, ...]  # clockwise from the dealer's left; the dealer is last
    dealt: tuple[int, ...]  # each seat's hand as dealt (mask; 0 for a seat not in the hand)
    trump_card: int  # NO_CARD when no card was turned
    no_trump_hand: bool  # a designated no-trump hand (the card is not turned)
    events: tuple[tuple[str, int, int], ...]  # ("bid"|"change"|"rebid"|"play", seat, value)
    tricks: tuple[Trick, ...]
    bids: tuple[int, ...]  # -1 for a seat not in the hand
    tricks_won: tuple[int, ...]
    points: tuple[int, ...]  # this hand's points (all 0 for a sudden-death hand)
    sudden_death: bool
