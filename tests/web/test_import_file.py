"""The agent import file, read by ``ohell agent import`` and the host page's upload alike: a file
saved with ';' (a spreadsheet where the decimal mark is a comma) or tabs was read as one column, so
each whole row ('ann;a@x') went to the matchmaker as a name and was refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.local.admin_commands import read_names
from services.web.host import names_from_csv

ROWS = [["name", "email", "group"], ["ann", "a@x", "1"], [" ben ", "b@x, c@x", "2"], [], ["cy", "", ""]]


@pytest.mark.parametrize("separator", [",", ";", "\t"])
def test_each_separator_gives_the_first_column(tmp_path: Path, separator: str) -> None:
    quoted = [[f'"{cell}"' if "," in cell else cell for cell in row] for row in ROWS]  # a cell with a comma
    text = "\n".join(separator.join(row) for row in quoted) + "\n"
    path = tmp_path / "class.csv"
    path.write_text(text)
    assert read_names(str(path)) == ["ann", "ben", "cy"]
    assert names_from_csv(text) == ["ann", "ben", "cy"]


def test_a_file_of_one_column_and_the_first_separator_decides() -> None:
    assert names_from_csv("dee\neve\n") == ["dee", "eve"]
    assert names_from_csv("name\nfay;f@x\ngus;g@x,h@x\n") == ["fay", "gus"]  # ';' comes before the ','
