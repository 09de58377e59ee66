"""Engine values <-> ohell.v1 messages. Errors name the field and value (ConversionError)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import lru_cache
from typing import Any

from google.protobuf.message import DecodeError

from arena.proto.ohell.v1 import cards_pb2, match_pb2, matchmaker_pb2, rules_pb2
from ohell.cards import NO_CARD
from ohell.errors import OhHellError, RulesError
from ohell.observation import Observation
from ohell.presets import PRESETS, preset, preset_name
from ohell.rules import Bidding, Direction, MaxCards, Rules, Scoring, TieBreak, parse_option
from ohell.schedule import hand_sizes
from ohell.state import BID_BASE, Phase, Trick


class ConversionError(OhHellError):
    """A message field with a value the engine cannot use; the text names the field."""


# Prebuilt Card messages: building the observation is on every decision's path.
# who may queue on a ladder (arena.ladder.model.Ladder.entry) and its LadderEntry on the wire
ENTRY_NAMES = {"host": matchmaker_pb2.LADDER_ENTRY_HOST, "open": matchmaker_pb2.LADDER_ENTRY_OPEN}
ENTRY_OF = {matchmaker_pb2.LADDER_ENTRY_UNSPECIFIED: "host", **{number: name for name, number in ENTRY_NAMES.items()}}
_CARDS = tuple(cards_pb2.Card(suit=c // 13 + 1, rank=c % 13 + 2) for c in range(52))  # type: ignore[arg-type]

_ENUMS: dict[str, tuple[type, str]] = {
    "direction": (Direction, "DIRECTION_"),
    "max_cards_auto": (MaxCards, "MAX_CARDS_AUTO_"),
    "bidding": (Bidding, "BIDDING_"),
    "scoring": (Scoring, "SCORING_"),
    "tie_break": (TieBreak, "TIE_BREAK_"),
}
_ENUM_TYPES: dict[str, Any] = {
    "direction": rules_pb2.Direction,
    "max_cards_auto": rules_pb2.MaxCardsAuto,
    "bidding": rules_pb2.Bidding,
    "scoring": rules_pb2.Scoring,
    "tie_break": rules_pb2.TieBreak,
}
_OPTIONAL = (
    "rebound",
    "min_cards",
    "max_cards",
    "no_trump_every",
    "hook",
    "bid_changes",
    "vienna",
    "sudden_death_limit",
)


def wrapped(body: bytes, field: int = 1) -> bytes:
    """The wire bytes of message field ``field`` (1..15) holding the message encoded as ``body``: with
    field 1, a ``ConnectResponse`` around its ``AgentEvent`` or a ``ConnectRequest`` around its
    ``Action``. What protobuf writes, without copying the inner message into a wrapper first;
    appended to the bytes of a message's lower-numbered fields, it completes that message."""
    if field < 1:
        raise ValueError(f"field={field}: field numbers start at 1")
    size = len(body)
    if size < 0x4000 and field < 16:  # the tag and a 1- or 2-byte length: no loop (every event's path)
        head = bytes((field << 3 | 2, size)) if size < 0x80 else bytes((field << 3 | 2, size & 0x7F | 0x80, size >> 7))
        return head + body
    return _varint(field << 3 | 2) + _varint(size) + body  # the tag (length-delimited), the length


def _varint(number: int) -> bytes:
    out = bytearray()
    while number > 0x7F:
        out.append(number & 0x7F | 0x80)
        number >>= 7
    out.append(number)
    return bytes(out)


def _card_field(message_type: Any, field: str) -> tuple[bytes, ...]:
    """Each card's bytes as one element of the repeated Card ``field`` of ``message_type``."""
    number = message_type.DESCRIPTOR.fields_by_name[field].number
    return tuple(wrapped(card.SerializeToString(), number) for card in _CARDS)


_HAND = _card_field(match_pb2.Observation, "hand")
_TRICK_CARDS = _card_field(match_pb2.Trick, "cards")
_LEGAL_CARDS = _card_field(match_pb2.DecisionRequest, "legal_cards")


