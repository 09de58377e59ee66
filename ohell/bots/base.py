"""What a bot is: an object that bids and plays from an Observation."""

from __future__ import annotations

from typing import Protocol

from ohell.observation import Observation


class Bot(Protocol):
    """A player. ``bid`` returns a number of tricks, ``play`` a card (0..51)."""

    name: str

    def bid(self, observation: Observation) -> int: ...

    def play(self, observation: Observation) -> int: ...
