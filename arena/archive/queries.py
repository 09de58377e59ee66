"""Reading the archive: matches by ladder, agent and time (with agent names), one match with its
record, an agent's rating history, a ladder's matches for export or for rebuilding ratings.

Pages are keyset pages, newest first: a page ends with a ``cursor`` (finished time and match id of
its last row) that the next call passes as ``before``; no offset scans on a long history.
"""

from __future__ import annotations

import csv
import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import IO, Any

from sqlalchemy import BigInteger, Engine, Select, and_, func, or_, select, tuple_

from arena.archive.schema import match_records, match_seats, matches
from arena.archive.schema import rating_history as history
from arena.record_codec import unpack_record, unpack_record_json

MAX_PAGE = 500
COUNT_CAP = 10_000  # a list's total counts this many archived matches at most ('more than 10,000' past it)


@dataclass(frozen=True)
class Seat:
    """One seat of an archived match."""

    seat: int
    agent_id: str
    agent_name: str
    agent_version: str
    kind: str
    points: int
    hands: int
    bids_made: int
    faults: int
    winner: bool
    forfeited: bool


@dataclass(frozen=True)
class Match:
    """An archived match without its record."""

    match_id: str
    ladder: str
    log_id: str
    created_ms: int
    started_ms: int
    finished_ms: int
    attempts: int
    hands: int
    faults: int
    totals: list[int]
    winners: list[int]
    forfeited: list[int]
    rules: dict[str, Any]
    seats: list[Seat]

    @property
    def cursor(self) -> str:
        """Pass as ``before`` to get the page after this match."""
        return f"{self.finished_ms}:{self.match_id}"


@dataclass(frozen=True)
class RatingPoint:
    """An agent's rating before and after one match."""

    match_id: str
    finished_ms: int
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float

    @property
    def ordinal_after(self) -> float:
        return self.mu_after - 3 * self.sigma_after

    @property
    def cursor(self) -> str:
        """Pass as ``after`` to get the points after this one."""
        return f"{self.finished_ms}:{self.match_id}"


CURSOR_MS = re.compile(r"^[0-9]{1,18}$")


class BadCursor(ValueError):
    """A ``before`` cursor this module did not give."""


def _storable(*values: str) -> bool:
    """Whether a row can hold these values: no text in the archive has a NUL (PostgreSQL's cannot,
    and refuses a query with one: a caller's id holding one would read as the archive failing)."""
    return not any("\x00" in value for value in values)


def parse_cursor(cursor: str) -> tuple[int, str]:
    """(finished ms, match id) of a cursor "<ms>:<match id>"; BadCursor for any other text, also for
    digits a BIGINT cannot hold (the database would refuse them) or that are not ASCII ("²")."""
    finished, sep, match_id = cursor.partition(":")
    if not sep or not CURSOR_MS.fullmatch(finished) or not match_id or len(match_id) > 128 or not _storable(match_id):
        raise BadCursor(f"cursor {cursor[:80]!r} is not one the archive gave")
    return int(finished), match_id


def _keys(agent_id: str) -> Any:
    """The table whose columns the filters and the order use: an agent's seat rows when an agent is
    given (they copy the match's ladder and finished time, and their index on (agent_id, finished_ms)
    gives a page in order; ordering by the match's own column sorted every match the agent ever
    played, on each page, and counting them read every one of those matches), else the matches."""
    return match_seats.c if agent_id else matches.c


def _filtered(query: Select[Any], ladder: str, agent_id: str, since_ms: int, until_ms: int) -> Select[Any]:
    if agent_id:
        query = query.join(match_seats, match_seats.c.match_id == matches.c.match_id).where(
            match_seats.c.agent_id == agent_id
        )
    return _bounded(query, _keys(agent_id), ladder, since_ms, until_ms)


def _bounded(query: Select[Any], keys: Any, ladder: str, since_ms: int, until_ms: int) -> Select[Any]:
    if ladder:
        query = query.where(keys.ladder == ladder)
    if since_ms:
        query = query.where(keys.finished_ms >= since_ms)
    if until_ms:
        query = query.where(keys.finished_ms < until_ms)
    return query


