"""The matchmaker's match RPCs: a mixin of ``MatchmakerServicer``, public reads over Redis and
the SQL archive (``services.matchmaker.history``): matches, one match's record, rating history."""

from __future__ import annotations

from typing import Any

import grpc

from arena.play.specs import without_addresses
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from services.matchmaker import history
from services.matchmaker.base import MAX_PAGE, ServicerBase, abort
from services.matchmaker.messages import match_to_proto, point_to_proto

MAX_HISTORY_PAGE = 5000


class MatchRpcs(ServicerBase):
    """ListMatches, GetMatch, GetRatingHistory."""

    async def ListMatches(self, request: pb.ListMatchesRequest, context: Any) -> pb.ListMatchesResponse:
        size = await _size(context, request.page_size, MAX_PAGE, 50)
        for field in ("since_ms", "until_ms"):
            if getattr(request, field) < 0:
                await abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"{field}: {getattr(request, field)} is under 0")
        if len(request.agent_id) > 64:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "agent_id: over 64 characters")
        if request.ladder:
            await self._call(context, self.store.get_ladder, request.ladder)
        if request.state not in ("", "finished", "running"):
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT, f"state: {request.state[:80]!r} is not '', 'finished' or 'running'"
            )
        if request.state == "running":
            running = await self._call(context, self.store.running_matches, request.ladder, request.agent_id)
            page, token = await self._call(context, history.running_page, running, size, request.page_token)
            return pb.ListMatchesResponse(
                matches=[match_to_proto(history.from_redis(m)) for m in page],
                next_page_token=token,
                total_size=len(running),
            )
        matches, token, total = await self._call(
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
        return pb.ListMatchesResponse(
            matches=[match_to_proto(m) for m in matches], next_page_token=token, total_size=total
        )

    async def GetMatch(self, request: pb.GetMatchRequest, context: Any) -> pb.GetMatchResponse:
        if not request.match_id or len(request.match_id) > 128:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, "match_id: must be 1-128 characters")
        match, record = await self._call(context, history.get_match, self.store, self.archive, request.match_id)
        if not self._is_host(context):
            record = without_addresses(record)  # parses only a record with an address
        return pb.GetMatchResponse(match=match_to_proto(match), record_json=record)

    async def GetRatingHistory(self, request: pb.GetRatingHistoryRequest, context: Any) -> pb.GetRatingHistoryResponse:
        size = await _size(context, request.page_size, MAX_HISTORY_PAGE, 500)
        if request.since_ms < 0:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"since_ms: {request.since_ms} is under 0")
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
            request.newest_first,
        )
        return pb.GetRatingHistoryResponse(points=[point_to_proto(p) for p in points], next_page_token=token)


async def _size(context: Any, size: int, largest: int, default: int) -> int:
    if size > largest:
        await abort(context, grpc.StatusCode.INVALID_ARGUMENT, f"page_size: {size} is over {largest}")
    return size or default
