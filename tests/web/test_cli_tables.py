"""The host commands' tables put words to the left and numbers to the right: `ohell ladder list`
right-aligned its rules and house bots, `ohell agent list` its kinds and bots."""

from __future__ import annotations

from arena.local.admin_commands import table


def test_words_left_numbers_right() -> None:
    for columns in (
        ("ladder", "rules", "seats", "house bots"),
        ("agent", "name", "kind", "bot / endpoint", "version"),
        ("match", "state", "finished (UTC)", "seats", "totals"),
    ):
        justify = {column.header: column.justify for column in table("t", *columns).columns}
        assert {header for header, side in justify.items() if side == "right"} <= {"totals"}, justify
