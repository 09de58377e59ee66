from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Direction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DIRECTION_UNSPECIFIED: _ClassVar[Direction]
    DIRECTION_DOWN: _ClassVar[Direction]
    DIRECTION_UP: _ClassVar[Direction]

class MaxCardsAuto(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MAX_CARDS_AUTO_UNSPECIFIED: _ClassVar[MaxCardsAuto]
    MAX_CARDS_AUTO_CLASSIC: _ClassVar[MaxCardsAuto]
    MAX_CARDS_AUTO_DECK: _ClassVar[MaxCardsAuto]

class Bidding(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BIDDING_UNSPECIFIED: _ClassVar[Bidding]
    BIDDING_SEQUENTIAL: _ClassVar[Bidding]
    BIDDING_BLIND: _ClassVar[Bidding]

class Scoring(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SCORING_UNSPECIFIED: _ClassVar[Scoring]
    SCORING_EXACT: _ClassVar[Scoring]
    SCORING_POSITIVE: _ClassVar[Scoring]
    SCORING_NEGATIVE: _ClassVar[Scoring]
    SCORING_BALANCED: _ClassVar[Scoring]
    SCORING_HYBRID: _ClassVar[Scoring]
    SCORING_DOUBLES: _ClassVar[Scoring]
    SCORING_TRIPLES: _ClassVar[Scoring]
    SCORING_SQUARES: _ClassVar[Scoring]
    SCORING_ANDERSON: _ClassVar[Scoring]
    SCORING_CONTRACT_WHIST: _ClassVar[Scoring]
    SCORING_CONSOLATION: _ClassVar[Scoring]

class TieBreak(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TIE_BREAK_UNSPECIFIED: _ClassVar[TieBreak]
    TIE_BREAK_SHARE: _ClassVar[TieBreak]
    TIE_BREAK_SUDDEN_DEATH: _ClassVar[TieBreak]
DIRECTION_UNSPECIFIED: Direction
DIRECTION_DOWN: Direction
DIRECTION_UP: Direction
MAX_CARDS_AUTO_UNSPECIFIED: MaxCardsAuto
MAX_CARDS_AUTO_CLASSIC: MaxCardsAuto
MAX_CARDS_AUTO_DECK: MaxCardsAuto
BIDDING_UNSPECIFIED: Bidding
BIDDING_SEQUENTIAL: Bidding
BIDDING_BLIND: Bidding
SCORING_UNSPECIFIED: Scoring
SCORING_EXACT: Scoring
SCORING_POSITIVE: Scoring
SCORING_NEGATIVE: Scoring
SCORING_BALANCED: Scoring
SCORING_HYBRID: Scoring
SCORING_DOUBLES: Scoring
SCORING_TRIPLES: Scoring
SCORING_SQUARES: Scoring
SCORING_ANDERSON: Scoring
SCORING_CONTRACT_WHIST: Scoring
SCORING_CONSOLATION: Scoring
TIE_BREAK_UNSPECIFIED: TieBreak
TIE_BREAK_SHARE: TieBreak
TIE_BREAK_SUDDEN_DEATH: TieBreak

class Rules(_message.Message):
    __slots__ = ("preset", "direction", "rebound", "min_cards", "max_cards", "max_cards_auto", "hand_sizes", "no_trump_every", "hook", "bidding", "bid_changes", "scoring", "vienna", "tie_break", "sudden_death_limit")
    PRESET_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    REBOUND_FIELD_NUMBER: _ClassVar[int]
    MIN_CARDS_FIELD_NUMBER: _ClassVar[int]
    MAX_CARDS_FIELD_NUMBER: _ClassVar[int]
    MAX_CARDS_AUTO_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    NO_TRUMP_EVERY_FIELD_NUMBER: _ClassVar[int]
    HOOK_FIELD_NUMBER: _ClassVar[int]
    BIDDING_FIELD_NUMBER: _ClassVar[int]
    BID_CHANGES_FIELD_NUMBER: _ClassVar[int]
    SCORING_FIELD_NUMBER: _ClassVar[int]
    VIENNA_FIELD_NUMBER: _ClassVar[int]
    TIE_BREAK_FIELD_NUMBER: _ClassVar[int]
    SUDDEN_DEATH_LIMIT_FIELD_NUMBER: _ClassVar[int]
    preset: str
    direction: Direction
    rebound: bool
    min_cards: int
    max_cards: int
    max_cards_auto: MaxCardsAuto
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    no_trump_every: int
    hook: bool
    bidding: Bidding
    bid_changes: bool
    scoring: Scoring
    vienna: bool
    tie_break: TieBreak
    sudden_death_limit: int
    def __init__(self, preset: _Optional[str] = ..., direction: _Optional[_Union[Direction, str]] = ..., rebound: _Optional[bool] = ..., min_cards: _Optional[int] = ..., max_cards: _Optional[int] = ..., max_cards_auto: _Optional[_Union[MaxCardsAuto, str]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., no_trump_every: _Optional[int] = ..., hook: _Optional[bool] = ..., bidding: _Optional[_Union[Bidding, str]] = ..., bid_changes: _Optional[bool] = ..., scoring: _Optional[_Union[Scoring, str]] = ..., vienna: _Optional[bool] = ..., tie_break: _Optional[_Union[TieBreak, str]] = ..., sudden_death_limit: _Optional[int] = ...) -> None: ...
