"""Offline play of a bot file: ``ohell play``/``ohell bot play`` seat it next to built-in bots,
``ohell bot check`` validates it, 000's bid changes are offered to it as on the platform."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from arena.cli import main
from arena.local.check import check_bot
from arena.local.play import play_series
from arena.sdk import BaseBot
from arena.sdk.local import load_bot
from ohell.errors import OhHellError
from ohell.presets import preset
from ohell.referee import referee

BOTS = '''
from arena.sdk import BaseBot
from ohell.cards import rank_of


class Careful(BaseBot):
    def bid(self, obs):
        assert obs.legal_bids and obs.seat == obs.to_act
        return min(obs.legal_bids, key=lambda b: abs(b - sum(rank_of(c) >= 11 for c in obs.hand)))

    def play(self, obs):
        return min(obs.legal_actions)


class Sloppy(BaseBot):
    """Raises on every fourth decision; plays a card it may not hold on every seventh."""

    def __init__(self):
        self.count = 0

    def bid(self, obs):
        return self.play(obs) and obs.legal_bids[0]

    def play(self, obs):
        self.count += 1
        if self.count % 4 == 0:
            raise RuntimeError("bug")
        if self.count % 7 == 0:
            return next(card for card in range(52) if card not in obs.legal_actions)
        return obs.legal_actions[0]


class Changer(Careful):
    def change_bid(self, obs):
        return obs.legal_bids[-1]


class SlowStart(Careful):
    """Thinks 1.1 s over its first decision, then answers at once."""

    def __init__(self):
        self.first = True

    def bid(self, obs):
        if self.first:
            import time

            time.sleep(1.1)
            self.first = False
        return super().bid(obs)
'''


@pytest.fixture
def bot_file(tmp_path: Path) -> Path:
    path = tmp_path / "mybots.py"
    path.write_text(BOTS)
    return path


def test_ohell_play_and_bot_play_seat_a_bot_file(
    bot_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in (["play"], ["bot", "play"]):
        out = tmp_path / "-".join(command)
        code = main([*command, "--bots", f"{bot_file}:Careful,heuristic,random", "--games", "3", "--out", str(out)])
        assert code == 0
        assert "Careful (mybots.py)" in capsys.readouterr().out
        records = [json.loads(path.read_text()) for path in sorted(out.glob("*.json"))]
        assert len(records) == 3 and all(referee(record).valid for record in records)
        assert {seat["kind"] for record in records for seat in record["seats"]} == {"local", "builtin"}


def test_play_names_the_records_folder_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--out records/`` (the README's) printed ``records written to records//``."""
    out = f"{tmp_path}/records/"
    assert main(["play", "--bots", "random,random,random", "--games", "1", "--out", out]) == 0
    text = capsys.readouterr().out.replace("\n", "")  # rich wraps a long path
    assert f"{tmp_path}/records/" in text and "records//" not in text