def add_legal_cards(request: match_pb2.DecisionRequest, cards: Any) -> None:
    """Append ``cards`` (engine indexes) to ``request.legal_cards``: one parse of pre-encoded
    bytes, several times cheaper than copying a Card message per card (the same message)."""
    request.MergeFromString(b"".join([_LEGAL_CARDS[c] for c in cards]))


def message_bytes(message: Any) -> bytes:
    """A stream serializer that also takes bytes already encoded (see ``wrapped``)."""
    return message if isinstance(message, bytes) else message.SerializeToString()  # type: ignore[no-any-return]


def lenient(message_type: Any) -> Callable[[bytes], Any]:
    """A stream's response deserializer giving None for bytes that are no ``message_type`` (a peer
    that is no such service): the caller says so in one line, where gRPC would log a traceback
    and hand back None anyway."""

    def read(data: bytes) -> Any:
        try:
            return message_type.FromString(data)
        except DecodeError:
            return None

    return read


def card_to_proto(card: int) -> cards_pb2.Card:
    return _CARDS[card]


def card_from_proto(card: cards_pb2.Card, field: str = "card") -> int:
    suit, rank = card.suit, card.rank  # each read of a upb field looks it up by name
    if not 1 <= suit <= 4:
        raise ConversionError(f"{field}.suit: {suit} is not a suit (SUIT_CLUBS..SUIT_SPADES)")
    if not 2 <= rank <= 14:
        raise ConversionError(f"{field}.rank: {rank} is not a rank (RANK_TWO..RANK_ACE)")
    return (suit - 1) * 13 + rank - 2


def enum_to_proto(name: str, value: object) -> int:
    enum_type, prefix = _ENUMS[name]
    return int(_ENUM_TYPES[name].Value(prefix + str(value.value).upper()))  # type: ignore[attr-defined]


def enum_from_proto(name: str, number: int, field: str) -> Any:
    """The engine enum value of a proto enum number (``name`` is the Rules field)."""
    enum_type, prefix = _ENUMS[name]
    proto_enum = _ENUM_TYPES[name]
    if number == 0 or number not in proto_enum.values():
        raise ConversionError(f"{field}: {number} is not a value of {proto_enum.DESCRIPTOR.name}")
    return enum_type(proto_enum.Name(number)[len(prefix) :].lower())


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


MAX_HAND_SIZES = 1000  # hands in an explicit schedule sent over the wire


_FIELD_FIRST = re.compile(r"(?P<path>[a-z_]\w*(?:\.[a-z_]\w*|\[\d+\])*)(?:: |=)")


def within(parent: str, message: str) -> str:
    """A refusal of a part of the field ``parent`` as every refusal of the services says it, ``FIELD:
    what is wrong``, naming the whole path: ``format: ...`` or the engine's ``min_cards=99 must be ...``
    as ``rules.min_cards: 99 must be ...``; ``parent: message`` for one that names no part."""
    said = _FIELD_FIRST.match(message)
    return f"{parent}.{said['path']}: {message[said.end() :]}" if said else f"{parent}: {message}"


_RULE_OPTION = re.compile(rf"(?P<path>{'|'.join(sorted(Rules().to_dict(), key=len, reverse=True))})(?:=|: | )")


def _within_rules(field: str, error: RulesError) -> str:
    """The engine's refusal of rules, which starts with the option at fault (``min_cards=99 must be ...``,
    ``hand_sizes: a hand of 14 cards ...``), naming it as every refusal does: ``rules.min_cards: 99 must be ...``."""
    said = _RULE_OPTION.match(str(error))
    return f"{field}.{said['path']}: {str(error)[said.end() :]}" if said else within(field, str(error))


