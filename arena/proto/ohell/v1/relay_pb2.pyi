from arena.proto.ohell.v1 import match_pb2 as _match_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RelayEnvelope(_message.Message):
    __slots__ = ("agent_id", "reply_channel", "to_agent", "from_agent", "undeliverable", "decision_id")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    REPLY_CHANNEL_FIELD_NUMBER: _ClassVar[int]
    TO_AGENT_FIELD_NUMBER: _ClassVar[int]
    FROM_AGENT_FIELD_NUMBER: _ClassVar[int]
    UNDELIVERABLE_FIELD_NUMBER: _ClassVar[int]
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    reply_channel: str
    to_agent: _match_pb2.AgentEvent
    from_agent: _match_pb2.Action
    undeliverable: str
    decision_id: int
    def __init__(self, agent_id: _Optional[str] = ..., reply_channel: _Optional[str] = ..., to_agent: _Optional[_Union[_match_pb2.AgentEvent, _Mapping]] = ..., from_agent: _Optional[_Union[_match_pb2.Action, _Mapping]] = ..., undeliverable: _Optional[str] = ..., decision_id: _Optional[int] = ...) -> None: ...
