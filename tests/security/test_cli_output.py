"""The ``ohell`` commands print what they are given as text: brackets in a value (a file name, a bot,
a rule preset, a server's error echoing a name) are not read as rich markup, so bad input still
gets its one-line error instead of a MarkupError traceback, and nothing of the value vanishes."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.table import Table

from arena.cli import main
from arena.local.output import CONTROL, SafeConsole, labelled
from ohell.errors import OhHellError


def test_an_error_naming_a_bracketed_preset_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--rules", "[/x]", "--games", "1"]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "[/x]" in err


def test_an_error_naming_a_bracketed_bot_keeps_its_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--bots", "[bold]mine,random,random", "--games", "1"]) == 2
    assert "[bold]mine" in capsys.readouterr().err


def test_referee_of_an_unreadable_bracketed_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "[/red]record.json"
    assert main(["referee", str(missing)]) == 2  # the console wraps long lines
    assert f"cannot read {missing}" in "".join(capsys.readouterr().err.split("\n"))


@pytest.mark.parametrize(
    "argv",
    [
        ["ladder", "create", "big", "--seats", "99999999999"],
        ["tournament", "create", "t", "--entrant", "builtin:random", "--seats", "99999999999"],
        ["tournament", "create", "t", "--entrant", "builtin:random", "--deals", "-1"],
        ["tournament", "create", "t", "--entrant", "builtin:random", "--rounds", "4294967296"],
        ["tournament", "standings", "t", "--replicates", "-1"],
        ["challenge", "--token", "x", "--seat", "builtin:random", "--seed", "-1"],
        ["challenge", "--token", "x", "--seat", "builtin:random", "--decision-ms", "-1"],
    ],
)
def test_a_number_no_request_can_hold_is_a_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """It was protobuf's ValueError traceback ("Value out of range") once the request was built."""
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--matchmaker", "127.0.0.1:1"] if argv[0] != "challenge" else [*argv, "--address", "127.0.0.1:1"])
    assert stop.value.code == 2
    flag = next(arg for arg in argv if arg.startswith("--") and arg not in ("--entrant", "--token", "--seat"))
    assert f"argument {flag}" in capsys.readouterr().err


def test_a_csv_of_names_the_csv_reader_refuses_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    names = tmp_path / "names.csv"
    names.write_text("name\n" + "x" * 200_000 + "\n")  # one field over the csv module's limit: a traceback
    assert (
        main(["agent", "import", str(names), "--tokens", str(tmp_path / "t.csv"), "--matchmaker", "127.0.0.1:9"]) == 2
    )
    out = "".join(capsys.readouterr().err.split("\n"))
    assert "error:" in out and "field larger" in out and not (tmp_path / "t.csv").exists()


def test_an_unknown_bot_to_connect_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """It was make_bot's ValueError traceback."""
    assert main(["bot", "connect", "--bot", "nope", "--address", "127.0.0.1:1", "--token", "x"]) == 2
    assert "--bot: unknown bot 'nope'" in capsys.readouterr().err


def test_control_characters_in_values_do_not_reach_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """rich printed escape sequences as given: a value stored before the services checked input (here
    a file name echoed in an error) could retitle, recolour or rewrite the host's terminal."""
    missing = tmp_path / "\x1b]0;pwned\x07r\x1b[2Kec\x9bord.json"
    assert main(["referee", str(missing)]) == 2
    out = "".join(capsys.readouterr().err.split("\n"))
    assert "]0;pwnedr[2Kecord.json" in out and not CONTROL.search(out)


def test_the_consoles_own_styles_and_table_layout_stay() -> None:
    console = SafeConsole(markup=False, emoji=False, force_terminal=True, color_system="standard", width=60)
    table = Table("name", "games")
    table.add_row("a\x1b[31mb\x00\tc", "3")
    table.add_row("abc", "4")
    with console.capture() as captured:
        console.print(labelled("error:", "red", " x\x1b[2Jy"))
        console.print(table)
    text = captured.get()
    assert "\x1b[31merror:\x1b[0m" in text  # the label's colour, written by rich
    assert "x[2Jy" in text and "\x1b[2J" not in text and "\x00" not in text
    rows = [line for line in text.splitlines() if "│" in line and ("3" in line or "4" in line)]
    assert len({len(line) for line in rows}) == 1  # the columns line up


def test_an_import_beside_a_stopped_stack_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With a stopped stack's matchmaker.sock left in the data folder, each name was 'not registered'
    with the same 'the local stack is not running' beside it (only 'cannot reach' over TCP was seen)."""
    import socket

    data = tmp_path / "data"
    data.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX) as left:
        left.bind(str(data / "matchmaker.sock"))  # the file stays once the socket closes: nothing answers
    monkeypatch.setenv("OHELL_DATA_DIR", str(data))
    monkeypatch.setenv("OHELL_HOST_TOKEN", "a-host-token-long-enough-0123")
    monkeypatch.delenv("OHELL_MATCHMAKER_ADDRESS", raising=False)
    names = tmp_path / "names.csv"
    names.write_text("ann\nbob\n")
    assert main(["agent", "import", str(names), "--tokens", str(tmp_path / "t.csv")]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert err.startswith("error: the local stack is not running") and "not registered" not in err, err
    assert not (tmp_path / "t.csv").exists()


def test_an_import_file_is_bounded_before_its_names_are_compared(tmp_path: Path) -> None:
    """The whole file was read (a disk image given by mistake took all memory) and every name was
    counted against every other (quadratic: 200,000 names took minutes) before the file was found
    to hold more names than an import takes."""
    from arena.local.admin_commands import MAX_IMPORT, MAX_IMPORT_BYTES, read_names

    names = tmp_path / "names.csv"
    names.write_text("".join(f"n{i}\n" for i in range(MAX_IMPORT)) + "n0\n")  # one too many, and a repeat
    with pytest.raises(OhHellError, match=f": {MAX_IMPORT + 1} names, at most {MAX_IMPORT} at a time$"):
        read_names(str(names))
    names.write_bytes(b"a\n" * (MAX_IMPORT_BYTES // 2 + 1))
    with pytest.raises(OhHellError, match=": over 4 MiB"):
        read_names(str(names))
