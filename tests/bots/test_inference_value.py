"""The strong bot's parts: card-play inference, the game-aware hand value, fixed work, and the
ISMCTS bench's honest resampler."""

from __future__ import annotations

import importlib.util
import random
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from ohell.bots.inference import PlayEvidence
from ohell.bots.strong import StrongBot
from ohell.bots.value import HandValue
from ohell.cards import mask_of, parse_card
from ohell.observation import observe
from ohell.presets import preset
from ohell.rules import Rules
from ohell.state import BID_BASE, Game, State
from tests.needs import import_or_missing

ROOT = Path(__file__).resolve().parents[2]


def _cards(text: str) -> list[int]:
    return [parse_card(c) for c in text.split()]


def _dealt(hands: list[str], trump: str = "9S", size: int = 3, **rules: object) -> State:
    """4 players, seat 3 deals (seat 0 bids and leads first)."""
    state = Game(Rules(hand_sizes=(size,), **rules), 4).new_state()  # type: ignore[arg-type]
    state.cut(_cards("2C 3C 4C AC"))
    state.deal_hands([_cards(h) for h in hands], parse_card(trump))
    return state


def test_a_seat_that_followed_low_while_wanting_a_trick_probably_held_no_winner() -> None:
    state = _dealt(["2H 3D 4C", "5H 8D 5C", "AH 6D 7C", "KH 9D 8C"])
    for seat, bid in enumerate((0, 1, 1, 0)):
        state.act(seat, BID_BASE + bid)
    state.act(0, parse_card("2H"))
    state.act(1, parse_card("5H"))  # seat 1 wants a trick and plays low
    evidence = PlayEvidence(observe(state, 2))
    assert [(c.pos, c.card) for c in evidence.choices] == [(0, parse_card("2H")), (1, parse_card("5H"))]
    own = mask_of(_cards("3D 4C"))  # seat 0 (position 0) is not the observer: its lead is weighed too
    truth = [own, mask_of(_cards("8D 5C")), 0, 0]
    no_other_heart = [own, mask_of(_cards("AD 5C")), 0, 0]  # 5H was forced: nothing to learn
    king = [own, mask_of(_cards("KH 5C")), 0, 0]  # with KH it would have won the trick
    assert evidence.weight(truth) == evidence.weight(no_other_heart) == 1.0
    assert evidence.weight(king) < 1.0


def test_in_the_last_hand_winning_the_game_beats_more_points() -> None:
    state = Game(replace(preset("classic"), hand_sizes=(1, 2)), 4).new_state()
    rng = random.Random(3)
    while state.hand_number < 2 or state.phase != state.phase.BID:
        if state.is_chance():
            state.chance_random(rng)
        else:
            state.apply_action(state.legal_actions()[0])
    value = HandValue(observe(state, state.current))
    assert value.spread == 0.0
    me = value.me
    rival, *others = [pos for pos in range(4) if pos != me]
    value.totals = [0, 0, 0, 0]
    value.totals[rival] = 5

    def outcome(mine: tuple[int, int], theirs: tuple[int, int], rest: tuple[int, int]) -> float:
        bids, won = [0] * 4, [0] * 4
        bids[me], won[me] = mine
        bids[rival], won[rival] = theirs
        for pos in others:
            bids[pos], won[pos] = rest
        return value.value(bids, won)

    more_points_but_lost = outcome((2, 2), (0, 0), (1, 0))  # 12 for us, the rival makes 10: 12 < 15
    fewer_points_and_won = outcome((0, 0), (0, 2), (1, 0))  # 10 for us, the rival misses: 10 > 5
    assert fewer_points_and_won > more_points_but_lost


def test_win_chance_rises_with_the_lead_and_is_in_scale() -> None:
    state = Game(preset("online-anderson"), 4).new_state()
    rng = random.Random(1)
    while state.phase != state.phase.BID:
        state.chance_random(rng)
    value = HandValue(observe(state, state.current))
    assert value.spread > 100  # Anderson's trick value rises to 10 x hand number: spreads are in the hundreds
    chances = [value.win_chance([lead, 0, 0, 0] if value.me == 0 else [0] * 4) for lead in (-200, 0, 200)]
    assert chances == sorted(chances)


@pytest.mark.slow
def test_fixed_work_never_hits_a_generous_ceiling() -> None:
    bots = [StrongBot(s, budget_ms=1e6, effort=0.2) for s in range(4)]
    from ohell.match import play_game

    play_game(Game(replace(preset("classic"), max_cards=4), 4), bots, seed=3)
    assert sum(b.decisions for b in bots) > 20
    assert sum(b.ceiling_hits for b in bots) == 0


def _ismcts_bench():  # type: ignore[no-untyped-def]
    import_or_missing("pyspiel", "pip install -e '.[test]' (open-spiel is a test extra)")
    spec = importlib.util.spec_from_file_location("bench_ismcts", ROOT / "bench" / "ismcts.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_ismcts"] = module
    spec.loader.exec_module(module)
    return module


