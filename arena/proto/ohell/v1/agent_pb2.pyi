from arena.proto.ohell.v1 import match_pb2 as _match_pb2
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PlayRequest(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: _match_pb2.AgentEvent
    def __init__(self, event: _Optional[_Union[_match_pb2.AgentEvent, _Mapping]] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("action",)
    ACTION_FIELD_NUMBER: _ClassVar[int]
    action: _match_pb2.Action
    def __init__(self, action: _Optional[_Union[_match_pb2.Action, _Mapping]] = ...) -> None: ...
