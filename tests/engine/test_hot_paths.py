"""The engine's fast paths give exactly what the plain definitions give."""

from __future__ import annotations

import random

import pytest

from ohell.cards import cards_of, held_cards
from ohell.chance import sample_cards
from ohell.errors import ChanceError
from ohell.rules import Rules
from ohell.state import BID_BASE, Game, Phase, State


def test_deal_sampler_matches_random_sample_and_leaves_the_generator_in_step() -> None:
    for seed in range(40):
        for count in range(1, 53):
            fast, plain = random.Random(seed * 53 + count), random.Random(seed * 53 + count)
            assert sample_cards(fast, count) == plain.sample(range(52), count)
            assert fast.random() == plain.random()


def test_held_cards_lists_every_set_bit_ascending() -> None:
    rng = random.Random(5)
    for _ in range(500):
        mask = rng.getrandbits(52)
        expected = [card for card in range(52) if mask >> card & 1]
        assert list(held_cards(mask)) == expected == cards_of(mask)
    assert held_cards(0) == ()


@pytest.mark.parametrize("size", [1, 2, 5, 13])
def test_dealer_bid_table_drops_exactly_the_hooked_bid(size: int) -> None:
    for others in range(0, 3 * size + 1):
        state = Game(Rules(hand_sizes=(size,)), 4).new_state()
        state.cut([51, 0, 1, 2])  # seat 0 deals; seats 1, 2, 3 bid first
        state.chance_random(random.Random(others))
        parts = [min(size, others), min(size, max(0, others - size)), max(0, others - 2 * size)]
        for part in parts:
            state.apply_action(BID_BASE + part)
        forbidden = size - sum(parts)
        expected = [BID_BASE + b for b in range(size + 1) if b != forbidden]
        assert list(state.legal_actions()) == expected


@pytest.mark.parametrize(
    ("cut", "message"),
    [
        ([1, 1, 2, 3], "appear more than once"),
        ([True, 2, 3, 4], "True is not a card index"),
        ([52, 1, 2, 3], "52 is not a card index"),
        ([-1, 1, 2, 3], "-1 is not a card index"),
        ([[1], 1, 2, 3], "[1] is not a card index"),
    ],
)
def test_bad_cut_cards_are_still_named(cut: list[object], message: str) -> None:
    state = Game(Rules(), 4).new_state()
    with pytest.raises(ChanceError, match=message.replace("[", r"\[").replace("]", r"\]")):
        state.cut(cut)  # type: ignore[arg-type]
    assert state.phase == Phase.CUT


def _attribute_names(cls: type) -> tuple[str, ...]:
    """A State's attributes: ``__slots__`` in the pure build, mypyc's list in the compiled one."""
    names = cls.__dict__.get("__slots__") or getattr(cls, "__mypyc_attrs__", ())
    return tuple(dict.fromkeys(names))


def test_clone_copies_every_attribute_and_shares_no_list() -> None:
    state = Game(Rules(), 4).new_state()
    rng = random.Random(3)
    for _ in range(60):  # into the second hand: results, events and tricks are all non-empty
        if state.is_chance():
            state.chance_random(rng)
        else:
            state.apply_action(rng.choice(state.legal_actions()))
    other = state.clone()
    names = _attribute_names(State)
    assert {"game", "hands", "trick", "events", "results", "winners"} <= set(names)
    for name in names:
        mine, theirs = getattr(state, name), getattr(other, name)
        assert mine == theirs, name
        if isinstance(mine, list):
            assert mine is not theirs, f"clone shares the list {name}"
    while not other.is_terminal():  # playing the copy on leaves the original as it was
        if other.is_chance():
            other.chance_random(rng)
        else:
            other.apply_action(rng.choice(other.legal_actions()))
    assert not state.is_terminal() and state.results == other.results[: len(state.results)]
