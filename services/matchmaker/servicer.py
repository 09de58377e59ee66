"""The MatchmakerService servicer: thin, over ``RedisStore`` (store calls run in a thread)."""

from __future__ import annotations

import asyncio
import contextlib
import math
import re
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any, NoReturn, TypeVar

import grpc
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from arena.archive import queries
from arena.archive.db import connect, database_url
from arena.ladder.model import AGENT_KINDS, Agent, Ladder, Standing
from arena.ladder.redis_store import RedisStore
from arena.ladder.store import (
    AlreadyExists,
    InUse,
    LimitReached,
    NotFound,
    PermissionDenied,
    StoreError,
    Unauthenticated,
)
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc
from arena.rpc.auth import bearer_token, is_host
from arena.rpc.ratelimit import Limiter, caller_of, refuse
from arena.tournament import jobs as tourney_jobs
from arena.tournament.operations import StandingsCache
from arena.tournament.store import TournamentStore
from arena.wire import rules_from_proto, rules_to_proto
from ohell.errors import OhHellError
from ohell.presets import preset
from services.matchmaker import history
from services.matchmaker.tournaments import TournamentRpcs

T = TypeVar("T")
KIND_NAMES = dict(
    zip(AGENT_KINDS, (pb.AGENT_KIND_BUILTIN, pb.AGENT_KIND_CONNECTED, pb.AGENT_KIND_ENDPOINT), strict=True)
)
KIND_OF = {number: name for name, number in KIND_NAMES.items()}
DEFAULT_LEASE_S = 30.0
MAX_LEASE_S = 3600.0
MAX_PAGE = 500
PAGE_TOKEN = re.compile(r"^[0-9]{1,9}$")
ENTRY_NAMES = {"host": pb.LADDER_ENTRY_HOST, "open": pb.LADDER_ENTRY_OPEN}
ENTRY_OF = {pb.LADDER_ENTRY_UNSPECIFIED: "host", pb.LADDER_ENTRY_HOST: "host", pb.LADDER_ENTRY_OPEN: "open"}
MAX_HISTORY_PAGE = 5000


def agent_to_proto(agent: Agent) -> pb.Agent:
    return pb.Agent(
        agent_id=agent.agent_id,
        name=agent.name,
        kind=KIND_NAMES[agent.kind],
        version=agent.version,
        bot=agent.bot,
        endpoint=agent.endpoint,
        house=agent.house,
        self_registered=agent.self_registered,
    )


def ladder_to_proto(ladder: Ladder) -> pb.Ladder:
    rules = rules_to_proto(ladder.rules())
    rules.preset = ladder.preset
    return pb.Ladder(
        name=ladder.name,
        rules=rules,
        seats=ladder.seats,
        house_fill=ladder.house_fill,
        fill_after_seconds=ladder.fill_after_s,
        house_bots=ladder.house_bots,
        base_window=ladder.base_window,
        widen_per_second=ladder.widen_per_s,
        entry=ENTRY_NAMES[ladder.entry],
        paused=ladder.paused,
    )


def ladder_from_proto(message: pb.Ladder) -> Ladder:
    if message.entry not in ENTRY_OF:
        raise StoreError(f"ladder.entry={message.entry} is not a LadderEntry", "ladder.entry")
    rules = rules_from_proto(message.rules, "ladder.rules")
    base = preset(message.rules.preset) if message.rules.preset else type(rules)()
    overrides = {k: v for k, v in rules.to_dict().items() if base.to_dict()[k] != v}
    defaults = Ladder(message.name)
    return replace(
        defaults,
        preset=message.rules.preset,
        overrides=overrides,
        seats=message.seats or defaults.seats,
        house_fill=message.house_fill,
        fill_after_s=message.fill_after_seconds,
        house_bots=tuple(message.house_bots),
        base_window=message.base_window or defaults.base_window,
        widen_per_s=message.widen_per_second or defaults.widen_per_s,
        entry=ENTRY_OF[message.entry],
    )


