"""The SDK's reading of what the platform sends: a decision's observation and its legal actions as
engine values, each checked against a table that can exist (a hostile or broken server's message
never reaches the bot; ConversionError names the field)."""

from __future__ import annotations

from typing import Any

from arena.proto.ohell.v1 import cards_pb2, match_pb2
from arena.wire import ENGINE_PHASES, ConversionError, phase_from_proto
from ohell.cards import NO_CARD, NUM_CARDS
from ohell.observation import Observation
from ohell.rules import MAX_PLAYERS, MIN_PLAYERS, Rules
from ohell.state import BID_BASE, Trick


def _indexes(cards: Any, field: str = "cards") -> tuple[int, ...]:
    """Card messages from the platform as engine indexes; ConversionError naming ``field`` for an
    index out of 0..51 (an SDK may be pointed at any server: a bot must never get one). Only the
    index is checked (a suit or rank that is no card mostly lands outside): checking each field
    would double the cost of decoding an observation, and any server can send a wrong card anyway."""
    # (suit - 1) * 13 + (rank - 2); over a slice (one C call): iterating a upb repeated field ends
    # in an IndexError that upb formats, ~0.5 µs a field on every decision
    indexes = tuple([c.suit * 13 + c.rank - 15 for c in cards[:]])
    if indexes and (min(indexes) < 0 or max(indexes) > 51):
        bad = next(c for c in cards if not 0 <= c.suit * 13 + c.rank - 15 <= 51)
        raise ConversionError(f"{field}: suit={bad.suit} rank={bad.rank} is not a card")
    return indexes


def _trump_index(trump: cards_pb2.Card | None, field: str = "observation.trump_card") -> int:
    return NO_CARD if trump is None else _indexes((trump,), field)[0]


MOST_CARDS = NUM_CARDS // MIN_PLAYERS  # a hand's cards at most (17), and so its tricks and a bid


def check_table(message: match_pb2.Observation) -> None:
    """ConversionError naming the field when the observation's table cannot be: a seat count out of
    3..7, a seat or dealer not at it, a hand larger than the deck deals that many, participants not
    its seats, a per-seat list (bids, tricks won, scores) not one value a seat. Any server may send
    them; a bot's work may grow with them (the strong bot's search walks every bid and number of
    tricks up to the hand size: a hand of 2**31 cards held it for ever)."""
    players = message.num_players
    if not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise ConversionError(f"observation.num_players: {players} is not {MIN_PLAYERS} to {MAX_PLAYERS}")
    for name in ("seat", "dealer"):
        value = getattr(message, name)
        if value >= players:
            raise ConversionError(f"observation.{name}: {value} is no seat of {players}")
    if message.hand_size > NUM_CARDS // players:
        raise ConversionError(
            f"observation.hand_size: {message.hand_size} cards, more than {players} players are dealt "
            f"({NUM_CARDS // players})"
        )
    participants = message.participants[:]
    if len(participants) > players or any(seat >= players for seat in participants):
        raise ConversionError(f"observation.participants: {list(participants[:8])} are not seats of {players}")
    for name in PER_SEAT:
        _per_seat(message, name)


PER_SEAT = ("bids", "tricks_won", "scores")  # the contract: each seat's, one value a seat


def _per_seat(message: match_pb2.Observation, name: str) -> tuple[int, ...]:
    """A per-seat list as a tuple; ConversionError unless it holds one value a seat (a server could
    send thousands, and a bot may walk them on every decision)."""
    values = getattr(message, name)
    if len(values) != message.num_players:
        raise ConversionError(
            f"observation.{name}: {len(values)} values, not one for each of {message.num_players} seats"
        )
    return tuple(values[:])  # a slice: see _indexes


def _tricks(message: match_pb2.Observation, wire_tricks: Any) -> tuple[Trick, ...]:
    """Finished tricks not decoded yet; ConversionError for more of them than the hand has cards, or
    a trick of more cards than seats (the strong bot took 17 s over 20,000 tricks)."""
    if len(message.tricks) > message.hand_size:
        raise ConversionError(f"observation.tricks: {len(message.tricks)}, over its hand_size {message.hand_size}")
    return tuple([Trick(t.leader, _trick_cards(message, t.cards, "observation.tricks"), t.winner) for t in wire_tricks])


def _trick_cards(message: match_pb2.Observation, cards: Any, field: str) -> tuple[int, ...]:
    if len(cards) > message.num_players:
        raise ConversionError(f"{field}: a trick of {len(cards)} cards at a table of {message.num_players}")
    return _indexes(cards, field)


def _hand(message: match_pb2.Observation) -> tuple[int, ...]:
    hand = _indexes(message.hand, "observation.hand")
    if len(hand) > message.hand_size:
        raise ConversionError(f"observation.hand: {len(hand)} cards, over its hand_size {message.hand_size}")
    return hand