def rules_from_proto(message: rules_pb2.Rules, field: str = "rules") -> Rules:
    """The preset (or engine defaults) with every set field applied."""
    if message.preset and message.preset not in PRESETS:
        raise ConversionError(
            f"{field}.preset: {message.preset[:80]!r} is not a preset; known: {', '.join(sorted(PRESETS))}"
        )
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
        if len(message.hand_sizes) > MAX_HAND_SIZES:  # bounds the work any caller can ask for
            raise ConversionError(f"{field}.hand_sizes: {len(message.hand_sizes)} hands, over {MAX_HAND_SIZES}")
        overrides["hand_sizes"] = tuple(message.hand_sizes)
    try:
        return replace(base, **overrides) if overrides else base  # type: ignore[arg-type]
    except RulesError as error:
        raise ConversionError(_within_rules(field, error)) from None


def rules_for_table(message: rules_pb2.Rules, num_players: int, field: str = "rules") -> Rules:
    """``rules_from_proto``, also refusing rules whose schedule cannot be dealt to
    ``num_players`` (e.g. hand_sizes [14] for 4 players): ConversionError naming the field."""
    rules = rules_from_proto(message, field)
    try:
        hand_sizes(rules, num_players)
    except RulesError as error:
        raise ConversionError(_within_rules(field, error)) from None
    return rules


@lru_cache(maxsize=4096)  # a finished trick is sent in every observation until the hand ends
def trick_to_proto(trick: Trick) -> match_pb2.Trick:
    return match_pb2.Trick(leader=trick.leader, cards=[_CARDS[c] for c in trick.cards], winner=trick.winner)


_PHASES = {phase: int(phase) + 1 for phase in Phase}  # engine CUT=0 .. GAME_OVER=4 -> proto 1..5
ENGINE_PHASES = {number: phase for phase, number in _PHASES.items()}  # proto Phase number -> engine phase


def phase_to_proto(phase: Phase) -> Any:
    return _PHASES[phase]


def phase_from_proto(number: int, field: str = "phase") -> Phase:
    """The engine phase of a proto Phase; PHASE_UNSPECIFIED or an unknown number is refused."""
    phase = ENGINE_PHASES.get(number)
    if phase is None:
        raise ConversionError(f"{field}: {number} is not a phase (PHASE_CUT..PHASE_GAME_OVER)")
    return phase


def decision_kind(phase: Phase) -> Any:
    """The DecisionKind of the decision pending in ``phase`` (BID or PLAY)."""
    return match_pb2.DECISION_KIND_BID if phase == Phase.BID else match_pb2.DECISION_KIND_PLAY


def observation_to_proto(
    obs: Observation, time_bank_ms: int = 0, out: match_pb2.Observation | None = None
) -> match_pb2.Observation:
    """The wire form of ``obs``, written into ``out`` when given (saves a copy)."""
    message = match_pb2.Observation() if out is None else out
    _write_hand_fixed(obs, message)
    if obs.tricks:
        message.tricks.extend([trick_to_proto(t) for t in obs.tricks])
    _write_changing(obs, time_bank_ms, message)
    return message


def _write_hand_fixed(obs: Observation, message: match_pb2.Observation) -> None:
    """The fields that stay the same for one seat through one hand (finished tricks aside)."""
    message.seat, message.num_players = obs.seat, obs.num_players
    message.hand_number, message.hands_scheduled, message.hand_size = (
        obs.hand_number,
        obs.hands_scheduled,
        obs.hand_size,
    )
    message.dealer = max(obs.dealer, 0)
    message.participants.extend(obs.participants)
    message.scores.extend(obs.scores)
    message.sudden_death = obs.sudden_death
    if obs.trump_card != NO_CARD:
        message.trump_card.CopyFrom(_CARDS[obs.trump_card])


def _write_changing(obs: Observation, time_bank_ms: int, message: match_pb2.Observation) -> None:
    message.phase = _PHASES[obs.phase]  # type: ignore[assignment]
    if obs.to_act >= 0:  # unset when no decision is pending: 0 would name seat 0
        message.to_act = obs.to_act
    message.MergeFromString(b"".join([_HAND[c] for c in obs.hand]))  # = hand.extend, without a copy per card
    message.bids.extend(obs.bids)
    message.tricks_won.extend(obs.tricks_won)
    message.forbidden_bid = -1 if obs.forbidden_bid is None else obs.forbidden_bid
    message.time_bank_ms = time_bank_ms
    if obs.current_trick:
        message.current_trick.leader = obs.trick_leader
        message.current_trick.MergeFromString(b"".join([_TRICK_CARDS[c] for c in obs.current_trick]))