def standing_to_proto(s: Standing) -> pb.Standing:
    return pb.Standing(
        rank=s.rank,
        agent_id=s.agent_id,
        name=s.name,
        mu=s.mu,
        sigma=s.sigma,
        ordinal=s.ordinal,
        games=s.games,
        hands=s.hands,
        exact_bids=s.exact,
        exact_bid_rate=s.exact_rate,
        faults=s.faults,
        forfeits=s.forfeits,
        wins=s.wins,
    )


def match_to_proto(m: history.MatchView) -> pb.MatchSummary:
    return pb.MatchSummary(
        match_id=m.match_id,
        ladder=m.ladder,
        state=m.state,
        agent_ids=m.agent_ids,
        created_ms=m.created_ms,
        finished_ms=m.finished_ms,
        attempts=m.attempts,
        agent_names=m.agent_names,
        totals=m.totals,
        winners=m.winners,
        archived=m.archived,
    )


def point_to_proto(p: queries.RatingPoint) -> pb.RatingPoint:
    return pb.RatingPoint(
        match_id=p.match_id,
        finished_ms=p.finished_ms,
        mu_before=p.mu_before,
        sigma_before=p.sigma_before,
        mu_after=p.mu_after,
        sigma_after=p.sigma_after,
    )


_CODES = {
    NotFound: grpc.StatusCode.NOT_FOUND,
    AlreadyExists: grpc.StatusCode.ALREADY_EXISTS,
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
    PermissionDenied: grpc.StatusCode.PERMISSION_DENIED,
    LimitReached: grpc.StatusCode.RESOURCE_EXHAUSTED,
    InUse: grpc.StatusCode.FAILED_PRECONDITION,
}


async def abort(context: grpc.aio.ServicerContext, code: grpc.StatusCode, message: str) -> NoReturn:
    """``context.abort``, typed as what it does: it always raises (grpc ships no type hints)."""
    await context.abort(code, message)
    raise AssertionError("context.abort returned")


