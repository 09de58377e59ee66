# mypy: disable-error-code="misc"
# (the mixin's empty __slots__ keeps State slotted; its data slots are declared on State)
"""Chance events of a game: the cut for first dealer and each deal, and their validation.

``ChanceEvents`` is a mixin of ``ohell.state.State``: it holds the methods, ``State`` the data.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final, cast

from ohell.cards import NO_CARD, NO_SUIT, NUM_CARDS, format_cards, mask_of
from ohell.errors import ChanceError
from ohell.hand import PHASE_BID, PHASE_CUT, PHASE_DEAL, Phase

if TYPE_CHECKING:
    from ohell.state import Game

_DECK: Final = range(NUM_CARDS)
ACE_OF_SPADES: Final = NUM_CARDS - 1
_CARD_SET: Final = frozenset(range(NUM_CARDS))
_INT_ONLY: Final = {int}
_BIT_LENGTHS: Final = tuple(size.bit_length() for size in range(NUM_CARDS + 1))


def sample_cards(rng: random.Random, count: int) -> list[int]:
    """Exactly ``rng.sample(range(52), count)`` (same cards, same generator state afterwards),
    with CPython's per-card method calls inlined: about twice as fast.

    CPython draws each index with ``_randbelow(n)``: ``getrandbits(n.bit_length())`` repeated
    until below ``n``. Up to 5 cards of 52 it redraws indices already taken; more cards it takes
    from a shrinking pool. Other generators (subclasses, ``SystemRandom``) use ``rng.sample``.
    """
    if type(rng) is not random.Random or not 0 <= count <= NUM_CARDS:
        return rng.sample(_DECK, count)
    getrandbits = rng.getrandbits
    drawn: list[int] = []
    if count <= 5:
        bits = _BIT_LENGTHS[NUM_CARDS]
        for _ in range(count):
            card = getrandbits(bits)
            while card >= NUM_CARDS or card in drawn:
                card = getrandbits(bits)
            drawn.append(card)
        return drawn
    pool = list(_DECK)
    for left in range(NUM_CARDS, NUM_CARDS - count, -1):
        bits = _BIT_LENGTHS[left]
        index = getrandbits(bits)
        while index >= left:
            index = getrandbits(bits)
        drawn.append(pool[index])
        pool[index] = pool[left - 1]
    return drawn


class ChanceEvents:
    """The chance half of ``State``. The annotations below declare attributes that ``State``
    initialises (and lists in its ``__slots__``); they are plain annotations, so the compiled
    build (mypyc) sees typed attributes and the pure build keeps ``State`` slotted."""

    __slots__ = ()
    game: Game
    phase: Phase
    cutters: tuple[int, ...]
    cut_rounds: list[tuple[tuple[int, ...], tuple[int, ...]]]
    dealer: int
    hand_size: int
    order: tuple[int, ...]
    no_trump: bool
    hands: list[int]
    dealt: list[int]
    trump_card: int
    trump_suit: int
    pos: int
    current: int

    def _start_hand(self, participants: tuple[int, ...] | None = None) -> None:
        raise NotImplementedError  # State deals with hands; this mixin only resolves chance

    def cut(self, cards: Sequence[int]) -> None:
        """Each cutter (``self.cutters``, in seat order) cuts one card. Highest rank deals first;
        players tied for highest cut again."""
        if self.phase != PHASE_CUT:
            raise ChanceError(f"no cut is pending (phase {self.phase.name})")
        cut = tuple(cards)
        if len(cut) != len(self.cutters):
            raise ChanceError(f"cut needs {len(self.cutters)} cards, got {len(cut)}")
        check_distinct_cards(cut, "cut")
        self._cut(cut)

    def choose_dealer(self, seat: int) -> None:
        """Make ``seat`` the first dealer (for tests, tools and tournaments): the cut
        ``dealer_cut(self.cutters, seat)``, recorded like any cut, so a record of the game replays."""
        if self.phase != PHASE_CUT:
            raise ChanceError(f"no cut is pending (phase {self.phase.name})")
        if seat not in self.cutters:
            raise ChanceError(f"seat {seat!r} is not cutting (cutters: {list(self.cutters)})")
        self._cut(dealer_cut(self.cutters, seat))

    def _cut(self, cut: tuple[int, ...]) -> None:
        self.cut_rounds.append((self.cutters, cut))
        ranks = [card % 13 for card in cut]
        top = max(ranks)
        if ranks.count(top) > 1:
            self.cutters = tuple(seat for seat, rank in zip(self.cutters, ranks, strict=True) if rank == top)
            return
        self.dealer = self.cutters[ranks.index(top)]
        self._start_hand()

    def deal(self, deck: Sequence[int]) -> None:
        """Deal from ``deck`` (top card first): singly, starting at the dealer's left, then turn
        the next card for trumps unless this is a no-trump hand or no card is left."""
        if self.phase != PHASE_DEAL:
            raise ChanceError(f"no deal is pending (phase {self.phase.name})")
        players = len(self.order)
        needed = self.hand_size * players
        turn_trump = not self.no_trump and needed < NUM_CARDS
        if len(deck) < needed + turn_trump:
            raise ChanceError(f"deal needs {needed + turn_trump} cards, got {len(deck)}")
        used = tuple(deck[: needed + turn_trump])
        check_distinct_cards(used, "deal")
        self._deal(used, needed, turn_trump)

    def _deal(self, used: Sequence[int], needed: int, turn_trump: bool) -> None:
        """Deal ``used`` (distinct cards, ``needed`` for the hands then maybe the trump card)."""
        order = self.order
        players = len(order)
        hands = [0] * self.game.num_players
        for position, seat in enumerate(order):  # singly: every players-th card, from position
            mask = 0
            for card in used[position:needed:players]:
                mask |= 1 << card
            hands[seat] = mask
        self._set_deal(hands, used[needed] if turn_trump else NO_CARD)

    def deal_hands(self, hands: Sequence[Iterable[object]], trump_card: object) -> None:
        """Deal given hands (one list of cards per seat) and trump card (a card, or None when none
        is turned), e.g. from a record. Cards are ints 0..51; anything else is a ChanceError (the
        parameters are typed ``object`` so that compiled code checks them the same way)."""
        if self.phase != PHASE_DEAL:
            raise ChanceError(f"no deal is pending (phase {self.phase.name})")
        if len(hands) != self.game.num_players:
            raise ChanceError(f"deal needs {self.game.num_players} hands, got {len(hands)}")
        held = [list(cards) for cards in hands]
        for seat, cards in enumerate(held):
            expected = self.hand_size if seat in self.order else 0
            if len(cards) != expected:
                raise ChanceError(f"seat {seat} must be dealt {expected} cards, got {len(cards)}")
        expect_trump = not self.no_trump and self.hand_size * len(self.order) < NUM_CARDS
        if expect_trump and trump_card is None:
            raise ChanceError("a trump card must be turned: cards remain after the deal")
        if not expect_trump and trump_card is not None:
            why = "this is a no-trump hand" if self.no_trump else "no card is left after the deal"
            raise ChanceError(f"no trump card may be turned: {why}")
        seen = [card for cards in held for card in cards]
        if trump_card is not None:
            seen.append(trump_card)
        check_distinct_cards(seen, "deal")
        masks = [mask_of(cast(list[int], cards)) for cards in held]
        self._set_deal(masks, NO_CARD if trump_card is None else cast(int, trump_card))

    def chance_random(self, rng: random.Random) -> None:
        """Resolve the pending cut or deal with ``rng``: the same outcome as ``cut``/``deal``
        given ``rng.sample`` of the deck, without checking cards that are valid by construction."""
        if self.phase is PHASE_DEAL:
            needed = self.hand_size * len(self.order)
            turn_trump = not self.no_trump and needed < NUM_CARDS
            self._deal(sample_cards(rng, min(NUM_CARDS, needed + 1)), needed, turn_trump)
        elif self.phase is PHASE_CUT:
            self._cut(tuple(sample_cards(rng, len(self.cutters))))
        else:
            raise ChanceError(f"no chance event is pending (phase {self.phase.name})")

    def _set_deal(self, hands: list[int], trump_card: int) -> None:
        self.hands = hands
        self.dealt = list(hands)
        self.trump_card = trump_card
        self.trump_suit = trump_card // 13 if trump_card >= 0 else NO_SUIT
        self.phase = PHASE_BID
        self.pos = 0
        self.current = self.order[0]


def dealer_cut(cutters: Sequence[int], seat: int) -> tuple[int, ...]:
    """Cut cards, one per cutter in order, that make ``seat`` deal: it cuts the ace of spades, the
    others the 2, 3, 4... of clubs."""
    low = iter(range(NUM_CARDS))
    return tuple(ACE_OF_SPADES if cutter == seat else next(low) for cutter in cutters)


def check_distinct_cards(cards: Sequence[object], what: str) -> None:
    """Raise ChanceError unless ``cards`` are distinct card indices (ints 0..51, not bools)."""
    if set(map(type, cards)) == _INT_ONLY and len(set(cards)) == len(cards) and _CARD_SET.issuperset(cards):
        return  # the common case, checked at C speed: distinct ints 0..51 (no bools)
    for card in cards:
        if type(card) is not int or not 0 <= card < NUM_CARDS:
            raise ChanceError(f"{what}: {card!r} is not a card index 0..51")
    if len(set(cards)) != len(cards):
        dupes = sorted({cast(int, c) for c in cards if cards.count(c) > 1})
        raise ChanceError(f"{what}: card(s) {format_cards(dupes)} appear more than once")
