"""Rules and seats given on the command line (``--rules``, ``--option``, ``--bots``) or on the host's
tournament form: a refusal names the flag or field at fault, and an unknown rule option is refused
with the list of those there are. Before, ``ohell play --option colour=red`` said only "unknown rule
option(s): colour" and ``--bots random,random`` said "num_players=2 must be from 3 to 7", a name
the command line has nowhere; ``ohell ladder create`` and ``ohell tournament create`` said the same."""

from __future__ import annotations

import pytest

from arena.cli import main
from arena.wire import given_rules
from ohell.errors import OhHellError
from ohell.rules import Rules
from services.web.tournaments import tournament_from_form

OPTIONS = ", ".join(Rules().to_dict())


def test_ohell_play_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    for args, said in (
        (["--option", "colour=red"], f"--option: unknown rule option(s): colour (rule options: {OPTIONS})"),
        (["--option", "scoring=golf"], "--option: scoring='golf' is not one of: exact"),
        (["--rules", "nope"], "--rules: unknown preset 'nope'; known: classic"),
        (["--bots", "random,random"], "--bots gives 2 seats: num_players=2 must be from 3 to 7"),
        (["--option", "hand_sizes=[13]", "--bots", "random,random,random,random,random"], "--bots gives 5 seats: "),
    ):
        assert main(["play", "--games", "1", *args]) == 2
        assert capsys.readouterr().err.startswith(f"error: {said}"), args


def test_given_rules_name_the_fields_they_are_told() -> None:
    assert given_rules("river", ["scoring=squares"]).scoring.value == "squares"
    with pytest.raises(OhHellError, match=r"^options: unknown rule option\(s\): colour \(rule options: direction, "):
        given_rules("classic", ["colour=red"], ("rules", "options"))
    form = {"tournament_id": "cup", "entrants": "builtin:random\nbuiltin:strong\nbuiltin:heuristic", "options": "x=1"}
    with pytest.raises(OhHellError, match=r"^options: unknown rule option\(s\): x \(rule options: "):
        tournament_from_form(form)


def test_ohell_demo_refuses_rules_its_tables_cannot_deal_before_starting(capsys: pytest.CaptureFixture[str]) -> None:
    """``ohell demo --seats 5 --option hand_sizes=[13]`` started the whole stack, printed the web
    app's address and then ended with a gRPC traceback (CreateLadder's INVALID_ARGUMENT)."""
    assert main(["demo", "--seats", "5", "--option", "hand_sizes=[13]"]) == 2
    captured = capsys.readouterr()
    assert (
        captured.err
        == "error: --seats 5: hand_sizes: a hand of 13 cards, more than the 10 a deck gives each of 5 players\n"
    )
    assert "leaderboard in the browser" not in captured.out
    assert main(["demo", "--option", "colour=red"]) == 2
    assert capsys.readouterr().err.startswith("error: --option: unknown rule option(s): colour (rule options: ")


def test_ohell_bot_check_refuses_an_unknown_preset_before_any_game(capsys: pytest.CaptureFixture[str]) -> None:
    """``ohell bot check BOT --presets classic,nope`` played every game of classic, then ended with
    "unknown preset 'nope'", naming no flag."""
    assert main(["bot", "check", "random", "--presets", "classic,nope"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: --presets: unknown preset 'nope'; known: classic, ") and not captured.out
