"""The agent import file (``ohell agent import FILE``, the host page's upload): one agent's name in
the first column of each row, the columns separated by ``,``, ``;`` or a tab, whichever comes
first in the file (a spreadsheet saves ``;`` where the decimal mark is a comma, and copies a table
out with tabs). A name never holds one of them, so a first cell that does is a line separated
otherwise than the file (pasted from another file, say): refused, with its number. Blank rows are
skipped, and a first row whose first cell is ``name`` is a header."""

from __future__ import annotations

import codecs
import csv
import io

SEPARATORS = (",", ";", "\t")
SAID = {",": "','", ";": "';'", "\t": "a tab"}


def roster_text(data: bytes) -> str:
    """The import file's text: UTF-8, after a byte-order mark when it starts with one. UnicodeDecodeError
    at the file's own offset of its first byte that is not UTF-8 (``utf-8-sig`` counts from after the
    mark: it named a byte 3 before the one at fault)."""
    skip = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[skip:].decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnicodeDecodeError("utf-8", data, error.start + skip, error.end + skip, error.reason) from None


def separator_of(text: str) -> tuple[str, int]:
    """The first of ``SEPARATORS`` in ``text`` and the number of its line; ``,`` (line 0) when there is
    none (a file of one column)."""
    at = next((index for index, char in enumerate(text) if char in SEPARATORS), -1)
    return (text[at], text.count("\n", 0, at) + 1) if at >= 0 else (",", 0)


def first_cells(text: str) -> list[str]:
    """The first cell of each row of the file's text that is not blank there, a header's included.
    ``csv.Error`` for a text the CSV reader refuses (a field over its limit of 128 KB), and for a first
    cell holding a separator (its line is separated otherwise than the file's first separator says)."""
    separator, decided_at = separator_of(text)
    reader = csv.reader(io.StringIO(text), delimiter=separator)
    cells = []
    start = 1  # the line the next row starts on (a quoted cell may run over several)
    for row in reader:
        cell = row[0].strip() if row else ""
        held = next((char for char in SEPARATORS if char in cell), "")
        if held:
            raise csv.Error(
                f"line {start}: the name {cell[:60]!r} holds {SAID[held]}, which no name does (the file's"
                f" columns are separated by {SAID[separator]}, as line {decided_at} is)"
            )
        if cell:
            cells.append(cell)
        start = reader.line_num + 1
    return cells


def roster_names(text: str) -> list[str]:
    """The names of the file's text, in order (``first_cells`` without a header). ``csv.Error`` as there."""
    cells = first_cells(text)
    return cells[1:] if cells and cells[0].lower() == "name" else cells
