"""A fast, perfect-information playout of the rest of one hand, on 52-bit card masks.

The search bot evaluates a candidate bid or card by finishing the hand on sampled deals with
this cheap policy for every seat: win tricks while short of the bid, duck once it is made.
Seats are *positions* here (0 = the hand's first bidder and first leader), not table seats.
"""

from __future__ import annotations

from ohell.cards import SUIT_MASKS

ABOVE: tuple[int, ...] = tuple(SUIT_MASKS[c // 13] & ~((2 << c) - 1) for c in range(52))
"""The cards of the same suit ranking above each card."""

OTHERS_RUFF_HIGH = False  # play_out: seats other than ``me`` ruff high before the last seat, as the heuristic does

BEATS: tuple[tuple[int, ...], ...] = tuple(
    tuple(ABOVE[c] | (0 if trump < 0 or c // 13 == trump else SUIT_MASKS[trump]) for c in range(52))
    for trump in (0, 1, 2, 3, -1)
)
"""``BEATS[trump_suit][card]``: the cards that beat ``card`` when it is winning a trick
(``trump_suit`` -1, no trump, is the last row)."""


def highest(mask: int, trump_mask: int) -> int:
    """The strongest card of ``mask``: its top trump, else its highest rank of any suit (the
    lowest suit among equals)."""
    trumps = mask & trump_mask
    if trumps:
        return trumps.bit_length() - 1
    rank = ((mask | mask >> 13 | mask >> 26 | mask >> 39) & 0x1FFF).bit_length() - 1
    card = rank
    while not (mask >> card) & 1:
        card += 13
    return card


def lowest(mask: int, trump_mask: int) -> int:
    """The weakest card of ``mask``: its lowest side-suit rank (the lowest suit among equals),
    else its lowest trump."""
    side = mask & ~trump_mask
    if not side:
        return (mask & -mask).bit_length() - 1
    folded = (side | side >> 13 | side >> 26 | side >> 39) & 0x1FFF
    card = (folded & -folded).bit_length() - 1
    while not (side >> card) & 1:
        card += 13
    return card


def lead_card(hand: int, want: bool, trump_mask: int) -> int:
    """Lead the strongest card (top trump first) when a trick is wanted, else the weakest.
    (Leading side-suit masters before trumps measured slightly worse.)"""
    return highest(hand, trump_mask) if want else lowest(hand, trump_mask)


def follow_card(legal: int, want: bool, best: int, last: bool, trump_mask: int, ruff_high: bool = False) -> int:
    """Follow to a trick that ``best`` is winning. ``ruff_high``: ruff with the highest trump
    before the last seat (as the heuristic bot does), not the cheapest."""
    beating = ABOVE[best] | (0 if (trump_mask >> best) & 1 else trump_mask)
    winners = legal & beating
    if want:
        if not winners:
            return lowest(legal, trump_mask)
        if last or (not winners & ABOVE[best] and not ruff_high):
            return lowest(winners, trump_mask)  # last seat, or ruffing: the cheapest winner
        return highest(winners, trump_mask)
    losers = legal & ~beating
    if losers:
        return highest(losers, trump_mask)  # shed the most dangerous card that still loses
    return highest(winners, trump_mask) if last else lowest(winners, trump_mask)


def play_out(
    hands: list[int],
    bids: list[int],
    won: list[int],
    to_play: int,
    trick: list[int],
    trump_suit: int,
    over_wants: bool,
    first: int = -1,
    me: int = -1,
) -> None:
    """Finish the hand in place: ``hands`` and ``won`` are by position, ``trick`` the cards of
    the trick in progress (its leader is ``to_play - len(trick)``). ``over_wants``: a seat past
    its bid still wants tricks (positive scoring). ``first``: the card position ``to_play`` plays
    now, if given (the candidate being evaluated). ``me``: the searching seat's position; the
    others, modelled on the heuristic bot, ruff with their highest trump before the last seat
    (``OTHERS_RUFF_HIGH``)."""
    k = len(hands)
    trump_mask = SUIT_MASKS[trump_suit] if trump_suit >= 0 else 0
    beats = BEATS[trump_suit]
    remaining = 0
    for hand in hands:
        remaining |= hand
    count = len(trick)
    best = -1
    best_pos = -1
    lead_mask = 0
    if count:
        lead_mask = SUIT_MASKS[trick[0] // 13]
        leader = (to_play - count) % k
        for index, card in enumerate(trick):
            if best < 0 or (1 << card) & beats[best]:
                best, best_pos = card, (leader + index) % k
    others_high = OTHERS_RUFF_HIGH and me >= 0
    pos = to_play
    while remaining:
        hand = hands[pos]
        have = won[pos]
        bid = bids[pos]
        want = have < bid or (over_wants and have > bid)
        if first >= 0:
            card, first = first, -1
        elif count == 0:
            card = lead_card(hand, want, trump_mask)
        else:
            card = follow_card(
                hand & lead_mask or hand, want, best, count == k - 1, trump_mask, others_high and pos != me
            )
        if count == 0:
            lead_mask = SUIT_MASKS[card // 13]
            best, best_pos = card, pos
        elif (1 << card) & beats[best]:
            best, best_pos = card, pos
        bit = 1 << card
        hands[pos] = hand ^ bit
        remaining ^= bit
        count += 1
        if count == k:
            won[best_pos] += 1
            count = 0
            pos = best_pos
        else:
            pos = pos + 1 if pos + 1 < k else 0