_TRICKS = match_pb2.Observation.DESCRIPTOR.fields_by_name["tricks"].number
_LEADER_TAG = match_pb2.Trick.DESCRIPTOR.fields_by_name["leader"].number << 3  # varint fields
_WINNER_TAG = match_pb2.Trick.DESCRIPTOR.fields_by_name["winner"].number << 3


def _finished_trick(trick: Trick) -> bytes:
    """A finished trick as an element of ``Observation.tricks``: protobuf's bytes for
    ``trick_to_proto(trick)`` (leader unset when 0, the optional winner always set) without
    building the message (each trick is written once per seat: a cache of messages would not hit)."""
    leader = bytes((_LEADER_TAG, trick.leader)) if trick.leader else b""  # a seat number: one byte
    cards = b"".join([_TRICK_CARDS[c] for c in trick.cards])
    return wrapped(leader + cards + bytes((_WINNER_TAG, trick.winner)), _TRICKS)


class ObservationWriter:
    """``observation_to_proto`` for the decisions of one match: per seat, the fields fixed
    within a hand and the finished tricks are encoded once into base bytes (a trick is appended
    as it finishes) and parsed in; only what changes between decisions is converted each time.
    The same bytes as ``observation_to_proto`` (protobuf writes fields in number order, whatever
    order they were set in)."""

    def __init__(self) -> None:
        # seat -> (what the base holds, its bytes, how many finished tricks they hold)
        self._bases: dict[int, tuple[tuple[Any, ...], bytes, int]] = {}

    def write(self, obs: Observation, time_bank_ms: int, out: match_pb2.Observation) -> None:
        key = (obs.hand_number, obs.dealer, obs.trump_card, obs.sudden_death, obs.scores, obs.participants)
        tricks = obs.tricks
        cached = self._bases.get(obs.seat)
        if cached is None or cached[0] != key or cached[2] > len(tricks):
            base = match_pb2.Observation()
            _write_hand_fixed(obs, base)
            cached = self._bases[obs.seat] = (key, base.SerializeToString(), 0)
        if cached[2] < len(tricks):  # finished tricks only grow within a hand: append the new ones
            added = b"".join([_finished_trick(t) for t in tricks[cached[2] :]])
            cached = self._bases[obs.seat] = (key, cached[1] + added, len(tricks))
        out.ParseFromString(cached[1])  # replaces what ``out`` held, as a copy of a base message would
        _write_changing(obs, time_bank_ms, out)


class DecisionWriter:
    """The bytes of ``AgentEvent(decision=DecisionRequest(...))`` for the decisions of one match
    (the observation by an ``ObservationWriter``), with the fields a host fills in."""

    def __init__(self, match_id: str) -> None:
        self.match_id = match_id
        self.observations = ObservationWriter()

    def encode(
        self,
        seat: int,
        decision_id: int,
        kind: Any,
        obs: Observation,
        time_bank_ms: int,
        legal: Any,
        deadline_ms: int,
        forbidden_bid: int | None = None,
    ) -> bytes:
        """``legal``: engine actions (cards for a play, ``BID_BASE + tricks`` otherwise);
        ``forbidden_bid`` replaces the observation's when given."""
        event = match_pb2.AgentEvent()
        request = event.decision
        request.match_id, request.seat, request.decision_id, request.kind = self.match_id, seat, decision_id, kind
        self.observations.write(obs, time_bank_ms, request.observation)
        request.deadline_ms = deadline_ms
        if kind == match_pb2.DECISION_KIND_PLAY:
            add_legal_cards(request, legal)
        else:
            request.legal_bids.extend([a - BID_BASE for a in legal])
        if forbidden_bid is not None:
            request.observation.forbidden_bid = forbidden_bid
        return event.SerializeToString()  # type: ignore[no-any-return]


