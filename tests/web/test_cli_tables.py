"""The host commands' tables put words to the left and numbers to the right: `ohell ladder list`
right-aligned its rules and house bots, `ohell agent list` its kinds and bots."""

from __future__ import annotations

import argparse
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


def test_the_demo_board_gives_wins_as_a_share_of_games() -> None:
    """The demo's leaderboard had a 'wins' column of fractional counts ('31.3' for 61 games: shared
    wins split), where `ohell leaderboard` and the web app show the win share as a percentage."""
    from rich.console import Console

    from arena.local.demo import board_table
    from arena.proto.ohell.v1 import matchmaker_pb2 as pb

    standings = [
        pb.Standing(rank=1, name="strong-1", games=61, wins=30.5, exact_bid_rate=0.5),
        pb.Standing(rank=2, name="random-1", games=0),
    ]
    console = Console(width=200, record=True)
    console.print(board_table(standings))
    text = console.export_text()
    assert "win share" in text and "50.0%" in text, text
    assert "30.5" not in text, text


def test_help_says_which_commands_anyone_may_run() -> None:
    """A bot author read '--host-token-file: the host credential' on `ohell matches` and
    `ohell match show`, reads that need no token; `agent register --kind` had no help at all."""
    from arena.cli import build_parser

    def help_of(*words: str) -> str:
        parser = build_parser()
        for word in words:
            parser = next(
                action.choices[word] for action in parser._actions if isinstance(action, argparse._SubParsersAction)
            )
        return " ".join(parser.format_help().split())

    for words in (("leaderboard",), ("matches",), ("match", "show"), ("ladder", "list"), ("tournament", "status")):
        assert "not needed: anyone may read this" in help_of(*words), words
    for words in (
        ("ladder", "create"),
        ("ladder", "update"),
        ("ladder", "pause"),
        ("agent", "register"),
        ("tournament", "create"),
    ):
        assert "the host credential" in help_of(*words), words
    register = help_of("agent", "register")
    assert "endpoint: the platform dials the author's server" in register
    assert "heuristic, random, strong" in help_of("agent", "import")


def test_no_help_shows_an_escaped_percent_sign() -> None:
    """`ohell tournament standings --help` read 'standings with 95%% intervals': its text, escaped for
    argparse's help lines, was also its description, which argparse prints as written."""
    from arena.cli import build_parser

    def every_parser(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
        found = [parser]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    found += every_parser(child)
        return found

    parsers = every_parser(build_parser())
    assert len(parsers) > 30, len(parsers)
    for parser in parsers:
        assert "%%" not in parser.format_help(), parser.prog