def observation_from_proto(
    message: match_pb2.Observation,
    rules: Rules,
    legal_actions: tuple[int, ...] = (),
    known_tricks: tuple[Trick, ...] = (),
) -> Observation:
    """The engine's Observation (what built-in bots read) from the wire, for SDK bots;
    ConversionError for an unspecified phase. ``known_tricks``: the finished tricks of this hand
    already decoded from an earlier observation (only later ones are decoded)."""
    check_table(message)
    wire_tricks = message.tricks
    if len(known_tricks) > len(wire_tricks):
        known_tricks = ()
    has_trump = message.HasField("trump_card")
    trump = message.trump_card
    current = message.current_trick if message.HasField("current_trick") else None
    return Observation(
        seat=message.seat,
        num_players=message.num_players,
        rules=rules,
        phase=phase_from_proto(message.phase, "observation.phase"),
        hand_number=message.hand_number,
        hands_scheduled=message.hands_scheduled,
        hand_size=message.hand_size,
        dealer=message.dealer,
        participants=tuple(message.participants),
        to_act=message.to_act if message.HasField("to_act") else -1,
        hand=_hand(message),
        trump_card=_trump_index(trump if has_trump else None),
        trump_suit=trump.suit - 1 if has_trump else -1,
        bids=_per_seat(message, "bids"),
        tricks_won=_per_seat(message, "tricks_won"),
        trick_leader=current.leader if current is not None else -1,
        current_trick=_trick_cards(message, current.cards, "observation.current_trick") if current is not None else (),
        tricks=known_tricks + _tricks(message, wire_tricks[len(known_tricks) :]),
        scores=tuple(message.scores),
        legal_actions=legal_actions,
        forbidden_bid=None if message.forbidden_bid < 0 else message.forbidden_bid,
        sudden_death=message.sudden_death,
    )


class ObservationReader:
    """``observation_from_proto`` for the decisions of one match (the SDK's side of
    ``ObservationWriter``): the fields fixed through a hand are decoded when the hand (or seat,
    dealer, size) changes, finished tricks once each; a decision decodes only what changes. The
    same Observation as ``observation_from_proto`` for what the platform sends (in a hand, scores,
    participants and the trump card do not change)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self._key: tuple[Any, ...] = ()
        self._fixed: dict[str, Any] = {}
        self._tricks: tuple[Trick, ...] = ()

    def read(self, message: match_pb2.Observation, legal_actions: tuple[int, ...] = ()) -> Observation:
        # num_players too: check_table runs only when the key changes, and a trick's cards are
        # bounded by the message's num_players (a server could raise it after a checked decision)
        key = (
            message.hand_number,
            message.seat,
            message.num_players,
            message.dealer,
            message.hand_size,
            message.sudden_death,
        )
        if key != self._key:
            check_table(message)
            trump = message.trump_card if message.HasField("trump_card") else None
            self._fixed = {
                "seat": message.seat,
                "num_players": message.num_players,
                "rules": self.rules,
                "hand_number": message.hand_number,
                "hands_scheduled": message.hands_scheduled,
                "hand_size": message.hand_size,
                "dealer": message.dealer,
                "participants": tuple(message.participants[:]),  # a slice: see _indexes
                "trump_card": _trump_index(trump),
                "trump_suit": trump.suit - 1 if trump is not None else -1,
                "scores": tuple(message.scores[:]),
                "sudden_death": message.sudden_death,
            }
            self._key, self._tricks = key, ()
        wire_tricks = message.tricks
        known = self._tricks
        if len(known) != len(wire_tricks):
            if len(known) > len(wire_tricks):
                known = ()
            known += _tricks(message, wire_tricks[len(known) :])
            self._tricks = known
        values = self._fixed.copy()
        phase = ENGINE_PHASES.get(message.phase)  # phase_from_proto without its call, but for its error
        values["phase"] = phase if phase is not None else phase_from_proto(message.phase, "observation.phase")
        values["to_act"] = message.to_act if message.HasField("to_act") else -1
        values["hand"] = _hand(message)
        values["bids"] = _per_seat(message, "bids")  # these two change each decision: checked each time
        values["tricks_won"] = _per_seat(message, "tricks_won")
        if message.HasField("current_trick"):
            current = message.current_trick
            values["trick_leader"] = current.leader
            values["current_trick"] = _trick_cards(message, current.cards, "observation.current_trick")
        else:
            values["trick_leader"], values["current_trick"] = -1, ()
        values["tricks"] = known
        values["legal_actions"] = legal_actions
        forbidden = message.forbidden_bid
        values["forbidden_bid"] = None if forbidden < 0 else forbidden
        return Observation.of(values)


def legal_actions_of(request: match_pb2.DecisionRequest) -> tuple[int, ...]:
    """The engine actions a decision offers; ConversionError for more than a hand holds (a bid of
    0..17 tricks, at most 17 cards): a bot weighs each of them."""
    if request.kind != match_pb2.DECISION_KIND_PLAY:  # a bid, or a bid change
        bids = request.legal_bids[:]
        if len(bids) > MOST_CARDS + 1 or (bids and max(bids) > MOST_CARDS):
            raise ConversionError(f"legal_bids: {len(bids)} bids up to {max(bids)}, more than bids of 0..{MOST_CARDS}")
        return tuple([BID_BASE + b for b in bids])
    if len(request.legal_cards) > MOST_CARDS:
        raise ConversionError(f"legal_cards: {len(request.legal_cards)} cards, more than a hand holds ({MOST_CARDS})")
    return _indexes(request.legal_cards, "legal_cards")
