"""The matchmaker's queue RPCs: a mixin of ``MatchmakerServicer``. An agent joins, leaves or
watches a ladder's queue with its own token. Each WatchQueue stream polls Redis ten times a second,
so one agent may hold at most ``MAX_WATCHES_PER_AGENT`` of them open in one matchmaker process (a
few ladders, and room for a reconnection while the dead stream is not noticed yet)."""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import grpc

from arena.keys import PRESENCE_REFRESH_S
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.rpc.auth import QUEUED_HEADER, bearer_token
from services.matchmaker.base import ServicerBase, abort

DEFAULT_LEASE_S = 30.0
MAX_LEASE_S = 3600.0
MAX_WATCHES_PER_AGENT = 8
# how often a stream checks that its token is still the agent's, as the gateway does its streams':
# one opened with a token the host rotated since renewed the ticket for whoever held the old token
TOKEN_CHECK_S = PRESENCE_REFRESH_S


class QueueRpcs(ServicerBase):
    """JoinQueue, LeaveQueue, WatchQueue (the stream that renews the ticket and names the seats)."""

    async def JoinQueue(self, request: pb.JoinQueueRequest, context: Any) -> pb.JoinQueueResponse:
        agent = await self._caller(context, request.agent_id)
        if not (math.isfinite(request.lease_seconds) and 0 <= request.lease_seconds <= MAX_LEASE_S):
            await abort(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"lease_seconds: {request.lease_seconds!r} must be a finite number from 0 to {MAX_LEASE_S:g}",
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
        if self.watches.get(agent.agent_id, 0) >= MAX_WATCHES_PER_AGENT:
            await abort(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{MAX_WATCHES_PER_AGENT} WatchQueue streams of agent {agent.agent_id} are open: close one first",
            )
        self.watches[agent.agent_id] = self.watches.get(agent.agent_id, 0) + 1
        try:  # aclosing: the stream's end reaches _watch at once (it leaves the queue)
            token = bearer_token(context.invocation_metadata()) or ""
            async with contextlib.aclosing(self._watch(request.ladder, agent.agent_id, token, context)) as seatings:
                async for seating in seatings:
                    yield seating
        finally:
            self.watches[agent.agent_id] -= 1
            if not self.watches[agent.agent_id]:
                del self.watches[agent.agent_id]

    async def _watch(
        self, ladder: str, agent_id: str, token: str, context: Any
    ) -> AsyncGenerator[pb.WatchQueueResponse, None]:
        lease = max(DEFAULT_LEASE_S, 3 * self.renew_s)
        try:  # a stream that ends at any point, even while its ticket is being made, leaves the queue
            await self._call(context, self.store.join, ladder, agent_id, lease, False)
            await context.send_initial_metadata(((QUEUED_HEADER, ladder),))  # tells the caller its ticket is queued
            loop = asyncio.get_running_loop()
            renewed = checked = loop.time()
            after = await asyncio.to_thread(self.store.last_seated_id, agent_id)
            while True:
                seatings = await asyncio.to_thread(self.store.seated_since, agent_id, after)
                for entry_id, match_id, seat in seatings:
                    yield pb.WatchQueueResponse(match_id=match_id, seat=seat)
                    after = entry_id
                if loop.time() - checked > TOKEN_CHECK_S:
                    await self._check_token(context, token, agent_id)
                    checked = loop.time()
                free = not await asyncio.to_thread(self.store.busy_match, agent_id)
                if free and (
                    loop.time() - renewed > self.renew_s
                    or not await asyncio.to_thread(self.store.has_ticket, ladder, agent_id)
                ):
                    # the ladder may be gone (deleted) or closed to the agent since: NOT_FOUND, PERMISSION_DENIED
                    await self._call(context, self.store.join, ladder, agent_id, lease, False)
                    renewed = loop.time()
                await asyncio.sleep(self.poll_s)
        finally:  # the stream ended (the caller closed it or its connection died): leave.
            # In a thread, shielded: a cancelled stream still leaves, and a Redis outage never
            # blocks the server's event loop (the ticket's lease expires on its own then).
            with contextlib.suppress(Exception):
                await asyncio.shield(asyncio.to_thread(self.store.leave, ladder, agent_id))

    async def _check_token(self, context: Any, token: str, agent_id: str) -> None:
        """End the stream UNAUTHENTICATED once ``token`` is no longer the agent's (rotated or revoked)."""
        holder = await self._call(context, self.store.agent_for_token, token)
        if holder is None or holder.agent_id != agent_id:
            await abort(context, grpc.StatusCode.UNAUTHENTICATED, "the agent's token was revoked or rotated")
