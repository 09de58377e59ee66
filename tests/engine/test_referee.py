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
from ohell.match import play_game
from ohell.presets import preset
from ohell.record import build_record
from ohell.referee import referee, referee_text, replay
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


def test_the_first_illegal_action_is_named_with_its_index(record: dict) -> None:
    bad = copy.deepcopy(record)
    hand = bad["hands"][0]
    first_play = next(i for i, e in enumerate(hand["events"]) if e[0] == "play")
    leader = hand["events"][first_play][1]
    follower_event = hand["events"][first_play + 1]
    led_suit = hand["events"][first_play][2][1]
    follower = follower_event[1]
    off_suit = next((c for c in hand["deal"][follower] if c[1] != led_suit), None)
    if off_suit is None or all(c[1] != led_suit for c in hand["deal"][follower]):
        pytest.skip("deal does not allow a revoke at this point")
    follower_event[2] = off_suit
    verdict = referee(bad)
    assert not verdict.valid
    assert verdict.illegal_index == first_play + 1
    assert verdict.illegal_hand == 1 and f"seat {follower}" in verdict.illegal_reason
    assert "must follow" in verdict.illegal_reason or "does not hold" in verdict.illegal_reason
    assert leader != follower


def test_a_forbidden_dealer_bid_is_reported(record: dict) -> None:
    bad = copy.deepcopy(record)
    hand = bad["hands"][0]
    bids = [e for e in hand["events"] if e[0] == "bid"]
    others = sum(e[2] for e in bids[:-1])
    bids[-1][2] = hand["size"] - others
    verdict = referee(bad)
    assert verdict.illegal_index == len(bids) - 1 and "hook" in verdict.illegal_reason


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
