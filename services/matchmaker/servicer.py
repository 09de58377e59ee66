"""The MatchmakerService servicer: thin, over ``RedisStore`` (store calls run in a thread)."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any, NoReturn, TypeVar

import grpc

from arena.ladder.model import AGENT_KINDS, Agent, Ladder, MatchInfo, Standing
from arena.ladder.redis_store import RedisStore
from arena.ladder.store import AlreadyExists, NotFound, StoreError, Unauthenticated
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc
from arena.rpc.auth import bearer_token
from arena.wire import rules_from_proto, rules_to_proto
from ohell.errors import OhHellError
from ohell.presets import preset

T = TypeVar("T")
KIND_NAMES = dict(
    zip(AGENT_KINDS, (pb.AGENT_KIND_BUILTIN, pb.AGENT_KIND_CONNECTED, pb.AGENT_KIND_ENDPOINT), strict=True)
)
KIND_OF = {number: name for name, number in KIND_NAMES.items()}
DEFAULT_LEASE_S = 30.0
MAX_PAGE = 500


def agent_to_proto(agent: Agent) -> pb.Agent:
    return pb.Agent(
        agent_id=agent.agent_id,
        name=agent.name,
        kind=KIND_NAMES[agent.kind],
        version=agent.version,
        bot=agent.bot,
        endpoint=agent.endpoint,
        house=agent.house,
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
    )


def ladder_from_proto(message: pb.Ladder) -> Ladder:
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


def match_to_proto(m: MatchInfo) -> pb.MatchSummary:
    return pb.MatchSummary(
        match_id=m.match_id,
        ladder=m.ladder,
        state=m.state,
        agent_ids=[seat.agent_id for seat in m.seats],
        created_ms=m.created_ms,
        finished_ms=m.finished_ms,
        attempts=m.attempts,
    )


_CODES = {
    NotFound: grpc.StatusCode.NOT_FOUND,
    AlreadyExists: grpc.StatusCode.ALREADY_EXISTS,
    Unauthenticated: grpc.StatusCode.UNAUTHENTICATED,
}


async def abort(context: grpc.aio.ServicerContext, code: grpc.StatusCode, message: str) -> NoReturn:
    """``context.abort``, typed as what it does: it always raises (grpc ships no type hints)."""
    await context.abort(code, message)
    raise AssertionError("context.abort returned")


class MatchmakerServicer(matchmaker_pb2_grpc.MatchmakerServiceServicer):
    def __init__(self, store: RedisStore, poll_s: float = 0.1, renew_s: float = 10.0) -> None:
        self.store = store
        self.poll_s = poll_s
        self.renew_s = renew_s

    async def _call(self, context: grpc.aio.ServicerContext, fn: Callable[..., T], *args: Any) -> T:
        try:
            return await asyncio.to_thread(fn, *args)
        except StoreError as error:
            await context.abort(_CODES.get(type(error), grpc.StatusCode.INVALID_ARGUMENT), str(error))
        except OhHellError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        raise AssertionError("unreachable")

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
        )
        return pb.RegisterAgentResponse(agent=agent_to_proto(agent), token=token)

    async def SetAgentVersion(self, request: pb.SetAgentVersionRequest, context: Any) -> pb.SetAgentVersionResponse:
        agent = await self._caller(context, request.agent_id)
        updated = await self._call(context, self.store.set_version, agent.agent_id, request.version)
        return pb.SetAgentVersionResponse(agent=agent_to_proto(updated))

    async def CreateLadder(self, request: pb.CreateLadderRequest, context: Any) -> pb.CreateLadderResponse:
        try:
            ladder = ladder_from_proto(request.ladder)
        except OhHellError as error:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
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
        offset, size = await _page(context, request.page_token, request.page_size)
        if request.ladder:
            await self._call(context, self.store.get_ladder, request.ladder)
        elif not request.agent_id:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "give ladder, agent_id or both")
        if request.state not in ("", "finished", "running"):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"state={request.state!r}: give '', 'finished' or 'running'"
            )
        if request.state == "running":
            running = await self._call(context, self.store.running_matches, request.ladder, request.agent_id)
            return pb.ListMatchesResponse(matches=[match_to_proto(m) for m in running[:size]])
        matches = await self._call(context, self.store.list_matches, request.ladder, request.agent_id, offset, size + 1)
        more = len(matches) > size
        return pb.ListMatchesResponse(
            matches=[match_to_proto(m) for m in matches[:size]], next_page_token=str(offset + size) if more else ""
        )

    async def GetMatch(self, request: pb.GetMatchRequest, context: Any) -> pb.GetMatchResponse:
        info = await self._call(context, self.store.get_match, request.match_id)
        record = ""
        if info.state == "finished":
            record = json.dumps(await self._call(context, self.store.get_record, request.match_id))
        return pb.GetMatchResponse(match=match_to_proto(info), record_json=record)


async def _page(context: Any, token: str, size: int) -> tuple[int, int]:
    if size > MAX_PAGE:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"page_size={size} is over {MAX_PAGE}")
    if token and not token.isdigit():
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"page_token={token!r} is not one this service gave")
    return int(token or 0), size or 50
