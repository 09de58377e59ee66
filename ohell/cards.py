"""Cards as small ints and hands as 52-bit masks.

A card is ``suit * 13 + rank`` with suits clubs, diamonds, hearts, spades (0-3) and ranks
2..A (0-12), so within a suit a higher int is a higher card. A hand is an int whose bit ``c``
is set when card ``c`` is held. Lookup tables are built once at import.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

SUITS: Final = "CDHS"
SUIT_NAMES: Final = ("clubs", "diamonds", "hearts", "spades")
RANKS: Final = "23456789TJQKA"
NUM_CARDS: Final = 52
RANKS_PER_SUIT: Final = 13
FULL_DECK: Final = (1 << NUM_CARDS) - 1
NO_CARD: Final = -1
NO_SUIT: Final = -1

_SUIT_BITS: Final = (1 << RANKS_PER_SUIT) - 1
SUIT_MASKS: Final[tuple[int, ...]] = tuple(_SUIT_BITS << (RANKS_PER_SUIT * s) for s in range(4))


def _build_rank_tables() -> tuple[tuple[tuple[int, ...], ...], ...]:
    """For each suit, the cards (ascending) held for every 13-bit pattern of that suit."""
    tables = []
    for suit in range(4):
        base = suit * RANKS_PER_SUIT
        table: list[tuple[int, ...]] = [()] * (1 << RANKS_PER_SUIT)
        for pattern in range(1, 1 << RANKS_PER_SUIT):
            high = pattern.bit_length() - 1
            table[pattern] = table[pattern & ~(1 << high)] + (base + high,)
        tables.append(tuple(table))
    return tuple(tables)


SUIT_CARDS: Final = _build_rank_tables()


class CardError(ValueError):
    """A card written in a form we cannot read."""


def make_card(suit: int, rank: int) -> int:
    return suit * RANKS_PER_SUIT + rank


def suit_of(card: int) -> int:
    return card // RANKS_PER_SUIT


def rank_of(card: int) -> int:
    return card % RANKS_PER_SUIT


def card_str(card: int) -> str:
    """``"QS"``, ``"TH"``, ``"2C"``."""
    if not 0 <= card < NUM_CARDS:
        raise CardError(f"card index {card!r} is outside 0..51")
    return RANKS[card % RANKS_PER_SUIT] + SUITS[card // RANKS_PER_SUIT]


def parse_card(text: str) -> int:
    """Read ``"QS"``, ``"qs"``, ``"10H"`` or ``"TH"``."""
    if not isinstance(text, str):
        raise CardError(f"a card must be a string like 'QS', got {text!r}")
    cleaned = text.strip().upper().replace("10", "T")
    if len(cleaned) != 2 or cleaned[0] not in RANKS or cleaned[1] not in SUITS:
        raise CardError(f"not a card: {text!r} (expected rank 2-9/T/J/Q/K/A then suit C/D/H/S)")
    return make_card(SUITS.index(cleaned[1]), RANKS.index(cleaned[0]))


def mask_of(cards: Iterable[int]) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


_CLUBS: Final = SUIT_CARDS[0]
_DIAMONDS: Final = SUIT_CARDS[1]
_HEARTS: Final = SUIT_CARDS[2]
_SPADES: Final = SUIT_CARDS[3]


def held_cards(mask: int) -> tuple[int, ...]:
    """Cards of a mask, ascending, as a tuple: four table lookups, no loop."""
    return (
        _CLUBS[mask & 0x1FFF]
        + _DIAMONDS[(mask >> 13) & 0x1FFF]
        + _HEARTS[(mask >> 26) & 0x1FFF]
        + _SPADES[(mask >> 39) & 0x1FFF]
    )


def cards_of(mask: int) -> list[int]:
    """Cards of a mask, ascending."""
    return list(held_cards(mask))


def cards_in_suit(mask: int, suit: int) -> tuple[int, ...]:
    return SUIT_CARDS[suit][(mask >> (RANKS_PER_SUIT * suit)) & _SUIT_BITS]


def format_cards(cards: Iterable[int]) -> str:
    return " ".join(card_str(c) for c in cards)


def beats(card: int, best: int, trump_suit: int) -> bool:
    """Whether ``card`` played after ``best`` (the card now winning the trick) takes over."""
    if card // RANKS_PER_SUIT == best // RANKS_PER_SUIT:
        return card > best
    return card // RANKS_PER_SUIT == trump_suit


def winning_card(cards: Iterable[int], trump_suit: int) -> int:
    """The card that wins (or is winning) a trick whose cards are given in play order."""
    best = NO_CARD
    for card in cards:
        if best == NO_CARD or beats(card, best, trump_suit):
            best = card
    return best
