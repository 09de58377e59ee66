"""A tournament's definition (validated once, when it is created) and its tables' plan."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from arena.play.specs import ENDPOINT_NAME, SeatSpec, SeatSpecError, check_endpoint
from arena.tournament.deals import decks_per_set
from arena.tournament.schedule import (
    ScheduleError,
    Table,
    check_field,
    round_robin,
    round_robin_size,
    swiss_round,
    table_sizes,
)
from ohell.errors import OhHellError
from ohell.presets import preset
from ohell.rules import Rules, under_rules
from ohell.schedule import hand_sizes
from ohell.state import Game

FORMATS = ("round-robin", "swiss")
ID_PATTERN = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
ID_RULE = "1-40 characters of a-z, 0-9, '_' and '-', the first a letter or digit"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")  # entrant names (":": older endpoints were named by address)
# the whole rule of a new entrant's name, as its refusals and docs/tournaments.md say it (a stored one
# may start with '-': the start is checked where a request gives the name)
NAME_RULE = (
    "1-64 characters of ASCII letters, digits, '_', '.', ':' and '-', not starting with '-' "
    "(a spreadsheet reads such a cell of the standings CSV as a formula)"
)
MAX_ENTRANTS = 200
MAX_DEALS_PER_TABLE = 50
MAX_ROUNDS = 20
MAX_GRACE_S = 600.0
# All of a tournament's deal sets are drawn (a millisecond each) and stored (about 3 KB each) in one
# Redis call when it is created: this many at most (some 30 MB, seconds of drawing)
MAX_DEAL_SETS = 10_000
# ... and this many decks in them (about 70 MB): a deal set holds a deck per hand and per sudden-death
# hand the rules allow (up to 10,000 of these), so deal sets alone do not bound the bytes. Every
# preset without sudden death fits its 10,000 deal sets (35 decks each at most).
MAX_DECKS = 350_000
# How long a caller of CreateTournament should wait: the largest tournament (200 entrants at 3 seats,
# 6,800 tables, deals and schedule drawn, every table sent) takes about 6 s on 2 cores (bench/
# tournament_create.py); many times that covers a busy machine. A shorter deadline reports a failure
# while the tournament is in fact being created.
CREATE_DEADLINE_S = 120.0
DEFAULT_GRACE_S = 30.0


class TournamentError(OhHellError):
    """A tournament that cannot be created or an operation it refuses; the text names the field."""


class TournamentNotFound(TournamentError):
    """No such tournament (or no such registered agent for a connected entrant)."""


class TournamentExists(TournamentError):
    """A tournament with that id exists already."""


class TournamentEnded(TournamentError):
    """An operation a finished or cancelled tournament refuses (cancelling it, resuming a cancelled one)."""


class TournamentRunning(TournamentError):
    """A read of what stays secret while the tournament runs (its deals, its games' records)."""


class TournamentAborted(TournamentError):
    """Nothing done, through no fault of the request: the same call again may succeed (the deal sets a
    creation sent beforehand were gone from Redis when it was to be created)."""


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
        if not ID_PATTERN.fullmatch(self.tourney_id):
            raise TournamentError(f"tourney_id: {self.tourney_id[:80]!r} must be {ID_RULE}")
        if not 1 <= len(self.entrants) <= MAX_ENTRANTS:
            raise TournamentError(f"entrants: {len(self.entrants)} given, 1 to {MAX_ENTRANTS} allowed")
        names = [entrant.name for entrant in self.entrants]
        for number, entrant in enumerate(self.entrants):
            check_entrant(entrant, f"entrants[{number}]")
        # before the names: one agent entered twice has one name twice, and =NAME would not mend it
        first_entry: dict[str, int] = {}  # one agent in two seats of a table cannot be played
        for number, entrant in enumerate(self.entrants):
            if entrant.kind != "connected":
                continue
            first = first_entry.setdefault(entrant.agent_id, number)
            if first != number:
                raise TournamentError(
                    f"entrants[{number}].agent_id: agent {entrant.agent_id!r} is entrants[{first}] already: a"
                    " connected agent plays as itself, from its one connection, so it enters once (=NAME only"
                    " renames it); give it once"
                )
        if len(set(names)) != len(names):
            twice = next(name for name in names if names.count(name) > 1)
            why = " (an endpoint given by address alone is named so)" if twice == ENDPOINT_NAME else ""
            raise TournamentError(
                f"entrants: every entrant needs its own name; {twice!r} is given twice{why}: tell them apart "
                "with =NAME (builtin:random=random-2)"
            )
        if self.format not in FORMATS:
            raise TournamentError(f"format: {self.format!r} must be one of {', '.join(FORMATS)}")
        for name, value, high in (("rounds", self.rounds, MAX_ROUNDS), ("deals", self.deals, MAX_DEALS_PER_TABLE)):
            if not isinstance(value, int) or not 1 <= value <= high:
                raise TournamentError(f"{name}: {value!r} must be an int from 1 to {high}")
        if self.format == "round-robin" and self.rounds != 1:
            raise TournamentError(f"rounds: {self.rounds} given, but a round robin is one round (rounds are for swiss)")
        if not 0 <= self.grace_s <= MAX_GRACE_S:
            raise TournamentError(f"grace_s: {self.grace_s!r} must be from 0 to {MAX_GRACE_S}")
        try:
            check_field(len(self.entrants), self.seats)
            sizes = table_sizes(len(self.entrants), self.seats) if self.format == "swiss" else [self.seats]
            for size in set(sizes):
                hand_sizes(self.rules(), size)  # the rules must fit every table size
        except (ScheduleError, ValueError) as error:  # a rule that does not fit a table: said under rules
            raise TournamentError(under_rules(str(error))) from None
        tables = self.tables()
        if tables * self.deals > MAX_DEAL_SETS:
            raise TournamentError(
                f"deals: {tables} tables x {self.deals} = {tables * self.deals} deal sets to draw now, "
                f"at most {MAX_DEAL_SETS} deal sets (fewer deals or entrants, or more seats)"
            )
        tables_of_size = Counter(self.all_table_sizes())
        decks = self.deals * sum(
            count * decks_per_set(Game(self.rules(), size)) for size, count in tables_of_size.items()
        )
        if decks > MAX_DECKS:
            raise TournamentError(
                f"deals: {tables * self.deals} deal sets of {decks // (tables * self.deals)} decks on average = "
                f"{decks} decks to draw now, at most {MAX_DECKS} decks (fewer deals, entrants, hands or "
                "sudden-death hands)"
            )

    def tables(self) -> int:
        """The tables of every round."""
        if self.format == "round-robin":
            return round_robin_size(len(self.entrants), self.seats)
        return len(self.round_sizes()) * self.rounds

    def all_table_sizes(self) -> list[int]:
        """The size of every table of every round."""
        if self.format == "round-robin":
            return [self.seats] * self.tables()
        return table_sizes(len(self.entrants), self.seats) * self.rounds

    def rules(self) -> Rules:
        return rules_of(self.preset, self.overrides)

    def first_round(self) -> list[Table]:
        if self.format == "round-robin":
            return round_robin(len(self.entrants), self.seats)
        return swiss_round(list(range(len(self.entrants))), self.seats)

    def round_sizes(self) -> list[int]:
        """The table sizes of every round after the first (Swiss: the field splits the same way)."""
        return table_sizes(len(self.entrants), self.seats) if self.format == "swiss" else []

    @property
    def entrant_count(self) -> int:
        return len(self.entrants)

    def summary(self) -> TournamentSummary:
        return TournamentSummary(
            tourney_id=self.tourney_id,
            entrant_count=len(self.entrants),
            seats=self.seats,
            format=self.format,
            rounds=self.rounds,
            deals=self.deals,
            preset=self.preset,
            overrides=self.overrides,
            grace_s=self.grace_s,
        )

    def to_json(self) -> str:
        data = asdict(self)
        data["entrants"] = [entrant.to_dict() for entrant in self.entrants]
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes) -> Tournament:
        data = json.loads(text)
        data["entrants"] = tuple(SeatSpec.from_dict(entrant) for entrant in data["entrants"])
        return cls(**data)


