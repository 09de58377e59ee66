"""Bots with bugs, shared by the SDK tests (in-process and on a whole ladder)."""

from __future__ import annotations

from arena.sdk import BaseBot
from ohell.bots import make_bot
from ohell.observation import Observation


class RaisesEveryFifth(BaseBot):
    """Plays like the heuristic bot, but every fifth decision raises KeyError."""

    def __init__(self) -> None:
        self.inner = make_bot("heuristic", 5)
        self.decisions = 0

    def tick(self) -> None:
        self.decisions += 1
        if self.decisions % 5 == 0:
            raise KeyError("a bug in the bot")

    def bid(self, obs: Observation) -> int:
        self.tick()
        return int(self.inner.bid(obs))

    def play(self, obs: Observation) -> int:
        self.tick()
        return int(self.inner.play(obs))
