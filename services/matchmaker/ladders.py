"""The matchmaker's ladder RPCs: a mixin of ``MatchmakerServicer``. The reads (a ladder, the
list, the leaderboard) are public; creating, changing, pausing and deleting need the host token."""

from __future__ import annotations

from typing import Any

import grpc

from arena.ladder.model import Ladder
from arena.ladder.store import StoreError
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from ohell.errors import OhHellError
from services.matchmaker.base import ServicerBase, abort, page_bounds
from services.matchmaker.messages import ladder_from_proto, ladder_to_proto, standing_to_proto

BY_NAME = {"ladder": "name"}  # the store's field of a ladder's name, the request's `name`
# the fields of a request's `ladder` (the store calls them by their own names: `seats`, `rules.hand_sizes`)
DEFINITION = {"ladder": "ladder.name"} | {
    field: f"ladder.{field}" for field in (*(f.name for f in pb.Ladder.DESCRIPTOR.fields), "rules.hand_sizes")
}


class LadderRpcs(ServicerBase):
    """CreateLadder, GetLadder, ListLadders, GetLeaderboard and the host's UpdateLadder,
    PauseLadder, ResumeLadder, DeleteLadder."""

    async def CreateLadder(self, request: pb.CreateLadderRequest, context: Any) -> pb.CreateLadderResponse:
        await self._host(context)
        ladder = await self._ladder(context, request.ladder)
        created = await self._call(context, self.store.create_ladder, ladder, fields=DEFINITION)
        return pb.CreateLadderResponse(ladder=ladder_to_proto(created))

    async def GetLadder(self, request: pb.GetLadderRequest, context: Any) -> pb.GetLadderResponse:
        ladder = await self._call(context, self.store.get_ladder, request.name, fields=BY_NAME)
        waiting = await self._call(context, self.store.queued, request.name, fields=BY_NAME)
        return pb.GetLadderResponse(ladder=ladder_to_proto(ladder), tickets_waiting=waiting)

    async def ListLadders(self, request: pb.ListLaddersRequest, context: Any) -> pb.ListLaddersResponse:
        ladders = await self._call(context, self.store.list_ladders)
        return pb.ListLaddersResponse(ladders=[ladder_to_proto(ladder) for ladder in ladders])

    async def GetLeaderboard(self, request: pb.GetLeaderboardRequest, context: Any) -> pb.GetLeaderboardResponse:
        offset, size = await page_bounds(context, request.page_token, request.page_size)
        standings, total = await self._call(context, self.store.leaderboard, request.ladder, offset, size)
        after = offset + len(standings)
        return pb.GetLeaderboardResponse(
            standings=[standing_to_proto(s) for s in standings],
            total=total,
            next_page_token=str(after) if after < total else "",
        )

    async def _ladder(self, context: Any, message: pb.Ladder) -> Ladder:
        try:
            return ladder_from_proto(message)
        except (OhHellError, StoreError) as error:
            await abort(context, grpc.StatusCode.INVALID_ARGUMENT, str(error))

    # administration (host token only) ------------------------------------------------------
    async def UpdateLadder(self, request: pb.UpdateLadderRequest, context: Any) -> pb.UpdateLadderResponse:
        await self._host(context)
        ladder = await self._ladder(context, request.ladder)
        updated = await self._call(context, self.store.update_ladder, ladder, fields=DEFINITION)
        return pb.UpdateLadderResponse(ladder=ladder_to_proto(updated))

    async def PauseLadder(self, request: pb.PauseLadderRequest, context: Any) -> pb.PauseLadderResponse:
        await self._host(context)
        return pb.PauseLadderResponse(
            ladder=ladder_to_proto(await self._call(context, self.store.set_paused, request.name, True, fields=BY_NAME))
        )

    async def ResumeLadder(self, request: pb.ResumeLadderRequest, context: Any) -> pb.ResumeLadderResponse:
        await self._host(context)
        ladder = await self._call(context, self.store.set_paused, request.name, False, fields=BY_NAME)
        return pb.ResumeLadderResponse(ladder=ladder_to_proto(ladder))

    async def DeleteLadder(self, request: pb.DeleteLadderRequest, context: Any) -> pb.DeleteLadderResponse:
        await self._host(context)
        await self._call(context, self.store.delete_ladder, request.name, fields=BY_NAME)
        return pb.DeleteLadderResponse(deleted=True)
