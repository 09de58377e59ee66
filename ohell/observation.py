"""What one seat may see: its own hand, public bids and plays, scores. Nothing more.

Bots (built-in and remote) decide from an ``Observation`` only, so they cannot see hidden cards.
Under blind bidding a seat sees neither its hand nor other bids until all bids are made (the
dealer's hook correction included); the turned trump card is public from the deal, as in 003.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ohell.cards import cards_of
from ohell.rules import Bidding, Rules
from ohell.state import BID_BASE, Phase, State, Trick


@dataclass(frozen=True)
class Observation:
    seat: int
    num_players: int
    rules: Rules
    phase: Phase
    hand_number: int  # 1-based
    hands_scheduled: int
    hand_size: int
    dealer: int
    participants: tuple[int, ...]  # clockwise from the dealer's left; the dealer last
    to_act: int  # seat whose decision is pending, -1 if none
    hand: tuple[int, ...]  # own cards still held, ascending; () while blind bidding
    trump_card: int  # NO_CARD when none was turned
    trump_suit: int
    bids: tuple[int, ...]  # -1 where not made or not visible
    tricks_won: tuple[int, ...]
    trick_leader: int  # -1 when no trick is in progress
    current_trick: tuple[int, ...]  # cards played to the trick in progress, leader first
    tricks: tuple[Trick, ...]  # finished tricks of this hand
    scores: tuple[int, ...]  # cumulative points before this hand's result
    legal_actions: tuple[int, ...]  # this seat's legal actions when it is to act, else ()
    forbidden_bid: int | None  # the bid the hook forbids this seat now, if any
    sudden_death: bool

    @classmethod
    def of(cls, values: dict[str, Any]) -> Observation:
        """The Observation with ``values`` (every field, by name) as its attributes, made without
        the frozen dataclass's ``__init__`` (one ``object.__setattr__`` per field: ~4.5 of the ~9 µs
        of ``observe``, on every decision): the same object, equal and still frozen. ``values``
        becomes the object's ``__dict__``: pass a dict of your own."""
        observation = object.__new__(cls)
        object.__setattr__(observation, "__dict__", values)
        return observation

    @property
    def is_bidding(self) -> bool:
        return self.phase == Phase.BID

    @property
    def legal_bids(self) -> tuple[int, ...]:
        return tuple(a - BID_BASE for a in self.legal_actions if a >= BID_BASE)

    @property
    def led_suit(self) -> int:
        return self.current_trick[0] // 13 if self.current_trick else -1


def observe(state: State, seat: int) -> Observation:
    """The observation of ``seat`` in ``state``."""
    n = state.game.num_players
    if not 0 <= seat < n:
        raise ValueError(f"seat {seat!r} is not a seat of this {n}-player game")
    sealed = state.phase == Phase.BID and state.game.rules.bidding is Bidding.BLIND
    if sealed:
        bids = tuple(b if s == seat else -1 for s, b in enumerate(state.bids))
        if state.rebid:  # the reveal has happened: every bid is public
            bids = tuple(state.bids)
    else:
        bids = tuple(state.bids)
    in_play = state.phase == Phase.PLAY
    to_act = state.current if state.phase in (Phase.BID, Phase.PLAY) else -1
    leader = state.order[state.leader_pos] if in_play and state.trick else -1
    return Observation.of(
        {
            "seat": seat,
            "num_players": n,
            "rules": state.game.rules,
            "phase": state.phase,
            "hand_number": state.hand_number,
            "hands_scheduled": len(state.game.schedule),
            "hand_size": state.hand_size,
            "dealer": state.dealer,
            "participants": state.order,
            "to_act": to_act,
            "hand": () if sealed else tuple(cards_of(state.hands[seat])),
            "trump_card": state.trump_card,
            "trump_suit": state.trump_suit,
            "bids": bids,
            "tricks_won": tuple(state.tricks_won),
            "trick_leader": leader,
            "current_trick": tuple(state.trick),
            "tricks": tuple(state.tricks),
            "scores": tuple(state.scores),
            "legal_actions": tuple(state.legal_actions()) if to_act == seat else (),
            "forbidden_bid": state.forbidden_bid() if to_act == seat else None,
            "sudden_death": state.sudden_death,
        }
    )