def list_matches(
    engine: Engine,
    ladder: str = "",
    agent_id: str = "",
    since_ms: int = 0,
    until_ms: int = 0,
    limit: int = 50,
    before: str = "",
) -> list[Match]:
    """Archived matches, newest first: of ``ladder`` and/or ``agent_id`` (empty = any), finished at
    or after ``since_ms`` and before ``until_ms`` (0 = no bound), after the cursor ``before``."""
    limit = max(1, min(limit, MAX_PAGE))
    cursor = parse_cursor(before) if before else None
    if not _storable(ladder, agent_id):
        return []
    query = _filtered(select(matches), ladder, agent_id, since_ms, until_ms)
    keys = _keys(agent_id)
    if cursor is not None:
        finished, match_id = cursor
        query = query.where(
            or_(keys.finished_ms < finished, and_(keys.finished_ms == finished, keys.match_id < match_id))
        )
    query = query.order_by(keys.finished_ms.desc(), keys.match_id.desc()).limit(limit)
    with engine.connect() as connection:
        found = connection.execute(query).mappings().all()
        seats = _seats(connection, [row["match_id"] for row in found])
    return [_match(row, seats.get(row["match_id"], [])) for row in found]


def get_match(engine: Engine, match_id: str) -> Match | None:
    """One archived match, or None."""
    if not _storable(match_id):
        return None
    with engine.connect() as connection:
        row = connection.execute(select(matches).where(matches.c.match_id == match_id)).mappings().first()
        if row is None:
            return None
        return _match(row, _seats(connection, [match_id]).get(match_id, []))


def get_record(engine: Engine, match_id: str) -> dict[str, Any] | None:
    """The match record (docs/record.md) of an archived match, or None."""
    blob = _record_blob(engine, match_id)
    return None if blob is None else unpack_record(blob)


def get_record_json(engine: Engine, match_id: str) -> str | None:
    """``get_record`` as the JSON text the archive holds, or None."""
    blob = _record_blob(engine, match_id)
    return None if blob is None else unpack_record_json(blob)


def _record_blob(engine: Engine, match_id: str) -> bytes | None:
    if not _storable(match_id):
        return None
    with engine.connect() as connection:
        blob = connection.execute(
            select(match_records.c.record).where(match_records.c.match_id == match_id)
        ).scalar_one_or_none()
    return None if blob is None else bytes(blob)


def archived(engine: Engine, match_ids: list[str]) -> set[str]:
    """Which of ``match_ids`` the archive holds."""
    match_ids = [match_id for match_id in match_ids if _storable(match_id)]
    if not match_ids:
        return set()
    with engine.connect() as connection:
        return set(connection.execute(select(matches.c.match_id).where(matches.c.match_id.in_(match_ids))).scalars())


def highest_match_number(engine: Engine) -> int:
    """The highest <n> of the archived match ids "<ladder>-<n>" (0: none): the ladder's match counter
    must stay at least this high, or it hands out an id the archive holds."""
    number = func.substr(matches.c.match_id, func.length(matches.c.ladder) + 2)
    with engine.connect() as connection:
        return int(connection.execute(select(func.max(func.cast(number, BigInteger)))).scalar() or 0)


def count_matches(
    engine: Engine,
    ladder: str = "",
    agent_id: str = "",
    since_ms: int = 0,
    until_ms: int = 0,
    cap: int | None = None,
) -> int:
    """How many archived matches ``list_matches`` pages through with the same filters; with ``cap``,
    counted only up to ``cap + 1`` (a public list's count: it read every row the filters select on
    each page, 7-9 ms at 300,000 matches)."""
    if not _storable(ladder, agent_id):
        return 0
    if agent_id:  # its seat rows alone: one per match, and the index holds what they are filtered by
        rows = _bounded(select(match_seats.c.match_id), match_seats.c, ladder, since_ms, until_ms)
        rows = rows.where(match_seats.c.agent_id == agent_id)
    else:
        rows = _filtered(select(matches.c.match_id), ladder, agent_id, since_ms, until_ms)
    if cap is not None:
        rows = rows.limit(cap + 1)
    query = select(func.count()).select_from(rows.subquery())
    with engine.connect() as connection:
        return int(connection.execute(query).scalar_one())


