"""Seed 000's worked hook example, step by step: it must hold exactly."""

from __future__ import annotations

import pytest

from ohell.cards import parse_card
from ohell.errors import IllegalActionError
from ohell.presets import preset
from ohell.rules import Rules
from ohell.state import Game, Phase


def cards(text: str) -> list[int]:
    return [parse_card(c) for c in text.split()]


def test_worked_hook_example_four_players_five_cards() -> None:
    rules = Rules.from_dict({"hand_sizes": [5]}, base=preset("classic"))
    state = Game(rules, 4).new_state()
    state.cut(cards("2C 3C 4C AC"))  # seat 3 cuts highest and deals; seat 0 bids first
    assert state.dealer == 3
    state.deal_hands(
        [
            cards("AS 2H 4D 7S 7H"),
            cards("2S AH AD KS 5H"),
            cards("3S 3H 2D 5S 6H"),
            cards("4S 4H 3D 6S KH"),
        ],
        parse_card("5C"),
    )
    for seat, bid in ((0, 1), (1, 2), (2, 0)):
        state.bid(seat, bid)
    assert state.forbidden_bid() == 2
    assert 2 not in state.legal_bids()
    with pytest.raises(IllegalActionError) as refused:
        state.bid(3, 2)  # 1 + 2 + 0 + 2 = 5 = tricks available
    assert refused.value.seat == 3 and "may not bid 2" in str(refused.value)
    state.bid(3, 1)
    assert sum(state.bids) == 4
    plays = [
        (0, "AS"), (1, "2S"), (2, "3S"), (3, "4S"),
        (0, "2H"), (1, "AH"), (2, "3H"), (3, "4H"),
        (1, "AD"), (2, "2D"), (3, "3D"), (0, "4D"),
        (1, "KS"), (2, "5S"), (3, "6S"), (0, "7S"),
        (1, "5H"), (2, "6H"), (3, "KH"), (0, "7H"),
    ]  # fmt: skip
    for seat, card in plays:
        state.play(seat, parse_card(card))
    assert state.phase == Phase.GAME_OVER
    hand = state.results[0]
    assert hand.tricks_won == (1, 3, 0, 1)
    assert hand.points == (11, 0, 10, 11)  # the player who took an unwanted extra trick gets zero
    assert state.winners == (0, 3)  # 000: ties share the win