_DECISION_KINDS: dict[int, tuple[str, str]] = {
    match_pb2.DECISION_KIND_BID: ("bid", "bid"),
    match_pb2.DECISION_KIND_PLAY: ("card", "play"),
    match_pb2.DECISION_KIND_CHANGE_BID: ("bid", "bid change"),
}


def action_number(action: match_pb2.Action, kind: int, field: str = "action") -> int:
    """The engine action of a well-formed Action answering a ``kind`` decision (a DecisionKind);
    ConversionError (GARBAGE) otherwise, a bid answering a play request included."""
    choice = action.WhichOneof("choice")
    if choice is None:
        raise ConversionError(f"{field}: neither bid nor card is set")
    if kind not in _DECISION_KINDS:
        raise ValueError(f"kind={kind} is not DECISION_KIND_BID, DECISION_KIND_PLAY or DECISION_KIND_CHANGE_BID")
    wanted, decision = _DECISION_KINDS[kind]
    if choice != wanted:
        raise ConversionError(f"{field}.{choice}: set, but the decision is a {decision}: set {field}.{wanted}")
    if choice == "bid":
        bid = action.bid
        if bid > 17:
            raise ConversionError(f"{field}.bid: {bid} is more than any hand holds")
        return BID_BASE + bid
    return card_from_proto(action.card, f"{field}.card")


_FAULT_KINDS = {
    "TIMEOUT": match_pb2.FAULT_KIND_TIMEOUT,
    "ILLEGAL": match_pb2.FAULT_KIND_ILLEGAL,
    "GARBAGE": match_pb2.FAULT_KIND_GARBAGE,
    "DISCONNECTED": match_pb2.FAULT_KIND_DISCONNECTED,
    "BOT_ERROR": match_pb2.FAULT_KIND_BOT_ERROR,
}


_FAULT_NAMES: dict[int, str] = {number: name for name, number in _FAULT_KINDS.items()}


def fault_kind_name(kind: int) -> str:
    """A FaultKind as match records and ``ohell match show`` name it ("BOT_ERROR"); its number when
    this side does not know it (a newer platform)."""
    return _FAULT_NAMES.get(kind, f"FaultKind {kind}")


def fault_to_proto(fault: dict[str, Any]) -> match_pb2.Fault:
    """A fault of a match record (seat, hand, kind, detail) as a message."""
    return match_pb2.Fault(
        seat=fault["seat"], hand=fault["hand"], kind=_FAULT_KINDS[fault["kind"]], detail=fault["detail"]
    )


def record_from_json(text: str, source: str) -> dict[str, Any]:
    """The JSON match record ``source`` (the service that sent it: "the engine at ADDRESS") sent;
    ConversionError when it is none. Any server may answer at an address a command is given, and
    its text may be nested past the JSON reader's depth."""
    try:
        record = json.loads(text)
    except (ValueError, RecursionError) as error:
        why = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise ConversionError(f"{source} sent a record that is not a JSON match record ({why})") from None
    if not isinstance(record, dict):
        raise ConversionError(f"{source} sent a record that is not a JSON match record (a {type(record).__name__})")
    return record


def record_to_proto(record: dict[str, Any], rules: Rules) -> match_pb2.MatchRecord:
    """The summary of a JSON match record, with the whole record as ``json``."""
    seats = [match_pb2.SeatInfo(seat=i, name=s["name"], kind=s.get("kind", "")) for i, s in enumerate(record["seats"])]
    return match_pb2.MatchRecord(
        match_id=record["match_id"] or "",
        rules=rules_to_proto(rules),
        seed=record["seed"] or 0,
        seats=seats,
        complete=record["complete"],
        totals=record["totals"],
        winners=record["winners"],
        forfeited=record["forfeited"],
        faults=[fault_to_proto(f) for f in record["faults"]],
        hands_played=len(record["hands"]),
        json=json.dumps(record),
    )


# The rules as the web app and the host commands name them.


