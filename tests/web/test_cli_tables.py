"""The host commands' tables put words to the left and numbers to the right: `ohell ladder list`
right-aligned its rules and house bots, `ohell agent list` its kinds and bots."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from arena.local.admin_commands import table


def test_words_left_numbers_right() -> None:
    for columns in (
        ("ladder", "rules", "seats", "house bots"),
        ("agent", "name", "kind", "bot / endpoint", "version"),
        ("match", "state", "finished (UTC)", "seats", "totals"),
    ):
        justify = {column.header: column.justify for column in table("t", *columns).columns}
        assert {header for header, side in justify.items() if side == "right"} <= {"totals"}, justify


def test_a_table_written_to_a_pipe_is_not_cut_to_80_columns() -> None:
    """rich takes 80 columns when it is not writing to a terminal: `ohell bot check ... > out.txt`
    shrank its 123-column table's headers to 'de…' and cut the names."""
    root = Path(__file__).resolve().parents[2]
    env = {key: value for key, value in os.environ.items() if key != "COLUMNS"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena.cli",
            "bot",
            "check",
            "examples/python_bot.py",
            "--games",
            "1",
            "--presets",
            "classic",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "decisions" in done.stdout and "heuristic exact" in done.stdout and "…" not in done.stdout, done.stdout
