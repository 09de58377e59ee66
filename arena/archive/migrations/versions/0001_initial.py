"""The first archive: matches, their seats, their records, rating history.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

ID = 128


def upgrade() -> None:
    op.create_table(
        "matches",
        sa.Column("match_id", sa.String(ID), primary_key=True),
        sa.Column("ladder", sa.String(64), nullable=False),
        sa.Column("log_id", sa.String(40), nullable=False),
        sa.Column("log_ms", sa.BigInteger, nullable=False),
        sa.Column("log_seq", sa.BigInteger, nullable=False),
        sa.Column("rules", sa.Text, nullable=False),
        sa.Column("seats", sa.Integer, nullable=False),
        sa.Column("created_ms", sa.BigInteger, nullable=False),
        sa.Column("started_ms", sa.BigInteger, nullable=False),
        sa.Column("finished_ms", sa.BigInteger, nullable=False),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("hands", sa.Integer, nullable=False),
        sa.Column("totals", sa.Text, nullable=False),
        sa.Column("winners", sa.Text, nullable=False),
        sa.Column("forfeited", sa.Text, nullable=False),
        sa.Column("faults", sa.Integer, nullable=False),
        sa.Column("archived_ms", sa.BigInteger, nullable=False),
    )
    op.create_index("matches_ladder_finished", "matches", ["ladder", "finished_ms"])
    op.create_index("matches_ladder_log", "matches", ["ladder", "log_ms", "log_seq"])
    op.create_index("matches_finished", "matches", ["finished_ms"])
    op.create_table(
        "match_seats",
        sa.Column("match_id", sa.String(ID), sa.ForeignKey("matches.match_id", ondelete="CASCADE"), primary_key=True),
        sa.Column("seat", sa.Integer, primary_key=True),
        sa.Column("agent_id", sa.String(32), nullable=False),
        sa.Column("agent_name", sa.String(64), nullable=False),
        sa.Column("agent_version", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("ladder", sa.String(64), nullable=False),
        sa.Column("finished_ms", sa.BigInteger, nullable=False),
        sa.Column("points", sa.Integer, nullable=False),
        sa.Column("hands", sa.Integer, nullable=False),
        sa.Column("bids_made", sa.Integer, nullable=False),
        sa.Column("faults", sa.Integer, nullable=False),
        sa.Column("winner", sa.Boolean, nullable=False),
        sa.Column("forfeited", sa.Boolean, nullable=False),
    )
    op.create_index("match_seats_agent_finished", "match_seats", ["agent_id", "finished_ms"])
    op.create_table(
        "match_records",
        sa.Column("match_id", sa.String(ID), sa.ForeignKey("matches.match_id", ondelete="CASCADE"), primary_key=True),
        sa.Column("record", sa.LargeBinary, nullable=False),
        sa.Column("raw_bytes", sa.Integer, nullable=False),
    )
    op.create_table(
        "rating_history",
        sa.Column("match_id", sa.String(ID), sa.ForeignKey("matches.match_id", ondelete="CASCADE"), primary_key=True),
        sa.Column("agent_id", sa.String(32), primary_key=True),
        sa.Column("ladder", sa.String(64), nullable=False),
        sa.Column("finished_ms", sa.BigInteger, nullable=False),
        sa.Column("mu_before", sa.Float, nullable=False),
        sa.Column("sigma_before", sa.Float, nullable=False),
        sa.Column("mu_after", sa.Float, nullable=False),
        sa.Column("sigma_after", sa.Float, nullable=False),
    )
    op.create_index("rating_history_agent", "rating_history", ["ladder", "agent_id", "finished_ms"])


def downgrade() -> None:
    op.drop_table("rating_history")
    op.drop_table("match_records")
    op.drop_table("match_seats")
    op.drop_table("matches")
