"""The matchmaker's tournament RPCs: a mixin of ``MatchmakerServicer``, thin over
``arena.tournament.operations`` (store calls run in a thread). Creating, resuming and cancelling need
the host token; the reads are public. Every caller value is bounded here or by the domain, and the error
names the request's field. Standings are a bootstrap of ``DEFAULT_REPLICATES`` resamples, computed
once per new result and shared by every reader (``StandingsCache``); another number of resamples is
the host's to ask for: each costs a computation of its own (about a second of CPU for 10 000
resamples of 400 games), which any caller could otherwise ask for a hundred times a second. An
export holds a piece of up to ``EXPORT_CHUNK`` bytes until its reader takes it, so a caller holds at
most ``MAX_EXPORTS_PER_CALLER`` open in one matchmaker (the host and the web app excepted: the web
app bounds each of its visitors)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import replace
from typing import Any, NoReturn, TypeVar

import grpc

from arena.ladder.redis_agents import FORMULA_START
from arena.ladder.redis_store import RedisStore
from arena.play.specs import SeatSpec, SeatSpecError, check_endpoint
from arena.proto.ohell.v1 import tournament_pb2 as tpb
from arena.rpc.auth import bearer_token, is_host, same_secret
from arena.rpc.ratelimit import caller_of, peer_of
from arena.tournament import jobs, operations
from arena.tournament.messages import entrant_to_proto
from arena.tournament.model import (
    DEFAULT_GRACE_S,
    MAX_DEALS_PER_TABLE,
    MAX_ENTRANTS,
    MAX_GRACE_S,
    MAX_ROUNDS,
    NAME_RULE,
    Tournament,
    TournamentAborted,
    TournamentEnded,
    TournamentError,
    TournamentExists,
    TournamentNotFound,
    TournamentRunning,
    TournamentSummary,
)
from arena.tournament.standings import DEFAULT_REPLICATES, Standing
from arena.tournament.store import ENDED, Progress, TournamentStore
from arena.wire import rules_from_proto, rules_to_proto, within
from ohell.errors import OhHellError
from ohell.presets import preset
from services.matchmaker.base import page_bounds

T = TypeVar("T")
DEFAULT_SEATS = 3
DEFAULT_DEALS = 2
EXPORT_CHUNK = 1 << 20
TABLE_PAGE = 100  # GetTournament's tables when the caller asks no number (a tournament may have 6,800)
MAX_EXPORTS_PER_CALLER = 4
FORMATS = {tpb.TOURNAMENT_FORMAT_UNSPECIFIED: "round-robin", tpb.TOURNAMENT_FORMAT_ROUND_ROBIN: "round-robin"}
FORMATS[tpb.TOURNAMENT_FORMAT_SWISS] = "swiss"
FORMAT_NUMBERS = {"round-robin": tpb.TOURNAMENT_FORMAT_ROUND_ROBIN, "swiss": tpb.TOURNAMENT_FORMAT_SWISS}
STATES = {
    "running": tpb.TOURNAMENT_STATE_RUNNING,
    "finished": tpb.TOURNAMENT_STATE_FINISHED,
    "cancelled": tpb.TOURNAMENT_STATE_CANCELLED,
}
EXPORTS = {tpb.EXPORT_FORMAT_UNSPECIFIED: "csv", tpb.EXPORT_FORMAT_CSV: "csv", tpb.EXPORT_FORMAT_JSON: "json"}
CONTENT_TYPES = {"csv": "text/csv", "json": "application/json"}


class Invalid(TournamentError):
    """A request field out of bounds (INVALID_ARGUMENT naming it)."""


def entrant_from_proto(message: tpb.TournamentEntrant, field: str) -> SeatSpec:
    which = message.WhichOneof("player")
    if which is None:
        raise Invalid(f"{field}: give one of bot, agent_id, endpoint")
    value = getattr(message, which)
    if len(value) > 253 or len(message.name) > 64:
        raise Invalid(f"{field}: name over 64 or {which} over 253 characters")
    if message.name.startswith(FORMULA_START):  # a new one: a stored tournament's names stay readable
        raise Invalid(f"{field}.name: {message.name[:80]!r} must be {NAME_RULE}")
    if which == "endpoint":  # a new one, too: a stored tournament's entrants are not checked again
        try:
            check_endpoint(value, f"{field}.endpoint")
        except SeatSpecError as error:
            raise Invalid(str(error)) from None  # names {field}.endpoint
    try:
        if which == "bot":
            return SeatSpec.builtin(value, message.name or None)
        if which == "agent_id":
            return SeatSpec.connected(value, message.name or None)
        return SeatSpec.endpoint(value, message.name or None)
    except SeatSpecError as error:
        said = str(error)
        raise Invalid(within(field, said) if said.startswith(f"{which}: ") else f"{field}.{which}: {said}") from None


def named_as_registered(tourney: Tournament, names: dict[int, str]) -> Tournament:
    """The entrants numbered in ``names`` named so (their agents' registered names): INVALID_ARGUMENT
    when two entrants then share a name, or a name would start a CSV formula."""
    entrants = list(tourney.entrants)
    for number, name in names.items():
        if name.startswith(FORMULA_START):
            raise Invalid(f"tournament.entrants[{number}]: its agent's name {name!r} starts a CSV formula: add =NAME")
        entrants[number] = replace(entrants[number], name=name)
    try:
        return replace(tourney, entrants=tuple(entrants))
    except TournamentError as error:
        raise Invalid(
            within("tournament", f"{error} (a connected entrant without =NAME is named as its agent is registered)")
        ) from None


def _in_range(field: str, value: float, low: float, high: float) -> None:
    if not (math.isfinite(value) and low <= value <= high):
        raise Invalid(f"{field}: {value!r} must be from {low:g} to {high:g}")


def tournament_from_proto(message: tpb.Tournament) -> Tournament:
    """The domain's tournament from the request, every field bounded (errors name ``tournament.*``)."""
    if not 1 <= len(message.entrants) <= MAX_ENTRANTS:
        raise Invalid(f"tournament.entrants: {len(message.entrants)} given, 1 to {MAX_ENTRANTS} allowed")
    operations.check_id(message.tournament_id, "tournament.tournament_id")
    entrants = tuple(
        entrant_from_proto(entrant, f"tournament.entrants[{number}]") for number, entrant in enumerate(message.entrants)
    )
    if message.format not in FORMATS:
        raise Invalid(f"tournament.format: {message.format} is not a TournamentFormat")
    seats = message.seats or DEFAULT_SEATS
    _in_range("tournament.seats", seats, 3, 7)
    rounds = message.rounds or 1
    _in_range("tournament.rounds", rounds, 1, MAX_ROUNDS)
    deals = message.deals or DEFAULT_DEALS
    _in_range("tournament.deals", deals, 1, MAX_DEALS_PER_TABLE)
    grace = message.grace_seconds if message.HasField("grace_seconds") else DEFAULT_GRACE_S
    _in_range("tournament.grace_seconds", grace, 0, MAX_GRACE_S)
    rules = rules_from_proto(message.rules, "tournament.rules")
    name = message.rules.preset or "classic"
    base = preset(name).to_dict()
    overrides = {key: value for key, value in rules.to_dict().items() if base[key] != value}
    try:
        return Tournament(
            message.tournament_id,
            entrants,
            seats=seats,
            format=FORMATS[message.format],
            rounds=rounds,
            deals=deals,
            preset=name,
            overrides=overrides,
            grace_s=grace,
        )
    except TournamentError as error:
        raise Invalid(within("tournament", str(error))) from None


def tournament_to_proto(tourney: Tournament, addresses: bool = True) -> tpb.Tournament:
    """``addresses``: the endpoint entrants' addresses are shown (to the host only)."""
    entrants = [entrant_to_proto(entrant) for entrant in tourney.entrants]
    if not addresses:
        for entrant in entrants:
            if entrant.WhichOneof("player") == "endpoint":
                entrant.endpoint = ""  # set empty: the oneof still says which kind of player
    definition = summary_to_proto(tourney.summary())
    definition.entrants.extend(entrants)
    return definition


def summary_to_proto(summary: TournamentSummary) -> tpb.Tournament:
    """The definition without its entrants (a list of tournaments shows their number apart)."""
    rules = rules_to_proto(summary.rules())
    rules.preset = summary.preset
    return tpb.Tournament(
        tournament_id=summary.tourney_id,
        rules=rules,
        seats=summary.seats,
        format=FORMAT_NUMBERS[summary.format],
        rounds=summary.rounds,
        deals=summary.deals,
        grace_seconds=summary.grace_s,
    )


def progress_to_proto(tourney: Tournament | TournamentSummary, progress: Progress) -> tpb.TournamentProgress:
    return tpb.TournamentProgress(
        state=STATES.get(progress.state, tpb.TOURNAMENT_STATE_UNSPECIFIED),
        round=progress.round,
        rounds=tourney.rounds,
        tables=progress.tables,
        tables_done=progress.tables_done,
        games_done=progress.games_done,
        games_total=operations.games_total(tourney, progress),
        created_ms=progress.created_ms,
        finished_ms=progress.finished_ms,
    )


def standing_to_proto(row: Standing) -> tpb.TournamentStanding:
    message = tpb.TournamentStanding(
        rank=row.rank,
        entrant=row.entrant,
        games=row.games,
        deals=row.deals,
        mean_duplicate=row.mean_duplicate,
        total_duplicate=row.total_duplicate,
        deals_won=row.deals_won,
        forfeits=row.forfeits,
        mean_score=row.mean_score,
    )
    if row.ci_low is not None and row.ci_high is not None:
        message.ci_low, message.ci_high = row.ci_low, row.ci_high
    if row.p_above_next is not None:
        message.p_above_next = row.p_above_next
    return message


def table_to_proto(table: operations.TableView, ended: bool) -> tpb.TournamentTable:
    """``ended``: the tournament has ended, so its games' ids are shown (their records readable)."""
    return tpb.TournamentTable(
        table_id=table.table_id,
        round=table.round,
        entrants=table.entrants,
        state=table.state,
        attempts=table.attempts,
        games_done=table.games_done,
        games=table.games,
        forfeits=table.forfeits,
        waiting_for=table.waiting_for,
        waiting_until_ms=table.waiting_until_ms,
        game_ids=table.game_ids if ended else (),
    )


def _take(pieces: Iterator[str], size: int) -> bytes:
    """The next pieces of an export, about ``size`` bytes of them (b"" at its end)."""
    taken: list[bytes] = []
    length = 0
    for piece in pieces:
        taken.append(piece.encode())
        length += len(taken[-1])
        if length >= size:
            break
    return b"".join(taken)


_CODES: dict[type[Exception], grpc.StatusCode] = {
    TournamentNotFound: grpc.StatusCode.NOT_FOUND,
    TournamentExists: grpc.StatusCode.ALREADY_EXISTS,
    TournamentEnded: grpc.StatusCode.FAILED_PRECONDITION,
    TournamentRunning: grpc.StatusCode.FAILED_PRECONDITION,
    TournamentAborted: grpc.StatusCode.ABORTED,
}


class TournamentRpcs:
    """Mixed into ``MatchmakerServicer``, which provides ``_host`` (the host check) and sets the
    store, the dispatcher of tables and the standings cache."""

    tourneys: TournamentStore | None
    tourney_dispatch: jobs.Dispatch | None
    standings_cache: operations.StandingsCache
    store: RedisStore
    host_token: str | None
    web_token: str | None
    exports: dict[str, int]
    _host: Callable[..., Any]
    _call: Callable[..., Any]
    _is_host: Callable[[grpc.aio.ServicerContext], bool]

    async def _t(self, context: grpc.aio.ServicerContext, fn: Callable[..., T], *args: Any) -> T:
        """``fn`` in a thread: NOT_FOUND, ALREADY_EXISTS, FAILED_PRECONDITION, ABORTED, else INVALID_ARGUMENT
        for the domain's errors."""
        if self.tourneys is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "this matchmaker was started without tournaments")
        try:
            return await asyncio.to_thread(fn, *args)
        except OhHellError as error:
            await self._refuse(context, error)

    async def _refuse(self, context: grpc.aio.ServicerContext, error: OhHellError) -> NoReturn:
        await context.abort(_CODES.get(type(error), grpc.StatusCode.INVALID_ARGUMENT), str(error))
        raise AssertionError("unreachable") from None

    async def _reading_standings(self, context: grpc.aio.ServicerContext, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args, block=False)`` in a thread (``_t``), ``fn`` a read of the standings cache: while
        another reader computes the standings it needs, it waits for that here, holding no thread (a
        handful of readers waiting in threads held the default pool and stalled every other RPC),
        then reads again; when that computation fails, with its error, as the reader that ran it."""
        while True:
            try:
                return await self._t(context, fn, *args, False)
            except operations.StandingsPending as pending:
                done = pending.done
            try:
                await asyncio.wrap_future(done)
            except OhHellError as error:
                await self._refuse(context, error)

    async def _checked(self, context: grpc.aio.ServicerContext, fn: Callable[..., T], *args: Any) -> T:
        """``fn`` here (a check or a conversion): INVALID_ARGUMENT naming the field when it refuses."""
        try:
            return fn(*args)
        except OhHellError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
            raise AssertionError("unreachable") from None

    async def _replicates(self, context: grpc.aio.ServicerContext, requested: int) -> int:
        """The bootstrap's resamples: INVALID_ARGUMENT out of range, PERMISSION_DENIED for a number
        other than the default unless the caller is the host."""
        replicates = await self._checked(context, operations.check_replicates, requested)
        if replicates != DEFAULT_REPLICATES and not self._is_host(context):
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED,
                f"replicates: {requested} is for the host alone to choose (0 gives {DEFAULT_REPLICATES}, shared)",
            )
        return replicates

    async def CreateTournament(
        self, request: tpb.CreateTournamentRequest, context: Any
    ) -> tpb.CreateTournamentResponse:
        await self._host(context)
        tourney = await self._checked(context, tournament_from_proto, request.tournament)
        unnamed = [
            (number, entrant.agent_id)
            for number, entrant in enumerate(request.tournament.entrants)
            if entrant.WhichOneof("player") == "agent_id" and not entrant.name
        ]
        if unnamed:  # in the standings as registered, not as 'a12' (an agent not registered: NOT_FOUND below)
            names = await self._call(context, self.store.agent_names, [agent_id for _, agent_id in unnamed])
            given = {number: names[agent_id] for number, agent_id in unnamed if agent_id in names}
            tourney = await self._checked(context, named_as_registered, tourney, given)
        await self._t(context, operations.create, self.tourneys, tourney, self.tourney_dispatch)
        progress = await self._t(context, self.tourneys.progress, tourney.tourney_id)  # type: ignore[union-attr]
        return tpb.CreateTournamentResponse(
            tournament=tournament_to_proto(tourney), progress=progress_to_proto(tourney, progress)
        )

    async def ListTournaments(self, request: tpb.ListTournamentsRequest, context: Any) -> tpb.ListTournamentsResponse:
        offset, size = await page_bounds(context, request.page_token, request.page_size)
        page, more = await self._t(context, operations.page_of_summaries, self.tourneys, offset, size)
        summaries = []
        for tourney, progress in page:
            summary = tpb.TournamentSummary(
                tournament=summary_to_proto(tourney),
                progress=progress_to_proto(tourney, progress),
                entrant_count=tourney.entrant_count,
            )
            summaries.append(summary)
        return tpb.ListTournamentsResponse(tournaments=summaries, next_page_token=str(offset + size) if more else "")

    async def GetTournament(self, request: tpb.GetTournamentRequest, context: Any) -> tpb.GetTournamentResponse:
        tourney_id = await self._checked(context, operations.check_id, request.tournament_id)
        replicates = await self._replicates(context, request.replicates)
        token, size = request.table_page_token, request.table_page_size
        offset, size = await page_bounds(context, token, size, "table_page", TABLE_PAGE)
        table_id = request.table_id and await self._checked(context, operations.check_table_id, request.table_id)
        view = await self._reading_standings(
            context, operations.overview, self.tourneys, tourney_id, replicates, self.standings_cache
        )
        shown = view.tables[offset : offset + size]
        more = offset + size < len(view.tables)
        if table_id:
            try:
                shown, more = [operations.one_table(view, table_id)], False
            except OhHellError as error:
                await self._refuse(context, error)
        ended = view.progress.state in ENDED
        return tpb.GetTournamentResponse(
            tournament=tournament_to_proto(view.tourney, self._is_host(context)),
            progress=progress_to_proto(view.tourney, view.progress),
            tables=[table_to_proto(table, ended) for table in shown],
            standings=[standing_to_proto(row) for row in view.standings],
            next_table_page_token=str(offset + size) if more else "",
            away=[tpb.TournamentAway(entrant=a.name, since_ms=a.since_ms, table_id=a.table) for a in view.away],
        )

    async def ExportTournament(
        self, request: tpb.ExportTournamentRequest, context: Any
    ) -> AsyncIterator[tpb.ExportTournamentResponse]:
        tourney_id = await self._checked(context, operations.check_id, request.tournament_id)
        replicates = await self._replicates(context, request.replicates)
        if request.format not in EXPORTS:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"format: {request.format} is not an ExportFormat")
        fmt = EXPORTS[request.format]
        caller = await self._export_caller(context)
        if caller is not None and self.exports.get(caller, 0) >= MAX_EXPORTS_PER_CALLER:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{MAX_EXPORTS_PER_CALLER} exports of yours are open: read or close one first",
            )
        if caller is not None:
            self.exports[caller] = self.exports.get(caller, 0) + 1
        try:
            async for piece in self._export(context, tourney_id, fmt, replicates):
                yield piece
        finally:
            if caller is not None:
                self.exports[caller] -= 1
                if not self.exports[caller]:
                    del self.exports[caller]

    async def _export_caller(self, context: grpc.aio.ServicerContext) -> str | None:
        """Whose share an export counts in: an agent's token, else the peer (a made-up token is no
        new caller); None for the host and the web app."""
        token = bearer_token(context.invocation_metadata())
        if is_host(token, self.host_token) or same_secret(token, self.web_token):
            return None
        if token is not None and await self._call(context, self.store.agent_for_token, token) is not None:
            return caller_of(context)
        return peer_of(context)

    async def _export(
        self, context: grpc.aio.ServicerContext, tourney_id: str, fmt: str, replicates: int
    ) -> AsyncIterator[tpb.ExportTournamentResponse]:
        pieces, finished = await self._reading_standings(
            context,
            operations.export,
            self.tourneys,
            tourney_id,
            fmt,
            replicates,
            self.standings_cache,
            self._is_host(context),
        )
        first = True
        while (data := await asyncio.to_thread(_take, pieces, EXPORT_CHUNK)) or first:
            piece = tpb.ExportTournamentResponse(data=data)
            if first:
                piece.content_type, piece.filename, piece.finished = CONTENT_TYPES[fmt], f"{tourney_id}.{fmt}", finished
                first = False
            yield piece

    async def GetTournamentGame(
        self, request: tpb.GetTournamentGameRequest, context: Any
    ) -> tpb.GetTournamentGameResponse:
        tourney_id = await self._checked(context, operations.check_id, request.tournament_id)
        game = await self._checked(context, operations.check_game_id, request.game_id)
        addresses = self._is_host(context)
        raw = await self._t(context, operations.game_record, self.tourneys, tourney_id, game, addresses)
        return tpb.GetTournamentGameResponse(record_json=raw)

    async def ResumeTournament(
        self, request: tpb.ResumeTournamentRequest, context: Any
    ) -> tpb.ResumeTournamentResponse:
        await self._host(context)
        tourney_id = await self._checked(context, operations.check_id, request.tournament_id)
        tables = await self._t(context, operations.resume, self.tourneys, tourney_id, self.tourney_dispatch)
        return tpb.ResumeTournamentResponse(tables=tables)

    async def CancelTournament(
        self, request: tpb.CancelTournamentRequest, context: Any
    ) -> tpb.CancelTournamentResponse:
        await self._host(context)
        tourney_id = await self._checked(context, operations.check_id, request.tournament_id)
        summary, progress, tables = await self._t(context, operations.cancel, self.tourneys, tourney_id)
        return tpb.CancelTournamentResponse(progress=progress_to_proto(summary, progress), tables_cancelled=tables)
