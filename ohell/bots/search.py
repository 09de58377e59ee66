"""Information-set Monte Carlo tree search for the play of one hand, on 52-bit card masks.

The strong bot's flat search tries each of its cards once per sampled deal and finishes the hand
with the fixed playout policy for every seat. Here one tree is grown over the cards played from
the decision on (every card played is public, so a node is what all seats have seen since),
shared by all the sampled deals: each iteration takes the next deal, walks down the tree choosing
at every node, for the seat to play, among the cards it holds in that deal by UCB on that seat's
own results (each child's availability counted, as in single-observer ISMCTS), adds one node
(the playout policy's own card first), finishes the hand with the playout policy and credits
every node on the path with the result of the seat that chose it. So our later cards and the
others' answers are searched instead of assumed, and no node knows more than its seat would.

Every seat's result is divided by the largest hand score in absolute value (plus the game term's
weight), so it lies within about -1..1; ours is the strong bot's whole-game value
(``ohell.bots.value.HandValue``), the others' their hand score.
The decision is the most visited card at the root (ties: the policy's own card).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from ohell.bots import playout
from ohell.bots.playout import BEATS, follow_card, lead_card, play_out
from ohell.bots.value import HandValue
from ohell.cards import SUIT_MASKS

UCB_C = 0.7  # exploration, in units of the result scale


class Node:
    __slots__ = ("children", "expanded", "visits", "total", "avail")

    def __init__(self) -> None:
        self.children: dict[int, Node] = {}
        self.expanded = 0  # mask of the cards with a child
        self.visits = 0
        self.total = 0.0
        self.avail = 0


def search_play(
    worlds: Sequence[list[int]],
    iterations: int,
    me: int,
    bids: Sequence[int],
    won_now: Sequence[int],
    trick: Sequence[int],
    trump_suit: int,
    over_wants: bool,
    candidates: Sequence[int],
    valuer: HandValue,
    favourite: int,
    out_of_time: Callable[[], bool],
    ucb_c: float = UCB_C,
) -> tuple[int, int]:
    """The card to play and the number of iterations run. ``worlds``: hands now held, by
    position, one per iteration in turn (repeat a deal to weigh it); ``candidates``: our cards
    worth telling apart."""
    k = len(bids)
    trump_mask = SUIT_MASKS[trump_suit] if trump_suit >= 0 else 0
    beats = BEATS[trump_suit]
    root_mask = 0
    for card in candidates:
        root_mask |= 1 << card
    scale = _scale(valuer)
    others = [pos for pos in range(k) if pos != me]
    c = ucb_c
    log = math.log
    sqrt = math.sqrt
    others_high = playout.OTHERS_RUFF_HIGH
    root = Node()
    ran = 0
    n_worlds = len(worlds)
    for done in range(iterations):
        if done and out_of_time():
            break
        hands = list(worlds[done % n_worlds])
        won = list(won_now)
        cards = list(trick)
        count = len(cards)
        best = best_pos = -1
        lead_mask = 0
        if count:
            lead_mask = SUIT_MASKS[cards[0] // 13]
            leader = (me - count) % k
            for index, card in enumerate(cards):
                if best < 0 or (1 << card) & beats[best]:
                    best, best_pos = card, (leader + index) % k
        pos = me
        node = root
        path: list[tuple[Node, int]] = []
        remaining = 0
        for hand in hands:
            remaining |= hand
        while remaining:
            hand = hands[pos]
            legal = root_mask if node is root else (hand & lead_mask or hand) if count else hand
            fresh = legal & ~node.expanded
            if fresh:
                want = won[pos] < bids[pos] or (over_wants and won[pos] > bids[pos])
                if count == 0:
                    card = lead_card(legal, want, trump_mask)
                else:
                    card = follow_card(legal, want, best, count == k - 1, trump_mask, others_high and pos != me)
                if node is root:
                    card = favourite
                if not (fresh >> card) & 1:
                    card = (fresh & -fresh).bit_length() - 1
                child = Node()
                node.children[card] = child
                node.expanded |= 1 << card
                path.append((child, pos))
                play_out(hands, list(bids), won, pos, cards, trump_suit, over_wants, card, me)
                break
            # every legal card has a child: UCB over them, each counted as available
            children = node.children
            best_score = -1e300
            card = -1
            chosen = node
            bits = legal
            while bits:
                low = bits & -bits
                bits ^= low
                option = low.bit_length() - 1
                child = children[option]
                child.avail += 1
                score = child.total / child.visits + c * sqrt(log(child.avail) / child.visits)
                if score > best_score:
                    best_score, card, chosen = score, option, child
            path.append((chosen, pos))
            node = chosen
            bit = 1 << card
            hands[pos] ^= bit
            remaining ^= bit
            if count == 0:
                lead_mask = SUIT_MASKS[card // 13]
                best, best_pos = card, pos
            elif bit & beats[best]:
                best, best_pos = card, pos
            cards.append(card)
            count += 1
            if count == k:
                won[best_pos] += 1
                count = 0
                cards = []
                pos = best_pos
            else:
                pos = pos + 1 if pos + 1 < k else 0
        results = [0.0] * k
        results[me] = valuer.value(bids, won) / scale
        for other in others:
            results[other] = valuer.score(bids[other], won[other]) / scale
        for child, mover in path:
            child.visits += 1
            child.total += results[mover]
        ran += 1
    ranked = [(child.visits, card == favourite, card) for card, child in root.children.items()]
    return max(ranked)[2] if ranked else favourite, ran


def _scale(valuer: HandValue) -> float:
    """The largest hand score in absolute value (at least 1), plus the whole-game term's weight."""
    size = valuer.size
    top = max(abs(valuer.score(bid, tricks)) for bid in range(size + 1) for tricks in range(size + 1))
    return max(1.0, float(top) + valuer.win_weight)