def test_unknown_bots_and_bad_files_are_one_line(bot_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--bots", "mybot.py,heuristic,random", "--games", "1"]) == 2
    assert "bot file 'mybot.py' does not exist" in capsys.readouterr().err
    assert main(["play", "--bots", "nobot,heuristic,random", "--games", "1"]) == 2
    assert "path/to/mybot.py:MyBot" in capsys.readouterr().err
    with pytest.raises(OhHellError, match="name the bot class: .*Careful, Sloppy, Changer"):
        load_bot(str(bot_file))
    with pytest.raises(OhHellError, match="has no bot class 'Nope'"):
        load_bot(f"{bot_file}:Nope")
    empty = bot_file.with_name("helpers.py")
    empty.write_text("class Helper:\n    pass\n")
    with pytest.raises(OhHellError, match=r"helpers\.py defines no bot class \(a class with bid\(self, obs\) -> int"):
        load_bot(str(empty))


def test_a_class_missing_a_method_is_told_which_and_its_signature(tmp_path: Path) -> None:
    bot_file = tmp_path / "halfbot.py"
    bot_file.write_text(
        "from arena.sdk import BaseBot\n\n\n"
        "class Plain:\n    def bid(self, obs):\n        return 0\n\n\n"
        "class Derived(BaseBot):\n    def bid(self, obs):\n        return 0\n"
    )
    for class_name in ("Plain", "Derived"):
        with pytest.raises(OhHellError) as raised:
            load_bot(f"{bot_file}:{class_name}")
        assert str(raised.value) == (
            f"{bot_file}:{class_name} is not a bot class: it does not define "
            "play(self, obs) -> int (a card 0..51 from obs.legal_actions)"
        )
    with pytest.raises(NotImplementedError, match=r"^MyBot does not define play\(self, obs\) -> int \(a card 0\.\.51"):
        type("MyBot", (BaseBot,), {})().play(None)
    with pytest.raises(NotImplementedError, match=r"^MyBot does not define bid\(self, obs\) -> int"):
        type("MyBot", (BaseBot,), {})().bid(None)


def test_check_reports_exceptions_and_illegal_actions(bot_file: Path) -> None:
    sloppy = check_bot(f"{bot_file}:Sloppy", games=2, presets=("classic", "river-blind"))
    assert not sloppy.passed
    for result in sloppy.presets:
        assert (
            result.decisions > 50 and result.decisions // 4 - 2 <= result.exceptions <= result.decisions // 4
        )  # a fresh bot each game
        assert result.illegal > 0 and len(result.timings) == result.decisions
    careful = check_bot(f"{bot_file}:Careful", games=4)
    assert careful.passed and [p.preset for p in careful.presets] == [
        "classic",
        "classic-simultaneous",
        "river",
        "online",
    ]
    for result in careful.presets:
        assert result.illegal == result.exceptions == 0 and 0 < result.percentile_ms(0.5) <= result.percentile_ms(0.95)
        assert 0 < result.exact_rate < 1 and set(result.opponents_exact) == {"heuristic", "random"}


def test_check_command_exit_codes(bot_file: Path) -> None:
    assert main(["bot", "check", f"{bot_file}:Careful", "--games", "1", "--presets", "classic"]) == 0
    assert main(["bot", "check", f"{bot_file}:Sloppy", "--games", "1", "--presets", "classic"]) == 1


def test_check_logs_the_first_illegal_answers_and_exceptions_and_counts_the_rest(
    bot_file: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Exceptions were cut to three tracebacks, but every illegal answer had its line: some 4,000
    lines for a bot that always played the two of clubs."""
    with caplog.at_level(logging.WARNING, logger="arena.sdk"):
        assert main(["bot", "check", f"{bot_file}:Sloppy", "--games", "3", "--presets", "classic"]) == 1
    lines = [record.getMessage() for record in caplog.records]
    illegal = [line for line in lines if "which is not legal" in line]
    assert len(illegal) == 3 and lines.count("(more illegal answers of the bot: left out)") == 1, lines
    assert len([r for r in caplog.records if r.exc_info]) == 3
    assert lines.count("(more exceptions of the bot: tracebacks left out)") == 1


def test_check_says_how_many_decisions_took_longer_than_a_ladder_gives(
    bot_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bot slower than a ladder's 1 s a decision 'passed' (its p95 was there, the limit nowhere):
    on the ladder its late answers ate the time bank, then were TIMEOUT faults that forfeited it."""
    assert main(["bot", "check", f"{bot_file}:SlowStart", "--games", "1", "--presets", "classic"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "slow: 1 decision(s) took over 1000 ms, a ladder's time per decision; past it a match's 10 s" in out, out
    assert "(10 forfeit the match)" in out and "passed" in out
    assert main(["bot", "check", f"{bot_file}:Careful", "--games", "1", "--presets", "classic"]) == 0
    assert "slow:" not in capsys.readouterr().out


def test_a_local_bot_is_offered_bid_changes_under_000_only(bot_file: Path, tmp_path: Path) -> None:
    for rules, expect_changes in (("classic", True), ("river", False)):
        out = tmp_path / rules
        play_series(preset(rules), [f"{bot_file}:Changer", "heuristic", "random"], 2, 5, out)
        records = [json.loads(path.read_text()) for path in out.glob("*.json")]
        changes = [e for r in records for hand in r["hands"] for e in hand["events"] if e[0] == "change"]
        assert bool(changes) is expect_changes and all(referee(r).valid for r in records)
        assert all(
            r["seats"][e[1]]["name"] == "Changer (mybots.py)"
            for r in records
            for h in r["hands"]
            for e in h["events"]
            if e[0] == "change"
        )


def test_check_prints_its_counts_as_numbers(
    bot_file: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The console reads no markup: counts of illegal actions and exceptions were printed as
    ``[red]12[/red]``."""
    from arena.local import bot_cli

    monkeypatch.setattr(bot_cli.console, "width", 200)  # the whole table, not cut to 80 columns
    assert main(["bot", "check", f"{bot_file}:Sloppy", "--games", "1", "--presets", "classic"]) == 1
    row = next(line for line in capsys.readouterr().out.splitlines() if "│ classic" in line)
    cells = [cell.strip() for cell in row.strip("│ ").split("│")]
    assert "[" not in row and cells[2].isdigit() and int(cells[2]) > 0 and int(cells[3]) > 0


def test_check_of_a_built_in_bot_counts_its_decisions_apart_from_its_namesakes() -> None:
    """``ohell bot check random`` reported 0 decisions and 0.000 ms: the built-in was seated
    directly, not through the wire, and its exact bids were pooled with the random opponent's."""
    report = check_bot("random", games=2, presets=("classic",))
    result = report.presets[0]
    assert report.bot == "random" and report.passed
    assert result.decisions > 50 and len(result.timings) == result.decisions
    assert set(result.opponents_exact) == {"heuristic", "random"}


@pytest.mark.parametrize("bots", ["nobot,random,random", "random,random", "missing.py:Bot,random,random"])
def test_a_series_that_cannot_start_prints_nothing_on_stdout(bots: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``ohell play`` drew its progress bar ("classic: 2 seats 0/1") on stdout before the error."""
    assert main(["play", "--bots", bots, "--games", "1"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ")


def test_an_answer_that_is_no_number_is_named(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A bot that returned "AS" or None was logged as int()'s "invalid literal for int() with base
    10: 'AS'", a traceback ending in the SDK's code with neither the method nor what it wanted."""
    path = tmp_path / "names.py"
    path.write_text(
        "from arena.sdk import BaseBot\n\n\nclass Names(BaseBot):\n"
        "    def bid(self, obs):\n        return None\n\n    def play(self, obs):\n        return 'AS'\n"
    )
    with caplog.at_level(logging.ERROR, logger="arena.sdk"):
        report = check_bot(f"{path}:Names", games=1, presets=("classic",))
    assert not report.passed and report.presets[0].exceptions == report.presets[0].decisions
    assert {str(r.exc_info[1]) for r in caplog.records if r.exc_info} == {
        "bid() returned None: a bid is a number of tricks, 0..17",
        "play() returned 'AS': a card is a number 0..51",
    }
