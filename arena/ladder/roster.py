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


def first_cells(text: str) -> list[str]:
    """The first cell of each row of the file's text that is not blank there, a header's included.
    ``csv.Error`` for a text the CSV reader refuses (a field over its limit of 128 KB)."""
    reader = csv.reader(io.StringIO(text), delimiter=separator_of(text))
    return [row[0].strip() for row in reader if row and row[0].strip()]


def roster_names(text: str) -> list[str]:
    """The names of the file's text, in order (``first_cells`` without a header). ``csv.Error`` as there."""
    cells = first_cells(text)
    return cells[1:] if cells and cells[0].lower() == "name" else cells
