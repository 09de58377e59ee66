from arena.proto.ohell.v1 import cards_pb2 as _cards_pb2
from arena.proto.ohell.v1 import rules_pb2 as _rules_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_CUT: _ClassVar[Phase]
    PHASE_DEAL: _ClassVar[Phase]
    PHASE_BID: _ClassVar[Phase]
    PHASE_PLAY: _ClassVar[Phase]
    PHASE_GAME_OVER: _ClassVar[Phase]

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    DECISION_KIND_BID: _ClassVar[DecisionKind]
    DECISION_KIND_PLAY: _ClassVar[DecisionKind]
    DECISION_KIND_CHANGE_BID: _ClassVar[DecisionKind]

class FaultKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAULT_KIND_UNSPECIFIED: _ClassVar[FaultKind]
    FAULT_KIND_TIMEOUT: _ClassVar[FaultKind]
    FAULT_KIND_ILLEGAL: _ClassVar[FaultKind]
    FAULT_KIND_GARBAGE: _ClassVar[FaultKind]
    FAULT_KIND_DISCONNECTED: _ClassVar[FaultKind]
    FAULT_KIND_BOT_ERROR: _ClassVar[FaultKind]
PHASE_UNSPECIFIED: Phase
PHASE_CUT: Phase
PHASE_DEAL: Phase
PHASE_BID: Phase
PHASE_PLAY: Phase
PHASE_GAME_OVER: Phase
DECISION_KIND_UNSPECIFIED: DecisionKind
DECISION_KIND_BID: DecisionKind
DECISION_KIND_PLAY: DecisionKind
DECISION_KIND_CHANGE_BID: DecisionKind
FAULT_KIND_UNSPECIFIED: FaultKind
FAULT_KIND_TIMEOUT: FaultKind
FAULT_KIND_ILLEGAL: FaultKind
FAULT_KIND_GARBAGE: FaultKind
FAULT_KIND_DISCONNECTED: FaultKind
FAULT_KIND_BOT_ERROR: FaultKind

class TimeControl(_message.Message):
    __slots__ = ("decision_ms", "time_bank_ms", "max_faults")
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    MAX_FAULTS_FIELD_NUMBER: _ClassVar[int]
    decision_ms: int
    time_bank_ms: int
    max_faults: int
    def __init__(self, decision_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., max_faults: _Optional[int] = ...) -> None: ...

class Trick(_message.Message):
    __slots__ = ("leader", "cards", "winner")
    LEADER_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    leader: int
    cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    winner: int
    def __init__(self, leader: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., winner: _Optional[int] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("seat", "num_players", "phase", "hand_number", "hands_scheduled", "hand_size", "dealer", "participants", "to_act", "hand", "trump_card", "bids", "tricks_won", "current_trick", "tricks", "scores", "forbidden_bid", "sudden_death", "time_bank_ms")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    HANDS_SCHEDULED_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    PARTICIPANTS_FIELD_NUMBER: _ClassVar[int]
    TO_ACT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TRUMP_CARD_FIELD_NUMBER: _ClassVar[int]
    BIDS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    CURRENT_TRICK_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    FORBIDDEN_BID_FIELD_NUMBER: _ClassVar[int]
    SUDDEN_DEATH_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    num_players: int
    phase: Phase
    hand_number: int
    hands_scheduled: int
    hand_size: int
    dealer: int
    participants: _containers.RepeatedScalarFieldContainer[int]
    to_act: int
    hand: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    trump_card: _cards_pb2.Card
    bids: _containers.RepeatedScalarFieldContainer[int]
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    current_trick: Trick
    tricks: _containers.RepeatedCompositeFieldContainer[Trick]
    scores: _containers.RepeatedScalarFieldContainer[int]
    forbidden_bid: int
    sudden_death: bool
    time_bank_ms: int
    def __init__(self, seat: _Optional[int] = ..., num_players: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., hand_number: _Optional[int] = ..., hands_scheduled: _Optional[int] = ..., hand_size: _Optional[int] = ..., dealer: _Optional[int] = ..., participants: _Optional[_Iterable[int]] = ..., to_act: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., trump_card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., bids: _Optional[_Iterable[int]] = ..., tricks_won: _Optional[_Iterable[int]] = ..., current_trick: _Optional[_Union[Trick, _Mapping]] = ..., tricks: _Optional[_Iterable[_Union[Trick, _Mapping]]] = ..., scores: _Optional[_Iterable[int]] = ..., forbidden_bid: _Optional[int] = ..., sudden_death: _Optional[bool] = ..., time_bank_ms: _Optional[int] = ...) -> None: ...

class SeatInfo(_message.Message):
    __slots__ = ("seat", "name", "kind")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    kind: str
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., kind: _Optional[str] = ...) -> None: ...

