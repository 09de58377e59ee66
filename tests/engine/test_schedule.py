from __future__ import annotations

import pytest

from ohell.errors import RulesError
from ohell.presets import preset
from ohell.rules import Direction, Rules
from ohell.schedule import hand_sizes, no_trump_hand


@pytest.mark.parametrize(("players", "start"), [(3, 10), (4, 10), (5, 10), (6, 8), (7, 7)])
def test_classic_goes_down_to_one_and_back_playing_one_once(players: int, start: int) -> None:
    sizes = hand_sizes(preset("classic"), players)
    assert sizes == tuple(range(start, 0, -1)) + tuple(range(2, start + 1))
    assert sizes.count(1) == 1


@pytest.mark.parametrize(("players", "top"), [(3, 17), (4, 13), (5, 10), (6, 8), (7, 7)])
def test_river_goes_up_to_the_full_deal_and_back(players: int, top: int) -> None:
    sizes = hand_sizes(preset("river"), players)
    assert sizes == tuple(range(1, top + 1)) + tuple(range(top - 1, 0, -1))
    assert hand_sizes(preset("river-blackout"), players) == tuple(range(1, top + 1))


def test_online_settings() -> None:
    assert hand_sizes(preset("online"), 4)[:3] == (10, 9, 8)
    assert hand_sizes(preset("online-min3"), 4) == (10, 9, 8, 7, 6, 5, 4, 3, 4, 5, 6, 7, 8, 9, 10)
    assert hand_sizes(preset("online-up"), 5)[0] == 1
    assert hand_sizes(preset("online-no-rebound"), 4) == tuple(range(10, 0, -1))
    assert hand_sizes(Rules(max_cards=6, direction=Direction.UP, rebound=False), 4) == (1, 2, 3, 4, 5, 6)
    assert hand_sizes(preset("online"), 6)[0] == 8  # lower default maximum for 6+ players
    assert hand_sizes(Rules(max_cards=17), 7)[0] == 7  # never more than the pack allows


def test_no_trump_every_third_hand() -> None:
    rules = preset("river-no-trump-thirds")
    assert [n for n in range(1, 10) if no_trump_hand(rules, n)] == [3, 6, 9]
    assert not any(no_trump_hand(preset("river"), n) for n in range(1, 30))


@pytest.mark.parametrize(
    ("options", "players", "message"),
    [
        ({"min_cards": 3, "max_cards": 2}, 4, "max_cards=2 is below min_cards=3"),
        ({"hand_sizes": [14]}, 4, "^hand_sizes: a hand of 14 cards, more than the 13 a deck gives each of 4 players$"),
        ({}, 2, "num_players=2"),
        ({}, 8, "num_players=8"),
    ],
)
def test_bad_schedules_are_refused(options: dict[str, object], players: int, message: str) -> None:
    with pytest.raises(RulesError, match=message):
        hand_sizes(Rules.from_dict(options), players)
