"""Plain values the matchmaker store reads and writes (no I/O here)."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from arena.play.specs import SEAT_KINDS, SeatSpec
from ohell.presets import preset
from ohell.rules import Rules

AGENT_KINDS = SEAT_KINDS
HOUSE_PREFIX = "house-"  # the house bots' names: "house-<bot>-<n>" (a ladder finds its house bots by name)
AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# the whole rule, as every refusal of a name and the docs say it (docs/operations.md, "Host commands")
AGENT_NAME_RULE = (
    "1-64 characters of ASCII letters, digits, '_', '.' and '-', the first a letter or digit, "
    f"not starting {HOUSE_PREFIX!r} (kept for the ladders' house bots)"
)
# Letters a name may be mistaken for in the web app's sans-serif and a terminal's font: names equal
# but for them are one name ('aIice' passed for 'alice' on a leaderboard). scripts.NAME folds the
# same way in Lua (for the names taken before the index): keep the two in step.
LOOK_ALIKE_PAIRS = (("rn", "m"), ("vv", "w"))
LOOK_ALIKE_LETTERS = str.maketrans({"0": "o", "1": "l", "i": "l"})  # after lower case: I, i, l and 1 are one


def name_skeleton(name: str) -> str:
    """``name`` as it may be read: lower case, look-alike letters folded (``aIice``, ``a1ice`` -> ``allce``)."""
    folded = name.lower()
    for pair, letter in LOOK_ALIKE_PAIRS:
        folded = folded.replace(pair, letter)
    return folded.translate(LOOK_ALIKE_LETTERS)


@dataclass(frozen=True)
class Agent:
    agent_id: str
    name: str
    kind: str  # builtin | connected | endpoint
    version: str = ""
    bot: str = ""  # built-in bot name when kind == "builtin"
    endpoint: str = ""  # host:port of an endpoint agent
    house: bool = False  # a house bot that fills tables
    created_ms: int = 0
    self_registered: bool = False  # registered without the host token: enters only open ladders
    dial_token: str = ""  # an endpoint agent's token, presented to its endpoint (never shown)
    revoked: bool = False  # its token was revoked (none works) until the host rotates it
    revoked_ms: int = 0  # when, if recorded (agents revoked before revision 11 have no time)

    def seat_spec(self) -> SeatSpec:
        """How the match host must seat this agent (stored with each match)."""
        return SeatSpec(
            self.kind,
            self.name,
            bot=self.bot,
            agent_id=self.agent_id,
            address=self.endpoint,
            token=self.dial_token,
            version=self.version,
            house=self.house,
        )


@dataclass(frozen=True)
class Ladder:
    name: str
    preset: str = "classic"
    overrides: dict[str, Any] = field(default_factory=dict)  # rule options over the preset
    seats: int = 4
    house_fill: bool = False
    fill_after_s: float = 5.0
    house_bots: tuple[str, ...] = ()  # built-in bot names used as house agents
    base_window: float = 5.0
    widen_per_s: float = 2.0
    think_ms: int = 0  # built-in seats pause this long per decision (for spectators and tests)
    entry: str = "host"  # who may queue: "host" (host-registered agents) or "open" (also self-registered)
    paused: bool = False  # no tables are formed while paused

    def rules(self) -> Rules:
        base = preset(self.preset) if self.preset else Rules()
        return Rules.from_dict(self.overrides, base=base) if self.overrides else base

    def to_json(self) -> str:
        data = asdict(self)
        data["house_bots"] = list(self.house_bots)
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes) -> Ladder:
        data = json.loads(text)
        data["house_bots"] = tuple(data.get("house_bots", ()))
        return cls(**data)


@dataclass(frozen=True)
class MatchInfo:
    match_id: str
    ladder: str
    state: str  # queued | running | finished | failed
    seats: list[SeatSpec]
    queue: str
    created_ms: int
    started_ms: int = 0
    finished_ms: int = 0
    attempts: int = 0
    log_id: str = ""
    error: str = ""
    seed: int = 0  # secret until the match is finished (then in its record); never sent before
    totals: tuple[int, ...] = ()  # once finished (from its log summary, while Redis holds the match)
    winners: tuple[int, ...] = ()
    faults: tuple[int, ...] = ()  # by seat, likewise
    # What the match is played with, stored with its claim ('' / 0: claimed before they were; its
    # ladder's definition then says): an UpdateLadder after the claim changes neither.
    rules_json: str = ""
    think_ms: int = 0


@dataclass(frozen=True)
class Standing:
    """One agent on one ladder: rating and what it did."""

    agent_id: str
    name: str
    mu: float
    sigma: float
    games: int = 0
    hands: int = 0
    exact: int = 0
    faults: int = 0
    forfeits: int = 0
    wins: float = 0.0
    points: int = 0
    rank: int = 0  # 1-based place on the leaderboard (0 = not ranked yet)

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma

    @property
    def exact_rate(self) -> float:
        return self.exact / self.hands if self.hands else 0.0
