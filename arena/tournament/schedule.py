"""Who meets whom: the tables of a round robin and of Swiss rounds (entrants as indices 0..n-1).

Round robin: every combination of ``seats`` entrants is a table when there are at most
``max_tables`` of them; otherwise a balanced design: the fewest tables with which every entrant
plays equally often and every pair can meet, filled greedily then improved by exchanging entrants
between tables until the numbers of meetings of any two pairs differ by at most one (when that
is reachable: it is for 9/3, 12/4, 13/4, 16/4, not for 15/6 or 30/7, where the search stops
after a fixed number of steps with a spread of 2 or 3). Everything is deterministic: the same
arguments give the same schedule.

Swiss: each round groups the entrants by current standing, best first, into tables as equal in
size as the field allows.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Sequence

from ohell.rules import MAX_PLAYERS, MIN_PLAYERS

MAX_ALL_COMBINATIONS = 60

Table = tuple[int, ...]


class ScheduleError(ValueError):
    """A field that cannot be scheduled; the text names the value."""


def check_field(entrants: int, seats: int) -> None:
    if not MIN_PLAYERS <= seats <= MAX_PLAYERS:
        raise ScheduleError(f"seats: {seats} must be from {MIN_PLAYERS} to {MAX_PLAYERS}")
    if entrants < seats:
        raise ScheduleError(f"seats: {entrants} entrants cannot fill a table of {seats} seats")


def round_robin(entrants: int, seats: int, max_tables: int = MAX_ALL_COMBINATIONS) -> list[Table]:
    check_field(entrants, seats)
    if round_robin_size(entrants, seats, max_tables) == math.comb(entrants, seats):
        return list(itertools.combinations(range(entrants), seats))
    return balanced_design(entrants, seats)


def round_robin_size(entrants: int, seats: int, max_tables: int = MAX_ALL_COMBINATIONS) -> int:
    """How many tables ``round_robin`` makes, without making them."""
    combinations = math.comb(entrants, seats)
    return combinations if combinations <= max_tables else design_size(entrants, seats)


def design_size(entrants: int, seats: int) -> int:
    """The fewest tables with equal appearances per entrant and room for every pair to meet."""
    tables = math.ceil(math.comb(entrants, 2) / math.comb(seats, 2))
    while tables * seats % entrants:
        tables += 1
    return tables


def pair_counts(entrants: int, tables: Sequence[Table]) -> dict[tuple[int, int], int]:
    counts = dict.fromkeys(itertools.combinations(range(entrants), 2), 0)
    for table in tables:
        for pair in itertools.combinations(sorted(table), 2):
            counts[pair] += 1
    return counts


def balanced_design(entrants: int, seats: int, tables: int | None = None) -> list[Table]:
    check_field(entrants, seats)
    count = tables or design_size(entrants, seats)
    meet = [[0] * entrants for _ in range(entrants)]
    played = [0] * entrants
    built: list[list[int]] = []
    for number in range(count):
        first = min(range(entrants), key=lambda e: (played[e], (e - number) % entrants))
        table = [first]
        while len(table) < seats:
            rest = (e for e in range(entrants) if e not in table)
            table.append(min(rest, key=lambda e: (played[e], sum(meet[e][g] for g in table), (e - number) % entrants)))
        for a, b in itertools.combinations(table, 2):
            meet[a][b] += 1
            meet[b][a] += 1
        for e in table:
            played[e] += 1
        built.append(table)
    _improve(built, meet)
    return [tuple(sorted(table)) for table in built]


def _improve(tables: list[list[int]], meet: list[list[int]], steps: int = 100_000) -> None:
    """Exchange entrants between two tables (appearances stay equal) while the sum of squared
    pair counts does not rise, until pair counts differ by at most one. Moves that keep the sum
    let the search cross plateaus; a fixed seed keeps it deterministic."""
    rng = random.Random(len(meet) * 100 + len(tables[0]))
    # how many pairs met how often, kept up to date by ``move``: the spread without reading every pair
    pairs = Counter(meet[a][b] for a, b in itertools.combinations(range(len(meet)), 2))

    def spread() -> int:
        counts = [count for count, number in pairs.items() if number]
        return max(counts) - min(counts)

    def meet_more(a: int, b: int, by: int) -> None:
        pairs[meet[a][b]] -= 1
        meet[a][b] += by
        meet[b][a] += by
        pairs[meet[a][b]] += 1

    def change(x: int, y: int, table: list[int]) -> int:
        """Squares added when x leaves ``table`` and y takes its place."""
        delta = 0
        for g in table:
            if g != x:
                delta += 2 * (meet[y][g] - meet[x][g]) + 2
        return delta

    def move(x: int, y: int, table: list[int]) -> None:
        for g in table:
            if g != x:
                meet_more(x, g, -1)
                meet_more(y, g, 1)

    if len(tables) < 2 or spread() <= 1:
        return
    for _ in range(steps):
        one, two = rng.sample(tables, 2)
        i, j = rng.randrange(len(one)), rng.randrange(len(two))
        x, y = one[i], two[j]
        if x in two or y in one:
            continue
        rise = change(x, y, one) + change(y, x, two)
        if rise > 0:
            continue
        move(x, y, one)
        move(y, x, two)
        one[i], two[j] = y, x
        if spread() <= 1:
            return


def table_sizes(entrants: int, seats: int) -> list[int]:
    """Split a field into tables of at most ``seats``, as equal as possible, none below the minimum."""
    check_field(entrants, seats)
    count = math.ceil(entrants / seats)
    sizes = [entrants // count + (1 if index < entrants % count else 0) for index in range(count)]
    if min(sizes) < MIN_PLAYERS:
        sizes_text = f"{seats}" if seats == MIN_PLAYERS else f"{MIN_PLAYERS} to {seats}"
        raise ScheduleError(f"{entrants} entrants cannot be split into tables of {sizes_text} seats")
    return sizes


def swiss_round(standing: Sequence[int], seats: int) -> list[Table]:
    """One Swiss round: ``standing`` lists the entrants best first; neighbours share a table."""
    tables, start = [], 0
    for size in table_sizes(len(standing), seats):
        tables.append(tuple(standing[start : start + size]))
        start += size
    return tables
