from arena.proto.ohell.v1 import cards_pb2 as _cards_pb2
from arena.proto.ohell.v1 import match_pb2 as _match_pb2
from arena.proto.ohell.v1 import rules_pb2 as _rules_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SpectateRequest(_message.Message):
    __slots__ = ("match_id", "wait_ms")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_MS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    wait_ms: int
    def __init__(self, match_id: _Optional[str] = ..., wait_ms: _Optional[int] = ...) -> None: ...

class SpectateResponse(_message.Message):
    __slots__ = ("event",)
    EVENT_FIELD_NUMBER: _ClassVar[int]
    event: MatchEvent
    def __init__(self, event: _Optional[_Union[MatchEvent, _Mapping]] = ...) -> None: ...

class SpectateMatchStarted(_message.Message):
    __slots__ = ("match_id", "seats", "rules", "time_control")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seats: _containers.RepeatedCompositeFieldContainer[_match_pb2.SeatInfo]
    rules: _rules_pb2.Rules
    time_control: _match_pb2.TimeControl
    def __init__(self, match_id: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[_match_pb2.SeatInfo, _Mapping]]] = ..., rules: _Optional[_Union[_rules_pb2.Rules, _Mapping]] = ..., time_control: _Optional[_Union[_match_pb2.TimeControl, _Mapping]] = ...) -> None: ...

class HandStarted(_message.Message):
    __slots__ = ("hand_number", "dealer", "hand_size", "participants", "trump_card")
    HAND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    PARTICIPANTS_FIELD_NUMBER: _ClassVar[int]
    TRUMP_CARD_FIELD_NUMBER: _ClassVar[int]
    hand_number: int
    dealer: int
    hand_size: int
    participants: _containers.RepeatedScalarFieldContainer[int]
    trump_card: _cards_pb2.Card
    def __init__(self, hand_number: _Optional[int] = ..., dealer: _Optional[int] = ..., hand_size: _Optional[int] = ..., participants: _Optional[_Iterable[int]] = ..., trump_card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ...) -> None: ...

class BidMade(_message.Message):
    __slots__ = ("seat", "bid", "how")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    BID_FIELD_NUMBER: _ClassVar[int]
    HOW_FIELD_NUMBER: _ClassVar[int]
    seat: int
    bid: int
    how: str
    def __init__(self, seat: _Optional[int] = ..., bid: _Optional[int] = ..., how: _Optional[str] = ...) -> None: ...

class CardPlayed(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: _cards_pb2.Card
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[_cards_pb2.Card, _Mapping]] = ...) -> None: ...

class TrickWon(_message.Message):
    __slots__ = ("trick",)
    TRICK_FIELD_NUMBER: _ClassVar[int]
    trick: _match_pb2.Trick
    def __init__(self, trick: _Optional[_Union[_match_pb2.Trick, _Mapping]] = ...) -> None: ...

class MatchEvent(_message.Message):
    __slots__ = ("sequence", "match_id", "match_started", "hand_started", "bid_made", "card_played", "trick_won", "hand_ended", "fault", "match_ended")
    SEQUENCE_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_STARTED_FIELD_NUMBER: _ClassVar[int]
    HAND_STARTED_FIELD_NUMBER: _ClassVar[int]
    BID_MADE_FIELD_NUMBER: _ClassVar[int]
    CARD_PLAYED_FIELD_NUMBER: _ClassVar[int]
    TRICK_WON_FIELD_NUMBER: _ClassVar[int]
    HAND_ENDED_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    sequence: int
    match_id: str
    match_started: SpectateMatchStarted
    hand_started: HandStarted
    bid_made: BidMade
    card_played: CardPlayed
    trick_won: TrickWon
    hand_ended: _match_pb2.HandEnded
    fault: _match_pb2.Fault
    match_ended: _match_pb2.MatchEnded
    def __init__(self, sequence: _Optional[int] = ..., match_id: _Optional[str] = ..., match_started: _Optional[_Union[SpectateMatchStarted, _Mapping]] = ..., hand_started: _Optional[_Union[HandStarted, _Mapping]] = ..., bid_made: _Optional[_Union[BidMade, _Mapping]] = ..., card_played: _Optional[_Union[CardPlayed, _Mapping]] = ..., trick_won: _Optional[_Union[TrickWon, _Mapping]] = ..., hand_ended: _Optional[_Union[_match_pb2.HandEnded, _Mapping]] = ..., fault: _Optional[_Union[_match_pb2.Fault, _Mapping]] = ..., match_ended: _Optional[_Union[_match_pb2.MatchEnded, _Mapping]] = ...) -> None: ...
