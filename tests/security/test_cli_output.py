"""The ``ohell`` commands print what they are given as text: brackets in a value (a file name, a bot,
a rule preset, a server's error echoing a name) are not read as rich markup, so bad input still
gets its one-line error instead of a MarkupError traceback, and nothing of the value vanishes."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli import main


def test_an_error_naming_a_bracketed_preset_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--rules", "[/x]", "--games", "1"]) == 2
    out = capsys.readouterr().out
    assert "error:" in out and "[/x]" in out


def test_an_error_naming_a_bracketed_bot_keeps_its_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--bots", "[bold]mine,random,random", "--games", "1"]) == 2
    assert "[bold]mine" in capsys.readouterr().out


def test_referee_of_an_unreadable_bracketed_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "[/red]record.json"
    assert main(["referee", str(missing)]) == 2  # the console wraps long lines
    assert f"cannot read {missing}" in "".join(capsys.readouterr().out.split("\n"))
