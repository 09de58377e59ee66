"""The referee replays records, finds the first illegal action, and never raises on bad input."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.cli import main
from ohell.bots import make_bot
from ohell.cards import parse_card
from ohell.match import play_game
from ohell.presets import preset
from ohell.record import build_record
from ohell.referee import referee, referee_text, replay
from ohell.rules import Rules
from ohell.state import Game


@pytest.fixture(scope="module")
def record() -> dict:
    game = Game(preset("classic"), 4)
    state = play_game(game, [make_bot("heuristic", s) for s in range(4)], seed=11)
    return build_record(state, [{"name": "heuristic", "kind": "builtin"}] * 4, seed=11)


def test_a_played_record_is_valid_and_replays_to_the_same_result(record: dict) -> None:
    verdict = referee(json.loads(json.dumps(record)))
    assert verdict.valid and verdict.totals == record["totals"] and verdict.winners == record["winners"]
    assert verdict.actions_checked == sum(len(h["events"]) for h in record["hands"])
    assert replay(record).scores == record["totals"]


def test_the_first_illegal_action_is_named_with_its_index() -> None:
    rules = Rules.from_dict({"hand_sizes": [2]}, base=preset("classic"))
    state = Game(rules, 4).new_state()
    state.cut([parse_card(c) for c in ("2C", "3C", "4C", "AC")])  # seat 3 deals, seat 0 leads
    deal = ["AS KH", "2S 3H", "4C 5C", "6C 7C"]
    state.deal_hands([[parse_card(c) for c in hand.split()] for hand in deal], parse_card("2D"))
    for seat, bid in enumerate((0, 0, 0, 1)):
        state.bid(seat, bid)
    for seat, card in enumerate(("AS", "2S", "4C", "6C")):
        state.play(seat, parse_card(card))
    for seat, card in ((0, "KH"), (1, "3H"), (2, "5C"), (3, "7C")):
        state.play(seat, parse_card(card))
    good = build_record(state, [{"name": f"p{s}"} for s in range(4)])
    assert referee(good).valid
    bad = copy.deepcopy(good)
    bad["hands"][0]["events"][5] = ["play", 1, "3H"]  # a revoke: seat 1 holds 2S
    verdict = referee(bad)
    assert not verdict.valid and verdict.illegal_index == 5 and verdict.illegal_hand == 1
    assert verdict.illegal_reason == "seat 1 cannot play 3H: must follow spades (holds 2S)"


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("hands", 1, "totals"), [999, 0, 0, 0], "hands[1].totals"),
        (("hands", 0, "number"), 7, "hands[0].number"),
        (("hands", 0, "no_trump_hand"), True, "hands[0].no_trump_hand"),
        (("hands", 0, "sudden_death"), True, "hands[0].sudden_death"),
        (("complete",), False, "complete is recorded as False"),
    ],
)
def test_every_recorded_result_is_checked(record: dict, path: tuple, value: object, message: str) -> None:
    bad = copy.deepcopy(record)
    target = bad
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert message in (referee(bad).mismatch or ""), referee(bad).summary()


def test_a_wrong_trick_winner_is_a_mismatch(record: dict) -> None:
    bad = copy.deepcopy(record)
    trick = bad["hands"][0]["tricks"][0]
    trick["winner"] = (trick["winner"] + 1) % 4
    assert "hands[0].tricks" in (referee(bad).mismatch or "")


def test_a_mismatch_names_the_element_that_differs(record: dict) -> None:
    """One card changed in a recorded trick quoted the hand's tricks whole (the played ones in full,
    some 1,000 characters), not the card."""
    bad = copy.deepcopy(record)
    cards = bad["hands"][0]["tricks"][0]["cards"]
    played, cards[1] = cards[1], cards[0]
    assert referee(bad).mismatch == (
        f"hands[0].tricks[0].cards[1] is recorded as {cards[0]!r} but the play gives {played!r}"
    )
    bad = copy.deepcopy(record)
    bad["hands"][1]["totals"] = bad["hands"][1]["totals"][:-1]  # a list of another length: quoted whole
    assert (referee(bad).mismatch or "").startswith("hands[1].totals is recorded as [")


def test_wrong_recorded_results_are_mismatches(record: dict) -> None:
    bad = copy.deepcopy(record)
    bad["hands"][2]["points"][0] += 1
    assert "hands[2].points" in (referee(bad).mismatch or "")
    bad = copy.deepcopy(record)
    bad["winners"] = [9]
    assert "winners" in (referee(bad).mismatch or "")
    bad = copy.deepcopy(record)
    del bad["hands"][-1]
    assert "ends before the game does" in (referee(bad).mismatch or "")


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda r: r.update(version=99), "version 99"),
        (lambda r: r.pop("rules"), "rules is missing"),
        (lambda r: r["rules"].update(scoring="golf"), "scoring='golf'"),
        (lambda r: r.update(num_players="four"), "num_players must be int"),
        (lambda r: r["hands"][0]["deal"][0].__setitem__(0, "ZZ"), "hands[0].deal[0]: not a card: 'ZZ'"),
        (lambda r: r["hands"][0]["events"].__setitem__(0, ["bid", 0]), "events[0] must be [kind, seat, value]"),
        (lambda r: r["hands"][0]["events"].__setitem__(0, ["pass", 0, 0]), "kind 'pass'"),
        (lambda r: r["hands"][0].update(trump=5), "trump must be str/NoneType"),
        (lambda r: r["rules"].pop("hook"), "rules.hook is missing"),
        (lambda r: r.update(seats=[]), "seats lists 0 seats for a 4-player game"),
    ],
)
def test_malformed_records_name_the_field(record: dict, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    bad = copy.deepcopy(record)
    mutate(bad)
    verdict = referee(bad)
    assert not verdict.valid and message in (verdict.malformed or ""), verdict.summary()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_arbitrary_json_never_raises(document: object) -> None:
    assert not referee(document).valid


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.data())
def test_random_corruption_of_a_real_record_never_raises(record: dict, data: st.DataObject) -> None:
    bad = copy.deepcopy(record)
    hand = bad["hands"][data.draw(st.integers(0, len(bad["hands"]) - 1))]
    field = data.draw(st.sampled_from(["events", "deal", "dealer", "size", "trump", "bids"]))
    replacement = data.draw(json_values)
    if field in ("events", "deal") and isinstance(hand[field], list) and hand[field]:
        index = data.draw(st.integers(0, len(hand[field]) - 1))
        hand[field][index] = replacement
    else:
        hand[field] = replacement
    referee(bad)  # any verdict is fine; raising is not


def test_cli_referee_exit_codes(record: dict, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.json"
    good.write_text(json.dumps(record))
    assert main(["referee", str(good)]) == 0
    assert "valid" in capsys.readouterr().out
    bad = copy.deepcopy(record)
    bad["hands"][0]["events"][0][2] = 99
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    assert main(["referee", str(tmp_path / "bad.json")]) == 1
    assert "illegal action #0" in capsys.readouterr().out
    (tmp_path / "junk.json").write_bytes(b"\xff\xfe not json")
    assert main(["referee", str(tmp_path / "junk.json")]) == 2
    assert main(["referee", str(tmp_path / "missing.json")]) == 2
    assert referee_text("{").malformed is not None
