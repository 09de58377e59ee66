"""``ohell bot check``: a short validation run of a local bot before it enters a ladder.

The bot plays a few games of several rule presets against built-in bots, through the wire as on
the platform (``arena.local.play``). Reported per preset: decisions, illegal answers, exceptions,
the bot's decision time (p50, p95) and its exact-bid rate next to the built-in bots' in the same
games. A bot passes with no illegal answer and no exception.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.local.play import SeatMaker, display_name, play_series, seat_maker
from arena.sdk.local import WireSeat, is_local_spec
from arena.sdk.session import Session
from ohell.bots import make_bot
from ohell.presets import preset
from ohell.rules import Rules

CHECK_PRESETS = ("classic", "classic-simultaneous", "river", "online")
OPPONENTS = ("heuristic", "random", "heuristic")


@dataclass
class PresetCheck:
    preset: str
    games: int = 0
    decisions: int = 0
    illegal: int = 0
    exceptions: int = 0
    timings: list[float] = field(default_factory=list)
    exact_rate: float = 0.0
    mean_score: float = 0.0
    opponents_exact: dict[str, float] = field(default_factory=dict)

    def percentile_ms(self, fraction: float) -> float:
        if not self.timings:
            return 0.0
        ordered = sorted(self.timings)
        return 1000 * ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


@dataclass
class CheckReport:
    bot: str
    presets: list[PresetCheck]

    @property
    def passed(self) -> bool:
        return all(p.illegal == 0 and p.exceptions == 0 for p in self.presets)


def check_bot(
    spec: str,
    games: int = 8,
    seed: int = 1,
    presets: Sequence[str] = CHECK_PRESETS,
    opponents: Sequence[str] = OPPONENTS,
    on_game: Callable[[str, int], None] | None = None,
) -> CheckReport:
    """Play ``games`` games of each preset with the bot ``spec`` (``path.py:Class``) and ``opponents``."""
    results = []
    checked = spec if is_local_spec(spec) else f"{spec} (checked)"  # apart from opponents of the same bot
    names = [checked, *opponents]
    for name in presets:
        result = PresetCheck(name, games=games)
        maker = checked_seat(spec, result.timings)

        def count(players: list[Any], seated: list[str], result: PresetCheck = result) -> None:
            for player in players:
                if isinstance(player, WireSeat):
                    result.decisions += player.decisions
                    result.illegal += player.session.illegal
                    result.exceptions += player.session.errors

        tally = play_series(
            preset(name),
            names,
            games,
            seed,
            on_game=progress(on_game, name),
            on_seats=count,
            makers={checked: maker},
        )
        mine = tally.bots[display_name(checked)]
        result.exact_rate, result.mean_score = mine.exact_rate, mine.mean_score
        result.opponents_exact = {bot: tally.bots[bot].exact_rate for bot in dict.fromkeys(opponents)}
        results.append(result)
    return CheckReport(display_name(spec), results)


def checked_seat(spec: str, timings: list[float]) -> SeatMaker:
    """The checked bot's seat: played through the wire, as on the platform, and timed; a built-in
    bot too (``ohell bot run`` enters it as an agent), not only a bot file."""
    if is_local_spec(spec):
        return seat_maker(spec, timings)
    seat_maker(spec)  # the usual error for an unknown name

    def wired(seed: int, rules: Rules, seat: int) -> WireSeat:
        bot = make_bot(spec, seed)
        return WireSeat(bot, rules, seat, Session(bot, timings))

    return wired


def progress(on_game: Callable[[str, int], None] | None, name: str) -> Callable[[int], None] | None:
    if on_game is None:
        return None
    return lambda done: on_game(name, done)
