from arena.proto.ohell.v1 import rules_pb2 as _rules_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class TournamentFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOURNAMENT_FORMAT_UNSPECIFIED: _ClassVar[TournamentFormat]
    TOURNAMENT_FORMAT_ROUND_ROBIN: _ClassVar[TournamentFormat]
    TOURNAMENT_FORMAT_SWISS: _ClassVar[TournamentFormat]

class TournamentState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    TOURNAMENT_STATE_UNSPECIFIED: _ClassVar[TournamentState]
    TOURNAMENT_STATE_RUNNING: _ClassVar[TournamentState]
    TOURNAMENT_STATE_FINISHED: _ClassVar[TournamentState]
    TOURNAMENT_STATE_CANCELLED: _ClassVar[TournamentState]

class ExportFormat(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXPORT_FORMAT_UNSPECIFIED: _ClassVar[ExportFormat]
    EXPORT_FORMAT_CSV: _ClassVar[ExportFormat]
    EXPORT_FORMAT_JSON: _ClassVar[ExportFormat]
TOURNAMENT_FORMAT_UNSPECIFIED: TournamentFormat
TOURNAMENT_FORMAT_ROUND_ROBIN: TournamentFormat
TOURNAMENT_FORMAT_SWISS: TournamentFormat
TOURNAMENT_STATE_UNSPECIFIED: TournamentState
TOURNAMENT_STATE_RUNNING: TournamentState
TOURNAMENT_STATE_FINISHED: TournamentState
TOURNAMENT_STATE_CANCELLED: TournamentState
EXPORT_FORMAT_UNSPECIFIED: ExportFormat
EXPORT_FORMAT_CSV: ExportFormat
EXPORT_FORMAT_JSON: ExportFormat

class TournamentEntrant(_message.Message):
    __slots__ = ("name", "bot", "agent_id", "endpoint")
    NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_FIELD_NUMBER: _ClassVar[int]
    AGENT_ID_FIELD_NUMBER: _ClassVar[int]
    ENDPOINT_FIELD_NUMBER: _ClassVar[int]
    name: str
    bot: str
    agent_id: str
    endpoint: str
    def __init__(self, name: _Optional[str] = ..., bot: _Optional[str] = ..., agent_id: _Optional[str] = ..., endpoint: _Optional[str] = ...) -> None: ...

class Tournament(_message.Message):
    __slots__ = ("tournament_id", "entrants", "rules", "seats", "format", "rounds", "deals", "grace_seconds")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    GRACE_SECONDS_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    entrants: _containers.RepeatedCompositeFieldContainer[TournamentEntrant]
    rules: _rules_pb2.Rules
    seats: int
    format: TournamentFormat
    rounds: int
    deals: int
    grace_seconds: float
    def __init__(self, tournament_id: _Optional[str] = ..., entrants: _Optional[_Iterable[_Union[TournamentEntrant, _Mapping]]] = ..., rules: _Optional[_Union[_rules_pb2.Rules, _Mapping]] = ..., seats: _Optional[int] = ..., format: _Optional[_Union[TournamentFormat, str]] = ..., rounds: _Optional[int] = ..., deals: _Optional[int] = ..., grace_seconds: _Optional[float] = ...) -> None: ...

class TournamentProgress(_message.Message):
    __slots__ = ("state", "round", "rounds", "tables", "tables_done", "games_done", "games_total", "created_ms", "finished_ms")
    STATE_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    TABLES_FIELD_NUMBER: _ClassVar[int]
    TABLES_DONE_FIELD_NUMBER: _ClassVar[int]
    GAMES_DONE_FIELD_NUMBER: _ClassVar[int]
    GAMES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    CREATED_MS_FIELD_NUMBER: _ClassVar[int]
    FINISHED_MS_FIELD_NUMBER: _ClassVar[int]
    state: TournamentState
    round: int
    rounds: int
    tables: int
    tables_done: int
    games_done: int
    games_total: int
    created_ms: int
    finished_ms: int
    def __init__(self, state: _Optional[_Union[TournamentState, str]] = ..., round: _Optional[int] = ..., rounds: _Optional[int] = ..., tables: _Optional[int] = ..., tables_done: _Optional[int] = ..., games_done: _Optional[int] = ..., games_total: _Optional[int] = ..., created_ms: _Optional[int] = ..., finished_ms: _Optional[int] = ...) -> None: ...

class TournamentTable(_message.Message):
    __slots__ = ("table_id", "round", "entrants", "state", "attempts", "games_done", "games", "forfeits", "waiting_for", "waiting_until_ms", "game_ids")
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    GAMES_DONE_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    FORFEITS_FIELD_NUMBER: _ClassVar[int]
    WAITING_FOR_FIELD_NUMBER: _ClassVar[int]
    WAITING_UNTIL_MS_FIELD_NUMBER: _ClassVar[int]
    GAME_IDS_FIELD_NUMBER: _ClassVar[int]
    table_id: str
    round: int
    entrants: _containers.RepeatedScalarFieldContainer[str]
    state: str
    attempts: int
    games_done: int
    games: int
    forfeits: _containers.RepeatedScalarFieldContainer[str]
    waiting_for: _containers.RepeatedScalarFieldContainer[str]
    waiting_until_ms: int
    game_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, table_id: _Optional[str] = ..., round: _Optional[int] = ..., entrants: _Optional[_Iterable[str]] = ..., state: _Optional[str] = ..., attempts: _Optional[int] = ..., games_done: _Optional[int] = ..., games: _Optional[int] = ..., forfeits: _Optional[_Iterable[str]] = ..., waiting_for: _Optional[_Iterable[str]] = ..., waiting_until_ms: _Optional[int] = ..., game_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class TournamentAway(_message.Message):
    __slots__ = ("entrant", "since_ms", "table_id")
    ENTRANT_FIELD_NUMBER: _ClassVar[int]
    SINCE_MS_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    entrant: str
    since_ms: int
    table_id: str
    def __init__(self, entrant: _Optional[str] = ..., since_ms: _Optional[int] = ..., table_id: _Optional[str] = ...) -> None: ...

class TournamentStanding(_message.Message):
    __slots__ = ("rank", "entrant", "games", "deals", "mean_duplicate", "total_duplicate", "ci_low", "ci_high", "p_above_next", "deals_won", "forfeits", "mean_score")
    RANK_FIELD_NUMBER: _ClassVar[int]
    ENTRANT_FIELD_NUMBER: _ClassVar[int]
    GAMES_FIELD_NUMBER: _ClassVar[int]
    DEALS_FIELD_NUMBER: _ClassVar[int]
    MEAN_DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    TOTAL_DUPLICATE_FIELD_NUMBER: _ClassVar[int]
    CI_LOW_FIELD_NUMBER: _ClassVar[int]
    CI_HIGH_FIELD_NUMBER: _ClassVar[int]
    P_ABOVE_NEXT_FIELD_NUMBER: _ClassVar[int]
    DEALS_WON_FIELD_NUMBER: _ClassVar[int]
    FORFEITS_FIELD_NUMBER: _ClassVar[int]
    MEAN_SCORE_FIELD_NUMBER: _ClassVar[int]
    rank: int
    entrant: str
    games: int
    deals: int
    mean_duplicate: float
    total_duplicate: float
    ci_low: float
    ci_high: float
    p_above_next: float
    deals_won: int
    forfeits: int
    mean_score: float
    def __init__(self, rank: _Optional[int] = ..., entrant: _Optional[str] = ..., games: _Optional[int] = ..., deals: _Optional[int] = ..., mean_duplicate: _Optional[float] = ..., total_duplicate: _Optional[float] = ..., ci_low: _Optional[float] = ..., ci_high: _Optional[float] = ..., p_above_next: _Optional[float] = ..., deals_won: _Optional[int] = ..., forfeits: _Optional[int] = ..., mean_score: _Optional[float] = ...) -> None: ...

class TournamentSummary(_message.Message):
    __slots__ = ("tournament", "progress", "entrant_count")
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    ENTRANT_COUNT_FIELD_NUMBER: _ClassVar[int]
    tournament: Tournament
    progress: TournamentProgress
    entrant_count: int
    def __init__(self, tournament: _Optional[_Union[Tournament, _Mapping]] = ..., progress: _Optional[_Union[TournamentProgress, _Mapping]] = ..., entrant_count: _Optional[int] = ...) -> None: ...

class CreateTournamentRequest(_message.Message):
    __slots__ = ("tournament",)
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    tournament: Tournament
    def __init__(self, tournament: _Optional[_Union[Tournament, _Mapping]] = ...) -> None: ...

class CreateTournamentResponse(_message.Message):
    __slots__ = ("tournament", "progress")
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    tournament: Tournament
    progress: TournamentProgress
    def __init__(self, tournament: _Optional[_Union[Tournament, _Mapping]] = ..., progress: _Optional[_Union[TournamentProgress, _Mapping]] = ...) -> None: ...

class ListTournamentsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListTournamentsResponse(_message.Message):
    __slots__ = ("tournaments", "next_page_token")
    TOURNAMENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    tournaments: _containers.RepeatedCompositeFieldContainer[TournamentSummary]
    next_page_token: str
    def __init__(self, tournaments: _Optional[_Iterable[_Union[TournamentSummary, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetTournamentRequest(_message.Message):
    __slots__ = ("tournament_id", "replicates", "table_page_size", "table_page_token", "table_id")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    REPLICATES_FIELD_NUMBER: _ClassVar[int]
    TABLE_PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    TABLE_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    TABLE_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    replicates: int
    table_page_size: int
    table_page_token: str
    table_id: str
    def __init__(self, tournament_id: _Optional[str] = ..., replicates: _Optional[int] = ..., table_page_size: _Optional[int] = ..., table_page_token: _Optional[str] = ..., table_id: _Optional[str] = ...) -> None: ...

class GetTournamentResponse(_message.Message):
    __slots__ = ("tournament", "progress", "tables", "standings", "next_table_page_token", "away")
    TOURNAMENT_FIELD_NUMBER: _ClassVar[int]
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    TABLES_FIELD_NUMBER: _ClassVar[int]
    STANDINGS_FIELD_NUMBER: _ClassVar[int]
    NEXT_TABLE_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    AWAY_FIELD_NUMBER: _ClassVar[int]
    tournament: Tournament
    progress: TournamentProgress
    tables: _containers.RepeatedCompositeFieldContainer[TournamentTable]
    standings: _containers.RepeatedCompositeFieldContainer[TournamentStanding]
    next_table_page_token: str
    away: _containers.RepeatedCompositeFieldContainer[TournamentAway]
    def __init__(self, tournament: _Optional[_Union[Tournament, _Mapping]] = ..., progress: _Optional[_Union[TournamentProgress, _Mapping]] = ..., tables: _Optional[_Iterable[_Union[TournamentTable, _Mapping]]] = ..., standings: _Optional[_Iterable[_Union[TournamentStanding, _Mapping]]] = ..., next_table_page_token: _Optional[str] = ..., away: _Optional[_Iterable[_Union[TournamentAway, _Mapping]]] = ...) -> None: ...

class ExportTournamentRequest(_message.Message):
    __slots__ = ("tournament_id", "format", "replicates")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    FORMAT_FIELD_NUMBER: _ClassVar[int]
    REPLICATES_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    format: ExportFormat
    replicates: int
    def __init__(self, tournament_id: _Optional[str] = ..., format: _Optional[_Union[ExportFormat, str]] = ..., replicates: _Optional[int] = ...) -> None: ...

class ExportTournamentResponse(_message.Message):
    __slots__ = ("data", "content_type", "filename", "finished")
    DATA_FIELD_NUMBER: _ClassVar[int]
    CONTENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    FILENAME_FIELD_NUMBER: _ClassVar[int]
    FINISHED_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    content_type: str
    filename: str
    finished: bool
    def __init__(self, data: _Optional[bytes] = ..., content_type: _Optional[str] = ..., filename: _Optional[str] = ..., finished: _Optional[bool] = ...) -> None: ...

class ResumeTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class ResumeTournamentResponse(_message.Message):
    __slots__ = ("tables",)
    TABLES_FIELD_NUMBER: _ClassVar[int]
    tables: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tables: _Optional[_Iterable[str]] = ...) -> None: ...

class CancelTournamentRequest(_message.Message):
    __slots__ = ("tournament_id",)
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    def __init__(self, tournament_id: _Optional[str] = ...) -> None: ...

class CancelTournamentResponse(_message.Message):
    __slots__ = ("progress", "tables_cancelled")
    PROGRESS_FIELD_NUMBER: _ClassVar[int]
    TABLES_CANCELLED_FIELD_NUMBER: _ClassVar[int]
    progress: TournamentProgress
    tables_cancelled: int
    def __init__(self, progress: _Optional[_Union[TournamentProgress, _Mapping]] = ..., tables_cancelled: _Optional[int] = ...) -> None: ...

class GetTournamentGameRequest(_message.Message):
    __slots__ = ("tournament_id", "game_id")
    TOURNAMENT_ID_FIELD_NUMBER: _ClassVar[int]
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    tournament_id: str
    game_id: str
    def __init__(self, tournament_id: _Optional[str] = ..., game_id: _Optional[str] = ...) -> None: ...

class GetTournamentGameResponse(_message.Message):
    __slots__ = ("record_json",)
    RECORD_JSON_FIELD_NUMBER: _ClassVar[int]
    record_json: str
    def __init__(self, record_json: _Optional[str] = ...) -> None: ...
