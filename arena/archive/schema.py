"""The archive's tables (SQLAlchemy Core). Alembic revisions in ``migrations/versions`` create them;
a change here needs a new revision.

    matches         one row per finished match: ladder, rules, times, totals, winners, faults
    match_seats     one row per seat: agent (id, name, version), points, bids made, faults
    match_records   the match record (docs/record.md) as zlib-compressed JSON
    rating_history  each seated agent's rating before and after each rated match
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
)

metadata = MetaData()

ID = 128  # match ids are "<ladder>-<n>" (ladder names <= 64 characters)

matches = Table(
    "matches",
    metadata,
    Column("match_id", String(ID), primary_key=True),
    Column("ladder", String(64), nullable=False),
    Column("log_id", String(40), nullable=False),  # position in the ladder's rating log (Redis stream id)
    Column("log_ms", BigInteger, nullable=False),  # its time part, for ordering by log position
    Column("log_seq", BigInteger, nullable=False),  # its sequence part
    Column("rules", Text, nullable=False),  # JSON of the rule set played
    Column("seats", Integer, nullable=False),
    Column("created_ms", BigInteger, nullable=False),
    Column("started_ms", BigInteger, nullable=False),
    Column("finished_ms", BigInteger, nullable=False),
    Column("attempts", Integer, nullable=False),
    Column("hands", Integer, nullable=False),  # hands played (not counting sudden death)
    Column("totals", Text, nullable=False),  # JSON list of points by seat
    Column("winners", Text, nullable=False),  # JSON list of winning seats
    Column("forfeited", Text, nullable=False),  # JSON list of seats that forfeited
    Column("faults", Integer, nullable=False),  # faults of all seats
    Column("archived_ms", BigInteger, nullable=False),
)
Index("matches_ladder_finished", matches.c.ladder, matches.c.finished_ms)
Index("matches_ladder_log", matches.c.ladder, matches.c.log_ms, matches.c.log_seq)
Index("matches_finished", matches.c.finished_ms)

match_seats = Table(
    "match_seats",
    metadata,
    Column("match_id", String(ID), ForeignKey("matches.match_id", ondelete="CASCADE"), primary_key=True),
    Column("seat", Integer, primary_key=True),
    Column("agent_id", String(32), nullable=False),
    Column("agent_name", String(64), nullable=False),
    Column("agent_version", String(64), nullable=False),
    Column("kind", String(16), nullable=False),
    Column("ladder", String(64), nullable=False),  # copies of the match's, for per-agent queries
    Column("finished_ms", BigInteger, nullable=False),
    Column("points", Integer, nullable=False),
    Column("hands", Integer, nullable=False),
    Column("bids_made", Integer, nullable=False),  # hands whose bid was made exactly
    Column("faults", Integer, nullable=False),
    Column("winner", Boolean, nullable=False),
    Column("forfeited", Boolean, nullable=False),
)
Index("match_seats_agent_finished", match_seats.c.agent_id, match_seats.c.finished_ms)

match_records = Table(
    "match_records",
    metadata,
    Column("match_id", String(ID), ForeignKey("matches.match_id", ondelete="CASCADE"), primary_key=True),
    Column("record", LargeBinary, nullable=False),  # zlib(JSON)
    Column("raw_bytes", Integer, nullable=False),  # length of the JSON before compression
)

rating_history = Table(
    "rating_history",
    metadata,
    Column("match_id", String(ID), ForeignKey("matches.match_id", ondelete="CASCADE"), primary_key=True),
    Column("agent_id", String(32), primary_key=True),
    Column("ladder", String(64), nullable=False),
    Column("finished_ms", BigInteger, nullable=False),
    Column("mu_before", Float, nullable=False),
    Column("sigma_before", Float, nullable=False),
    Column("mu_after", Float, nullable=False),
    Column("sigma_after", Float, nullable=False),
)
Index("rating_history_agent", rating_history.c.ladder, rating_history.c.agent_id, rating_history.c.finished_ms)