@dataclass(frozen=True)
class TournamentSummary:
    """A tournament's definition without its entrants, as a list of tournaments shows it. Stored
    beside the full definition when the tournament is created (that one was checked then), so a
    page of the list reads a few hundred bytes per tournament and checks nothing again."""

    tourney_id: str
    entrant_count: int
    seats: int
    format: str
    rounds: int
    deals: int
    preset: str
    overrides: dict[str, Any]
    grace_s: float

    def rules(self) -> Rules:
        return rules_of(self.preset, self.overrides)

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes) -> TournamentSummary:
        return cls(**json.loads(text))


def rules_of(preset_name: str, overrides: dict[str, Any]) -> Rules:
    base = preset(preset_name)
    return Rules.from_dict(overrides, base=base) if overrides else base


def check_entrant(entrant: SeatSpec, field: str) -> None:
    """Bounds of an entrant beyond ``SeatSpec``'s own: its name, a connected one's agent id. An
    endpoint's address is checked where a request gives it (``parse_entrant``, CreateTournament's
    ``entrant_from_proto``: ``check_endpoint``), so a tournament stored under an older rule stays readable."""
    if not NAME_PATTERN.fullmatch(entrant.name):
        raise TournamentError(f"{field}.name: {entrant.name[:80]!r} must be {NAME_RULE}")
    if entrant.kind == "connected" and not 1 <= len(entrant.agent_id) <= 64:
        raise TournamentError(f"{field}.agent_id: must be 1-64 characters")


def parse_entrant(text: str) -> SeatSpec:
    """``builtin:BOT``, ``connected:AGENT_ID`` or ``endpoint:HOST:PORT``, each with an optional ``=NAME``
    (the command line's and the host page's way to write an entrant)."""
    spec, _, name = text.strip().partition("=")
    kind, _, value = spec.partition(":")
    makers = {"builtin": SeatSpec.builtin, "connected": SeatSpec.connected, "endpoint": SeatSpec.endpoint}
    if kind not in makers:
        raise TournamentError(f"entrant {text[:80]!r}: expected builtin:BOT, connected:AGENT_ID or endpoint:HOST:PORT")
    try:
        if kind == "endpoint":
            check_endpoint(value.strip())
        entrant = makers[kind](value.strip(), name.strip() or None)
    except SeatSpecError as error:
        raise TournamentError(f"entrant {text[:80]!r}: {error}") from None
    check_entrant(entrant, f"entrant {text[:80]!r}")
    return entrant


def table_id(round_number: int, index: int) -> str:
    return f"r{round_number}t{index}"


@dataclass(frozen=True)
class TablePlan:
    table_id: str
    round: int
    entrants: tuple[int, ...]

    def to_json(self) -> str:
        return json.dumps({"round": self.round, "entrants": list(self.entrants)})