def test_ismcts_resampler_keeps_the_information_set_and_hides_the_rest() -> None:
    bench = _ismcts_bench()
    from arena.conformance import OpenSpielTable, load_pyspiel

    table = OpenSpielTable(load_pyspiel(), 4)
    rng = random.Random(5)
    changed = checked = 0
    for _ in range(40):
        state = table.game.new_initial_state()
        stop = rng.randrange(40)
        steps = 0
        while not state.is_terminal() and (state.is_chance_node() or steps < stop):
            steps += 0 if state.is_chance_node() else 1
            state.apply_action(rng.choice(state.legal_actions()))
        if state.is_terminal():
            continue
        player = state.current_player()
        resample = bench.HonestResampler(table, rng)
        for _ in range(4):
            world = resample(state, player)
            checked += 1
            assert world.information_state_string(player) == state.information_state_string(player)
            assert world.legal_actions() == state.legal_actions()
            changed += str(world) != str(state)
    assert checked > 50 and changed > checked // 2  # the other hands are redealt, not kept


def test_ismcts_resampler_does_not_tell_which_cards_were_dealt() -> None:
    """One card each: the others' three cards must be redrawn from all 48 unseen cards (the pack
    included), not shuffled among the three really dealt."""
    bench = _ismcts_bench()
    from arena.conformance import OpenSpielTable, load_pyspiel

    table = OpenSpielTable(load_pyspiel(), 4)
    state = table.game.new_initial_state()
    state.apply_action(1)  # one trick
    state.apply_action(0)  # dealer
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    player = state.current_player()
    resample = bench.HonestResampler(table, random.Random(2))
    worlds = [resample(state, player) for _ in range(30)]
    assert all(w.information_state_string(player) == state.information_state_string(player) for w in worlds)
    # redealing only the three cards dealt gives at most 3! = 6 different worlds
    assert len({str(world) for world in worlds}) > 20


def test_bid_fit_favours_the_nearest_legal_bid() -> None:
    from ohell.bots.sampling import bid_fit, estimate_tricks

    hand = mask_of(_cards("AS KS AH 2C 3D"))  # spades trump: about three tricks
    estimate = estimate_tricks(hand, 3, 4)
    nearest = round(estimate)
    assert bid_fit(hand, 3, nearest, 5, -1, 4) == 1.0
    assert bid_fit(hand, 3, nearest + 2, 5, -1, 4) < 0.05
    assert bid_fit(hand, 3, 0, 5, -1, 4) == pytest.approx(0.01)  # never ruled out
    # a hooked dealer whose nearest bid was forbidden says the next nearest: that is a perfect fit
    neighbour = nearest + 1 if estimate >= nearest else nearest - 1
    assert bid_fit(hand, 3, neighbour, 5, nearest, 4) == 1.0


def test_bid_fit_knows_the_heuristic_bid_rule_ties_and_hook_included() -> None:
    from ohell.bots.heuristic import choose_bid
    from ohell.bots.sampling import heuristic_bid

    rng = random.Random(5)
    for _ in range(5000):
        size = rng.randint(1, 13)
        estimate = rng.choice([rng.uniform(0, size + 1), rng.randint(0, 2 * size) / 2])  # halves: ties
        forbidden = rng.choice([-1, rng.randint(0, size)])
        legal = tuple(b for b in range(size + 1) if b != forbidden)
        assert heuristic_bid(estimate, size, forbidden) == choose_bid(estimate, legal)


def test_moves_keep_counts_voids_and_what_the_fit_rules_out() -> None:
    from ohell.bots.sampling import HiddenDeal, rejuvenate

    state = _dealt(["2H 3D 4C", "5D 8D 5C", "AH 6D 7C", "KH 9D 8C"])
    for seat, bid in enumerate((0, 1, 1, 0)):
        state.act(seat, BID_BASE + bid)
    state.act(0, parse_card("2H"))
    state.act(1, parse_card("8D"))  # seat 1 shows a void in hearts
    hidden = HiddenDeal.from_observation(observe(state, 2))
    ace_of_clubs = parse_card("AC")

    def fit(pos: int, hand: int) -> float:  # position 3 must hold the ace of clubs
        return float((hand >> ace_of_clubs) & 1) if pos == 3 else 1.0

    rng = random.Random(1)
    start = next(h for h in (hidden.sample(rng)[0] for _ in range(500)) if (h[3] >> ace_of_clubs) & 1)
    seen = set()
    for hands, _ in zip(rejuvenate(start, hidden, fit, rng, 3), range(200), strict=False):
        assert [hand.bit_count() for hand in hands] == [2, 2, 3, 3]
        assert all(not hands[pos] & ~hidden.allowed[pos] for pos in range(4))
        assert (hands[3] >> ace_of_clubs) & 1 and hands[2] == start[2]
        seen.add(tuple(hands))
    assert len(seen) > 50
