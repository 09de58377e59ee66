"""The engine's conveniences for tests, tools and tournaments: choosing the first dealer, the
OpenSpiel numbering, the finished hand's data, typed one-hand rules."""

from __future__ import annotations

import random

import pytest

from ohell.cards import parse_card
from ohell.chance import dealer_cut
from ohell.errors import ChanceError, RulesError
from ohell.hand import BID_BASE, HandResult, action_from_openspiel, openspiel_action
from ohell.presets import preset, preset_with_options
from ohell.record import build_record
from ohell.referee import referee
from ohell.rules import Rules
from ohell.state import Game, Phase, State


def _play_out(state: State, seed: int, until_hands: int | None = None) -> list[HandResult]:
    """Random play to the end (or until ``until_hands`` have finished); each finished hand's
    ``last_hand`` as read right after its last card."""
    rng = random.Random(seed)
    seen: list[HandResult] = []
    while not state.is_terminal() and (until_hands is None or len(seen) < until_hands):
        if state.is_chance():
            state.chance_random(rng)
            continue
        before = len(state.results)
        state.apply_action(rng.choice(state.legal_actions()))
        if len(state.results) > before:
            assert state.last_hand is not None
            seen.append(state.last_hand)
    return seen


@pytest.mark.parametrize("players", range(3, 8))
def test_any_seat_can_be_made_first_dealer_and_the_record_replays(players: int) -> None:
    for seat in range(players):
        state = Game(Rules(hand_sizes=(2, 1)), players).new_state(dealer=seat)
        assert state.dealer == seat and state.phase == Phase.DEAL
        assert state.order[-1] == seat and state.order[0] == (seat + 1) % players
        _play_out(state, seed=seat)
        record = build_record(state, [{"name": f"p{s}"} for s in range(players)])
        assert record["cuts"][0]["cards"][seat] == "AS"
        assert referee(record).valid


def test_choose_dealer_works_among_tied_cutters_and_refuses_others() -> None:
    state = Game(Rules(), 4).new_state()
    state.cut([parse_card("KC"), parse_card("KD"), parse_card("2H"), parse_card("3S")])  # seats 0, 1 tie
    assert state.cutters == (0, 1)
    with pytest.raises(ChanceError, match="seat 2 is not cutting"):
        state.choose_dealer(2)
    state.choose_dealer(1)
    assert state.dealer == 1 and state.cut_rounds[-1] == ((0, 1), (0, parse_card("AS")))
    with pytest.raises(ChanceError, match="no cut is pending"):
        state.choose_dealer(0)


def test_dealer_cut_gives_the_ace_to_the_dealer_and_low_clubs_to_the_rest() -> None:
    assert dealer_cut((0, 1, 2, 3), 2) == (0, 1, 51, 2)
    assert dealer_cut((1, 4), 4) == (0, 51)


def test_openspiel_numbering_known_cards_and_bids() -> None:
    # OpenSpiel: rank * 4 + suit, its suits C, D, S, H. Ours: suit * 13 + rank, suits C, D, H, S.
    for text, theirs in [("2C", 0), ("2D", 1), ("2S", 2), ("2H", 3), ("3C", 4), ("AS", 50), ("AH", 51)]:
        assert openspiel_action(parse_card(text)) == theirs, text
        assert action_from_openspiel(theirs) == parse_card(text), text
    for bid in range(18):
        assert openspiel_action(BID_BASE + bid) == BID_BASE + bid == action_from_openspiel(BID_BASE + bid)
    assert sorted(openspiel_action(card) for card in range(52)) == list(range(52))
    assert all(action_from_openspiel(openspiel_action(a)) == a for a in range(52 + 18))
    with pytest.raises(ValueError, match="negative"):
        openspiel_action(-1)
    with pytest.raises(ValueError, match="negative"):
        action_from_openspiel(-3)


def test_last_hand_is_the_finished_hand_after_every_hand_including_the_last() -> None:
    state = Game(preset("classic"), 4).new_state()
    assert state.last_hand is None
    seen = _play_out(state, seed=3)
    assert state.is_terminal() and len(seen) == len(state.results) == 19
    assert seen == state.results  # right after each hand, last_hand was that hand
    last = state.last_hand
    assert last is not None and last.number == 19
    assert last.bids == tuple(state.bids) and last.tricks_won == tuple(state.tricks_won)  # kept at the end


def test_last_hand_between_hands_while_the_live_fields_move_on() -> None:
    state = Game(preset("classic"), 4).new_state(dealer=0)
    (first,) = _play_out(state, seed=8, until_hands=1)
    assert state.phase == Phase.DEAL and state.last_hand is first
    assert state.bids == [-1] * 4 and state.tricks == [] and state.tricks_won == [0] * 4  # the next hand
    assert sum(first.tricks_won) == first.size == 10 and len(first.tricks) == 10


def test_with_hand_sizes_is_the_typed_hand_sizes_option() -> None:
    assert preset("classic").with_hand_sizes(5) == preset_with_options("classic", ["hand_sizes=[5]"])
    assert Game(Rules().with_hand_sizes(3, 1), 4).schedule == (3, 1)
    with pytest.raises(RulesError, match="hand_sizes"):
        Rules().with_hand_sizes()
    with pytest.raises(RulesError, match="hand_sizes"):
        Rules().with_hand_sizes(0)
