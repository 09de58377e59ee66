"""Game (immutable rules for a table) and State (one playthrough of a whole game).

Actions share one int space (``ohell.hand``): ``0..51`` play that card, ``52 + n`` bids ``n``
tricks. Chance (the cut for first dealer, each deal; ``ohell.chance``) is applied with
``cut``/``deal`` so a whole game is reproduced from its chance outcomes plus its actions, without a
random generator.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from ohell.cards import (
    NO_CARD,
    NO_SUIT,
    NUM_CARDS,
    SUIT_CARDS,
    SUIT_MASKS,
    SUIT_NAMES,
    card_str,
    cards_in_suit,
    format_cards,
    held_cards,
)
from ohell.chance import ChanceEvents
from ohell.errors import IllegalActionError
from ohell.hand import (
    BID_BASE,
    PHASE_BID,
    PHASE_CUT,
    PHASE_DEAL,
    PHASE_GAME_OVER,
    PHASE_PLAY,
    HandResult,
    Phase,
    Trick,
    bid_action,
    describe_action,
)
from ohell.rules import Bidding, Rules, TieBreak
from ohell.schedule import hand_sizes, no_trump_hand
from ohell.scoring import hand_score

__all__ = ["BID_BASE", "Game", "HandResult", "Phase", "State", "Trick", "bid_action", "describe_action"]

# Bid actions come from tables built once.
_BID_ACTIONS: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(range(BID_BASE, BID_BASE + size + 1)) for size in range(NUM_CARDS + 1)
)


class Game:
    """The rules for one table size. Immutable; shared by every State of that game."""

    __slots__ = ("rules", "num_players", "schedule")

    def __init__(self, rules: Rules, num_players: int) -> None:
        self.rules = rules
        self.num_players = num_players
        self.schedule = hand_sizes(rules, num_players)

    def new_state(self, dealer: int | None = None) -> State:
        """A new game, at the cut for first dealer; or, given ``dealer``, with that seat dealing
        first (``State.choose_dealer``) and the first deal pending."""
        state = State(self)
        if dealer is not None:
            state.choose_dealer(dealer)
        return state

    def __repr__(self) -> str:
        return f"Game(num_players={self.num_players}, schedule={self.schedule}, rules={self.rules})"


class State(ChanceEvents):
    """One playthrough. Mutable; ``clone()`` is cheap for search."""

    __slots__ = (
        "game", "phase", "cutters", "cut_rounds", "dealer", "hand_number", "scheduled_index",
        "hand_size", "order", "hands", "dealt", "trump_card", "trump_suit", "no_trump",
        "bids", "bid_pos", "change_seat", "rebid", "pos", "current", "leader_pos", "trick",
        "led_suit", "tricks", "tricks_won", "events", "scores", "results", "sudden_death",
        "winners",
    )  # fmt: skip

    def __init__(self, game: Game) -> None:
        n = game.num_players
        self.game = game
        self.phase = PHASE_CUT
        self.cutters: tuple[int, ...] = tuple(range(n))
        self.cut_rounds: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
        self.dealer = -1
        self.hand_number = 0
        self.scheduled_index = -1
        self.hand_size = 0
        self.order: tuple[int, ...] = ()
        self.hands = [0] * n
        self.dealt = [0] * n
        self.trump_card = NO_CARD
        self.trump_suit = NO_SUIT
        self.no_trump = False
        self.bids = [-1] * n
        self.bid_pos = 0
        self.change_seat = -1
        self.rebid = False
        self.pos = 0
        self.current = -1
        self.leader_pos = 0
        self.trick: list[int] = []
        self.led_suit = NO_SUIT
        self.tricks: list[Trick] = []
        self.tricks_won = [0] * n
        self.events: list[tuple[str, int, int]] = []
        self.scores = [0] * n
        self.results: list[HandResult] = []
        self.sudden_death = False
        self.winners: tuple[int, ...] = ()

    # ----------------------------------------------------------------- queries
    @property
    def rules(self) -> Rules:
        return self.game.rules

    @property
    def last_hand(self) -> HandResult | None:
        """The latest finished hand (its bids, tricks, tricks won and points), or None before the
        first one ends. The same after every hand: ``bids``, ``tricks`` and ``tricks_won`` are the
        hand in play, so they are reset when the next hand starts but keep the last hand at the end."""
        return self.results[-1] if self.results else None

    def is_terminal(self) -> bool:
        return self.phase is PHASE_GAME_OVER

    def is_chance(self) -> bool:
        return self.phase is PHASE_DEAL or self.phase is PHASE_CUT

    def legal_actions(self) -> Sequence[int]:
        """Legal actions of the player to act, ascending (empty at chance nodes and at the end)."""
        phase = self.phase
        if phase is PHASE_PLAY:
            hand = self.hands[self.current]
            led = self.led_suit
            if led >= 0:
                follow = SUIT_CARDS[led][(hand >> (13 * led)) & 0x1FFF]
                if follow:
                    return follow
            return held_cards(hand)
        if phase is PHASE_BID:
            bids = _BID_ACTIONS[self.hand_size]
            if self.current == self.dealer:
                forbidden = self.forbidden_bid()
                if forbidden is not None:
                    return bids[:forbidden] + bids[forbidden + 1 :]
            return bids
        return ()

    def legal_bids(self) -> list[int]:
        return [a - BID_BASE for a in self.legal_actions()] if self.phase == PHASE_BID else []

    def forbidden_bid(self) -> int | None:
        """The bid the hook forbids to the player now bidding, if any."""
        if self.phase != PHASE_BID or not self.game.rules.hook:
            return None
        if self.current != self.dealer:
            return None
        if self.game.rules.bidding is Bidding.BLIND and not self.rebid:
            return None
        return self._dealer_forbidden()

    def _dealer_forbidden(self) -> int | None:
        bids = self.bids
        made = sum(bids) + bids.count(-1)  # the bids made: each -1 (no bid) adds -1 + 1 = 0
        others = made - max(bids[self.dealer], 0)
        forbidden = self.hand_size - others
        return forbidden if forbidden >= 0 else None

    def default_action(self) -> int:
        """The action played for a seat that fails to act: bid 0 (003's penalty bid) or the
        lowest legal bid when 0 is forbidden; otherwise its lowest legal card."""
        legal = self.legal_actions()
        if not legal:
            raise IllegalActionError(self.current, "act", f"no decision is pending ({self.phase.name})")
        return min(legal)

    # ----------------------------------------------------------------- actions
    # Methods that take a player's input accept any object and refuse a non-int with an
    # IllegalActionError, in both builds (compiled code would raise TypeError on an ``int``
    # parameter, and would read True as 1).
    def act(self, seat: int, action: object) -> None:
        """Apply ``action`` for ``seat``, refusing it if it is not that seat's turn."""
        if seat != self.current or self.phase not in (PHASE_BID, PHASE_PLAY):
            if self.phase in (PHASE_BID, PHASE_PLAY):
                why = f"it is seat {self.current}'s turn to {self.phase.name.lower()}"
            else:
                why = f"no player acts now (phase {self.phase.name})"
            raise IllegalActionError(seat, describe_action(_as_int(action)), why)
        self.apply_action(action)

    def apply_action(self, action: object) -> None:
        """Apply ``action`` for the player to act; raises IllegalActionError if illegal."""
        if self.phase is PHASE_PLAY:
            seat = self.current
            hand = self.hands[seat]
            if type(action) is not int or not 0 <= action < NUM_CARDS or not (hand >> action) & 1:
                raise IllegalActionError(seat, describe_action(_as_int(action)), _why_not_held(action))
            trick = self.trick
            if not trick:
                self.led_suit = action // 13
                self.change_seat = -1  # the lead ends the dealer's chance to change its bid
            elif action // 13 != self.led_suit and hand & SUIT_MASKS[self.led_suit]:
                led = self.led_suit
                raise IllegalActionError(
                    seat,
                    f"play {card_str(action)}",
                    f"must follow {SUIT_NAMES[led]} (holds {format_cards(cards_in_suit(hand, led))})",
                )
            self.hands[seat] = hand ^ (1 << action)
            trick.append(action)
            self.events.append(("play", seat, action))
            order = self.order
            if len(trick) < len(order):
                pos = self.pos + 1
                if pos == len(order):
                    pos = 0
                self.pos = pos
                self.current = order[pos]
            else:
                self._finish_trick()
        elif self.phase is PHASE_BID:
            if type(action) is not int or action < BID_BASE:
                raise IllegalActionError(self.current, describe_action(_as_int(action)), "it is the bidding phase")
            self._bid(action - BID_BASE)
        else:
            raise IllegalActionError(
                self.current, describe_action(_as_int(action)), f"no player acts now ({self.phase.name})"
            )

    def bid(self, seat: int, tricks: object) -> None:
        if type(tricks) is not int or tricks < 0:
            raise IllegalActionError(seat, f"bid {tricks!r}", "a bid is a whole number of tricks, 0 or more")
        self.act(seat, BID_BASE + tricks)

    def play(self, seat: int, card: object) -> None:
        self.act(seat, card)

    def _checked_bid(self, seat: int, verb: str, tricks: object) -> int:
        size = self.hand_size
        if type(tricks) is not int:
            raise IllegalActionError(seat, f"{verb} {tricks!r}", "a bid is a whole number of tricks")
        if not 0 <= tricks <= size:
            raise IllegalActionError(seat, f"{verb} {tricks}", f"bids run from 0 to {size} in a {size}-card hand")
        return tricks

    def _hook_check(self, seat: int, verb: str, tricks: int) -> None:
        if self.game.rules.hook and seat == self.dealer and tricks == self._dealer_forbidden():
            raise IllegalActionError(
                seat,
                f"{verb} {tricks}",
                f"the dealer may not bid {tricks}: bids would total {self.hand_size}, the number of tricks (hook rule)",
            )

    def _bid(self, tricks: int) -> None:
        seat = self.current
        rules = self.game.rules
        blind = rules.bidding is Bidding.BLIND
        verb = "rebid" if self.rebid else "bid"
        self._checked_bid(seat, verb, tricks)
        if seat == self.dealer and (self.rebid or not blind):
            self._hook_check(seat, verb, tricks)
        self.bids[seat] = tricks
        self.events.append((verb, seat, tricks))
        if self.rebid:
            self._start_play()
            return
        if rules.bid_changes:
            self.change_seat = seat
        bid_pos = self.bid_pos = self.bid_pos + 1
        if bid_pos < len(self.order):
            self.pos = bid_pos
            self.current = self.order[bid_pos]
        elif blind and rules.hook and self._dealer_forbidden() == self.bids[self.dealer]:
            self.rebid = True  # revealed bids hit the hook: the dealer must change (003)
        else:
            self._start_play()

    def change_bid(self, seat: int, tricks: object) -> None:
        """000: a seat may replace its bid until the next player bids (the dealer: until the
        first lead)."""
        if not self.game.rules.bid_changes:
            raise IllegalActionError(seat, f"change its bid to {tricks}", "bid changes are off in these rules")
        if seat != self.change_seat:
            raise IllegalActionError(
                seat,
                f"change its bid to {tricks}",
                "only the latest bidder may change, before the next bid or the first lead",
            )
        value = self._checked_bid(seat, "change its bid to", tricks)
        self._hook_check(seat, "change its bid to", value)
        self.bids[seat] = value
        self.events.append(("change", seat, value))

    def change_options(self, seat: int) -> list[int]:
        """The bids ``seat`` may change its bid to now (its own among them); [] when it may not."""
        if not self.game.rules.bid_changes or seat != self.change_seat:
            return []
        forbidden = self._dealer_forbidden() if self.game.rules.hook and seat == self.dealer else None
        return [tricks for tricks in range(self.hand_size + 1) if tricks != forbidden]

    # ----------------------------------------------------------------- transitions
    def _start_play(self) -> None:
        self.rebid = False
        self.phase = PHASE_PLAY
        self.pos = self.leader_pos = 0
        self.current = self.order[0]

    def _finish_trick(self) -> None:
        cards = self.trick
        trump = self.trump_suit
        best_index = 0
        best = cards[0]
        for index in range(1, len(cards)):
            card = cards[index]
            if card // 13 == best // 13:
                if card > best:
                    best_index, best = index, card
            elif card // 13 == trump:
                best_index, best = index, card
        order = self.order
        leader_pos = self.leader_pos
        winner_pos = (leader_pos + best_index) % len(order)
        winner = order[winner_pos]
        self.tricks_won[winner] += 1
        tricks = self.tricks
        tricks.append(Trick(order[leader_pos], tuple(cards), winner))
        self.trick = []
        self.led_suit = NO_SUIT
        if len(tricks) == self.hand_size:
            self._finish_hand()
        else:
            self.leader_pos = self.pos = winner_pos
            self.current = winner

    def _finish_hand(self) -> None:
        rules = self.game.rules
        n = self.game.num_players
        points = [0] * n
        if not self.sudden_death:
            for seat in self.order:
                points[seat] = hand_score(
                    method=rules.scoring,
                    bid=self.bids[seat],
                    tricks=self.tricks_won[seat],
                    cards_dealt=self.hand_size,
                    hand_number=self.hand_number,
                    vienna=rules.vienna,
                )
                self.scores[seat] += points[seat]
        self.results.append(
            HandResult(
                number=self.hand_number,
                dealer=self.dealer,
                size=self.hand_size,
                participants=self.order,
                dealt=tuple(self.dealt),
                trump_card=self.trump_card,
                no_trump_hand=self.no_trump,
                events=tuple(self.events),
                tricks=tuple(self.tricks),
                bids=tuple(self.bids),
                tricks_won=tuple(self.tricks_won),
                points=tuple(points),
                sudden_death=self.sudden_death,
            )  # fmt: skip
        )
        if self.sudden_death:
            exact = [s for s in self.order if self.bids[s] == self.tricks_won[s]]
            played = sum(1 for r in self.results if r.sudden_death)
            if len(exact) == 1:
                self._end_game((exact[0],))
            elif played >= rules.sudden_death_limit:
                self._end_game(tuple(sorted(self.order)))
            else:
                self._start_hand(participants=self.order)
            return
        if self.scheduled_index + 1 < len(self.game.schedule):
            self._start_hand()
            return
        top = max(self.scores)
        leaders = tuple(s for s in range(n) if self.scores[s] == top)
        if len(leaders) == 1 or rules.tie_break is TieBreak.SHARE:
            self._end_game(leaders)
        else:
            self.sudden_death = True
            self._start_hand(participants=leaders)

    def _end_game(self, winners: tuple[int, ...]) -> None:
        self.winners = winners
        self.phase = PHASE_GAME_OVER
        self.current = -1

    def _start_hand(self, participants: tuple[int, ...] | None = None) -> None:
        n = self.game.num_players
        seats = sorted(participants) if participants is not None else list(range(n))
        if self.hand_number > 0:  # the deal passes clockwise (to the next seat still playing)
            self.dealer = next(s for s in ((self.dealer + k) % n for k in range(1, n + 1)) if s in seats)
        start = seats.index(self.dealer) + 1
        self.order = tuple(seats[start:] + seats[:start])
        self.hand_number += 1
        if self.sudden_death:
            self.hand_size = 1
            self.no_trump = True
        else:
            self.scheduled_index += 1
            self.hand_size = self.game.schedule[self.scheduled_index]
            self.no_trump = no_trump_hand(self.game.rules, self.hand_number)
        self.hands = [0] * n
        self.dealt = [0] * n
        self.trump_card = NO_CARD
        self.trump_suit = NO_SUIT
        self.bids = [-1] * n
        self.bid_pos = 0
        self.change_seat = -1
        self.rebid = False
        self.tricks = []
        self.tricks_won = [0] * n
        self.events = []
        self.trick = []
        self.led_suit = NO_SUIT
        self.current = -1
        self.phase = PHASE_DEAL

    # ----------------------------------------------------------------- copies
    def clone(self) -> State:
        """An independent copy: lists are copied, immutable values shared. Written out (not a loop
        over ``__slots__``) because that is fastest and compiles; a test checks every slot. A
        compiled class always runs ``__init__``, so the copy starts as a new state."""
        other = State(self.game)
        other.game = self.game
        other.phase = self.phase
        other.cutters = self.cutters
        other.cut_rounds = self.cut_rounds.copy()
        other.dealer = self.dealer
        other.hand_number = self.hand_number
        other.scheduled_index = self.scheduled_index
        other.hand_size = self.hand_size
        other.order = self.order
        other.hands = self.hands.copy()
        other.dealt = self.dealt.copy()
        other.trump_card = self.trump_card
        other.trump_suit = self.trump_suit
        other.no_trump = self.no_trump
        other.bids = self.bids.copy()
        other.bid_pos = self.bid_pos
        other.change_seat = self.change_seat
        other.rebid = self.rebid
        other.pos = self.pos
        other.current = self.current
        other.leader_pos = self.leader_pos
        other.trick = self.trick.copy()
        other.led_suit = self.led_suit
        other.tricks = self.tricks.copy()
        other.tricks_won = self.tricks_won.copy()
        other.events = self.events.copy()
        other.scores = self.scores.copy()
        other.results = self.results.copy()
        other.sudden_death = self.sudden_death
        other.winners = self.winners
        return other

    def __repr__(self) -> str:
        return (
            f"<State hand={self.hand_number} phase={self.phase.name} dealer={self.dealer} "
            f"current={self.current} scores={self.scores}>"
        )


def _as_int(action: object) -> int:
    return action if type(action) is int else -1


def _why_not_held(action: object) -> str:
    if type(action) is not int:
        return f"{action!r} is not an action number"
    if 0 <= action < NUM_CARDS:
        return f"it does not hold {card_str(action)}"
    return "it is the play phase: play one of its cards"
