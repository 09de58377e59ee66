"""Writing finished matches to the archive, exactly once: the match id is the key.

``write`` inserts a batch in one transaction (select-then-insert, PostgreSQL and SQLite alike); a
match already archived is skipped whole (its seats, record and rating history were written with
it). Calling it again with the same matches changes nothing. A *different* match under an id the
archive holds (Redis lost its match counter, which then handed the id out again) is refused: neither
written nor taken for archived, and reported in ``Written.conflicts``; the archived one stays as it is.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Engine, Table, select
from sqlalchemy.exc import IntegrityError

from arena.archive.db import WRITE
from arena.archive.schema import match_records, match_seats, matches, rating_history
from arena.record_codec import unpack_record

# The ladder compresses records when a match finishes (Redis keeps them compressed until archived),
# so archiving copies the bytes as they are.


@dataclass(frozen=True)
class SeatResult:
    """One seat of a finished match; ``rating`` = (mu before, sigma before, mu after, sigma after)."""

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
    rating: tuple[float, float, float, float] | None = None


@dataclass(frozen=True)
class FinishedMatch:
    """Everything the archive keeps of one match. ``record_zlib`` is the record's JSON compressed with
    zlib (``arena.record_codec.pack_record``), ``record_bytes`` the JSON's length; ``hands`` counts the hands
    played, sudden death aside."""

    match_id: str
    ladder: str
    log_id: str
    created_ms: int
    started_ms: int
    finished_ms: int
    attempts: int
    record_zlib: bytes
    record_bytes: int
    rules: dict[str, Any]
    hands: int
    seats: list[SeatResult] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        return unpack_record(self.record_zlib)


def rows(match: FinishedMatch, archived_ms: int) -> dict[str, list[dict[str, Any]]]:
    """The rows of one match, by table name."""
    log_ms, _, log_seq = match.log_id.partition("-")
    faults = sum(seat.faults for seat in match.seats)
    common = {"match_id": match.match_id, "ladder": match.ladder, "finished_ms": match.finished_ms}
    return {
        "matches": [
            {
                **common,
                "log_id": match.log_id,
                "log_ms": int(log_ms or 0),
                "log_seq": int(log_seq or 0),
                "rules": json.dumps(match.rules, sort_keys=True, separators=(",", ":")),
                "seats": len(match.seats),
                "created_ms": match.created_ms,
                "started_ms": match.started_ms,
                "attempts": match.attempts,
                "hands": match.hands,
                "totals": json.dumps([seat.points for seat in match.seats]),
                "winners": json.dumps([i for i, seat in enumerate(match.seats) if seat.winner]),
                "forfeited": json.dumps([i for i, seat in enumerate(match.seats) if seat.forfeited]),
                "faults": faults,
                "archived_ms": archived_ms,
            }
        ],
        "match_seats": [
            {
                **common,
                "seat": index,
                "agent_id": seat.agent_id,
                "agent_name": seat.agent_name,
                "agent_version": seat.agent_version,
                "kind": seat.kind,
                "points": seat.points,
                "hands": seat.hands,
                "bids_made": seat.bids_made,
                "faults": seat.faults,
                "winner": seat.winner,
                "forfeited": seat.forfeited,
            }
            for index, seat in enumerate(match.seats)
        ],
        "match_records": [{"match_id": match.match_id, "record": match.record_zlib, "raw_bytes": match.record_bytes}],
        "rating_history": [
            {
                **common,
                "agent_id": seat.agent_id,
                "mu_before": seat.rating[0],
                "sigma_before": seat.rating[1],
                "mu_after": seat.rating[2],
                "sigma_after": seat.rating[3],
            }
            for seat in match.seats
            if seat.rating is not None
        ],
    }


@dataclass(frozen=True)
class Written:
    """What ``write`` did: ``inserted`` the ids archived now; ``conflicts`` the ids of matches refused
    because the archive holds another match under the same id (same id, another ladder, log position
    or creation time). The ids of matches archived before are in neither."""

    inserted: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)


TABLES: dict[str, Table] = {table.name: table for table in (matches, match_seats, match_records, rating_history)}


def write(engine: Engine, batch: Sequence[FinishedMatch], attempts: int = 3) -> Written:
    """Archive ``batch``: the ids archived now, and those refused as another match's (see ``Written``).

    Select-then-insert in one transaction: the matches already archived are left out, the rest
    go in with plain batched INSERTs (the driver's executemany; psycopg pipelines them). A writer
    racing this one with the same matches makes one of the two transactions hit a primary key and
    roll back whole; it then runs again and finds them archived. Nothing is stored twice."""
    if not batch:
        return Written()
    for attempt in range(attempts):
        try:
            return _write_once(engine, batch)
        except IntegrityError:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


def _write_once(engine: Engine, batch: Sequence[FinishedMatch]) -> Written:
    now = int(time.time() * 1000)
    with engine.connect() as connection, connection.execution_options(**{WRITE: True}).begin():
        ids = [match.match_id for match in batch]
        identity = (matches.c.match_id, matches.c.ladder, matches.c.log_id, matches.c.created_ms)
        known = {
            row[0]: tuple(row[1:]) for row in connection.execute(select(*identity).where(matches.c.match_id.in_(ids)))
        }
        new = [match for match in batch if match.match_id not in known]
        conflicts = [
            match.match_id for match in batch if known.get(match.match_id, _identity(match)) != _identity(match)
        ]
        built = [rows(match, now) for match in new]
        for name, table in TABLES.items():  # parents first
            columns = table.c.keys()
            values = [tuple(row[c] for c in columns) for match_rows in built for row in match_rows[name]]
            if values:
                connection.exec_driver_sql(_insert(connection, name, columns), values)
    return Written([match.match_id for match in new], conflicts)


def _identity(match: FinishedMatch) -> tuple[str, str, int]:
    """What tells two matches of one id apart: a match archived again has the same; the next match
    given a reused id was created later and logged at another position."""
    return (match.ladder, match.log_id, match.created_ms)


def _insert(connection: Connection, table: str, columns: list[str]) -> str:
    """A plain INSERT in the driver's parameter style."""
    marker = "%s" if connection.dialect.paramstyle in ("format", "pyformat") else "?"
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join([marker] * len(columns))})"
