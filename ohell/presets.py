"""Named rule sets: each rule document's profile and its variations.

``classic`` is seed 000, ``river*`` seed 003 (1 up to a full deal and back), ``online*`` seed 004
(an online site's settings). ``docs/rules.md`` lists them with their sources.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ohell.errors import RulesError
from ohell.rules import Bidding, Direction, MaxCards, Rules, Scoring, TieBreak, parse_option

CLASSIC = Rules(
    direction=Direction.DOWN, rebound=True, min_cards=1, max_cards_auto=MaxCards.CLASSIC,
    hook=True, bidding=Bidding.SEQUENTIAL, bid_changes=True, scoring=Scoring.EXACT,
    tie_break=TieBreak.SHARE,
)  # fmt: skip

RIVER = Rules(
    direction=Direction.UP, rebound=True, min_cards=1, max_cards_auto=MaxCards.DECK,
    hook=True, bidding=Bidding.SEQUENTIAL, scoring=Scoring.EXACT, tie_break=TieBreak.SHARE,
)  # fmt: skip

ONLINE = Rules(
    direction=Direction.DOWN, rebound=True, min_cards=1, max_cards_auto=MaxCards.CLASSIC,
    hook=True, bidding=Bidding.SEQUENTIAL, scoring=Scoring.POSITIVE, tie_break=TieBreak.SHARE,
)  # fmt: skip

PRESETS: dict[str, Rules] = {
    "classic": CLASSIC,
    "classic-simultaneous": replace(CLASSIC, bidding=Bidding.BLIND, bid_changes=False),
    "river": RIVER,
    "river-blackout": replace(RIVER, rebound=False),
    "river-no-trump-thirds": replace(RIVER, no_trump_every=3),
    "river-blind": replace(RIVER, bidding=Bidding.BLIND),
    "river-contract-whist": replace(RIVER, scoring=Scoring.CONTRACT_WHIST),
    "river-consolation": replace(RIVER, scoring=Scoring.CONSOLATION),
    "river-sudden-death": replace(RIVER, tie_break=TieBreak.SUDDEN_DEATH),
    "online": ONLINE,
    "online-no-hook": replace(ONLINE, hook=False),
    "online-min3": replace(ONLINE, min_cards=3),
    "online-up": replace(ONLINE, direction=Direction.UP),
    "online-no-rebound": replace(ONLINE, rebound=False),
    "online-vienna": replace(ONLINE, vienna=True),
}
for _method in Scoring:
    if _method not in (Scoring.CONTRACT_WHIST, Scoring.CONSOLATION):
        PRESETS[f"online-{_method.value.replace('_', '-')}"] = replace(ONLINE, scoring=_method)
        if _method is not Scoring.ANDERSON:
            PRESETS[f"online-{_method.value.replace('_', '-')}-vienna"] = replace(ONLINE, scoring=_method, vienna=True)
PRESETS["online-blackout"] = PRESETS.pop("online-exact")  # 004 calls exact scoring "Blackout"
PRESETS["online-blackout-vienna"] = PRESETS.pop("online-exact-vienna")


def preset(name: str) -> Rules:
    try:
        return PRESETS[name]
    except KeyError:
        raise RulesError(f"unknown preset {name!r}; known: {', '.join(sorted(PRESETS))}") from None


def preset_with_options(name: str, options: Iterable[str] = ()) -> Rules:
    """A preset with ``name=value`` overrides (``ohell play --option``), e.g. ``scoring=squares``."""
    overrides = dict(parse_option(text) for text in options)
    return Rules.from_dict(overrides, base=preset(name)) if overrides else preset(name)


def preset_name(rules: Rules) -> str | None:
    """The name of a preset equal to ``rules``, if any."""
    return next((name for name, value in PRESETS.items() if value == rules), None)
