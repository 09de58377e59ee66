"""The agent import file (``ohell agent import FILE``, the host page's upload): one agent's name in
the first column of each row, the columns separated by ``,``, ``;`` or a tab, whichever comes
first in the file (a spreadsheet saves ``;`` where the decimal mark is a comma, and copies a table
out with tabs; a name never holds one of them). Blank rows are skipped, and a first row whose first
cell is ``name`` is a header."""

from __future__ import annotations

import csv
import io

SEPARATORS = (",", ";", "\t")


def separator_of(text: str) -> str:
    """The first of ``SEPARATORS`` in ``text``; ``,`` when there is none (a file of one column)."""
    return next((char for char in text if char in SEPARATORS), ",")


def roster_names(text: str) -> list[str]:
    """The names of the file's text, in order. ``csv.Error`` for a text the CSV reader refuses (a
    field over its limit of 128 KB)."""
    reader = csv.reader(io.StringIO(text), delimiter=separator_of(text))
    rows = [row for row in reader if row and row[0].strip()]
    if rows and rows[0][0].strip().lower() == "name":
        rows = rows[1:]
    return [row[0].strip() for row in rows]
