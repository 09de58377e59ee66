from arena.proto.ohell.v1 import cards_pb2 as _cards_pb2
from arena.proto.ohell.v1 import match_pb2 as _match_pb2
from arena.proto.ohell.v1 import rules_pb2 as _rules_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class GameHistory(_message.Message):
    __slots__ = ("rules", "num_players", "seed", "actions")
    RULES_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    rules: _rules_pb2.Rules
    num_players: int
    seed: int
    actions: _containers.RepeatedCompositeFieldContainer[_match_pb2.Action]
    def __init__(self, rules: _Optional[_Union[_rules_pb2.Rules, _Mapping]] = ..., num_players: _Optional[int] = ..., seed: _Optional[int] = ..., actions: _Optional[_Iterable[_Union[_match_pb2.Action, _Mapping]]] = ...) -> None: ...

class Preset(_message.Message):
    __slots__ = ("name", "rules")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    name: str
    rules: _rules_pb2.Rules
    def __init__(self, name: _Optional[str] = ..., rules: _Optional[_Union[_rules_pb2.Rules, _Mapping]] = ...) -> None: ...

class ListPresetsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListPresetsResponse(_message.Message):
    __slots__ = ("presets",)
    PRESETS_FIELD_NUMBER: _ClassVar[int]
    presets: _containers.RepeatedCompositeFieldContainer[Preset]
    def __init__(self, presets: _Optional[_Iterable[_Union[Preset, _Mapping]]] = ...) -> None: ...

class ResolveRulesRequest(_message.Message):
    __slots__ = ("rules", "num_players")
    RULES_FIELD_NUMBER: _ClassVar[int]
    NUM_PLAYERS_FIELD_NUMBER: _ClassVar[int]
    rules: _rules_pb2.Rules
    num_players: int
    def __init__(self, rules: _Optional[_Union[_rules_pb2.Rules, _Mapping]] = ..., num_players: _Optional[int] = ...) -> None: ...

class ResolveRulesResponse(_message.Message):
    __slots__ = ("rules", "schedule")
    RULES_FIELD_NUMBER: _ClassVar[int]
    SCHEDULE_FIELD_NUMBER: _ClassVar[int]
    rules: _rules_pb2.Rules
    schedule: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, rules: _Optional[_Union[_rules_pb2.Rules, _Mapping]] = ..., schedule: _Optional[_Iterable[int]] = ...) -> None: ...

class GetLegalActionsRequest(_message.Message):
    __slots__ = ("history",)
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    history: GameHistory
    def __init__(self, history: _Optional[_Union[GameHistory, _Mapping]] = ...) -> None: ...

class GetLegalActionsResponse(_message.Message):
    __slots__ = ("phase", "seat", "kind", "legal_bids", "legal_cards", "observation", "scores")
    PHASE_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LEGAL_BIDS_FIELD_NUMBER: _ClassVar[int]
    LEGAL_CARDS_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    phase: _match_pb2.Phase
    seat: int
    kind: _match_pb2.DecisionKind
    legal_bids: _containers.RepeatedScalarFieldContainer[int]
    legal_cards: _containers.RepeatedCompositeFieldContainer[_cards_pb2.Card]
    observation: _match_pb2.Observation
    scores: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, phase: _Optional[_Union[_match_pb2.Phase, str]] = ..., seat: _Optional[int] = ..., kind: _Optional[_Union[_match_pb2.DecisionKind, str]] = ..., legal_bids: _Optional[_Iterable[int]] = ..., legal_cards: _Optional[_Iterable[_Union[_cards_pb2.Card, _Mapping]]] = ..., observation: _Optional[_Union[_match_pb2.Observation, _Mapping]] = ..., scores: _Optional[_Iterable[int]] = ...) -> None: ...

class ApplyActionRequest(_message.Message):
    __slots__ = ("history", "action")
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    history: GameHistory
    action: _match_pb2.Action
    def __init__(self, history: _Optional[_Union[GameHistory, _Mapping]] = ..., action: _Optional[_Union[_match_pb2.Action, _Mapping]] = ...) -> None: ...

class ApplyActionResponse(_message.Message):
    __slots__ = ("history", "phase", "scores", "winners")
    HISTORY_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    history: GameHistory
    phase: _match_pb2.Phase
    scores: _containers.RepeatedScalarFieldContainer[int]
    winners: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, history: _Optional[_Union[GameHistory, _Mapping]] = ..., phase: _Optional[_Union[_match_pb2.Phase, str]] = ..., scores: _Optional[_Iterable[int]] = ..., winners: _Optional[_Iterable[int]] = ...) -> None: ...

class ScoreHandRequest(_message.Message):
    __slots__ = ("scoring", "bid", "tricks", "hand_size", "hand_number", "vienna")
    SCORING_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    TRICKS_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    VIENNA_FIELD_NUMBER: _ClassVar[int]
    scoring: _rules_pb2.Scoring
    bid: int
    tricks: int
    hand_size: int
    hand_number: int
    vienna: bool
    def __init__(self, scoring: _Optional[_Union[_rules_pb2.Scoring, str]] = ..., bid: _Optional[int] = ..., tricks: _Optional[int] = ..., hand_size: _Optional[int] = ..., hand_number: _Optional[int] = ..., vienna: _Optional[bool] = ...) -> None: ...

class ScoreHandResponse(_message.Message):
    __slots__ = ("points",)
    POINTS_FIELD_NUMBER: _ClassVar[int]
    points: int
    def __init__(self, points: _Optional[int] = ...) -> None: ...

class RefereeRecordRequest(_message.Message):
    __slots__ = ("record_json",)
    RECORD_JSON_FIELD_NUMBER: _ClassVar[int]
    record_json: str
    def __init__(self, record_json: _Optional[str] = ...) -> None: ...

class RefereeRecordResponse(_message.Message):
    __slots__ = ("valid", "summary", "totals", "winners", "actions_checked")
    VALID_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_CHECKED_FIELD_NUMBER: _ClassVar[int]
    valid: bool
    summary: str
    totals: _containers.RepeatedScalarFieldContainer[int]
    winners: _containers.RepeatedScalarFieldContainer[int]
    actions_checked: int
    def __init__(self, valid: _Optional[bool] = ..., summary: _Optional[str] = ..., totals: _Optional[_Iterable[int]] = ..., winners: _Optional[_Iterable[int]] = ..., actions_checked: _Optional[int] = ...) -> None: ...