def rating_history(
    engine: Engine,
    ladder: str,
    agent_id: str,
    since_ms: int = 0,
    limit: int = MAX_PAGE,
    after: str = "",
    newest_first: bool = False,
) -> list[RatingPoint]:
    """The agent's rating before and after each of its archived matches on ``ladder``, oldest
    first (newest first with ``newest_first``), from ``since_ms`` on, after the cursor ``after`` (a
    point's ``cursor``) in that order, at most ``limit`` (up to 5000) points."""
    limit = max(1, min(limit, 10 * MAX_PAGE))
    cursor = parse_cursor(after) if after else None
    if not _storable(ladder, agent_id):
        return []
    query = select(history).where(
        history.c.ladder == ladder,
        history.c.agent_id == agent_id,
        history.c.finished_ms >= since_ms,
    )
    if cursor is not None:
        finished, match_id = cursor
        if newest_first:
            later = or_(
                history.c.finished_ms < finished,
                and_(history.c.finished_ms == finished, history.c.match_id < match_id),
            )
        else:
            later = or_(
                history.c.finished_ms > finished,
                and_(history.c.finished_ms == finished, history.c.match_id > match_id),
            )
        query = query.where(later)
    order = (
        (history.c.finished_ms.desc(), history.c.match_id.desc())
        if newest_first
        else (history.c.finished_ms, history.c.match_id)
    )
    query = query.order_by(*order).limit(limit)
    with engine.connect() as connection:
        return [
            RatingPoint(
                r["match_id"], r["finished_ms"], r["mu_before"], r["sigma_before"], r["mu_after"], r["sigma_after"]
            )
            for r in connection.execute(query).mappings()
        ]


def in_log_order(engine: Engine, ladder: str, batch: int = 1000) -> Iterator[Match]:
    """Every archived match of ``ladder`` in rating-log order (the order ratings were applied)."""
    position: tuple[int, int] | None = None
    while True:
        query = select(matches).where(matches.c.ladder == ladder)
        if position is not None:
            query = query.where(tuple_(matches.c.log_ms, matches.c.log_seq) > tuple_(*position))
        query = query.order_by(matches.c.log_ms, matches.c.log_seq).limit(batch)
        with engine.connect() as connection:
            found = connection.execute(query).mappings().all()
            seats = _seats(connection, [row["match_id"] for row in found])
        if not found:
            return
        for row in found:
            yield _match(row, seats.get(row["match_id"], []))
        position = (found[-1]["log_ms"], found[-1]["log_seq"])


def summary(match: Match) -> dict[str, Any]:
    """The match as a rating-log summary (``arena.ladder.matchlog.summarize``'s shape)."""
    return {
        "match_id": match.match_id,
        "ladder": match.ladder,
        "agents": [seat.agent_id for seat in match.seats],
        "totals": match.totals,
        "winners": match.winners,
        "forfeited": match.forfeited,
        "hands": [seat.hands for seat in match.seats],
        "exact": [seat.bids_made for seat in match.seats],
        "faults": [seat.faults for seat in match.seats],
    }


def export_jsonl(engine: Engine, ladder: str, out: IO[str]) -> int:
    """Write one match record (JSON) per line, in log order; returns matches written."""
    written = 0
    for match in in_log_order(engine, ladder):
        record = get_record(engine, match.match_id)
        out.write(json.dumps(record, separators=(",", ":")) + "\n")
        written += 1
    return written


CSV_COLUMNS: tuple[str, ...] = ("match_id", "finished_ms", "seat", "agent_id", "agent_name", "agent_version")
CSV_COLUMNS += ("points", "bids_made", "hands", "faults", "winner", "forfeited")


def export_csv(engine: Engine, ladder: str, out: IO[str]) -> int:
    """Write one CSV row per seat of each match (results, no records), in log order; returns matches."""
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    written = 0
    for match in in_log_order(engine, ladder):
        for seat in match.seats:
            row = asdict(seat) | {"match_id": match.match_id, "finished_ms": match.finished_ms}
            writer.writerow([int(row[c]) if isinstance(row[c], bool) else row[c] for c in CSV_COLUMNS])
        written += 1
    return written


def _seats(connection: Any, match_ids: list[str]) -> dict[str, list[Seat]]:
    if not match_ids:
        return {}
    out: dict[str, list[Seat]] = {}
    query = select(match_seats).where(match_seats.c.match_id.in_(match_ids)).order_by(match_seats.c.seat)
    for r in connection.execute(query).mappings():
        out.setdefault(r["match_id"], []).append(
            Seat(
                r["seat"],
                r["agent_id"],
                r["agent_name"],
                r["agent_version"],
                r["kind"],
                r["points"],
                r["hands"],
                r["bids_made"],
                r["faults"],
                bool(r["winner"]),
                bool(r["forfeited"]),
            )
        )
    return out


def _match(row: Any, seats: list[Seat]) -> Match:
    return Match(
        row["match_id"],
        row["ladder"],
        row["log_id"],
        row["created_ms"],
        row["started_ms"],
        row["finished_ms"],
        row["attempts"],
        row["hands"],
        row["faults"],
        json.loads(row["totals"]),
        json.loads(row["winners"]),
        json.loads(row["forfeited"]),
        json.loads(row["rules"]),
        seats,
    )
