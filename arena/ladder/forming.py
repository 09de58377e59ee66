"""Table forming: pure, deterministic, no I/O.

Given the tickets waiting on one ladder, pick tables of ``seats`` agents of close rating:

- anchors are taken in priority order: fewest games first, then longest wait;
- an anchor is seated with waiting agents near its rating (of the nearest within window, those
  with the fewest games); two agents may share a table when
  their ratings differ by at most the wider of their two windows, and a window widens with
  waiting time (``base_window + widen_per_s * waited``, capped at ``max_window``);
- when too few agents are close enough and house fill is on, an anchor that has waited
  ``fill_after_s`` gets the nearest-rated house bots (distinct per table) in the empty seats.

House bots are in-process built-ins and may sit at several tables at once; queued agents never.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Ticket:
    agent_id: str
    mu: float
    games: int
    waited_s: float


@dataclass(frozen=True)
class HouseBot:
    agent_id: str
    mu: float


@dataclass(frozen=True)
class FormingPolicy:
    seats: int
    base_window: float = 5.0  # in OpenSkill mu units (a new agent has mu 25, sigma 8.33)
    widen_per_s: float = 2.0
    max_window: float = 50.0
    house_fill: bool = False
    fill_after_s: float = 5.0

    def __post_init__(self) -> None:
        if not 3 <= self.seats <= 7:
            raise ValueError(f"seats={self.seats} must be from 3 to 7")
        if self.base_window < 0 or self.widen_per_s < 0 or self.max_window < self.base_window:
            raise ValueError("windows must satisfy 0 <= base_window <= max_window, widen_per_s >= 0")
        if self.fill_after_s < 0:
            raise ValueError(f"fill_after_s={self.fill_after_s} must be >= 0")

    def window(self, waited_s: float) -> float:
        return min(self.max_window, self.base_window + self.widen_per_s * max(0.0, waited_s))


@dataclass(frozen=True)
class Table:
    agents: tuple[str, ...]  # queued agents, anchor first
    house: tuple[str, ...] = ()  # house bots filling the other seats

    @property
    def seated(self) -> tuple[str, ...]:
        return self.agents + self.house


class _Skipper:
    """Nearest unseated index at or left/right of a position (union-find, path halving)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._right = list(range(size + 1))  # sentinel ``size`` = none to the right
        self._left = list(range(size + 1))  # shifted by one: sentinel 0 = none to the left
        self._taken = [False] * size

    def taken(self, index: int) -> bool:
        return self._taken[index]

    def remove(self, index: int) -> None:
        self._taken[index] = True
        self._right[index] = index + 1
        self._left[index + 1] = index

    def at_or_right(self, index: int) -> int:
        parent = self._right
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    def at_or_left(self, index: int) -> int:
        parent, shifted = self._left, index + 1
        while parent[shifted] != shifted:
            parent[shifted] = parent[parent[shifted]]
            shifted = parent[shifted]
        return shifted - 1


def form_tables(tickets: Sequence[Ticket], policy: FormingPolicy, house: Sequence[HouseBot] = ()) -> list[Table]:
    """Tables to form now; tickets not placed keep waiting. Deterministic for equal input."""
    by_rating = sorted(tickets, key=lambda t: (t.mu, t.agent_id))
    position = {t.agent_id: i for i, t in enumerate(by_rating)}
    mus = [t.mu for t in by_rating]
    windows = [policy.window(t.waited_s) for t in by_rating]
    widest = max(windows, default=0.0)
    skip = _Skipper(len(by_rating))
    tables: list[Table] = []
    need = policy.seats - 1
    for anchor in sorted(tickets, key=lambda t: (t.games, -t.waited_s, t.agent_id)):
        at = position[anchor.agent_id]
        if skip.taken(at):
            continue
        nearest = _nearest_mates(at, 2 * need, mus, windows, widest, skip)
        # everyone found is within window; of those, fewest games first, then closest rating
        mates = sorted(nearest, key=lambda i: (by_rating[i].games, abs(mus[i] - mus[at]), i))[:need]
        if len(mates) == need:
            chosen = mates
            fill: tuple[str, ...] = ()
        elif policy.house_fill and anchor.waited_s >= policy.fill_after_s and len(house) >= need - len(mates):
            chosen = mates
            fill = _nearest_house(anchor.mu, need - len(mates), house)
        else:
            continue
        for index in (at, *chosen):
            skip.remove(index)
        tables.append(Table((anchor.agent_id, *(by_rating[i].agent_id for i in chosen)), fill))
    return tables


def _nearest_mates(
    at: int, need: int, mus: list[float], windows: list[float], widest: float, skip: _Skipper
) -> list[int]:
    """Up to ``need`` unseated indices nearest in rating to ``at`` that are within window."""
    limit = max(windows[at], widest)
    found: list[int] = []
    left, right = skip.at_or_left(at - 1), skip.at_or_right(at + 1)
    while len(found) < need:
        gap_left = mus[at] - mus[left] if left >= 0 else None
        gap_right = mus[right] - mus[at] if right < len(mus) else None
        if gap_left is not None and gap_left > limit:
            gap_left = None
        if gap_right is not None and gap_right > limit:
            gap_right = None
        if gap_left is None and gap_right is None:
            break
        take_left = gap_right is None or (gap_left is not None and gap_left <= gap_right)
        index, gap = (left, gap_left) if take_left else (right, gap_right)
        if gap is not None and gap <= max(windows[at], windows[index]):
            found.append(index)
        if take_left:
            left = skip.at_or_left(left - 1)
        else:
            right = skip.at_or_right(right + 1)
    return found


def _nearest_house(mu: float, count: int, house: Sequence[HouseBot]) -> tuple[str, ...]:
    ranked = sorted(house, key=lambda bot: (abs(bot.mu - mu), bot.agent_id))
    return tuple(bot.agent_id for bot in ranked[:count])
