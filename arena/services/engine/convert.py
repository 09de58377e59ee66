"""Engine values <-> ohell.v1 messages. Errors name the field and value (ConversionError)."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

from arena.proto.ohell.v1 import cards_pb2, match_pb2, rules_pb2
from ohell.cards import NO_CARD
from ohell.errors import OhHellError, RulesError
from ohell.observation import Observation
from ohell.presets import PRESETS, preset_name
from ohell.rules import Bidding, Direction, MaxCards, Rules, Scoring, TieBreak
from ohell.state import BID_BASE, Phase, Trick


class ConversionError(OhHellError):
    """A message field with a value the engine cannot use; the text names the field."""


# Prebuilt Card messages: building the observation is on every decision's path.
_CARDS = tuple(cards_pb2.Card(suit=c // 13 + 1, rank=c % 13 + 2) for c in range(52))

_ENUMS: dict[str, tuple[type, str]] = {
    "direction": (Direction, "DIRECTION_"),
    "max_cards_auto": (MaxCards, "MAX_CARDS_AUTO_"),
    "bidding": (Bidding, "BIDDING_"),
    "scoring": (Scoring, "SCORING_"),
    "tie_break": (TieBreak, "TIE_BREAK_"),
}
_ENUM_TYPES = {
    "direction": rules_pb2.Direction, "max_cards_auto": rules_pb2.MaxCardsAuto, "bidding": rules_pb2.Bidding,
    "scoring": rules_pb2.Scoring, "tie_break": rules_pb2.TieBreak,
}  # fmt: skip
_OPTIONAL = ("rebound", "min_cards", "max_cards", "no_trump_every", "hook", "bid_changes", "vienna",
             "sudden_death_limit")  # fmt: skip


def card_to_proto(card: int) -> cards_pb2.Card:
    return _CARDS[card]


def card_from_proto(card: cards_pb2.Card, field: str = "card") -> int:
    if not 1 <= card.suit <= 4:
        raise ConversionError(f"{field}.suit={card.suit} is not a suit (SUIT_CLUBS..SUIT_SPADES)")
    if not 2 <= card.rank <= 14:
        raise ConversionError(f"{field}.rank={card.rank} is not a rank (RANK_TWO..RANK_ACE)")
    return (card.suit - 1) * 13 + card.rank - 2


def enum_to_proto(name: str, value: object) -> int:
    enum_type, prefix = _ENUMS[name]
    return int(_ENUM_TYPES[name].Value(prefix + str(value.value).upper()))  # type: ignore[attr-defined]


def enum_from_proto(name: str, number: int, field: str) -> Any:
    """The engine enum value of a proto enum number (``name`` is the Rules field)."""
    enum_type, prefix = _ENUMS[name]
    proto_enum = _ENUM_TYPES[name]
    if number == 0 or number not in proto_enum.values():
        raise ConversionError(f"{field}={number} is not a value of {proto_enum.DESCRIPTOR.name}")
    return enum_type(proto_enum.Name(number)[len(prefix):].lower())


def rules_to_proto(rules: Rules) -> rules_pb2.Rules:
    message = rules_pb2.Rules(preset=preset_name(rules) or "")
    for name in _ENUMS:
        setattr(message, name, enum_to_proto(name, getattr(rules, name)))
    for name in _OPTIONAL:
        value = getattr(rules, name)
        if value is not None:
            setattr(message, name, value)
    if rules.hand_sizes:
        message.hand_sizes.extend(rules.hand_sizes)
    return message


def rules_from_proto(message: rules_pb2.Rules, field: str = "rules") -> Rules:
    """The preset (or engine defaults) with every set field applied."""
    if message.preset and message.preset not in PRESETS:
        raise ConversionError(f"{field}.preset={message.preset!r} is not a preset; known: {', '.join(sorted(PRESETS))}")
    base = PRESETS[message.preset] if message.preset else Rules()
    overrides: dict[str, object] = {}
    for name in _ENUMS:
        number = getattr(message, name)
        if number:
            overrides[name] = enum_from_proto(name, number, f"{field}.{name}")
    for name in _OPTIONAL:
        if message.HasField(name):
            overrides[name] = getattr(message, name)
    if message.hand_sizes:
        overrides["hand_sizes"] = tuple(message.hand_sizes)
    try:
        return replace(base, **overrides) if overrides else base
    except RulesError as error:
        raise ConversionError(f"{field}: {error}") from None


def trick_to_proto(trick: Trick) -> match_pb2.Trick:
    return match_pb2.Trick(leader=trick.leader, cards=[_CARDS[c] for c in trick.cards], winner=trick.winner)


_PHASES = {phase: int(phase) + 1 for phase in Phase}  # engine CUT=0 .. GAME_OVER=4 -> proto 1..5


def phase_to_proto(phase: Phase) -> int:
    return _PHASES[phase]


def observation_to_proto(obs: Observation, time_bank_ms: int = 0) -> match_pb2.Observation:
    message = match_pb2.Observation(
        seat=obs.seat, num_players=obs.num_players, phase=_PHASES[obs.phase], hand_number=obs.hand_number,
        hands_scheduled=obs.hands_scheduled, hand_size=obs.hand_size, dealer=max(obs.dealer, 0),
        participants=obs.participants, to_act=max(obs.to_act, 0), hand=[_CARDS[c] for c in obs.hand],
        bids=obs.bids, tricks_won=obs.tricks_won, tricks=[trick_to_proto(t) for t in obs.tricks],
        scores=obs.scores, forbidden_bid=-1 if obs.forbidden_bid is None else obs.forbidden_bid,
        sudden_death=obs.sudden_death, time_bank_ms=time_bank_ms,
    )  # fmt: skip
    if obs.trump_card != NO_CARD:
        message.trump_card.CopyFrom(_CARDS[obs.trump_card])
    if obs.current_trick:
        message.current_trick.leader = obs.trick_leader
        message.current_trick.cards.extend(_CARDS[c] for c in obs.current_trick)
    return message


def observation_from_proto(message: match_pb2.Observation, rules: Rules) -> Observation:
    """The engine's Observation (what built-in bots read) from the wire, for SDK bots."""
    current = message.current_trick if message.HasField("current_trick") else None
    phase = Phase(message.phase - 1) if message.phase else Phase.BID
    return Observation(
        seat=message.seat, num_players=message.num_players, rules=rules, phase=phase,
        hand_number=message.hand_number, hands_scheduled=message.hands_scheduled, hand_size=message.hand_size,
        dealer=message.dealer, participants=tuple(message.participants), to_act=message.to_act,
        hand=tuple(card_from_proto(c) for c in message.hand),
        trump_card=card_from_proto(message.trump_card) if message.HasField("trump_card") else NO_CARD,
        trump_suit=message.trump_card.suit - 1 if message.HasField("trump_card") else -1,
        bids=tuple(message.bids), tricks_won=tuple(message.tricks_won),
        trick_leader=current.leader if current is not None else -1,
        current_trick=tuple(card_from_proto(c) for c in current.cards) if current is not None else (),
        tricks=tuple(
            Trick(t.leader, tuple(card_from_proto(c) for c in t.cards), t.winner) for t in message.tricks
        ),
        scores=tuple(message.scores), legal_actions=(),
        forbidden_bid=None if message.forbidden_bid < 0 else message.forbidden_bid,
        sudden_death=message.sudden_death,
    )  # fmt: skip


def legal_actions_of(request: match_pb2.DecisionRequest) -> tuple[int, ...]:
    if request.kind == match_pb2.DECISION_KIND_BID:
        return tuple(BID_BASE + b for b in request.legal_bids)
    return tuple(card_from_proto(c) for c in request.legal_cards)


def action_number(action: match_pb2.Action, kind: int) -> int:
    """The engine action of a well-formed Action; ConversionError (GARBAGE) otherwise."""
    choice = action.WhichOneof("choice")
    if choice is None:
        raise ConversionError("action sets neither bid nor card")
    if choice == "bid":
        if action.bid > 17:
            raise ConversionError(f"action.bid={action.bid} is more than any hand holds")
        return BID_BASE + action.bid
    return card_from_proto(action.card, "action.card")


def engine_rule_names() -> list[str]:
    return [f.name for f in fields(Rules)]
