"""The replay viewer's frames from match records, and the host page's CSV of names (pure logic)."""

from __future__ import annotations

import pytest

from ohell.bots import make_bot
from ohell.match import play_game
from ohell.presets import preset, preset_with_options
from ohell.record import build_record
from ohell.state import Game
from services.web.host import names_from_csv
from services.web.replay import card_face, frames, held_at, replay


def record_of(rules_name: str, seats: int, seed: int, options: list[str] | None = None) -> dict:
    rules = preset_with_options(rules_name, options) if options else preset(rules_name)
    bots = [make_bot("heuristic" if i % 2 else "random", seed + i) for i in range(seats)]
    state = play_game(Game(rules, seats), bots, seed)
    return build_record(state, [{"name": f"p{i}"} for i in range(seats)], seed=seed, match_id=f"m-{seed}")


@pytest.mark.parametrize(("rules", "seats", "seed"), [("classic", 4, 1), ("classic", 3, 2), ("classic", 7, 3)])
def test_frames_walk_the_record(rules: str, seats: int, seed: int) -> None:
    record = record_of(rules, seats, seed)
    viewer = replay(record)
    steps = viewer["frames"]
    for frame in steps:
        frame["held"] = held_at(viewer["hands"], frame)
    assert steps[-1]["totals"] == record["totals"] and steps[-1]["caption"].startswith("match over")
    actions = sum(len(hand["events"]) for hand in record["hands"])
    tricks = sum(len(hand["tricks"]) for hand in record["hands"])
    assert len(steps) == 2 * len(record["hands"]) + actions + tricks + 1  # deal + end per hand, then the end
    ends = [f for f in steps if f["caption"].startswith("end of hand")]
    assert [f for f in steps if "points" in f] == ends  # the score table gets one row per hand
    assert [f["totals"] for f in ends] == [hand["totals"] for hand in record["hands"]]
    assert [f["points"] for f in ends] == [hand["points"] for hand in record["hands"]]
    assert [f["won"] for f in ends] == [hand["tricks_won"] for hand in record["hands"]]
    assert all(not any(f["held"]) for f in ends)  # every dealt card was played
    for before, after in zip(steps, steps[1:], strict=False):  # a card leaves a hand only when played
        if after["caption"].startswith(tuple(f"p{i} plays" for i in range(seats))):
            seat, card = after["acting"], after["trick"][-1][1]
            assert after["caption"] == f"{record['seats'][seat]['name']} plays {card_face(card)}"  # as on the table
            assert card in before["held"][seat] and card not in after["held"][seat]


def test_captions_show_cards_as_the_table_does() -> None:
    """Captions read "plays TH" and "trump 6S" beside cards drawn as 10♥ and 6♠."""
    assert [card_face(card) for card in ("TH", "6S", "AD", "2C")] == ["10♥", "6♠", "A♦", "2♣"]
    record = record_of("classic", 4, 1)
    deal = frames(record)[0]["caption"]
    assert deal.endswith(f"trump {card_face(record['hands'][0]['trump'])}")


def test_bid_frames_carry_the_bids_so_far() -> None:
    record = record_of("classic", 4, 5, ["hand_sizes=[2,1]"])
    steps = frames(record)
    bids = [f for f in steps if " bids " in f["caption"]]
    assert len(bids) == 8 and bids[3]["bids"] == record["hands"][0]["bids"]


def test_names_from_csv() -> None:
    assert names_from_csv("name,email\nalice,a@x\n bob ,b@x\n\n,\n") == ["alice", "bob"]
    assert names_from_csv("carol\ndave\n") == ["carol", "dave"]
    assert names_from_csv("") == []
    with pytest.raises(ValueError, match="field larger"):  # a host's upload of 256 KB at most: a 500 before
        names_from_csv("name\n" + "x" * 200_000)


def test_rules_are_named_the_same_on_every_page() -> None:
    """A ladder of classic rules with short hands is "classic, hand_sizes=..." on its leaderboard
    (the API's rules) and in its replays (the record's rules), not "classic" on one and "custom" on
    the other."""
    from arena.wire import proto_rules_label, rules_label, rules_to_proto
    from services.web.views import record_rules_label

    short = preset_with_options("classic", ["hand_sizes=[5,4,3,2,1]"])
    message = rules_to_proto(short)
    message.preset = "classic"  # as the matchmaker answers for a ladder made from the classic preset
    record = record_of("classic", 4, 5, ["hand_sizes=[5,4,3,2,1]"])
    assert record["preset"] is None
    assert proto_rules_label(message) == record_rules_label(record) == "classic, hand_sizes=5,4,3,2,1"
    assert rules_label(preset("classic")) == "classic" == record_rules_label(record_of("classic", 3, 6))
    assert rules_label(preset_with_options("classic", ["hook=false"])) == "classic, hook=false"
