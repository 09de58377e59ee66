"""Play one ladder match to its record: the seam between the workers and the match host.

All-built-in tables are played in this process with ``ohell.match.play_game`` (no network);
tables with connected or endpoint agents go through the engine service's match host
(``arena.play.host``), which records faults and forfeits.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from typing import Any

from arena.keys import DEFAULT_REDIS_URL
from arena.play.specs import SeatSpec, all_builtin
from ohell.bots import Bot, make_bot
from ohell.match import play_game
from ohell.observation import Observation
from ohell.record import build_record
from ohell.rules import Rules
from ohell.state import Game


class PacedBot:
    """A built-in bot that takes ``think_ms`` per decision (spectators can follow the game)."""

    def __init__(self, bot: Bot, think_ms: int) -> None:
        self.name = bot.name
        self._bot = bot
        self._pause = think_ms / 1000

    def bid(self, observation: Observation) -> int:
        time.sleep(self._pause)
        return self._bot.bid(observation)

    def play(self, observation: Observation) -> int:
        time.sleep(self._pause)
        return self._bot.play(observation)


def play_builtin(
    match_id: str, rules: Rules, seats: Sequence[SeatSpec], seed: int, think_ms: int = 0
) -> dict[str, Any]:
    bots: list[Any] = [make_bot(seat.bot, seed * 8 + index) for index, seat in enumerate(seats)]
    if think_ms > 0:
        bots = [PacedBot(bot, think_ms) for bot in bots]
    state = play_game(Game(rules, len(seats)), bots, seed)
    return build_record(state, [seat.record_entry() for seat in seats], seed=seed, match_id=match_id)


def play_match(match_id: str, rules: Rules, seats: Sequence[SeatSpec], seed: int, think_ms: int = 0) -> dict[str, Any]:
    """The record of the match ``match_id`` with ``seats`` (the specs stored at claim time) and
    its secret ``seed`` (drawn from a CSPRNG at claim time and kept in the match's hash, so a
    match played again after a crash deals the same cards; published only in the record)."""
    if all_builtin(seats):
        return play_builtin(match_id, rules, seats, seed, think_ms)
    return play_remote(match_id, rules, seats, seed)


def play_remote(match_id: str, rules: Rules, seats: Sequence[SeatSpec], seed: int) -> dict[str, Any]:
    """Through the engine's match host: connected seats are reached over the Redis relay (their
    gateway may be another process), endpoint seats are dialled; faults and forfeits are recorded."""
    from arena.play.host import host_match_sync  # grpc is loaded only where remote matches are hosted

    redis_url = os.environ.get("REDIS_URL", DEFAULT_REDIS_URL)  # the Redis the worker itself uses
    return host_match_sync(match_id, rules, seats, seed, redis_url=redis_url)
