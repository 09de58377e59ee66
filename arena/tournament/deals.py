"""Duplicate deals: the chance outcomes of one game fixed in advance, and the seat rotations.

A deal set holds the cut (every cut round until a dealer is found) and one shuffled deck per hand.
The engine deals by seat (singly from the dealer's left), so a deal set gives seat ``s`` the same
cards whoever sits there: rotating the entrants through the seats makes each entrant hold each
hand once in each seat (``seating``). Deal sets are drawn from the operating system's generator
(``os.urandom``) when a tournament is created; nothing can predict them from a seed.
"""

from __future__ import annotations

import json
import os
import random
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ohell.errors import ChanceError
from ohell.hand import Phase
from ohell.rules import TieBreak
from ohell.schedule import hand_sizes
from ohell.state import Game, State

T = TypeVar("T")
SPARE_DECKS = 2  # decks beyond the scheduled hands and any sudden-death hands (a safety margin)
KEY_BYTES = 8  # a secure deck is the cards sorted by 64-bit random keys


@dataclass(frozen=True)
class DealSet:
    """``cuts[i]``: the cards cut in cut round ``i``; ``decks[h]``: the deck of hand ``h`` (top first)."""

    cuts: tuple[tuple[int, ...], ...]
    decks: tuple[tuple[int, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"cuts": [list(cut) for cut in self.cuts], "decks": [list(deck) for deck in self.decks]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DealSet:
        return cls(tuple(tuple(cut) for cut in data["cuts"]), tuple(tuple(deck) for deck in data["decks"]))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> DealSet:
        return cls.from_dict(json.loads(text))


def draw_deal_set(game: Game, rng: random.Random | None = None) -> DealSet:
    """A fresh deal set for ``game``; ``rng`` defaults to the system's secure generator (tests and
    benchmarks pass a seeded one)."""
    chance = rng or random.SystemRandom()
    state = game.new_state()
    cuts = []
    while state.phase == Phase.CUT:  # tied cuts cut again: keep drawing until a dealer is found
        cut = tuple(chance.sample(range(52), len(state.cutters)))
        state.cut(cut)
        cuts.append(cut)
    hands = decks_per_set(game)
    if rng is None:
        return DealSet(tuple(cuts), secure_decks(hands))
    return DealSet(tuple(cuts), tuple(tuple(rng.sample(range(52), 52)) for _ in range(hands)))


def decks_per_set(game: Game) -> int:
    """The decks of one deal set of ``game``: one per scheduled hand and per sudden-death hand the
    rules allow, and the spares (about 200 bytes each as stored)."""
    extra = game.rules.sudden_death_limit if game.rules.tie_break is TieBreak.SUDDEN_DEATH else 0
    return len(hand_sizes(game.rules, game.num_players)) + extra + SPARE_DECKS


def secure_decks(count: int) -> tuple[tuple[int, ...], ...]:
    """``count`` shuffled decks from one read of the OS's generator: each deck is the cards sorted by
    a 64-bit random key apiece. As uniform as ``SystemRandom().sample`` (two equal keys, about one
    deck in 10^16, keep their cards' order), and several times faster: that draws a word per card,
    a system call each, and drawing was most of the time a big tournament took to create."""
    keys = struct.unpack(f"<{52 * count}Q", os.urandom(52 * KEY_BYTES * count))
    return tuple(tuple(sorted(range(52), key=keys[52 * h : 52 * h + 52].__getitem__)) for h in range(count))


class ScriptedChance:
    """Resolves a game's chance events from a deal set: ``play_game(..., chance=ScriptedChance(d))``."""

    def __init__(self, deal_set: DealSet) -> None:
        self.deal_set = deal_set
        self.cuts_done = 0
        self.deals_done = 0

    def __call__(self, state: State) -> None:
        if state.phase == Phase.CUT:
            if self.cuts_done >= len(self.deal_set.cuts):
                raise ChanceError("the deal set has no cut left")
            state.cut(self.deal_set.cuts[self.cuts_done])
            self.cuts_done += 1
        elif state.phase == Phase.DEAL:
            if self.deals_done >= len(self.deal_set.decks):
                raise ChanceError("the deal set has no deck left")
            state.deal(self.deal_set.decks[self.deals_done])
            self.deals_done += 1
        else:
            raise ChanceError(f"no chance event is pending (phase {state.phase.name})")


def rotation(entrants: Sequence[T], k: int) -> list[T]:
    """Who sits where in rotation ``k``: entrant ``i`` takes seat ``(i + k) % n``."""
    n = len(entrants)
    return [entrants[(seat - k) % n] for seat in range(n)]


def seating(entrants: Sequence[T], deal: int, turn: int) -> list[T]:
    """Who sits where in rotation ``turn`` of deal set ``deal``: odd deal sets go round the table the
    other way, so that over two deal sets each entrant has each neighbour on either side (a fixed
    order would always put the same entrant on one's left: a bias even between identical bots)."""
    return rotation(entrants if deal % 2 == 0 else entrants[::-1], turn)
