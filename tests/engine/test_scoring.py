"""Every scoring method against values worked out by hand from the rule documents' tables."""

from __future__ import annotations

import pytest

from ohell.errors import RulesError
from ohell.rules import Rules, Scoring
from ohell.scoring import hand_score

# (method, bid, tricks, cards dealt, hand number, vienna, expected points)
CASES = [
    (Scoring.EXACT, 3, 3, 5, 1, False, 13),
    (Scoring.EXACT, 0, 0, 5, 1, False, 10),
    (Scoring.EXACT, 2, 3, 5, 1, False, 0),
    (Scoring.POSITIVE, 2, 2, 5, 1, False, 12),
    (Scoring.POSITIVE, 2, 4, 5, 1, False, 4),
    (Scoring.NEGATIVE, 4, 4, 5, 1, False, 10),
    (Scoring.NEGATIVE, 4, 1, 5, 1, False, -30),
    (Scoring.BALANCED, 3, 3, 5, 1, False, 13),
    (Scoring.BALANCED, 3, 0, 5, 1, False, -6),
    (Scoring.HYBRID, 3, 3, 5, 1, False, 13),
    (Scoring.HYBRID, 3, 1, 5, 1, False, 1),
    (Scoring.HYBRID, 1, 3, 5, 1, False, 0),
    (Scoring.DOUBLES, 3, 3, 5, 1, False, 16),
    (Scoring.DOUBLES, 3, 5, 5, 1, False, -4),
    (Scoring.TRIPLES, 2, 2, 5, 1, False, 16),
    (Scoring.TRIPLES, 2, 0, 5, 1, False, -6),
    (Scoring.SQUARES, 3, 3, 5, 1, False, 19),
    (Scoring.SQUARES, 0, 3, 5, 1, False, -9),
    (Scoring.ANDERSON, 2, 2, 5, 1, False, 20),
    (Scoring.ANDERSON, 2, 2, 5, 4, False, 80),
    (Scoring.ANDERSON, 2, 5, 5, 3, False, -90),
    (Scoring.ANDERSON, 0, 0, 5, 3, False, 0),
    (Scoring.CONTRACT_WHIST, 3, 3, 5, 1, False, 3),
    (Scoring.CONTRACT_WHIST, 1, 4, 5, 1, False, -3),
    (Scoring.CONTRACT_WHIST, 4, 1, 5, 1, False, -6),
    (Scoring.CONSOLATION, 2, 2, 5, 1, False, 14),
    (Scoring.CONSOLATION, 2, 3, 5, 1, False, 3),
    (Scoring.CONSOLATION, 0, 0, 5, 1, False, 10),
    # Vienna: a made bid of 0 is worth cards dealt + 5; other results are unchanged
    (Scoring.EXACT, 0, 0, 7, 1, True, 12),
    (Scoring.NEGATIVE, 0, 0, 1, 1, True, 6),
    (Scoring.POSITIVE, 2, 2, 7, 1, True, 12),
    (Scoring.BALANCED, 0, 1, 7, 1, True, -2),
]


@pytest.mark.parametrize(("method", "bid", "tricks", "dealt", "number", "vienna", "expected"), CASES)
def test_hand_score(
    method: Scoring, bid: int, tricks: int, dealt: int, number: int, vienna: bool, expected: int
) -> None:
    score = hand_score(method=method, bid=bid, tricks=tricks, cards_dealt=dealt, hand_number=number, vienna=vienna)
    assert score == expected


def test_hand_score_takes_keywords_only() -> None:
    with pytest.raises(TypeError):
        hand_score(Scoring.EXACT, 2, 2, 5, 1, False)  # type: ignore[misc]


def test_every_method_is_covered() -> None:
    assert {case[0] for case in CASES} == set(Scoring)


def test_vienna_is_refused_with_anderson() -> None:
    with pytest.raises(RulesError, match="anderson"):
        Rules(scoring=Scoring.ANDERSON, vienna=True)
