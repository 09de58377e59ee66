"""The gRPC server every service runs (arena.rpc.server)."""

from __future__ import annotations

import asyncio
import collections

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from arena.rpc.server import create_server, stop_server


@pytest.mark.slow  # over a second: the quick subset stays quick
def test_a_burst_of_calls_on_one_connection_is_served_not_cancelled() -> None:
    # gRPC cancels calls past its default of 1,000 arrived but not yet taken up: a host's agents
    # reconnecting at once, or one caller's burst before the rate limit could answer it
    async def run() -> collections.Counter[str]:
        served = await create_server()
        try:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{served.port}") as channel:
                stub = health_pb2_grpc.HealthStub(channel)

                async def check() -> str:
                    try:
                        await stub.Check(health_pb2.HealthCheckRequest(), timeout=60)
                        return "OK"
                    except grpc.aio.AioRpcError as error:
                        return error.code().name

                return collections.Counter(await asyncio.gather(*(check() for _ in range(3000))))
        finally:
            await stop_server(served, 0)

    assert asyncio.run(run()) == {"OK": 3000}
