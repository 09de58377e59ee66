"""Invariants over random games of every preset and table size (hypothesis chooses)."""

from __future__ import annotations

import random
from dataclasses import fields

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ohell.cards import FULL_DECK
from ohell.observation import Observation, observe
from ohell.presets import PRESETS, preset
from ohell.record import build_record
from ohell.referee import referee
from ohell.rules import Bidding
from ohell.state import Game, Phase


def play_random(name: str, players: int, seed: int):  # type: ignore[no-untyped-def]
    game = Game(preset(name), players)
    rng = random.Random(seed)
    state = game.new_state()
    while not state.is_terminal():
        if state.is_chance():
            state.chance_random(rng)
            continue
        seat = state.current
        seen = observe(state, seat)
        # made without __init__ (Observation.of): the same object as the dataclass's constructor makes
        assert seen == Observation(**{f.name: getattr(seen, f.name) for f in fields(Observation)})
        assert vars(seen).keys() == {f.name for f in fields(Observation)}
        shuffled = state.clone()
        hidden = [s for s in range(players) if s != seat]
        masks = [shuffled.hands[s] for s in hidden]
        rng.shuffle(masks)  # other seats' hidden cards moved around: nothing this seat sees may change
        for other, mask in zip(hidden, masks, strict=True):
            shuffled.hands[other] = mask
        assert observe(shuffled, seat) == seen
        if state.rules.bidding is Bidding.BLIND and state.phase == Phase.BID and not state.rebid:
            assert seen.hand == () and all(b == -1 for s, b in enumerate(seen.bids) if s != seat)
        state.apply_action(rng.choice(state.legal_actions()))
    return state


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(PRESETS)), st.integers(3, 7), st.integers(0, 2**32))
def test_random_games_keep_every_invariant_and_referee_clean(name: str, players: int, seed: int) -> None:
    state = play_random(name, players, seed)
    rules = state.game.rules
    assert state.winners and all(0 <= s < players for s in state.winners)
    scheduled = [r for r in state.results if not r.sudden_death]
    assert [r.size for r in scheduled] == list(state.game.schedule)
    for result in state.results:
        assert sum(result.tricks_won) == result.size
        winners = [t.winner for t in result.tricks]
        assert all(winners.count(s) == result.tricks_won[s] for s in range(players))
        dealt = 0
        for mask in result.dealt:
            assert dealt & mask == 0
            dealt |= mask
        assert dealt & ~FULL_DECK == 0
        assert bin(dealt).count("1") == result.size * len(result.participants)
        if result.trump_card >= 0:
            assert not (dealt >> result.trump_card) & 1
        if rules.hook:
            assert sum(result.bids[s] for s in result.participants) != result.size
    totals = [sum(r.points[s] for r in state.results) for s in range(players)]
    assert totals == state.scores
    if rules.tie_break.value == "share":
        top = max(state.scores)
        assert state.winners == tuple(s for s in range(players) if state.scores[s] == top)
    record = build_record(state, [{"name": f"p{s}"} for s in range(players)], seed=seed)
    verdict = referee(record)
    assert verdict.valid, verdict.summary()
    assert verdict.totals == state.scores
    if rules.bidding is Bidding.BLIND:
        assert all(e[0] in ("bid", "rebid", "play") for r in state.results for e in r.events)
