"""Writing finished matches to the archive, exactly once: the match id is the key.

``write`` inserts a batch in one transaction with INSERT ... ON CONFLICT DO NOTHING (PostgreSQL and
SQLite alike); a match already archived is skipped whole (its seats, record and rating history
were written with it). Calling it again with the same matches changes nothing.
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, Engine, Table
from sqlalchemy.dialects import postgresql, sqlite

from arena.archive.schema import match_records, match_seats, matches, rating_history

COMPRESSION = 6  # zlib level: a 25 KB record shrinks to ~3 KB


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
    """Everything the archive keeps of one match. ``record_json`` is the record as stored in Redis."""

    match_id: str
    ladder: str
    log_id: str
    created_ms: int
    started_ms: int
    finished_ms: int
    attempts: int
    record_json: str | bytes
    seats: list[SeatResult] = field(default_factory=list)

    def record(self) -> dict[str, Any]:
        return dict(json.loads(self.record_json))


def rows(match: FinishedMatch, archived_ms: int) -> dict[str, list[dict[str, Any]]]:
    """The rows of one match, by table name."""
    record = match.record()
    raw = match.record_json.encode() if isinstance(match.record_json, str) else match.record_json
    log_ms, _, log_seq = match.log_id.partition("-")
    hands = sum(1 for hand in record.get("hands", ()) if not hand.get("sudden_death"))
    faults = sum(seat.faults for seat in match.seats)
    common = {"match_id": match.match_id, "ladder": match.ladder, "finished_ms": match.finished_ms}
    return {
        "matches": [
            {
                **common,
                "log_id": match.log_id,
                "log_ms": int(log_ms or 0),
                "log_seq": int(log_seq or 0),
                "rules": json.dumps(record.get("rules", {}), sort_keys=True, separators=(",", ":")),
                "seats": len(match.seats),
                "created_ms": match.created_ms,
                "started_ms": match.started_ms,
                "attempts": match.attempts,
                "hands": hands,
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
        "match_records": [
            {"match_id": match.match_id, "record": zlib.compress(raw, COMPRESSION), "raw_bytes": len(raw)}
        ],
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


TABLES: dict[str, Table] = {table.name: table for table in (matches, match_seats, match_records, rating_history)}


def write(engine: Engine, batch: Sequence[FinishedMatch]) -> list[str]:
    """Archive ``batch`` in one transaction; returns the ids this call inserted (the others were
    archived already)."""
    if not batch:
        return []
    now = int(time.time() * 1000)
    by_id = {match.match_id: rows(match, now) for match in batch}
    with engine.begin() as connection:
        inserted = _insert_new(connection, [by_id[m]["matches"][0] for m in by_id])
        for name in ("match_seats", "match_records", "rating_history"):
            children = [row for match_id in inserted for row in by_id[match_id][name]]
            if children:
                connection.execute(TABLES[name].insert(), children)
    return inserted


def _insert_new(connection: Connection, match_rows: list[dict[str, Any]]) -> list[str]:
    dialect = postgresql if connection.dialect.name == "postgresql" else sqlite
    statement = (
        dialect.insert(matches)
        .on_conflict_do_nothing(index_elements=[matches.c.match_id])
        .returning(matches.c.match_id)
    )
    result = connection.execute(statement, match_rows)
    return [row[0] for row in result.all()]
