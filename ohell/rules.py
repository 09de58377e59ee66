"""The rule options of the engine: one frozen ``Rules`` value describes a whole rule set.

Every place where the rule documents disagree is an option here; ``ohell.presets`` names the
combinations each document describes. ``docs/rules.md`` explains every option and its source.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from enum import Enum, StrEnum
from typing import Any

from ohell.errors import RulesError

MIN_PLAYERS = 3
MAX_PLAYERS = 7


class Direction(StrEnum):
    """Which way hand sizes move first."""

    DOWN = "down"  # start at the maximum, shrink to the minimum (000, 004 default)
    UP = "up"  # start at the minimum, grow to the maximum (003)


class MaxCards(StrEnum):
    """How the largest hand is found when ``max_cards`` is not given."""

    CLASSIC = "classic"  # 10, but never so many that no trump card is left (10/10/10/8/7): 000, 004
    DECK = "deck"  # 52 // players, the whole pack dealt (003)


class Bidding(StrEnum):
    SEQUENTIAL = "sequential"  # clockwise from the dealer's left, each sees earlier bids
    BLIND = "blind"  # before seeing cards, revealed together (003; 000's simultaneous variant)


class Scoring(StrEnum):
    EXACT = "exact"  # 10 + bid when exact, 0 otherwise: 000, 003 standard, 004 "Blackout"
    POSITIVE = "positive"  # 10 + tricks when exact, tricks otherwise (004)
    NEGATIVE = "negative"  # 10 exact, -10 per trick off
    BALANCED = "balanced"  # 10 + bid exact, -2 per trick off
    HYBRID = "hybrid"  # 10 + bid exact, tricks if under, 0 if over
    DOUBLES = "doubles"  # 10 + 2*bid exact, -2 per trick off
    TRIPLES = "triples"  # 10 + 3*bid exact, -3 per trick off
    SQUARES = "squares"  # 10 + bid^2 exact, -(off^2)
    ANDERSON = "anderson"  # trick value v = 10 * hand number: v*bid exact, -v per trick off
    CONTRACT_WHIST = "contract_whist"  # +tricks exact, -1 per trick over, -2 per trick short
    CONSOLATION = "consolation"  # 003: 10 + bid when exact, plus 1 per trick taken in any case


class TieBreak(StrEnum):
    SHARE = "share"  # tied leaders share the win (000, 003 standard)
    SUDDEN_DEATH = "sudden_death"  # one-card no-trump hands among the tied until one alone is exact


@dataclass(frozen=True)
class Rules:
    """An immutable rule set. Construct directly, from a preset, or with ``Rules.from_dict``."""

    direction: Direction = Direction.DOWN
    rebound: bool = True
    min_cards: int = 1
    max_cards: int | None = None
    max_cards_auto: MaxCards = MaxCards.CLASSIC
    hand_sizes: tuple[int, ...] | None = None  # an explicit schedule overrides the four above
    no_trump_every: int = 0  # every k-th hand (k, 2k, ...) has no trump; 0 = never
    hook: bool = True
    bidding: Bidding = Bidding.SEQUENTIAL
    bid_changes: bool = False  # 000: a bid may change until the next player bids
    scoring: Scoring = Scoring.EXACT
    vienna: bool = False  # a made bid of 0 is worth cards dealt + 5
    tie_break: TieBreak = TieBreak.SHARE
    sudden_death_limit: int = 50  # after this many undecided sudden-death hands the win is shared

    def __post_init__(self) -> None:
        for name, enum in (
            ("direction", Direction),
            ("max_cards_auto", MaxCards),
            ("bidding", Bidding),
            ("scoring", Scoring),
            ("tie_break", TieBreak),
        ):
            value = getattr(self, name)
            if not isinstance(value, enum):
                try:
                    object.__setattr__(self, name, enum(value))
                except ValueError:
                    allowed = ", ".join(member.value for member in enum)
                    raise RulesError(f"{name}={value!r} is not one of: {allowed}") from None
        for name in ("rebound", "hook", "bid_changes", "vienna"):
            if not isinstance(getattr(self, name), bool):
                raise RulesError(f"{name}={getattr(self, name)!r} must be true or false")
        if not _is_int(self.min_cards, 1, 17):
            raise RulesError(f"min_cards={self.min_cards!r} must be an int from 1 to 17")
        if self.max_cards is not None and not _is_int(self.max_cards, 1, 17):
            raise RulesError(f"max_cards={self.max_cards!r} must be an int from 1 to 17")
        if self.max_cards is not None and self.max_cards < self.min_cards:
            raise RulesError(f"max_cards={self.max_cards} is below min_cards={self.min_cards}")
        if self.hand_sizes is not None:
            sizes = tuple(self.hand_sizes) if isinstance(self.hand_sizes, (list, tuple)) else None
            if not sizes or not all(_is_int(size, 1, 17) for size in sizes):
                shown = repr(self.hand_sizes)  # quoted in part: a caller's list may hold thousands
                shown = shown if len(shown) <= 80 else f"{shown[:80]}... ({len(sizes or ())} hands)"
                raise RulesError(f"hand_sizes={shown} must be a non-empty list of ints from 1 to 17")
            object.__setattr__(self, "hand_sizes", sizes)
        if not _is_int(self.no_trump_every, 0, 1000):
            raise RulesError(f"no_trump_every={self.no_trump_every!r} must be an int >= 0")
        if not _is_int(self.sudden_death_limit, 1, 10_000):
            raise RulesError(f"sudden_death_limit={self.sudden_death_limit!r} must be an int >= 1")
        if self.vienna and self.scoring is Scoring.ANDERSON:
            raise RulesError("vienna=true cannot be combined with scoring='anderson'")
        if self.bid_changes and self.bidding is Bidding.BLIND:
            raise RulesError("bid_changes=true needs bidding='sequential' (blind bids are sealed)")

    def max_hand_size(self, num_players: int) -> int:
        """The largest hand for this many players, by ``max_cards`` or ``max_cards_auto``."""
        deck_limit = 52 // num_players
        if self.max_cards is not None:
            return min(self.max_cards, deck_limit)
        if self.max_cards_auto is MaxCards.DECK:
            return deck_limit
        return min(10, 51 // num_players)

    def with_hand_sizes(self, *sizes: int) -> Rules:
        """These rules with an explicit schedule: ``preset("classic").with_hand_sizes(5)`` is one
        5-card hand (the typed form of the option ``hand_sizes=[5]``)."""
        return replace(self, hand_sizes=sizes)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key, value in data.items():
            if isinstance(value, Enum):
                data[key] = value.value
            elif isinstance(value, tuple):
                data[key] = list(value)
        return data

    @classmethod
    def from_dict(cls, data: object, base: Rules | None = None) -> Rules:
        """Rules from a mapping of option names to values; unknown names are an error."""
        if not isinstance(data, dict):
            raise RulesError(f"rules must be a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(str(key) for key in data if key not in known)
        if unknown:
            raise RulesError(f"unknown rule option(s): {', '.join(unknown)}")
        values = dict(data)
        if isinstance(values.get("hand_sizes"), list):
            values["hand_sizes"] = tuple(values["hand_sizes"])
        try:
            return replace(base, **values) if base is not None else cls(**values)
        except TypeError as error:
            raise RulesError(str(error)) from None


def under_rules(message: str) -> str:
    """A refusal of rules said under their field, ``rules.OPTION: ...`` when it starts with the option at
    fault (``min_cards=7 exceeds ...``, ``hand_sizes: a hand of ...``), else as it is."""
    option = message.partition("=")[0].partition(":")[0]
    return f"rules.{message}" if option in {f.name for f in fields(Rules)} else message


def _is_int(value: object, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def parse_option(text: str) -> tuple[str, object]:
    """Read ``name=value`` from a command line; values are JSON-ish (true, 3, [1,2], squares)."""
    name, sep, raw = text.partition("=")
    if not sep or not name.strip():
        raise RulesError(f"option {text!r} must look like name=value")
    try:
        value: object = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: brackets nested past the reader's depth
        value = raw
    return name.strip(), value
