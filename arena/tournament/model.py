"""A tournament's definition (validated once, when it is created) and its tables' plan."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from arena.play.specs import SeatSpec
from arena.tournament.schedule import ScheduleError, Table, check_field, round_robin, swiss_round, table_sizes
from ohell.errors import OhHellError
from ohell.presets import preset
from ohell.rules import Rules
from ohell.schedule import hand_sizes

FORMATS = ("round-robin", "swiss")
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
MAX_ENTRANTS = 200
MAX_DEALS_PER_TABLE = 50
MAX_ROUNDS = 20
MAX_GRACE_S = 600.0
DEFAULT_GRACE_S = 30.0


class TournamentError(OhHellError):
    """A tournament that cannot be created or an operation it refuses; the text names the field."""


@dataclass(frozen=True)
class Tournament:
    """``entrants`` in seeding order (Swiss round 1 groups them in this order). ``deals`` deal sets
    per table, each played once per seat rotation. ``grace_s``: how long a table waits at its start
    for a connected entrant that is not online before that entrant forfeits the table."""

    tourney_id: str
    entrants: tuple[SeatSpec, ...]
    seats: int = 3
    format: str = "round-robin"
    rounds: int = 1  # Swiss only; a round robin has one round holding all its tables
    deals: int = 1
    preset: str = "classic"
    overrides: dict[str, Any] = field(default_factory=dict)
    grace_s: float = DEFAULT_GRACE_S
    bootstrap_seed: int = 0

    def __post_init__(self) -> None:
        if not ID_PATTERN.match(self.tourney_id):
            raise TournamentError(f"tourney_id={self.tourney_id!r} must match {ID_PATTERN.pattern}")
        if not 1 <= len(self.entrants) <= MAX_ENTRANTS:
            raise TournamentError(f"entrants: {len(self.entrants)} given, 1 to {MAX_ENTRANTS} allowed")
        names = [entrant.name for entrant in self.entrants]
        if len(set(names)) != len(names):
            raise TournamentError("entrants: every entrant needs its own name")
        if self.format not in FORMATS:
            raise TournamentError(f"format={self.format!r} must be one of {', '.join(FORMATS)}")
        for name, value, high in (("rounds", self.rounds, MAX_ROUNDS), ("deals", self.deals, MAX_DEALS_PER_TABLE)):
            if not isinstance(value, int) or not 1 <= value <= high:
                raise TournamentError(f"{name}={value!r} must be an int from 1 to {high}")
        if self.format == "round-robin" and self.rounds != 1:
            raise TournamentError(f"rounds={self.rounds}: a round robin is one round (rounds are for swiss)")
        if not 0 <= self.grace_s <= MAX_GRACE_S:
            raise TournamentError(f"grace_s={self.grace_s!r} must be from 0 to {MAX_GRACE_S}")
        try:
            check_field(len(self.entrants), self.seats)
            sizes = table_sizes(len(self.entrants), self.seats) if self.format == "swiss" else [self.seats]
            for size in set(sizes):
                hand_sizes(self.rules(), size)  # the rules must fit every table size
        except (ScheduleError, ValueError) as error:
            raise TournamentError(str(error)) from None

    def rules(self) -> Rules:
        base = preset(self.preset)
        return Rules.from_dict(self.overrides, base=base) if self.overrides else base

    def first_round(self) -> list[Table]:
        if self.format == "round-robin":
            return round_robin(len(self.entrants), self.seats)
        return swiss_round(list(range(len(self.entrants))), self.seats)

    def round_sizes(self) -> list[int]:
        """The table sizes of every round after the first (Swiss: the field splits the same way)."""
        return table_sizes(len(self.entrants), self.seats) if self.format == "swiss" else []

    def to_json(self) -> str:
        data = asdict(self)
        data["entrants"] = [entrant.to_dict() for entrant in self.entrants]
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes) -> Tournament:
        data = json.loads(text)
        data["entrants"] = tuple(SeatSpec.from_dict(entrant) for entrant in data["entrants"])
        return cls(**data)


def table_id(round_number: int, index: int) -> str:
    return f"r{round_number}t{index}"
