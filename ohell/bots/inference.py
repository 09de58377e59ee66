"""What the cards the other seats chose to play say about the cards they still hold.

Every card another seat played this hand was a choice among the cards it held then. For a
sampled deal we know what it held then (its sampled hand now plus the cards it played since),
so we can ask what the playout policy (``ohell.bots.playout``: win while short of the bid, duck
once it is made) would have played from that hand. A deal where the seat played the policy's
card is more likely than one where it played another: each choice multiplies the deal's weight
by 1 when they agree and by ``PLAY_MISMATCH`` when they do not. Forced plays (one legal card)
agree in every deal, so they weigh nothing. The factor is soft because real players are not the
policy; it makes worlds where the others played sensibly count more, such as a seat that ducked
with a low card while it wanted tricks probably holding no winner.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ohell.bots.playout import ABOVE, follow_card, highest, lead_card
from ohell.bots.sampling import HiddenDeal, bid_fit
from ohell.cards import SUIT_MASKS
from ohell.observation import Observation
from ohell.rules import Bidding, Scoring

PLAY_MISMATCH = 0.3  # weight factor for a card the policy would not have played (0.05 measured worse)


@dataclass(frozen=True)
class Choice:
    pos: int  # position (0 = first to act in the hand)
    card: int
    lead_mask: int  # the led suit's cards, 0 when this card led
    best: int  # the card winning the trick when this one was played, -1 when leading
    last: bool  # the last card of the trick
    want: bool  # the seat still wanted tricks then
    later: int  # the cards this seat played from this choice on (this one included)


class PlayEvidence:
    """The other seats' card choices this hand, ready to weigh sampled deals."""

    def __init__(self, obs: Observation, mismatch: float | None = None) -> None:
        order = obs.participants
        k = len(order)
        pos_of = {seat: pos for pos, seat in enumerate(order)}
        me = pos_of[obs.seat]
        self.mismatch = PLAY_MISMATCH if mismatch is None else mismatch
        self.trump_mask = SUIT_MASKS[obs.trump_suit] if obs.trump_suit >= 0 else 0
        over_wants = obs.rules.scoring is Scoring.POSITIVE
        bids = [obs.bids[seat] for seat in order]
        won = [0] * k
        tricks = [(t.leader, t.cards, t.winner) for t in obs.tricks]
        if obs.current_trick:
            tricks.append((obs.trick_leader, obs.current_trick, -1))
        raw: list[tuple[int, int, int, int, bool, bool]] = []
        trump_mask = self.trump_mask
        for leader, cards, winner in tricks:
            first = pos_of[leader]
            best = -1
            lead_mask = 0
            for index, card in enumerate(cards):
                pos = (first + index) % k
                have, bid = won[pos], bids[pos]
                want = bid < 0 or have < bid or (over_wants and have > bid)
                raw.append((pos, card, lead_mask, best, index == k - 1, want))
                if index == 0:
                    lead_mask = SUIT_MASKS[card // 13]
                    best = card
                elif (1 << card) & (ABOVE[best] | (0 if (trump_mask >> best) & 1 else trump_mask)):
                    best = card
            if winner >= 0:
                won[pos_of[winner]] += 1
        later = [0] * k
        choices: list[Choice] = []
        for pos, card, lead_mask, best, last, want in reversed(raw):
            later[pos] |= 1 << card
            if pos != me:
                choices.append(Choice(pos, card, lead_mask, best, last, want, later[pos]))
        self.choices = tuple(reversed(choices))

        by_pos: dict[int, list[Choice]] = {}
        for choice in self.choices:
            by_pos.setdefault(choice.pos, []).append(choice)
        self.by_pos = {pos: tuple(mine) for pos, mine in by_pos.items()}

    def weight(self, hands: list[int]) -> float:
        """How well the sampled hands (held now, by position) explain the choices seen."""
        weight = 1.0
        for pos in self.by_pos:
            weight *= self.seat_weight(pos, hands[pos])
        return weight

    def seat_weight(self, pos: int, hand: int) -> float:
        """How well ``hand`` (held now by position ``pos``) explains that seat's choices."""
        weight = 1.0
        trump_mask = self.trump_mask
        for choice in self.by_pos.get(pos, ()):
            held = hand | choice.later
            if choice.lead_mask:
                legal = held & choice.lead_mask or held
                if legal & (legal - 1) == 0:
                    continue
                policy = follow_card(legal, choice.want, choice.best, choice.last, trump_mask)
                if policy != choice.card and choice.want and not choice.last and (1 << policy) & trump_mask:
                    # ruffing to win before the last seat, the highest trump is as natural as the cheapest
                    policy = highest(legal & trump_mask, trump_mask)
            else:
                policy = lead_card(held, choice.want, trump_mask)
            if policy != choice.card:
                weight *= self.mismatch
        return weight


def deal_fit(obs: Observation, hidden: HiddenDeal) -> Callable[[int, int], float] | None:
    """``fit(position, hand)``: how well ``hand``, held now by another seat, explains what that
    seat did this hand: its bid (``sampling.bid_fit`` on the hand as dealt, the hook's forbidden
    bid left out for the dealer; blind bids weigh nothing) times its card choices
    (``PlayEvidence``). A deal's weight is the product over the seats. None when there is
    nothing to weigh."""
    k = len(obs.participants)
    me = hidden.seat_pos
    size = obs.hand_size
    bids = [obs.bids[seat] for seat in obs.participants]
    weigh_bids = obs.rules.bidding is not Bidding.BLIND
    hook = obs.rules.hook
    fits = {
        pos: (bids[pos], past_forbidden(bids, pos, size, hook))
        for pos in range(k)
        if weigh_bids and pos != me and bids[pos] >= 0
    }
    plays = PlayEvidence(obs)
    if not fits and not plays.choices:
        return None
    played = hidden.played
    trump_suit = obs.trump_suit
    num_players = obs.num_players

    def fit(pos: int, hand: int) -> float:
        weight = plays.seat_weight(pos, hand)
        if pos in fits:
            bid, forbidden = fits[pos]
            weight *= bid_fit(hand | played[pos], trump_suit, bid, size, forbidden, num_players)
        return weight

    return fit


def past_forbidden(bids: Sequence[int], pos: int, size: int, hook: bool) -> int:
    """The bid the hook forbade to position ``pos`` when it bid (the dealer, last), else -1."""
    if not hook or pos != len(bids) - 1:
        return -1
    return size - sum(b for b in bids[:-1] if b >= 0)
