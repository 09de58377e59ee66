"""The issue's bars for the reference bots, over 300 full games of the classic profile."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.cli import main
from arena.local.play import play_series
from ohell.bots import make_bot
from ohell.match import play_game
from ohell.presets import PRESETS, preset
from ohell.referee import referee
from ohell.state import Game


@pytest.mark.slow
def test_heuristic_against_three_random_meets_the_bars() -> None:
    tally = play_series(preset("classic"), ["heuristic", "random", "random", "random"], games=300, seed=1000)
    heuristic, random_bots = tally.bots["heuristic"], tally.bots["random"]
    assert heuristic.games == 300 and random_bots.games == 900
    assert heuristic.exact_rate >= 0.48
    assert heuristic.win_rate >= 0.90
    assert 0.15 <= random_bots.exact_rate <= 0.22


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_reference_bots_finish_every_preset(name: str) -> None:
    for players in (3, 7):
        game = Game(preset(name), players)
        bots = [make_bot("heuristic" if s % 2 else "random", s) for s in range(players)]
        state = play_game(game, bots, seed=players)
        assert state.is_terminal() and state.winners


def test_random_bot_is_deterministic_for_a_seed() -> None:
    game = Game(preset("river"), 5)
    first = play_game(game, [make_bot("random", s) for s in range(5)], seed=3)
    second = play_game(game, [make_bot("random", s) for s in range(5)], seed=3)
    assert first.scores == second.scores and first.results == second.results


def test_unknown_bot_names_the_bot() -> None:
    with pytest.raises(ValueError, match="unknown bot 'genius'"):
        make_bot("genius")


def test_ohell_play_writes_records_the_referee_accepts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["play", "--rules", "online-squares", "--bots", "heuristic,random,random", "--games", "3",
         "--seed", "7", "--out", str(tmp_path)]
    )  # fmt: skip
    assert code == 0
    output = capsys.readouterr().out
    assert "heuristic" in output and "exact bids" in output
    records = sorted(tmp_path.glob("*.json"))
    assert len(records) == 3
    for path in records:
        assert referee(json.loads(path.read_text())).valid


def test_ohell_play_refuses_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    occupied = tmp_path / "a-file"
    occupied.write_text("not a folder")
    assert main(["play", "--games", "1", "--out", str(occupied)]) == 2
    assert f"--out {occupied} is a file: give a folder" in capsys.readouterr().err
    assert main(["play", "--bots", "heuristic,nobody,random"]) == 2
    assert "unknown bot 'nobody'" in capsys.readouterr().err
    assert main(["play", "--rules", "nope"]) == 2
    assert "unknown preset 'nope'" in capsys.readouterr().err
    assert main(["play", "--option", "scoring=golf"]) == 2
    assert main(["play", "--bots", "random,random"]) == 2
    assert "num_players=2" in capsys.readouterr().err
