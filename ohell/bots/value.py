"""What a hand's outcome is worth to one seat, with the whole game in view.

``HandValue(obs)`` is built once per decision. ``value(bids, won)`` (by position) returns

    own hand score - RIVAL_WEIGHT * mean of the others' hand scores + win_weight * P(win)

where P(win) estimates the chance of winning the game after this hand: for each other seat,
``Phi(lead / spread)``, multiplied over the others. ``lead`` is our total after this hand less
theirs (the scores so far plus this hand's scores); ``spread`` is how far the lead between two
seats typically moves over the hands still to come (after this one), from the swing between
making and missing a typical bid under the rule set's own scoring (so Anderson's rising trick
value, negative scoring and the rest are all in scale). Early in a game the spread is wide and
P(win) moves little with one hand; late in it, P(win) decides: a seat far ahead takes the safe
line, a seat far behind the risky one. In the last hand P(win) is the outcome itself (1, a
share on a tie, 0). ``win_weight`` is WIN_WEIGHT times the spread of the hands from this one
on, so the term is in the game's own units.

In a sudden-death hand the value is +1 when we alone are exact (we win), -1 when another seat
alone is, and 0 when none or several are (another hand follows).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ohell.observation import Observation
from ohell.rules import TieBreak
from ohell.schedule import hand_sizes
from ohell.scoring import hand_score

RIVAL_WEIGHT = 0.15  # the others' mean hand score, against our own (turns equal outcomes into wins)
WIN_WEIGHT = 2.0  # P(win), in units of the spread of the rest of the game
SWING_SHARE = 0.5  # the typical move of one seat's score in one hand, as a share of the swing
_SQRT2 = math.sqrt(2.0)


def hand_swing(obs: Observation, hand_number: int, size: int) -> float:
    """Points between making a typical bid and missing it by one in one hand."""
    rules = obs.rules
    k = len(obs.participants)
    bid = max(1, round(size / k))

    def score(tricks: int) -> int:
        return hand_score(
            method=rules.scoring, bid=bid, tricks=tricks, cards_dealt=size, hand_number=hand_number,
            vienna=rules.vienna,
        )  # fmt: skip

    return float(abs(score(bid) - score(bid + 1)) + abs(score(bid) - score(bid - 1))) / 2.0 or 1.0


class HandValue:
    """The utility of a hand's outcomes to ``obs.seat``, by position (0 = first to act)."""

    def __init__(self, obs: Observation, rival_weight: float | None = None, win_weight: float | None = None) -> None:
        rules = obs.rules
        rival_weight = RIVAL_WEIGHT if rival_weight is None else rival_weight
        win_weight = WIN_WEIGHT if win_weight is None else win_weight
        self.sudden = obs.sudden_death
        self.seats = obs.participants
        self.me = self.seats.index(obs.seat)
        self.method = rules.scoring
        self.vienna = rules.vienna
        self.size = obs.hand_size
        self.number = obs.hand_number
        self.rival_weight = rival_weight
        k = len(self.seats)
        self.totals = [obs.scores[seat] for seat in self.seats]
        # seats out of a sudden-death hand are out of the game: only participants count
        self.share_ties = rules.tie_break is TieBreak.SHARE
        later = 0.0
        now = 0.0
        if not self.sudden:
            schedule = hand_sizes(rules, obs.num_players)
            for index in range(obs.hand_number - 1, len(schedule)):
                swing = SWING_SHARE * hand_swing(obs, index + 1, schedule[index])
                now += swing * swing
                if index >= obs.hand_number:
                    later += swing * swing
        self.spread = _SQRT2 * math.sqrt(later)  # of the lead between two seats, after this hand
        self.win_weight = win_weight * _SQRT2 * math.sqrt(now)
        self.k = k
        self._cache: dict[tuple[int, int], int] = {}

    def score(self, bid: int, tricks: int) -> int:
        key = (bid, tricks)
        points = self._cache.get(key)
        if points is None:
            points = hand_score(
                method=self.method, bid=bid, tricks=tricks, cards_dealt=self.size, hand_number=self.number,
                vienna=self.vienna,
            )  # fmt: skip
            self._cache[key] = points
        return points

    def value(self, bids: Sequence[int], won: Sequence[int]) -> float:
        me = self.me
        if self.sudden:
            exact = [pos for pos in range(self.k) if bids[pos] == won[pos]]
            if len(exact) != 1:
                return 0.0
            return 1.0 if exact[0] == me else -1.0
        points = [self.score(bids[pos], won[pos]) for pos in range(self.k)]
        mine = points[me]
        theirs = sum(points) - mine
        result = mine - self.rival_weight * theirs / (self.k - 1)
        if self.win_weight:
            result += self.win_weight * self.win_chance(points)
        return result

    def win_chance(self, points: Sequence[int]) -> float:
        """Estimated chance of winning the game with these hand scores added to the totals."""
        me = self.me
        ours = self.totals[me] + points[me]
        chance = 1.0
        spread = self.spread
        for pos in range(self.k):
            if pos == me:
                continue
            lead = ours - self.totals[pos] - points[pos]
            if spread > 0:
                chance *= 0.5 * math.erfc(-lead / (spread * _SQRT2))
            elif lead < 0:
                return 0.0
            elif lead == 0:
                chance *= 0.5
        return chance
