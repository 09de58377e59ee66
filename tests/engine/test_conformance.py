"""Our engine against OpenSpiel's oh_hell: same deal, same actions, same legal sets and results."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from arena.conformance import OpenSpielTable, load_pyspiel, play_hand, run
from ohell.cards import parse_card
from ohell.hand import action_from_openspiel, openspiel_action
from ohell.rules import Rules
from ohell.state import BID_BASE

ROOT = Path(__file__).resolve().parents[2]
PURE_FLAG = ["-X", "ohell_pure"] if "ohell_pure" in sys._xoptions else []  # the subprocess runs this build too


@pytest.fixture(scope="module")
def pyspiel():
    return load_pyspiel()


@pytest.mark.slow
def test_thousands_of_hands_over_every_table_and_hand_size_agree() -> None:
    report = run(10_800, seed=20261130)  # 200 hands for each of the 54 (players, size) cases
    every_case = {(n, size) for n in range(3, 8) for size in range(1, 51 // n + 1)}
    assert report.cases == every_case
    assert report.disagreements == 0, report.examples


def test_openspiel_hand_sizes_always_leave_a_trump_card(pyspiel) -> None:
    # OpenSpiel never exhausts the deck, so our "no trump when no card is left" rule is not
    # exercised by it; hand sizes beyond 51 // players exist only in ours.
    for n in range(3, 8):
        assert OpenSpielTable(pyspiel, n).max_tricks == 51 // n


def test_card_and_bid_actions_map_by_their_names(pyspiel) -> None:
    table = OpenSpielTable(pyspiel, 3)
    assert sorted(table.to_ours.values()) == list(range(52)) + [BID_BASE + b for b in range(18)]
    # OpenSpiel numbers cards rank-major; ours suit-major: they differ, the map must not be identity
    assert any(os_action != ours for os_action, ours in table.to_ours.items() if ours < 52)
    names = {table.to_ours[a]: a for a in table.to_ours}
    state = table.game.new_initial_state()
    state.apply_action(1)
    state.apply_action(0)
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, names[parse_card("AH")]) == "HA"
    assert state.action_to_string(pyspiel.PlayerId.CHANCE, names[parse_card("2C")]) == "C2"


def test_the_engines_openspiel_numbering_is_the_one_read_from_openspiel(pyspiel) -> None:
    table = OpenSpielTable(pyspiel, 3)  # the harness's map comes from OpenSpiel's action names
    assert len(table.to_ours) == 52 + 18
    for os_action, ours in table.to_ours.items():
        assert openspiel_action(ours) == os_action
        assert action_from_openspiel(os_action) == ours


def test_openspiel_applies_the_hook_so_an_engine_without_it_disagrees(pyspiel) -> None:
    table = OpenSpielTable(pyspiel, 4, rules=Rules(hook=False))
    rng = random.Random(7)
    problems = [p for _ in range(100) for p in play_hand(table, 3, rng.randrange(4), rng)]
    assert problems, "the comparison failed to notice a missing hook"
    assert all("only ours allows ['bid " in p and "only OpenSpiel allows []" in p for p in problems)


def test_bench_command_prints_its_count_last() -> None:
    done = subprocess.run(
        [sys.executable, *PURE_FLAG, str(ROOT / "bench" / "conformance.py"), "--hands", "300", "--players", "5"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "conformance: hands=300 disagreements=0"