class MatchmakerServicer(TournamentRpcs, matchmaker_pb2_grpc.MatchmakerServiceServicer):
    def __init__(
        self,
        store: RedisStore,
        poll_s: float = 0.1,
        renew_s: float = 10.0,
        host_token: str | None = None,
        registrations: Limiter | None = None,
        database_url_: str | None = None,
        tourneys: TournamentStore | None = None,
        tourney_dispatch: tourney_jobs.Dispatch | None = None,
    ) -> None:
        self.store = store
        self.tourneys = tourneys  # the tournament RPCs (services/matchmaker/tournaments.py)
        self.tourney_dispatch = tourney_dispatch
        self.standings_cache = StandingsCache()
        self.host_token = host_token
        self.registrations = registrations  # the stricter limit of open self-registration
        self.poll_s = poll_s
        self.renew_s = renew_s
        self.database_url = database_url_ or database_url()
        self._engine: Engine | None = None

    def archive(self) -> Engine:
        """The archive's engine, connected (and migrated) on first use; raises while the database
        cannot be reached, and tries again on the next call."""
        if self._engine is None:
            self._engine = connect(self.database_url)
        return self._engine

    async def _call(self, context: grpc.aio.ServicerContext, fn: Callable[..., T], *args: Any) -> T:
        try:
            return await asyncio.to_thread(fn, *args)
        except StoreError as error:
            await context.abort(_CODES.get(type(error), grpc.StatusCode.INVALID_ARGUMENT), str(error))
        except OhHellError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        except queries.BadCursor:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "page_token is not one this service gave")
        except SQLAlchemyError as error:
            await context.abort(
                grpc.StatusCode.UNAVAILABLE, f"the match archive is unavailable: {type(error).__name__}"
            )
        raise AssertionError("unreachable")

    async def _host(self, context: grpc.aio.ServicerContext, self_registration: bool = False) -> bool:
        """True for the host; False for an anonymous caller when ``self_registration`` is open
        (some ladder admits self-registered agents); otherwise abort (agents only play)."""
        token = bearer_token(context.invocation_metadata())
        if is_host(token, self.host_token):
            return True
        if token is not None:
            if await self._call(context, self.store.agent_for_token, token) is not None:
                await abort(
                    context, grpc.StatusCode.PERMISSION_DENIED, "this RPC needs the host token; agent tokens only play"
                )
            await abort(context, grpc.StatusCode.UNAUTHENTICATED, "unknown token in 'authorization'")
        if self_registration and await self._call(context, self.store.open_ladder_exists):
            return False
        await abort(context, grpc.StatusCode.UNAUTHENTICATED, "missing metadata 'authorization: Bearer <host token>'")

    async def _caller(self, context: grpc.aio.ServicerContext, agent_id: str) -> Agent:
        token = bearer_token(context.invocation_metadata())
        if token is None:
            await abort(context, grpc.StatusCode.UNAUTHENTICATED, "missing metadata 'authorization: Bearer <token>'")
        agent = await self._call(context, self.store.agent_for_token, token)
        if agent is None:
            await abort(context, grpc.StatusCode.UNAUTHENTICATED, "unknown agent token in 'authorization'")
        if agent_id and agent_id != agent.agent_id:
            await abort(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                f"agent_id {agent_id!r} is not the agent of this token ({agent.agent_id})",
            )
        return agent

    async def RegisterAgent(self, request: pb.RegisterAgentRequest, context: Any) -> pb.RegisterAgentResponse:
        host = await self._host(context, self_registration=True)
        if not host and self.registrations is not None:
            wait_ms = await self.registrations.wait_ms("register:" + caller_of(context))
            if wait_ms > 0:
                await refuse(context, wait_ms, "self-registration limit reached")
        if request.kind not in KIND_OF:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"kind={request.kind} must be BUILTIN, CONNECTED or ENDPOINT"
            )
        agent, token = await self._call(
            context,
            self.store.register_agent,
            request.name,
            KIND_OF[request.kind],
            request.version,
            request.bot,
            request.endpoint,
            False,
            not host,
        )
        return pb.RegisterAgentResponse(agent=agent_to_proto(agent), token=token)

    async def SetAgentVersion(self, request: pb.SetAgentVersionRequest, context: Any) -> pb.SetAgentVersionResponse:
        agent = await self._caller(context, request.agent_id)
        updated = await self._call(context, self.store.set_version, agent.agent_id, request.version)
        return pb.SetAgentVersionResponse(agent=agent_to_proto(updated))

    async def CreateLadder(self, request: pb.CreateLadderRequest, context: Any) -> pb.CreateLadderResponse:
        await self._host(context)
        ladder = await self._ladder(context, request.ladder)
        created = await self._call(context, self.store.create_ladder, ladder)
        return pb.CreateLadderResponse(ladder=ladder_to_proto(created))

    async def GetLadder(self, request: pb.GetLadderRequest, context: Any) -> pb.GetLadderResponse:
        ladder = await self._call(context, self.store.get_ladder, request.name)
        waiting = await self._call(context, self.store.queued, request.name)
        return pb.GetLadderResponse(ladder=ladder_to_proto(ladder), tickets_waiting=waiting)

    async def ListLadders(self, request: pb.ListLaddersRequest, context: Any) -> pb.ListLaddersResponse:
        ladders = await self._call(context, self.store.list_ladders)
        return pb.ListLaddersResponse(ladders=[ladder_to_proto(ladder) for ladder in ladders])

    async def JoinQueue(self, request: pb.JoinQueueRequest, context: Any) -> pb.JoinQueueResponse:
        agent = await self._caller(context, request.agent_id)
        if not (math.isfinite(request.lease_seconds) and 0 <= request.lease_seconds <= MAX_LEASE_S):
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"lease_seconds={request.lease_seconds!r} must be a finite number from 0 to {MAX_LEASE_S:g}",
            )
        lease = request.lease_seconds if request.lease_seconds > 0 else DEFAULT_LEASE_S
        builtin = agent.kind == "builtin"
        queued_at = await self._call(
            context, self.store.join, request.ladder, agent.agent_id, None if builtin else lease, builtin
        )
        return pb.JoinQueueResponse(queued_at_ms=int(queued_at))

    async def LeaveQueue(self, request: pb.LeaveQueueRequest, context: Any) -> pb.LeaveQueueResponse:
        agent = await self._caller(context, request.agent_id)
        await self._call(context, self.store.get_ladder, request.ladder)
        left = await self._call(context, self.store.leave, request.ladder, agent.agent_id)
        return pb.LeaveQueueResponse(left=left)

    async def WatchQueue(self, request: pb.WatchQueueRequest, context: Any) -> AsyncIterator[pb.WatchQueueResponse]:
        agent = await self._caller(context, request.agent_id)
        lease = max(DEFAULT_LEASE_S, 3 * self.renew_s)
        await self._call(context, self.store.join, request.ladder, agent.agent_id, lease, False)
        await context.send_initial_metadata(())  # tells the caller its ticket is queued
        loop = asyncio.get_running_loop()
        renewed = loop.time()
        after = await asyncio.to_thread(self.store.last_seated_id, agent.agent_id)
        try:
            while True:
                seatings = await asyncio.to_thread(self.store.seated_since, agent.agent_id, after)
                for entry_id, match_id, seat in seatings:
                    yield pb.WatchQueueResponse(match_id=match_id, seat=seat)
                    after = entry_id
                free = not await asyncio.to_thread(self.store.busy_match, agent.agent_id)
                if free and (
                    loop.time() - renewed > self.renew_s
                    or not await asyncio.to_thread(self.store.has_ticket, request.ladder, agent.agent_id)
                ):
                    await asyncio.to_thread(self.store.join, request.ladder, agent.agent_id, lease, False)
                    renewed = loop.time()
                await asyncio.sleep(self.poll_s)
        finally:  # the stream ended (the caller closed it or its connection died): leave.
            # In a thread, shielded: a cancelled stream still leaves, and a Redis outage never
            # blocks the server's event loop (the ticket's lease expires on its own then).
            with contextlib.suppress(Exception):
                await asyncio.shield(asyncio.to_thread(self.store.leave, request.ladder, agent.agent_id))

    async def GetLeaderboard(self, request: pb.GetLeaderboardRequest, context: Any) -> pb.GetLeaderboardResponse:
        offset, size = await _page(context, request.page_token, request.page_size)
        standings, total = await self._call(context, self.store.leaderboard, request.ladder, offset, size)
        after = offset + len(standings)
        return pb.GetLeaderboardResponse(
            standings=[standing_to_proto(s) for s in standings],
            total=total,
            next_page_token=str(after) if after < total else "",
        )

    async def GetAgent(self, request: pb.GetAgentRequest, context: Any) -> pb.GetAgentResponse:
        agent = await self._call(context, self.store.get_agent, request.agent_id)
        response = pb.GetAgentResponse(agent=agent_to_proto(agent))
        if request.ladder:
            await self._call(context, self.store.get_ladder, request.ladder)
            standing = await self._call(context, self.store.standing, request.ladder, request.agent_id)
            response.standing.CopyFrom(standing_to_proto(standing))
        return response

    async def ListMatches(self, request: pb.ListMatchesRequest, context: Any) -> pb.ListMatchesResponse:
        size = await _size(context, request.page_size, MAX_PAGE, 50)
        if request.since_ms < 0 or request.until_ms < 0:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "since_ms and until_ms must be >= 0")
        if len(request.agent_id) > 64:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "agent_id is over 64 characters")
        if request.ladder:
            await self._call(context, self.store.get_ladder, request.ladder)
        if request.state not in ("", "finished", "running"):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"state={request.state!r}: give '', 'finished' or 'running'"
            )
        if request.state == "running":
            running = await self._call(context, self.store.running_matches, request.ladder, request.agent_id)
            return pb.ListMatchesResponse(matches=[match_to_proto(history.from_redis(m)) for m in running[:size]])
        matches, token = await self._call(
            context,
            history.list_matches,
            self.store,
            self.archive,
            request.ladder,
            request.agent_id,
            request.since_ms,
            request.until_ms,
            size,
            request.page_token,
        )
        return pb.ListMatchesResponse(matches=[match_to_proto(m) for m in matches], next_page_token=token)

    async def GetMatch(self, request: pb.GetMatchRequest, context: Any) -> pb.GetMatchResponse:
        if not request.match_id or len(request.match_id) > 128:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "match_id must be 1-128 characters")
        match, record = await self._call(context, history.get_match, self.store, self.archive, request.match_id)
        return pb.GetMatchResponse(match=match_to_proto(match), record_json=record)

    async def GetRatingHistory(self, request: pb.GetRatingHistoryRequest, context: Any) -> pb.GetRatingHistoryResponse:
        size = await _size(context, request.page_size, MAX_HISTORY_PAGE, 500)
        if request.since_ms < 0:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "since_ms must be >= 0")
        await self._call(context, self.store.get_ladder, request.ladder)
        await self._call(context, self.store.get_agent, request.agent_id)
        points, token = await self._call(
            context,
            history.rating_history,
            self.archive,
            request.ladder,
            request.agent_id,
            request.since_ms,
            size,
            request.page_token,
        )
        return pb.GetRatingHistoryResponse(points=[point_to_proto(p) for p in points], next_page_token=token)

    async def _ladder(self, context: Any, message: pb.Ladder) -> Ladder:
        try:
            return ladder_from_proto(message)
        except (OhHellError, StoreError) as error:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))

    # administration (host token only) ------------------------------------------------------
    async def UpdateLadder(self, request: pb.UpdateLadderRequest, context: Any) -> pb.UpdateLadderResponse:
        await self._host(context)
        ladder = await self._ladder(context, request.ladder)
        updated = await self._call(context, self.store.update_ladder, ladder)
        return pb.UpdateLadderResponse(ladder=ladder_to_proto(updated))

    async def PauseLadder(self, request: pb.PauseLadderRequest, context: Any) -> pb.PauseLadderResponse:
        await self._host(context)
        return pb.PauseLadderResponse(
            ladder=ladder_to_proto(await self._call(context, self.store.set_paused, request.name, True))
        )

    async def ResumeLadder(self, request: pb.ResumeLadderRequest, context: Any) -> pb.ResumeLadderResponse:
        await self._host(context)
        ladder = await self._call(context, self.store.set_paused, request.name, False)
        return pb.ResumeLadderResponse(ladder=ladder_to_proto(ladder))

    async def DeleteLadder(self, request: pb.DeleteLadderRequest, context: Any) -> pb.DeleteLadderResponse:
        await self._host(context)
        await self._call(context, self.store.delete_ladder, request.name)
        return pb.DeleteLadderResponse(deleted=True)

    async def RotateAgentToken(self, request: pb.RotateAgentTokenRequest, context: Any) -> pb.RotateAgentTokenResponse:
        await self._host(context)
        token = await self._call(context, self.store.set_token, request.agent_id, True)
        agent = await self._call(context, self.store.get_agent, request.agent_id)
        return pb.RotateAgentTokenResponse(agent=agent_to_proto(agent), token=token or "")

    async def RevokeAgentToken(self, request: pb.RevokeAgentTokenRequest, context: Any) -> pb.RevokeAgentTokenResponse:
        await self._host(context)
        old = await self._call(context, self.store.set_token, request.agent_id, False)
        return pb.RevokeAgentTokenResponse(revoked=old is not None)

    async def ListAgents(self, request: pb.ListAgentsRequest, context: Any) -> pb.ListAgentsResponse:
        await self._host(context)
        offset, size = await _page(context, request.page_token, request.page_size)
        agents, more = await self._call(context, self.store.list_agents, offset, size)
        return pb.ListAgentsResponse(
            agents=[agent_to_proto(a) for a in agents], next_page_token=str(offset + size) if more else ""
        )


async def _page(context: Any, token: str, size: int) -> tuple[int, int]:
    if size > MAX_PAGE:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"page_size={size} is over {MAX_PAGE}")
    if token and not PAGE_TOKEN.match(token):
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"page_token={token!r} is not one this service gave")
    return int(token or 0), size or 50


async def _size(context: Any, size: int, largest: int, default: int) -> int:
    if size > largest:
        await abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"page_size={size} is over {largest}")
    return size or default
