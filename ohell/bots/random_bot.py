"""Uniform over legal actions, from its own seeded generator."""

from __future__ import annotations

import random

from ohell.observation import Observation


class RandomBot:
    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.rng = random.Random(seed)

    def bid(self, observation: Observation) -> int:
        return self.rng.choice(observation.legal_bids)

    def play(self, observation: Observation) -> int:
        return self.rng.choice(observation.legal_actions)
