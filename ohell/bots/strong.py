"""Search bot: perfect-information Monte Carlo over the likely deals, valued for the whole game.

For every decision it draws deals of the hidden cards consistent with what the seat has seen
(``ohell.bots.sampling``: counts, voids shown, the turned trump), weighs them by how well they
explain every bid (``sampling.bid_fit``) and every card the others chose to play
(``ohell.bots.inference``), and searches a weighted resample of them. A bid: on each deal, every
candidate is tried and the hand finished with the fast playout policy (``ohell.bots.playout``).
A card: an information-set tree search over those deals (``ohell.bots.search``; ``tree=False``
plays by flat playouts like a bid). Outcomes
are valued by ``ohell.bots.value.HandValue``: the hand's real score under the rule set, a small
share of the others' scores against it, and the estimated chance of winning the game with the
totals and the hands left in view (sudden-death hands: win, lose or go on).

A bid is a candidate like a card: the playouts then play to that bid, so bidding maximises
expected value over the predicted distribution of tricks. The hook needs no special case: the
forbidden bid is not among the legal ones.

Determinism: the number of deals is a function of the observation only (a fixed amount of
playout work per decision, split over the candidates), drawn from the bot's own seeded
``random.Random``. ``budget_ms`` is a safety ceiling: if the work has not finished by then, the
bot decides on the deals done so far (counted in ``ceiling_hits``). Only then can the machine's
speed change a decision.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Sequence

from ohell.bots.heuristic import choose_bid, trick_estimate
from ohell.bots.inference import deal_fit
from ohell.bots.playout import follow_card, lead_card, play_out
from ohell.bots.sampling import HiddenDeal, estimate_tricks, is_blind, rejuvenate
from ohell.bots.search import search_play
from ohell.bots.value import HandValue
from ohell.cards import NO_CARD, SUIT_MASKS, winning_card
from ohell.observation import Observation
from ohell.rules import Scoring

DEFAULT_BUDGET_MS = 1000.0
PLAY_WORK = 9000  # card plays simulated per decision (samples x candidates x cards left)
BID_WORK = 24000  # a bid sets up the whole hand: twice the work of a card, so its choice is less noisy
MIN_SAMPLES = 8
MAX_SAMPLES = 200
BID_SPAN = 2  # bids further than this from the heuristic estimate are not simulated (rarely chosen)
# A dealer's blind rebid (the sealed bids met the hook) is searched with the hand still unknown: bids 2 from
# hand size / seats were chosen on flat-playout odds that overrate them (docs/bots.md, "River-blind: the blind bid").
BLIND_BID_SPAN = 1.5
BLIND_BID_WORK = 2 * BID_WORK  # fewer candidates and no inference: more deals tell neighbouring bids apart
MAX_BLIND_SAMPLES = 300
DRAW_FACTOR = 4  # deals drawn and weighed per deal searched, when there is evidence to weigh
MAX_DRAWS = 400
MOVE_STEPS = 0  # card swaps between the copies of a deal picked several times (0: search the copies as one)
TREE_WORK = 9000  # card plays per play decision of the tree search (iterations x cards left)
MIN_ITERATIONS = 64
MAX_ITERATIONS = 800


class StrongBot:
    name = "strong"

    def __init__(
        self,
        seed: int = 0,
        budget_ms: float = DEFAULT_BUDGET_MS,
        effort: float = 1.0,
        win_weight: float | None = None,
        tree: bool = True,
    ) -> None:
        """``budget_ms``: the most time one decision may take. ``effort`` scales the fixed amount
        of simulation per decision (below 1 also the minimum number of samples). ``win_weight``:
        the weight of the game-win term (``ohell.bots.value``; None: the default, 0: points only)."""
        if budget_ms <= 0:
            raise ValueError(f"budget_ms={budget_ms!r} must be positive")
        if effort <= 0:
            raise ValueError(f"effort={effort!r} must be positive")
        self.rng = random.Random(seed)
        self.budget_s = budget_ms / 1000.0
        self.effort = effort
        self.win_weight = win_weight
        self.tree = tree  # play by the tree search (``ohell.bots.search``), else by flat playouts
        self.last_samples = 0  # samples evaluated by the latest search (for tests and tuning)
        self.last_planned = 0  # samples it would have evaluated without the time budget
        self.decisions = 0  # searched decisions so far
        self.ceiling_hits = 0  # of which cut short by ``budget_ms``
        self.last_bid_odds: dict[int, float] = {}  # latest bid: each candidate's share of playouts landing on it

    # ----------------------------------------------------------------- bidding
    def bid(self, obs: Observation) -> int:
        legal = obs.legal_bids
        if len(legal) == 1:
            return legal[0]
        deadline = time.perf_counter() + self.budget_s
        hidden = HiddenDeal.from_observation(obs)
        k = len(obs.participants)
        me = hidden.seat_pos
        blind = is_blind(obs)
        seats = obs.participants
        known_bids = [obs.bids[seat] for seat in seats]
        if blind and known_bids[me] < 0 and below_mean_bid(obs.hand_size, k) in legal:
            self.last_bid_odds = {}
            return below_mean_bid(obs.hand_size, k)  # a dealer's rebid (the hook) is searched below
        centre = obs.hand_size / k if blind else trick_estimate(obs.hand, obs.trump_suit, obs.num_players)
        span = BLIND_BID_SPAN if blind else BID_SPAN
        candidates = [b for b in legal if abs(b - centre) <= span] or list(legal)
        cost = len(candidates) * obs.hand_size * k
        samples = self._plan(BLIND_BID_WORK, cost, MAX_BLIND_SAMPLES) if blind else self._plan(BID_WORK, cost)
        totals = [0.0] * len(candidates)
        made = [0.0] * len(candidates)  # weight of the playouts landing on each candidate
        weighed = 0.0
        over_wants = obs.rules.scoring is Scoring.POSITIVE
        hook = obs.rules.hook
        valuer = HandValue(obs, win_weight=self.win_weight)
        size = obs.hand_size
        seat_fit = deal_fit(obs, hidden)

        for hands, trump_card, weight in self._worlds(hidden, samples, seat_fit):
            trump_suit = trump_card // 13 if trump_card != NO_CARD else obs.trump_suit
            guesses = [0.0] * k
            for pos in range(k):
                if pos != me and known_bids[pos] < 0:
                    guesses[pos] = size / k if blind else estimate_tricks(hands[pos], trump_suit, obs.num_players)
            for index, candidate in enumerate(candidates):
                bids = self._table_bids(known_bids, guesses, me, candidate, size, hook)
                won = [0] * k
                play_out(list(hands), bids, won, 0, [], trump_suit, over_wants, me=me)
                totals[index] += weight * valuer.value(bids, won)
                made[index] += weight * (won[me] == candidate)
            weighed += weight
            self.last_samples += 1
            if time.perf_counter() > deadline:
                break
        self._count()
        self.last_bid_odds = {bid: m / weighed for bid, m in zip(candidates, made, strict=True)} if weighed else {}
        return _best(candidates, totals, lambda bid: -abs(bid - centre))

    @staticmethod
    def _table_bids(
        known: Sequence[int], guesses: Sequence[float], me: int, mine: int, size: int, hook: bool
    ) -> list[int]:
        """Every position's bid: known ones, ours, and a guess for the rest (the dealer, last,
        avoiding the hooked total)."""
        bids = list(known)
        bids[me] = mine
        k = len(bids)
        for pos in range(k):
            if bids[pos] < 0:
                forbidden = size - sum(bids[:-1]) if hook and pos == k - 1 else -1
                bids[pos] = choose_bid(guesses[pos], tuple(b for b in range(size + 1) if b != forbidden))
        return bids

    # ----------------------------------------------------------------- play
    def play(self, obs: Observation) -> int:
        legal = obs.legal_actions
        if len(legal) == 1:
            return legal[0]
        deadline = time.perf_counter() + self.budget_s
        hidden = HiddenDeal.from_observation(obs)
        candidates = distinct_cards(legal, hidden.unknown)
        if len(candidates) == 1:
            return candidates[0]
        k = len(obs.participants)
        me = hidden.seat_pos
        bids = [obs.bids[seat] for seat in obs.participants]
        won_now = [obs.tricks_won[seat] for seat in obs.participants]
        trick = list(obs.current_trick)
        cards_left = len(obs.hand) * k - len(trick)
        samples = self._plan(PLAY_WORK, len(candidates) * cards_left)
        totals = [0.0] * len(candidates)
        over_wants = obs.rules.scoring is Scoring.POSITIVE
        valuer = HandValue(obs, win_weight=self.win_weight)
        seat_fit = deal_fit(obs, hidden)
        favourite = favourite_of(candidates, policy_card(obs))
        if self.tree:
            return self._tree_play(hidden, seat_fit, cards_left, bids, won_now, trick, obs,
                                   candidates, valuer, favourite, deadline)  # fmt: skip
        for hands, _trump, weight in self._worlds(hidden, samples, seat_fit):
            for index, card in enumerate(candidates):
                won = list(won_now)
                play_out(list(hands), bids, won, me, trick, obs.trump_suit, over_wants, card, me)
                totals[index] += weight * valuer.value(bids, won)
            self.last_samples += 1
            if time.perf_counter() > deadline:
                break
        self._count()
        return _best(candidates, totals, lambda card: card == favourite)

    def _tree_play(
        self,
        hidden: HiddenDeal,
        seat_fit: Callable[[int, int], float] | None,
        cards_left: int,
        bids: list[int],
        won_now: list[int],
        trick: list[int],
        obs: Observation,
        candidates: list[int],
        valuer: HandValue,
        favourite: int,
        deadline: float,
    ) -> int:
        """Play by information-set tree search over the likely deals (``ohell.bots.search``)."""
        wanted = int(TREE_WORK * self.effort) // max(1, cards_left)
        iterations = max(round(MIN_ITERATIONS * min(1.0, self.effort)), min(MAX_ITERATIONS, wanted))
        samples = min(MAX_SAMPLES, iterations)
        self.last_samples = 0
        worlds = [
            hands for hands, _trump, weight in self._worlds(hidden, samples, seat_fit) for _ in range(int(weight))
        ]
        self.last_planned = iterations
        card, self.last_samples = search_play(
            worlds, iterations, hidden.seat_pos, bids, won_now, trick, obs.trump_suit,
            obs.rules.scoring is Scoring.POSITIVE, candidates, valuer, favourite,
            lambda: time.perf_counter() > deadline,
        )  # fmt: skip
        self._count()
        return card

    # ----------------------------------------------------------------- shared
    def _worlds(
        self, hidden: HiddenDeal, samples: int, seat_fit: Callable[[int, int], float] | None
    ) -> Iterator[tuple[list[int], int, float]]:
        """The deals to search, each with its weight. Without evidence (``seat_fit`` None): sampled
        deals, weight 1. With it (``seat_fit(position, hand held now)``: how well that hand explains
        what the seat did): ``DRAW_FACTOR`` times as many deals are drawn and weighed by the
        product over the seats, and ``samples`` of them are picked in proportion to their weights
        (systematic resampling). A deal picked once is searched as drawn; one picked several
        times, with ``MOVE_STEPS``, as that many distinct neighbours (``sampling.rejuvenate``),
        else once with its number of picks as weight. So the playouts go to the likely worlds."""
        rng = self.rng
        if seat_fit is None:
            for _ in range(samples):
                hands, trump = hidden.sample(rng)
                yield hands, trump, 1.0
            return
        me = hidden.seat_pos
        fitted = [pos for pos, count in enumerate(hidden.counts) if count and pos != me]
        drawn = [hidden.sample(rng) for _ in range(min(MAX_DRAWS, DRAW_FACTOR * samples))]
        weights = []
        for hands, _trump in drawn:
            weight = 1.0
            for pos in fitted:
                weight *= seat_fit(pos, hands[pos])
            weights.append(weight)
        total = sum(weights)
        step = total / samples
        point = rng.random() * step
        cumulative = 0.0
        picks: dict[int, int] = {}
        picked = 0
        for index, weight in enumerate(weights):
            cumulative += weight
            while point < cumulative and picked < samples:
                picks[index] = picks.get(index, 0) + 1
                picked += 1
                point += step
        self.last_planned = len(picks)
        for index, count in picks.items():
            hands, trump = drawn[index]
            if count == 1 or not MOVE_STEPS:
                yield hands, trump, float(count)
                continue
            self.last_planned += count - 1
            yield hands, trump, 1.0
            neighbours = rejuvenate(hands, hidden, seat_fit, rng, MOVE_STEPS)
            for _ in range(count - 1):
                yield next(neighbours), trump, 1.0

    def _plan(self, work: int, cost_per_sample: int, most: int = MAX_SAMPLES) -> int:
        """How many deals to sample: ``work`` card plays split over the cost of one sample."""
        wanted = int(work * self.effort) // max(1, cost_per_sample)
        floor = max(1, round(MIN_SAMPLES * min(1.0, self.effort)))
        self.last_samples = 0
        self.last_planned = max(floor, min(most, wanted))
        return self.last_planned

    def _count(self) -> None:
        self.decisions += 1
        self.ceiling_hits += self.last_samples < self.last_planned


def below_mean_bid(hand_size: int, seats: int) -> int:
    """The sealed blind bid: the largest bid below hand size / seats (0 when none). Searched, blind
    bids were no better than the heuristic's nearest bid; this one was made about as often and
    scored more (docs/bots.md, "River-blind: the blind bid")."""
    return max(0, (hand_size - 1) // seats)


def _best(candidates: Sequence[int], totals: Sequence[float], preference: Callable[[int], float]) -> int:
    """The candidate with the best total; exact ties (common with few samples and decided
    outcomes) go to the preferred one."""
    return max(zip(totals, map(preference, candidates), candidates, strict=True))[2]


def policy_card(obs: Observation) -> int:
    """The card the playout policy would play now."""
    hand = 0
    for card in obs.hand:
        hand |= 1 << card
    trump_mask = SUIT_MASKS[obs.trump_suit] if obs.trump_suit >= 0 else 0
    seat = obs.seat
    have, bid = obs.tricks_won[seat], obs.bids[seat]
    want = have < bid or (obs.rules.scoring is Scoring.POSITIVE and have > bid)
    trick = obs.current_trick
    if not trick:
        return lead_card(hand, want, trump_mask)
    legal = hand & SUIT_MASKS[trick[0] // 13] or hand
    last = len(trick) == len(obs.participants) - 1
    return follow_card(legal, want, winning_card(trick, obs.trump_suit), last, trump_mask)


def favourite_of(candidates: Sequence[int], card: int) -> int:
    """The candidate standing for ``card``: the lowest card of its run of equivalents."""
    return max((c for c in candidates if c // 13 == card // 13 and c <= card), default=card)


def distinct_cards(legal: Sequence[int], unknown: int) -> list[int]:
    """One card of each run of legal cards that are equivalent: same suit with no card that
    another seat may hold ranking between them."""
    chosen: list[int] = []
    previous = -1
    for card in sorted(legal):
        between = (1 << card) - (2 << previous) if previous >= 0 else 0
        if previous < 0 or card // 13 != previous // 13 or unknown & between:
            chosen.append(card)
        previous = card
    return chosen
