"""Engine speed: random play of whole hands (deal included), ours against OpenSpiel's C++ oh_hell.

    python bench/engine.py [--hands 5000] [--games 100] [--rounds 10]

Both engines are driven from Python the same way, one hand of 4 players x 10 cards per game:
chance resolved by sampling, then ``legal_actions()``, a uniform random choice, ``apply_action()``.
OpenSpiel samples each dealt card at its own chance node (its only way); ours resolves the cut and
the deal as two chance events. Rounds alternate between the engines and the best round counts,
which damps noise from other work on a shared machine. Also reported: whole classic games per
second for 4 random and for 4 heuristic bots through ``ohell.match.play_game``.

The last line is ``engine: ours=<hands/s> openspiel=<hands/s> ratio=<ours/openspiel> build=<build>``,
where the build is ``compiled`` (the mypyc extensions setup.py builds) or ``pure`` (the ``.py`` files:
no compiler at install, ``OHELL_PURE=1``, or ``python -X ohell_pure bench/engine.py``).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from arena.conformance import ConformanceUnavailable, load_pyspiel
from ohell import engine_build
from ohell.bots import make_bot
from ohell.match import play_game
from ohell.presets import preset
from ohell.rules import Rules
from ohell.state import Game

PLAYERS = 4
CARDS = 10
GAME_ROUNDS = 3


def ours_hands(hands: int, seed: int) -> float:
    """Seconds for ``hands`` random hands in our engine."""
    game = Game(Rules(hand_sizes=(CARDS,)), PLAYERS)
    return _drive(game.new_state, hands, seed)


def _drive(new_state: Callable[[], Any], hands: int, seed: int) -> float:
    """The one driver loop, timed: chance by sampling, else a uniform legal action."""
    rng = random.Random(seed)
    choice = rng.choice
    started = time.perf_counter()
    for _ in range(hands):
        state = new_state()
        while not state.is_terminal():
            if state.is_chance():
                state.chance_random(rng)
            else:
                state.apply_action(choice(state.legal_actions()))
    return time.perf_counter() - started


class _NoEngine:
    """A stand-in with our engine's interface that does nothing but count steps: what the
    driver loop itself costs (2 chance events and 44 decisions, as in a 4 x 10 hand)."""

    __slots__ = ("steps",)
    LEGAL = tuple(range(5))

    def __init__(self) -> None:
        self.steps = 0

    def is_terminal(self) -> bool:
        return self.steps >= 2 + PLAYERS * (CARDS + 1)

    def is_chance(self) -> bool:
        return self.steps < 2

    def chance_random(self, rng: random.Random) -> None:
        self.steps += 1

    def legal_actions(self) -> tuple[int, ...]:
        return self.LEGAL

    def apply_action(self, action: int) -> None:
        self.steps += 1


def driver_only_hands(hands: int, seed: int) -> float:
    """Seconds for ``hands`` passes of our driver loop over ``_NoEngine``: a bound on our rate."""
    return _drive(_NoEngine, hands, seed)


def openspiel_hands(hands: int, seed: int) -> float:
    """Seconds for ``hands`` random hands in OpenSpiel; at its chance nodes (all uniform here)
    ``legal_actions()`` lists the outcomes, so one loop serves both kinds of node."""
    pyspiel = load_pyspiel()
    rng = random.Random(seed)
    choice = rng.choice
    game = pyspiel.load_game("oh_hell", {"players": PLAYERS, "num_tricks_fixed": CARDS})
    started = time.perf_counter()
    for _ in range(hands):
        state = game.new_initial_state()
        while not state.is_terminal():
            state.apply_action(choice(state.legal_actions()))
    return time.perf_counter() - started


def games_seconds(bot: str, games: int) -> float:
    """Seconds for ``games`` whole classic games between 4 ``bot`` bots."""
    game = Game(preset("classic"), PLAYERS)
    started = time.perf_counter()
    for number in range(games):
        bots = [make_bot(bot, seed=number * PLAYERS + seat) for seat in range(PLAYERS)]
        play_game(game, bots, seed=number)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hands", type=int, default=5_000, help="hands per round and engine")
    parser.add_argument("--games", type=int, default=100, help="games per round (best of 3) and bot kind")
    parser.add_argument("--rounds", type=int, default=10, help="alternating rounds; the best counts")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    for name in ("hands", "games", "rounds"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1, got {getattr(args, name)}")
    try:
        load_pyspiel()
    except ConformanceUnavailable as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    ours = theirs = floor = 0.0
    for r in range(args.rounds):  # alternate so both see the same machine load
        ours = max(ours, args.hands / ours_hands(args.hands, args.seed + r))
        theirs = max(theirs, args.hands / openspiel_hands(args.hands, args.seed + r))
        floor = max(floor, args.hands / driver_only_hands(args.hands, args.seed + r))
    for bot in ("random", "heuristic"):
        rate = max(args.games / games_seconds(bot, args.games) for _ in range(GAME_ROUNDS))
        print(f"games: classic 4 x {bot}: {rate:.1f} games/s")
    print(f"hands: {PLAYERS} players x {CARDS} cards, {args.hands} hands x {args.rounds} rounds, best round")
    print(
        f"driver loop alone (no engine): {floor:.0f} hands/s = {1e6 / floor:.1f} us/hand; "
        f"ours {1e6 / ours:.1f} us/hand, openspiel {1e6 / theirs:.1f} us/hand"
    )
    print(f"engine: ours={ours:.0f} openspiel={theirs:.0f} ratio={ours / theirs:.2f} build={engine_build()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