def given_rules(
    name: str,
    options: Sequence[str],
    fields: tuple[str, str] = ("--rules", "--option"),
    table: tuple[int, str] | None = None,
) -> Rules:
    """A preset with ``name=value`` overrides as a person gives them (``--rules NAME --option
    NAME=VALUE``, a host page's form): RulesError naming the field at fault (``fields``: the preset's,
    the options'), with the rule options listed when one is not a rule option. ``table``: a number of
    seats the rules must deal for, and the words that say where it was given (``--seats 5``)."""
    preset_field, options_field = fields
    try:
        base = preset(name)
    except RulesError as error:
        raise RulesError(f"{preset_field}: {error}") from None
    rules = with_options(base, options, options_field)
    if table is not None:
        seats, where = table
        try:
            hand_sizes(rules, seats)
        except OhHellError as error:
            raise RulesError(f"{where}: {error}") from None
    return rules


def with_options(base: Rules, options: Sequence[str], field: str = "--option") -> Rules:
    """``base`` with ``name=value`` overrides as a person gives them: RulesError naming ``field``,
    with the rule options listed when one is not a rule option."""
    try:
        overrides = dict(parse_option(text) for text in options)
        return Rules.from_dict(overrides, base=base) if overrides else base
    except RulesError as error:
        known = base.to_dict()
        listed = (
            f" (rule options: {', '.join(known)})" if any(o.partition("=")[0] not in known for o in options) else ""
        )
        raise RulesError(f"{field}: {error}{listed}") from None


def rules_label(rules: Rules, chosen: str = "") -> str:
    """A preset's name, or the preset the rules were made from (``chosen``, else the nearest) and the
    options that differ from it: "classic, hand_sizes=5,4,3,2,1"."""
    exact = preset_name(rules)
    if exact and (not chosen or chosen == exact):
        return exact
    mine = rules.to_dict()

    def changed(name: str) -> list[str]:
        base = PRESETS[name].to_dict()
        return [key for key, value in mine.items() if base[key] != value]

    base = chosen if chosen in PRESETS else min(sorted(PRESETS), key=lambda name: len(changed(name)))
    return ", ".join([base, *(f"{key}={_option_text(mine[key])}" for key in changed(base))])


def _option_text(value: Any) -> str:
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value).lower() if isinstance(value, bool) or value is None else str(value)


def proto_rules_label(message: rules_pb2.Rules) -> str:
    try:
        return rules_label(rules_from_proto(message), message.preset)
    except ConversionError:
        return message.preset or "custom"


# ListMatchesResponse.total_size counts archived matches up to one past this (arena.archive.queries.COUNT_CAP)
MATCHES_COUNTED_UP_TO = 10_000


def fixed(value: float, places: int, sign: bool = False) -> str:
    """``value`` as the tables show a number, with ``places`` decimals; never ``-0.0``: a value that
    rounds to zero is ``0.0`` (``f"{-0.01:.1f}"`` is ``-0.0``). ``sign``: a ``+`` before a positive
    value and zero (``+1.50``, ``+0.00``, ``-1.50``), as a difference from zero is shown."""
    rounded = round(value, places) + 0.0  # -0.0 + 0.0 is 0.0
    return f"{rounded:+.{places}f}" if sign else f"{rounded:.{places}f}"


def interval_text(standing: Any) -> str:
    """A tournament standing's 95 % interval (``TournamentStanding.ci_low``, ``ci_high``) as shown:
    ``[-1.25, +0.50]``, or "needs 2 deals" while it has none."""
    if not standing.HasField("ci_low"):
        return "needs 2 deals"
    return f"[{fixed(standing.ci_low, 2, sign=True)}, {fixed(standing.ci_high, 2, sign=True)}]"


def match_total_text(total_size: int) -> str:
    """A match list's ``total_size`` as said to a reader: "more than 10,000" past what is counted."""
    return f"more than {MATCHES_COUNTED_UP_TO:,}" if total_size > MATCHES_COUNTED_UP_TO else str(total_size)


def win_share(wins: float, games: int) -> str:
    """A standing's wins per game as a percentage (a shared win counts as a fraction); empty before
    its first game."""
    return f"{fixed(100 * wins / games, 1)}%" if games else ""
