"""The gRPC health and reflection services of every server of ours (``arena.rpc.server``).

They are anyone's: probes and tools such as grpcurl call them without a token, and the rate limits
leave them out (``arena.rpc.ratelimit.GUARDED``). Their calls are coroutines (gRPC's threaded health
service held a thread of the event loop's default pool per Watch stream, for good), and a caller
(its peer address, an IPv6 one by its /64) holds at most ``MAX_PROBE_STREAMS`` streams of each open
at once: each costs the service some 22 KB for as long as it is open, and one caller held 10,000.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from typing import Any

import grpc
from grpc_health.v1 import health
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha.reflection import aio as reflection_aio  # its public name of the asyncio servicer

from arena.rpc.ratelimit import peer_of

MAX_PROBE_STREAMS = 8  # open health Watch streams, and reflection streams, per caller


class OpenStreams:
    """How many streams each caller holds open, refused past ``most``."""

    def __init__(self, most: int = MAX_PROBE_STREAMS) -> None:
        self.most = most
        self.open: dict[str, int] = {}

    @contextlib.asynccontextmanager
    async def held(self, context: grpc.aio.ServicerContext, what: str) -> AsyncIterator[None]:
        caller = peer_of(context)
        if self.open.get(caller, 0) >= self.most:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED, f"{self.most} {what} streams of yours are open: close one first"
            )
        self.open[caller] = self.open.get(caller, 0) + 1
        try:
            yield
        finally:
            self.open[caller] -= 1
            if not self.open[caller]:
                del self.open[caller]


class HealthServicer(health.aio.HealthServicer):
    """gRPC's asyncio health service, with Watch streams counted per caller."""

    def __init__(self) -> None:
        super().__init__()
        self.streams = OpenStreams()

    async def Watch(self, request: Any, context: grpc.aio.ServicerContext) -> None:
        async with self.streams.held(context, "health Watch"):
            await super().Watch(request, context)


class ReflectionServicer(reflection_aio.ReflectionServicer):
    """gRPC's asyncio reflection service, with its streams counted per caller."""

    def __init__(self, service_names: Iterable[str]) -> None:
        super().__init__(service_names)
        self.streams = OpenStreams()

    async def ServerReflectionInfo(  # type: ignore[override]
        self, request_iterator: AsyncIterable[reflection_pb2.ServerReflectionRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[reflection_pb2.ServerReflectionResponse]:
        async with self.streams.held(context, "reflection"):
            async for response in super().ServerReflectionInfo(request_iterator, context):
                yield response
