"""SpectateService: the public events of a match, from its start, live until it ends."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc

from arena.play.events import EventLog, FeedSilent
from arena.proto.ohell.v1 import spectate_pb2, spectate_pb2_grpc


class SpectateApi(spectate_pb2_grpc.SpectateServiceServicer):
    def __init__(self, log: EventLog) -> None:
        self.log = log

    async def Spectate(
        self, request: spectate_pb2.SpectateRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[spectate_pb2.SpectateResponse]:
        if not request.match_id:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "match_id is empty")
        try:
            async for event in self.log.follow(request.match_id, request.wait_ms / 1000):
                yield spectate_pb2.SpectateResponse(event=event)
        except LookupError:
            await context.abort(
                grpc.StatusCode.NOT_FOUND, f"match_id={request.match_id!r}: no such match (waited {request.wait_ms} ms)"
            )
        except FeedSilent as silent:
            await context.abort(grpc.StatusCode.ABORTED, str(silent))
