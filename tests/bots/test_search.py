"""The tree search for play (``ohell.bots.search``): it finds a line the playout policy misses,
stops when told, and the strong bot playing by it stays legal and deterministic."""

from __future__ import annotations

import pytest

from ohell.bots.search import search_play
from ohell.bots.strong import StrongBot, policy_card
from ohell.bots.value import HandValue
from ohell.cards import mask_of, parse_card
from ohell.match import play_game
from ohell.observation import observe
from ohell.presets import preset
from ohell.rules import Rules
from ohell.state import BID_BASE, Game, State

HANDS = (("AH", "3S"), ("KS", "2D"), ("5H", "6H"), ("7H", "8H"))  # by seat; spades are trump


def _two_card_ending() -> State:
    """Two cards each, seat 3 deals, so seat 0 leads. Seat 0 bid 1 and holds AH 3S. Leading the
    trump 3 (the policy's card: its strongest) loses to KS and then to the 2D nobody can follow;
    leading AH gets it ruffed, but then 3S ruffs the 2D: exactly one trick."""
    state = Game(Rules(hand_sizes=(2,)), 4).new_state()
    state.cut([parse_card("2C"), parse_card("3C"), parse_card("4C"), parse_card("AC")])
    state.deal_hands([[parse_card(c) for c in hand] for hand in HANDS], parse_card("9S"))
    for seat, bid in enumerate((1, 1, 0, 1)):
        state.act(seat, BID_BASE + bid)
    return state


def _search(out_of_time: bool = False, iterations: int = 300) -> tuple[int, int]:
    observation = observe(_two_card_ending(), 0)
    world = [mask_of(parse_card(c) for c in hand) for hand in HANDS]
    candidates = sorted(observation.legal_actions)
    favourite = policy_card(observation)
    return search_play(
        [world], iterations, 0, [1, 1, 0, 1], [0, 0, 0, 0], [], observation.trump_suit, False, candidates,
        HandValue(observation, win_weight=0.0), favourite, lambda: out_of_time,
    )  # fmt: skip


def test_the_tree_finds_the_line_the_policy_misses() -> None:
    observation = observe(_two_card_ending(), 0)
    assert policy_card(observation) == parse_card("3S")
    card, ran = _search()
    assert card == parse_card("AH")
    assert ran == 300


def test_the_search_stops_when_out_of_time() -> None:
    card, ran = _search(out_of_time=True, iterations=10_000)
    assert ran == 1
    assert card in (parse_card("AH"), parse_card("3S"))


@pytest.mark.slow
def test_tree_play_is_deterministic_and_counts_its_work() -> None:
    rules = Rules(hand_sizes=(6, 6))
    game = Game(rules, 4)

    def one_game() -> State:
        bots = [StrongBot(s, budget_ms=1e6, effort=0.2) for s in range(4)]
        state = play_game(game, bots, seed=3)
        assert all(bot.decisions > 0 and bot.ceiling_hits == 0 for bot in bots)
        return state

    first, second = one_game(), one_game()
    assert first.results == second.results


@pytest.mark.slow
def test_flat_and_tree_play_both_finish_a_classic_game() -> None:
    rules = preset("classic")
    for tree in (False, True):
        bots = [StrongBot(s, effort=0.05, tree=tree) for s in range(4)]
        state = play_game(Game(rules, 4), bots, seed=8)
        assert state.is_terminal() and state.winners
