"""Play a whole game in-process between bots, with a seeded deal, and keep its record."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from ohell.bots.base import Bot
from ohell.observation import observe
from ohell.state import BID_BASE, Game, Phase, State


def play_game(
    game: Game,
    bots: Sequence[Bot],
    seed: int,
    after_bid: Callable[[State, int], None] | None = None,
    chance: Callable[[State], None] | None = None,
) -> State:
    """Play ``game`` to the end; ``bots[i]`` sits in seat ``i``. Chance comes from ``seed``, or from
    ``chance`` when given: it resolves the pending cut or deal (e.g. with dealt cards fixed in advance).
    ``after_bid(state, seat)`` runs after each bid (e.g. to offer 000's bid change).

    A bot that returns an illegal action raises IllegalActionError: built-in bots must not.
    Remote seats, whose faults are normal events, are run by the services' match host.
    """
    if len(bots) != game.num_players:
        raise ValueError(f"{game.num_players} seats need {game.num_players} bots, got {len(bots)}")
    rng = random.Random(seed)
    state = game.new_state()
    while state.phase != Phase.GAME_OVER:
        if state.phase <= Phase.DEAL:
            if chance is None:
                state.chance_random(rng)
            else:
                chance(state)
            continue
        seat = state.current
        observation = observe(state, seat)
        if state.phase == Phase.BID:
            state.act(seat, BID_BASE + bots[seat].bid(observation))
            if after_bid is not None:
                after_bid(state, seat)
        else:
            state.act(seat, bots[seat].play(observation))
    return state
