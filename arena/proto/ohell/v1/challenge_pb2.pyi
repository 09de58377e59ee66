from arena.proto.ohell.v1 import match_pb2 as _match_pb2
from arena.proto.ohell.v1 import rules_pb2 as _rules_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ChallengeSeat(_message.Message):
    __slots__ = ("name", "builtin", "agent_id", "endpoint")
    NAME_FIELD_NUMBER: _ClassVar[int]
    BUILTIN_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    name: str
    builtin: str
    agent_id: str
    endpoint: str
    def __init__(self, name: _Optional[str] = ..., builtin: _Optional[str] = ..., agent_id: _Optional[str] = ..., endpoint: _Optional[str] = ...) -> None: ...

class ChallengeRequest(_message.Message):
    __slots__ = ("rules", "seats", "seed", "time_control", "match_id")
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    rules: _rules_pb2.Rules
    seats: _containers.RepeatedCompositeFieldContainer[ChallengeSeat]
    seed: int
    time_control: _match_pb2.TimeControl
    match_id: str
    def __init__(self, rules: _Optional[_Union[_rules_pb2.Rules, _Mapping]] = ..., seats: _Optional[_Iterable[_Union[ChallengeSeat, _Mapping]]] = ..., seed: _Optional[int] = ..., time_control: _Optional[_Union[_match_pb2.TimeControl, _Mapping]] = ..., match_id: _Optional[str] = ...) -> None: ...

class ChallengeResponse(_message.Message):
    __slots__ = ("match_id", "record")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    RECORD_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    record: _match_pb2.MatchRecord
    def __init__(self, match_id: _Optional[str] = ..., record: _Optional[_Union[_match_pb2.MatchRecord, _Mapping]] = ...) -> None: ...
