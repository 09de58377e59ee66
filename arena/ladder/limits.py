"""Bounds on what a host may define: every ladder is checked against them before it is stored."""

from __future__ import annotations

import math
import re

from arena.ladder.model import Ladder
from arena.ladder.store import StoreError, shown
from arena.play.specs import builtin_bots
from ohell.bots import BOT_FACTORIES
from ohell.errors import OhHellError
from ohell.rules import under_rules
from ohell.schedule import hand_sizes

LADDER_NAME = re.compile(r"^[a-z0-9][a-z0-9_.]{0,63}$")  # no '-': match ids are "{ladder}-{n}"
LADDER_NAME_RULE = (
    "1-64 characters of a-z, 0-9, '_' and '.', the first a letter or digit (no '-': match ids are <ladder>-<n>)"
)
LADDER_ENTRIES = ("host", "open")
MAX_LADDERS = 50  # every ladder costs the forming loop a round trip per tick
# agents registered without the host token, in all: each caller's rate limit (services/matchmaker/server.py)
# does not bound many callers (a botnet, the /64s of one IPv6 /48) filling Redis and the agent list
MAX_SELF_REGISTERED = 10_000
MAX_SCHEDULE = 100  # hands per match (a classic game of 4 has 25)
MAX_HOUSE_BOTS = 5
MAX_WINDOW = 1000.0  # mu difference, and its widening per second
MAX_FILL_AFTER_S = 86_400.0
MAX_THINK_MS = 10_000


def check_ladder(ladder: Ladder) -> None:
    """Refuse a ladder definition that cannot be played or is out of bounds (StoreError naming
    the field): every number finite and bounded, a schedule of at most MAX_SCHEDULE hands."""
    if not LADDER_NAME.fullmatch(ladder.name):
        raise StoreError(f"name={shown(ladder.name)} must be {LADDER_NAME_RULE}", "name")
    if not 3 <= ladder.seats <= 7:
        raise StoreError(f"seats={ladder.seats} must be from 3 to 7", "seats")
    if ladder.entry not in LADDER_ENTRIES:
        raise StoreError(f"entry={ladder.entry!r} must be one of {', '.join(LADDER_ENTRIES)}", "entry")
    bounds = {
        "fill_after_seconds": (ladder.fill_after_s, MAX_FILL_AFTER_S),
        "base_window": (ladder.base_window, MAX_WINDOW),
        "widen_per_second": (ladder.widen_per_s, MAX_WINDOW),
        "think_ms": (ladder.think_ms, MAX_THINK_MS),
    }
    for field, (value, high) in bounds.items():
        if not (isinstance(value, int | float) and math.isfinite(value) and 0 <= value <= high):
            raise StoreError(f"{field}={value!r} must be a finite number from 0 to {high:g}", field)
    try:
        rules = ladder.rules()
        schedule = hand_sizes(rules, ladder.seats)
    except OhHellError as error:  # the rules do not fit the seats: said of the option at fault
        raise StoreError(under_rules(str(error)), "rules") from None
    if len(schedule) > MAX_SCHEDULE:
        raise StoreError(
            f"rules.hand_sizes: a schedule of {len(schedule)} hands is over {MAX_SCHEDULE}",
            "rules.hand_sizes",
        )
    if len(ladder.house_bots) > MAX_HOUSE_BOTS:
        raise StoreError(f"house_bots: at most {MAX_HOUSE_BOTS}", "house_bots")
    unknown = [bot for bot in ladder.house_bots if bot not in BOT_FACTORIES]
    if unknown:
        raise StoreError(f"house_bots: {shown(unknown[0])} is not a built-in bot ({builtin_bots()})", "house_bots")
    if ladder.house_fill and not ladder.house_bots:
        raise StoreError("house_fill needs at least one house bot", "house_bots")
