"""The gRPC server harness: one call builds a started grpc.aio server with health checking,
reflection, message size limits and keepalive; ``serve_until_signal`` stops it gracefully.

    served = await create_server("127.0.0.1:0", [Service(name, register)])
    print(served.port)                      # port 0 binds a free port (tests)
    served = await create_server("127.0.0.1:50052", services, unix_socket="/data/matchmaker.sock")  # also there
    await serve_until_signal(served)        # SIGTERM/SIGINT: NOT_SERVING, drain, stop
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

from arena.rpc import probes
from arena.rpc import unix_socket as unix
from arena.rpc.settings import ConfigError, is_host_port

MAX_MESSAGE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """Transport limits shared by servers and the channels that dial agents."""

    max_message_bytes: int = MAX_MESSAGE_BYTES
    keepalive_time_ms: int = 20_000  # ping an idle connection this often ...
    keepalive_timeout_ms: int = 10_000  # ... and drop it when the ping is not answered in time
    min_ping_interval_ms: int = 5_000  # the fastest client pings a server accepts
    # Calls arrived but not yet taken up by the server's loop; past gRPC's default (1,000) a burst
    # of calls on one connection was CANCELLED (20 % of 3,000 at once) before any rate limit saw it.
    # Each holds at most a stream's flow-control window of request bytes.
    max_pending_requests: int = 5_000


DEFAULT_LIMITS = Limits()


def server_options(limits: Limits = DEFAULT_LIMITS) -> list[tuple[str, Any]]:
    return [
        ("grpc.max_receive_message_length", limits.max_message_bytes),
        ("grpc.max_send_message_length", limits.max_message_bytes),
        ("grpc.keepalive_time_ms", limits.keepalive_time_ms),
        ("grpc.keepalive_timeout_ms", limits.keepalive_timeout_ms),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.min_ping_interval_without_data_ms", limits.min_ping_interval_ms),
        ("grpc.http2.max_pings_without_data", 0),
        ("grpc.server.max_pending_requests", limits.max_pending_requests),
        ("grpc.server.max_pending_requests_hard_limit", 2 * limits.max_pending_requests),
        # gRPC's default SO_REUSEPORT lets a second server bind a port already served (an old engine
        # left running): the kernel would then split the callers between the two, silently
        ("grpc.so_reuseport", 0),
    ]


def channel_options(limits: Limits = DEFAULT_LIMITS) -> list[tuple[str, Any]]:
    return [
        ("grpc.max_receive_message_length", limits.max_message_bytes),
        ("grpc.max_send_message_length", limits.max_message_bytes),
        ("grpc.keepalive_time_ms", max(limits.keepalive_time_ms, limits.min_ping_interval_ms)),
        ("grpc.keepalive_timeout_ms", limits.keepalive_timeout_ms),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.http2.max_pings_without_data", 0),
    ]


@dataclass(frozen=True)
class Service:
    """One servicer: its full proto name (for health and reflection) and how to add it."""

    name: str  # e.g. "ohell.v1.RulesService"
    register: Callable[[grpc.aio.Server], None]


class Served(NamedTuple):
    server: grpc.aio.Server
    port: int
    health: probes.HealthServicer
    unix_socket: str | None = None  # its absolute path


async def create_server(
    address: str = "127.0.0.1:0",
    services: Sequence[Service] = (),
    limits: Limits = DEFAULT_LIMITS,
    interceptors: Sequence[grpc.aio.ServerInterceptor] = (),
    unix_socket: str | None = None,
) -> Served:
    """A started server on ``address`` (port 0: a free port, returned in ``Served.port``), and on
    the path ``unix_socket`` too when given (a closed socket left there by a killed or stopped
    server is replaced; one a process listens on, or a path too long, is a ConfigError)."""
    server = grpc.aio.server(interceptors=list(interceptors), options=server_options(limits))
    for service in services:
        service.register(server)
    health_servicer = probes.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    names = [service.name for service in services]
    reflected = [*names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME]
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(probes.ReflectionServicer(reflected), server)
    if not is_host_port(address):
        raise ConfigError(f"address {address[:80]!r} must be HOST:PORT with a port from 0 to 65535")
    try:
        port = server.add_insecure_port(address)
    except RuntimeError:  # grpc's "failed to bind", whatever the reason
        port = 0
    if port == 0:
        raise ConfigError(
            f"cannot listen on {address!r}: another process listens there, or it is not HOST:PORT of this machine"
        )
    if unix_socket is not None:
        unix_socket = unix.socket_path(unix_socket)
        unix.clear_stale(unix_socket)
        try:
            bound = server.add_insecure_port(f"unix:{unix_socket}")
        except RuntimeError:
            bound = 0
        if bound == 0:
            raise ConfigError(f"cannot listen on unix socket {unix_socket} (is its folder there, and writable?)")
    await server.start()
    for name in ["", *names]:  # "" is the whole server
        await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)
    return Served(server, port, health_servicer, unix_socket)


async def stop_server(served: Served, grace: float = 5.0) -> None:
    """Report NOT_SERVING, let calls in flight finish for ``grace`` seconds, then stop."""
    await served.health.enter_graceful_shutdown()
    await served.server.stop(grace)
    if served.unix_socket is not None:  # gRPC removed its file: a closed one tells clients the server is down
        try:
            unix.leave_closed(served.unix_socket)
        except OSError as error:
            print(f"warning: no closed socket left at {served.unix_socket}: {error.strerror or error}", file=sys.stderr)


async def serve_until_signal(served: Served, grace: float = 5.0, on_stop: Callable[[], Any] | None = None) -> None:
    """Serve until SIGTERM or SIGINT, then stop gracefully (``on_stop`` runs first)."""
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    try:
        waiter = asyncio.ensure_future(served.server.wait_for_termination())
        signalled = asyncio.ensure_future(stopping.wait())
        await asyncio.wait({waiter, signalled}, return_when=asyncio.FIRST_COMPLETED)
        if stopping.is_set():
            if on_stop is not None:
                result = on_stop()
                if asyncio.iscoroutine(result):
                    await result
            await stop_server(served, grace)
        signalled.cancel()
        await waiter
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
