"""The agent import file, read by ``ohell agent import`` and the host page's upload alike: a file
saved with ';' (a spreadsheet where the decimal mark is a comma) or tabs was read as one column, so
each whole row ('ann;a@x') went to the matchmaker as a name and was refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.local.admin_commands import read_names
from ohell.errors import OhHellError
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


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "name;email\nann;a@x\n\nben,b@x\n",
            "line 4: the name 'ben,b@x' holds ',', which no name does (the file's"
            " columns are separated by ';', as line 1 is)",
        ),
        (
            "name,email\nann;a@x\nben,b@x\n",
            "line 2: the name 'ann;a@x' holds ';', which no name does (the file's"
            " columns are separated by ',', as line 1 is)",
        ),
        (
            "name\nann\tx\nben;y\n",
            "line 3: the name 'ben;y' holds ';', which no name does (the file's"
            " columns are separated by a tab, as line 2 is)",
        ),
        (
            'ann,x\n"Smith,\nAnn",y\n',
            "line 2: the name 'Smith,\\nAnn' holds ',', which no name does (the file's"
            " columns are separated by ',', as line 1 is)",
        ),
    ],
)
def test_a_line_separated_otherwise_than_the_file_is_refused_by_its_number(
    tmp_path: Path, text: str, said: str
) -> None:
    """The first separator in the file was taken for every line: a line saved with another one went
    whole to the matchmaker as a name ('ben,b@x'), refused there, while the rest were registered."""
    path = tmp_path / "mixed.csv"
    path.write_text(text)
    with pytest.raises(OhHellError) as refused:
        read_names(str(path))
    assert str(refused.value) == f"cannot read {path} as a CSV: {said}"
    with pytest.raises(ValueError) as refused_on_the_page:
        names_from_csv(text)
    assert str(refused_on_the_page.value) == f"the CSV cannot be read: {said}"
    assert names_from_csv('name;"e, mail"\nann;"a@x, b@x"\nben;b@x,c@x\n') == ["ann", "ben"]  # other cells may


def test_a_file_not_utf8_after_its_byte_order_mark_is_refused_at_the_byte_at_fault(tmp_path: Path) -> None:
    """The text was decoded as ``utf-8-sig``, which counts from after the byte-order mark: the command
    and the host page named a byte 3 before the one at fault ('position 8' for the 'é' at byte 11)."""
    data = b"\xef\xbb\xbf" + "name\nJosé\n".encode("latin-1")
    assert data[11:12] == "é".encode("latin-1")
    path = tmp_path / "class.csv"
    path.write_bytes(data)
    with pytest.raises(OhHellError, match="can't decode byte 0xe9 in position 11"):
        read_names(str(path))
    (tmp_path / "plain.csv").write_bytes(data[3:])  # no mark: its offset was right already
    with pytest.raises(OhHellError, match="can't decode byte 0xe9 in position 8"):
        read_names(str(tmp_path / "plain.csv"))
