from arena.proto.ohell.v1 import rules_pb2 as _rules_pb2
from arena.proto.ohell.v1 import tournament_pb2 as _tournament_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AgentKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    AGENT_KIND_UNSPECIFIED: _ClassVar[AgentKind]
    AGENT_KIND_BUILTIN: _ClassVar[AgentKind]
    AGENT_KIND_CONNECTED: _ClassVar[AgentKind]
    AGENT_KIND_ENDPOINT: _ClassVar[AgentKind]

class LadderEntry(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LADDER_ENTRY_UNSPECIFIED: _ClassVar[LadderEntry]
    LADDER_ENTRY_HOST: _ClassVar[LadderEntry]
    LADDER_ENTRY_OPEN: _ClassVar[LadderEntry]
AGENT_KIND_UNSPECIFIED: AgentKind
AGENT_KIND_BUILTIN: AgentKind
AGENT_KIND_CONNECTED: AgentKind
AGENT_KIND_ENDPOINT: AgentKind
LADDER_ENTRY_UNSPECIFIED: LadderEntry
LADDER_ENTRY_HOST: LadderEntry
LADDER_ENTRY_OPEN: LadderEntry

class Agent(_message.Message):
    __slots__ = ("agent_id", "name", "kind", "version", "bot", "endpoint", "house", "self_registered", "revoked", "revoked_ms")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    HOUSE_FIELD_NUMBER: _ClassVar[int]
    SELF_REGISTERED_FIELD_NUMBER: _ClassVar[int]
    REVOKED_FIELD_NUMBER: _ClassVar[int]
    REVOKED_MS_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    name: str
    kind: AgentKind
    version: str
    bot: str
    endpoint: str
    house: bool
    self_registered: bool
    revoked: bool
    revoked_ms: int
    def __init__(self, agent_id: _Optional[str] = ..., name: _Optional[str] = ..., kind: _Optional[_Union[AgentKind, str]] = ..., version: _Optional[str] = ..., bot: _Optional[str] = ..., endpoint: _Optional[str] = ..., house: _Optional[bool] = ..., self_registered: _Optional[bool] = ..., revoked: _Optional[bool] = ..., revoked_ms: _Optional[int] = ...) -> None: ...

class RegisterAgentRequest(_message.Message):
    __slots__ = ("name", "kind", "version", "bot", "endpoint")
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    name: str
    kind: AgentKind
    version: str
    bot: str
    endpoint: str
    def __init__(self, name: _Optional[str] = ..., kind: _Optional[_Union[AgentKind, str]] = ..., version: _Optional[str] = ..., bot: _Optional[str] = ..., endpoint: _Optional[str] = ...) -> None: ...

class RegisterAgentResponse(_message.Message):
    __slots__ = ("agent", "token")
    AGENT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    token: str
    def __init__(self, agent: _Optional[_Union[Agent, _Mapping]] = ..., token: _Optional[str] = ...) -> None: ...

class SetAgentVersionRequest(_message.Message):
    __slots__ = ("agent_id", "version")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    version: str
    def __init__(self, agent_id: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class SetAgentVersionResponse(_message.Message):
    __slots__ = ("agent",)
    AGENT_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    def __init__(self, agent: _Optional[_Union[Agent, _Mapping]] = ...) -> None: ...

class Ladder(_message.Message):
    __slots__ = ("name", "rules", "seats", "house_fill", "fill_after_seconds", "house_bots", "base_window", "widen_per_second", "entry", "paused")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    HOUSE_FILL_FIELD_NUMBER: _ClassVar[int]
    FILL_AFTER_SECONDS_FIELD_NUMBER: _ClassVar[int]
    HOUSE_BOTS_FIELD_NUMBER: _ClassVar[int]
    BASE_WINDOW_FIELD_NUMBER: _ClassVar[int]
    WIDEN_PER_SECOND_FIELD_NUMBER: _ClassVar[int]
    ENTRY_FIELD_NUMBER: _ClassVar[int]
    PAUSED_FIELD_NUMBER: _ClassVar[int]
    name: str
    rules: _rules_pb2.Rules
    seats: int
    house_fill: bool
    fill_after_seconds: float
    house_bots: _containers.RepeatedScalarFieldContainer[str]
    base_window: float
    widen_per_second: float
    entry: LadderEntry
    paused: bool
    def __init__(self, name: _Optional[str] = ..., rules: _Optional[_Union[_rules_pb2.Rules, _Mapping]] = ..., seats: _Optional[int] = ..., house_fill: _Optional[bool] = ..., fill_after_seconds: _Optional[float] = ..., house_bots: _Optional[_Iterable[str]] = ..., base_window: _Optional[float] = ..., widen_per_second: _Optional[float] = ..., entry: _Optional[_Union[LadderEntry, str]] = ..., paused: _Optional[bool] = ...) -> None: ...

class CreateLadderRequest(_message.Message):
    __slots__ = ("ladder",)
    LADDER_FIELD_NUMBER: _ClassVar[int]
    ladder: Ladder
    def __init__(self, ladder: _Optional[_Union[Ladder, _Mapping]] = ...) -> None: ...

class CreateLadderResponse(_message.Message):
    __slots__ = ("ladder",)
    LADDER_FIELD_NUMBER: _ClassVar[int]
    ladder: Ladder
    def __init__(self, ladder: _Optional[_Union[Ladder, _Mapping]] = ...) -> None: ...

class GetLadderRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class GetLadderResponse(_message.Message):
    __slots__ = ("ladder", "tickets_waiting")
    LADDER_FIELD_NUMBER: _ClassVar[int]
    TICKETS_WAITING_FIELD_NUMBER: _ClassVar[int]
    ladder: Ladder
    tickets_waiting: int
    def __init__(self, ladder: _Optional[_Union[Ladder, _Mapping]] = ..., tickets_waiting: _Optional[int] = ...) -> None: ...

class ListLaddersRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListLaddersResponse(_message.Message):
    __slots__ = ("ladders",)
    LADDERS_FIELD_NUMBER: _ClassVar[int]
    ladders: _containers.RepeatedCompositeFieldContainer[Ladder]
    def __init__(self, ladders: _Optional[_Iterable[_Union[Ladder, _Mapping]]] = ...) -> None: ...

class JoinQueueRequest(_message.Message):
    __slots__ = ("ladder", "agent_id", "lease_seconds")
    LADDER_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    LEASE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    ladder: str
    agent_id: str
    lease_seconds: float
    def __init__(self, ladder: _Optional[str] = ..., agent_id: _Optional[str] = ..., lease_seconds: _Optional[float] = ...) -> None: ...

class JoinQueueResponse(_message.Message):
    __slots__ = ("queued_at_ms",)
    QUEUED_AT_MS_FIELD_NUMBER: _ClassVar[int]
    queued_at_ms: int
    def __init__(self, queued_at_ms: _Optional[int] = ...) -> None: ...

class LeaveQueueRequest(_message.Message):
    __slots__ = ("ladder", "agent_id")
    LADDER_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ladder: str
    agent_id: str
    def __init__(self, ladder: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class LeaveQueueResponse(_message.Message):
    __slots__ = ("left",)
    LEFT_FIELD_NUMBER: _ClassVar[int]
    left: bool
    def __init__(self, left: _Optional[bool] = ...) -> None: ...

class WatchQueueRequest(_message.Message):
    __slots__ = ("ladder", "agent_id")
    LADDER_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ladder: str
    agent_id: str
    def __init__(self, ladder: _Optional[str] = ..., agent_id: _Optional[str] = ...) -> None: ...

class WatchQueueResponse(_message.Message):
    __slots__ = ("match_id", "seat")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class Standing(_message.Message):
    __slots__ = ("rank", "agent_id", "name", "mu", "sigma", "ordinal", "games", "hands", "exact_bids", "exact_bid_rate", "faults", "forfeits", "wins")
    RANK_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    MU_FIELD_NUMBER: _ClassVar[int]
    SIGMA_FIELD_NUMBER: _ClassVar[int]
    ORDINAL_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    EXACT_BIDS_FIELD_NUMBER: _ClassVar[int]
    EXACT_BID_RATE_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    FORFEITS_FIELD_NUMBER: _ClassVar[int]
    WINS_FIELD_NUMBER: _ClassVar[int]
    rank: int
    agent_id: str
    name: str
    mu: float
    sigma: float
    ordinal: float
    games: int
    hands: int
    exact_bids: int
    exact_bid_rate: float
    faults: int
    forfeits: int
    wins: float
    def __init__(self, rank: _Optional[int] = ..., agent_id: _Optional[str] = ..., name: _Optional[str] = ..., mu: _Optional[float] = ..., sigma: _Optional[float] = ..., ordinal: _Optional[float] = ..., games: _Optional[int] = ..., hands: _Optional[int] = ..., exact_bids: _Optional[int] = ..., exact_bid_rate: _Optional[float] = ..., faults: _Optional[int] = ..., forfeits: _Optional[int] = ..., wins: _Optional[float] = ...) -> None: ...

class GetLeaderboardRequest(_message.Message):
    __slots__ = ("ladder", "page_size", "page_token")
    LADDER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    ladder: str
    page_size: int
    page_token: str
    def __init__(self, ladder: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class GetLeaderboardResponse(_message.Message):
    __slots__ = ("standings", "next_page_token", "total")
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    standings: _containers.RepeatedCompositeFieldContainer[Standing]
    next_page_token: str
    total: int
    def __init__(self, standings: _Optional[_Iterable[_Union[Standing, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., total: _Optional[int] = ...) -> None: ...

class GetAgentRequest(_message.Message):
    __slots__ = ("agent_id", "ladder")
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    LADDER_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    ladder: str
    def __init__(self, agent_id: _Optional[str] = ..., ladder: _Optional[str] = ...) -> None: ...

class GetAgentResponse(_message.Message):
    __slots__ = ("agent", "standing")
    AGENT_FIELD_NUMBER: _ClassVar[int]
    STANDING_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    standing: Standing
    def __init__(self, agent: _Optional[_Union[Agent, _Mapping]] = ..., standing: _Optional[_Union[Standing, _Mapping]] = ...) -> None: ...

class MatchSummary(_message.Message):
    __slots__ = ("match_id", "ladder", "state", "agent_ids", "created_ms", "finished_ms", "attempts", "agent_names", "totals", "winners", "archived", "faults")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    LADDER_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    AGENT_IDS_FIELD_NUMBER: _ClassVar[int]
    CREATED_MS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_MS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    AGENT_NAMES_FIELD_NUMBER: _ClassVar[int]
    TOTALS_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    ARCHIVED_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    ladder: str
    state: str
    agent_ids: _containers.RepeatedScalarFieldContainer[str]
    created_ms: int
    finished_ms: int
    attempts: int
    agent_names: _containers.RepeatedScalarFieldContainer[str]
    totals: _containers.RepeatedScalarFieldContainer[int]
    winners: _containers.RepeatedScalarFieldContainer[int]
    archived: bool
    faults: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, match_id: _Optional[str] = ..., ladder: _Optional[str] = ..., state: _Optional[str] = ..., agent_ids: _Optional[_Iterable[str]] = ..., created_ms: _Optional[int] = ..., finished_ms: _Optional[int] = ..., attempts: _Optional[int] = ..., agent_names: _Optional[_Iterable[str]] = ..., totals: _Optional[_Iterable[int]] = ..., winners: _Optional[_Iterable[int]] = ..., archived: _Optional[bool] = ..., faults: _Optional[_Iterable[int]] = ...) -> None: ...

class ListMatchesRequest(_message.Message):
    __slots__ = ("ladder", "agent_id", "page_size", "page_token", "since_ms", "until_ms", "state")
    LADDER_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    SINCE_MS_FIELD_NUMBER: _ClassVar[int]
    UNTIL_MS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ladder: str
    agent_id: str
    page_size: int
    page_token: str
    since_ms: int
    until_ms: int
    state: str
    def __init__(self, ladder: _Optional[str] = ..., agent_id: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., since_ms: _Optional[int] = ..., until_ms: _Optional[int] = ..., state: _Optional[str] = ...) -> None: ...

class ListMatchesResponse(_message.Message):
    __slots__ = ("matches", "next_page_token", "total_size")
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TOTAL_SIZE_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[MatchSummary]
    next_page_token: str
    total_size: int
    def __init__(self, matches: _Optional[_Iterable[_Union[MatchSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ..., total_size: _Optional[int] = ...) -> None: ...

class GetMatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class GetMatchResponse(_message.Message):
    __slots__ = ("match", "record_json")
    MATCH_FIELD_NUMBER: _ClassVar[int]
    RECORD_JSON_FIELD_NUMBER: _ClassVar[int]
    match: MatchSummary
    record_json: str
    def __init__(self, match: _Optional[_Union[MatchSummary, _Mapping]] = ..., record_json: _Optional[str] = ...) -> None: ...

class UpdateLadderRequest(_message.Message):
    __slots__ = ("ladder",)
    LADDER_FIELD_NUMBER: _ClassVar[int]
    ladder: Ladder
    def __init__(self, ladder: _Optional[_Union[Ladder, _Mapping]] = ...) -> None: ...

class UpdateLadderResponse(_message.Message):
    __slots__ = ("ladder",)
    LADDER_FIELD_NUMBER: _ClassVar[int]
    ladder: Ladder
    def __init__(self, ladder: _Optional[_Union[Ladder, _Mapping]] = ...) -> None: ...

class PauseLadderRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class PauseLadderResponse(_message.Message):
    __slots__ = ("ladder",)
    LADDER_FIELD_NUMBER: _ClassVar[int]
    ladder: Ladder
    def __init__(self, ladder: _Optional[_Union[Ladder, _Mapping]] = ...) -> None: ...

class ResumeLadderRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class ResumeLadderResponse(_message.Message):
    __slots__ = ("ladder",)
    LADDER_FIELD_NUMBER: _ClassVar[int]
    ladder: Ladder
    def __init__(self, ladder: _Optional[_Union[Ladder, _Mapping]] = ...) -> None: ...

class DeleteLadderRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DeleteLadderResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class RotateAgentTokenRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class RotateAgentTokenResponse(_message.Message):
    __slots__ = ("agent", "token")
    AGENT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    agent: Agent
    token: str
    def __init__(self, agent: _Optional[_Union[Agent, _Mapping]] = ..., token: _Optional[str] = ...) -> None: ...

class RevokeAgentTokenRequest(_message.Message):
    __slots__ = ("agent_id",)
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    agent_id: str
    def __init__(self, agent_id: _Optional[str] = ...) -> None: ...

class RevokeAgentTokenResponse(_message.Message):
    __slots__ = ("revoked",)
    REVOKED_FIELD_NUMBER: _ClassVar[int]
    revoked: bool
    def __init__(self, revoked: _Optional[bool] = ...) -> None: ...

class ListAgentsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListAgentsResponse(_message.Message):
    __slots__ = ("agents", "next_page_token")
    AGENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    agents: _containers.RepeatedCompositeFieldContainer[Agent]
    next_page_token: str
    def __init__(self, agents: _Optional[_Iterable[_Union[Agent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetRatingHistoryRequest(_message.Message):
    __slots__ = ("ladder", "agent_id", "since_ms", "page_size", "page_token", "newest_first")
    LADDER_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    SINCE_MS_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    NEWEST_FIRST_FIELD_NUMBER: _ClassVar[int]
    ladder: str
    agent_id: str
    since_ms: int
    page_size: int
    page_token: str
    newest_first: bool
    def __init__(self, ladder: _Optional[str] = ..., agent_id: _Optional[str] = ..., since_ms: _Optional[int] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., newest_first: _Optional[bool] = ...) -> None: ...

class RatingPoint(_message.Message):
    __slots__ = ("match_id", "finished_ms", "mu_before", "sigma_before", "mu_after", "sigma_after")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    FINISHED_MS_FIELD_NUMBER: _ClassVar[int]
    MU_BEFORE_FIELD_NUMBER: _ClassVar[int]
    SIGMA_BEFORE_FIELD_NUMBER: _ClassVar[int]
    MU_AFTER_FIELD_NUMBER: _ClassVar[int]
    SIGMA_AFTER_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    finished_ms: int
    mu_before: float
    sigma_before: float
    mu_after: float
    sigma_after: float
    def __init__(self, match_id: _Optional[str] = ..., finished_ms: _Optional[int] = ..., mu_before: _Optional[float] = ..., sigma_before: _Optional[float] = ..., mu_after: _Optional[float] = ..., sigma_after: _Optional[float] = ...) -> None: ...

class GetRatingHistoryResponse(_message.Message):
    __slots__ = ("points", "next_page_token")
    POINTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    points: _containers.RepeatedCompositeFieldContainer[RatingPoint]
    next_page_token: str
    def __init__(self, points: _Optional[_Iterable[_Union[RatingPoint, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...