class MatchStarted(_message.Message):
    __slots__ = ("match_id", "seat", "seats", "rules", "time_control")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    seats: _containers.RepeatedCompositeFieldContainer[SeatInfo]
    rules: _rules_pb2.Rules
    time_control: TimeControl
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[SeatInfo, _Mapping]]] = ..., rules: _Optional[_Union[_rules_pb2.Rules, _Mapping]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("match_id", "seat", "decision_id", "kind", "observation", "legal_bids", "legal_cards", "deadline_ms")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    LEGAL_BIDS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_CARDS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    decision_id: int
    kind: DecisionKind
    observation: Observation
    legal_bids: _containers.RepeatedScalarFieldContainer[int]
    legal_cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    deadline_ms: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., decision_id: _Optional[int] = ..., kind: _Optional[_Union[DecisionKind, str]] = ..., observation: _Optional[_Union[Observation, _Mapping]] = ..., legal_bids: _Optional[_Iterable[int]] = ..., legal_cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., deadline_ms: _Optional[int] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("match_id", "seat", "decision_id", "bid", "card", "bot_error", "offer_change")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    BOT_ERROR_FIELD_NUMBER: _ClassVar[int]
    OFFER_CHANGE_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    decision_id: int
    bid: int
    card: _cards_pb2.Card
    bot_error: bool
    offer_change: bool
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., decision_id: _Optional[int] = ..., bid: _Optional[int] = ..., card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ..., bot_error: _Optional[bool] = ..., offer_change: _Optional[bool] = ...) -> None: ...

class Fault(_message.Message):
    __slots__ = ("seat", "hand", "kind", "detail")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand: int
    kind: FaultKind
    detail: str
    def __init__(self, seat: _Optional[int] = ..., hand: _Optional[int] = ..., kind: _Optional[_Union[FaultKind, str]] = ..., detail: _Optional[str] = ...) -> None: ...

class HandEnded(_message.Message):
    __slots__ = ("match_id", "hand_number", "bids", "tricks_won", "points", "totals")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    BIDS_FIELD_NUMBER: _ClassVar[int]
    TRICKS_WON_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    hand_number: int
    bids: _containers.RepeatedScalarFieldContainer[int]
    tricks_won: _containers.RepeatedScalarFieldContainer[int]
    points: _containers.RepeatedScalarFieldContainer[int]
    totals: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, match_id: _Optional[str] = ..., hand_number: _Optional[int] = ..., bids: _Optional[_Iterable[int]] = ..., tricks_won: _Optional[_Iterable[int]] = ..., points: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...

class MatchEnded(_message.Message):
    __slots__ = ("match_id", "totals", "winners", "forfeited", "faults", "aborted")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    ABORTED_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    totals: _containers.RepeatedScalarFieldContainer[int]
    winners: _containers.RepeatedScalarFieldContainer[int]
    forfeited: _containers.RepeatedScalarFieldContainer[int]
    faults: _containers.RepeatedCompositeFieldContainer[Fault]
    aborted: bool
    def __init__(self, match_id: _Optional[str] = ..., totals: _Optional[_Iterable[int]] = ..., winners: _Optional[_Iterable[int]] = ..., forfeited: _Optional[_Iterable[int]] = ..., faults: _Optional[_Iterable[_Union[Fault, _Mapping]]] = ..., aborted: _Optional[bool] = ...) -> None: ...

class MatchRecord(_message.Message):
    __slots__ = ("match_id", "seats", "rules", "seed", "complete", "totals", "winners", "forfeited", "faults", "hands_played", "json")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    COMPLETE_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    HANDS_PLAYED_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seats: _containers.RepeatedCompositeFieldContainer[SeatInfo]
    rules: _rules_pb2.Rules
    seed: int
    complete: bool
    totals: _containers.RepeatedScalarFieldContainer[int]
    winners: _containers.RepeatedScalarFieldContainer[int]
    forfeited: _containers.RepeatedScalarFieldContainer[int]
    faults: _containers.RepeatedCompositeFieldContainer[Fault]
    hands_played: int
    json: str
    def __init__(self, match_id: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[SeatInfo, _Mapping]]] = ..., rules: _Optional[_Union[_rules_pb2.Rules, _Mapping]] = ..., seed: _Optional[int] = ..., complete: _Optional[bool] = ..., totals: _Optional[_Iterable[int]] = ..., winners: _Optional[_Iterable[int]] = ..., forfeited: _Optional[_Iterable[int]] = ..., faults: _Optional[_Iterable[_Union[Fault, _Mapping]]] = ..., hands_played: _Optional[int] = ..., json: _Optional[str] = ...) -> None: ...

class Notice(_message.Message):
    __slots__ = ("code", "message")
    CODE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    code: str
    message: str
    def __init__(self, code: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class AgentEvent(_message.Message):
    __slots__ = ("match_started", "decision", "hand_ended", "match_ended", "notice")
    MATCH_STARTED_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    HAND_ENDED_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    NOTICE_FIELD_NUMBER: _ClassVar[int]
    match_started: MatchStarted
    decision: DecisionRequest
    hand_ended: HandEnded
    match_ended: MatchEnded
    notice: Notice
    def __init__(self, match_started: _Optional[_Union[MatchStarted, _Mapping]] = ..., decision: _Optional[_Union[DecisionRequest, _Mapping]] = ..., hand_ended: _Optional[_Union[HandEnded, _Mapping]] = ..., match_ended: _Optional[_Union[MatchEnded, _Mapping]] = ..., notice: _Optional[_Union[Notice, _Mapping]] = ...) -> None: ...
