"""The Python agent SDK: write a class with ``bid`` and ``play``, then one call plays it.

    class MyBot(BaseBot):
        def bid(self, obs): return obs.legal_bids[0]          # tricks
        def play(self, obs): return obs.legal_actions[0]      # a card 0..51

    run_on_ladder(MyBot(), "127.0.0.1:50051", "127.0.0.1:50052", token="...", ladder="main")
    connect(MyBot(), "127.0.0.1:50051", token="...")   # only the gateway: play what you are seated at
    serve(MyBot())                                     # an endpoint agent on 127.0.0.1:7000 (the platform dials it)
    serve(MyBot(), "0.0.0.0:7000", token="...")        # one a platform on other machines may dial
    serve(MyBot(), "0.0.0.0:7000", token="...", matchmaker="127.0.0.1:50052", ladder="main")  # and on a ladder

Bots see the engine's ``ohell.observation.Observation`` (cards as ints, ``legal_actions`` set),
the same object built-in bots read, so any built-in bot can also play over the network. An
exception in the bot is logged and answered with the default action (a BOT_ERROR fault, the
match goes on); errors the bot author must fix end the call with one line (``AgentError``).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any

import grpc

from arena.proto.ohell.v1 import agent_pb2, agent_pb2_grpc
from arena.rpc.auth import bearer_token, same_secret
from arena.rpc.server import Served, Service, create_server, serve_until_signal, stop_server
from arena.rpc.settings import ConfigError, is_host_port, is_loopback
from arena.sdk.connection import AgentError, connect_async, log, log_to_stderr_unless_configured
from arena.sdk.ladder import hold_ticket, run_on_ladder, run_on_ladder_async
from arena.sdk.session import BaseBot, Session
from arena.wire import ConversionError, lenient
from ohell.state import BID_BASE


def connect(bot: Any, address: str, token: str, **options: Any) -> Session:
    """``connect_async`` in its own event loop (blocks); logs to stderr (INFO) unless logging is configured."""
    log_to_stderr_unless_configured()
    return asyncio.run(connect_async(bot, address, token, **options))


class _AgentServicer(agent_pb2_grpc.AgentServiceServicer):
    def __init__(self, bot: Any, token: str = "") -> None:
        self.bot = bot
        self.token = token

    async def Play(
        self, request_iterator: AsyncIterator[agent_pb2.PlayRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[agent_pb2.PlayResponse]:
        if self.token and not same_secret(bearer_token(context.invocation_metadata()), self.token):  # constant time
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "wrong or missing 'authorization: Bearer <token>'")
        session = Session(self.bot)
        async for request in request_iterator:
            if request is None:  # bytes that are no PlayRequest (lenient): anyone may call an endpoint
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "a message that is not a PlayRequest")
            try:
                action = session.handle(request.event)
            except ConversionError as error:  # e.g. an observation with PHASE_UNSPECIFIED
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
            if action is not None:
                yield agent_pb2.PlayResponse(action=action)


# serve's address when none is given: loopback, so the simplest call needs no token (check_exposure)
DEFAULT_ENDPOINT_ADDRESS = "127.0.0.1:7000"


def check_exposure(address: str, token: str, open_to_anyone: bool) -> None:
    """An endpoint with no token takes Play streams from whoever dials it, each decision run on the
    bot: refused where other machines may dial it, unless ``open_to_anyone`` says that is meant
    (then said once, as a warning)."""
    if token or not is_host_port(address) or is_loopback(address):
        return
    if not open_to_anyone:
        raise AgentError(
            f"serving on {address} with no token would take Play streams from anyone who can reach it, each"
            " decision run by your bot: give the token the host registered the endpoint with (the platform"
            " presents it on every call), listen on 127.0.0.1, or say it is meant: open_to_anyone=True"
            " (ohell bot connect: --open-to-anyone)"
        )
    log.warning("serving on %s with no token: anyone who can reach it may open Play streams to your bot", address)


async def serve_async(
    bot: Any, address: str = "127.0.0.1:0", token: str = "", *, open_to_anyone: bool = False
) -> Served:
    """Start serving ``bot`` as an endpoint agent; returns the started server and its port. With no
    ``token``, only on a loopback address unless ``open_to_anyone`` (``check_exposure``)."""
    check_exposure(address, token, open_to_anyone)
    servicer = _AgentServicer(bot, token)
    name = agent_pb2.DESCRIPTOR.services_by_name["AgentService"].full_name
    # as the generated code registers Play, but refusing bytes that are no PlayRequest in one status
    # (gRPC would log a traceback in the author's terminal for each such call)
    handlers = {
        "Play": grpc.stream_stream_rpc_method_handler(
            servicer.Play,
            request_deserializer=lenient(agent_pb2.PlayRequest),
            response_serializer=agent_pb2.PlayResponse.SerializeToString,
        )
    }

    def register(server: grpc.aio.Server) -> None:
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))
        server.add_registered_method_handlers(name, handlers)

    try:
        return await create_server(address, [Service(name, register)])
    except ConfigError as error:  # not HOST:PORT, or a port taken: the author's to fix, in one line
        raise AgentError(str(error)) from None


def serve(
    bot: Any,
    address: str = DEFAULT_ENDPOINT_ADDRESS,
    token: str = "",
    *,
    matchmaker: str = "",
    ladder: str = "",
    open_to_anyone: bool = False,
) -> None:
    """Serve ``bot`` until SIGTERM/SIGINT (blocks); logs to stderr (INFO) unless logging is configured.
    With ``ladder``: also hold a ticket on it at ``matchmaker`` with ``token`` (an endpoint agent the
    host registered at this address queues itself, as a connected one does, but needs no gateway);
    an AgentError there (a wrong token, no such ladder, no matchmaker) stops serving and exits 2.
    With no ``token``, only on a loopback address unless ``open_to_anyone`` (``check_exposure``). The
    default address takes calls from this machine only, as a web framework's development server does:
    a platform elsewhere needs an address such as "0.0.0.0:7000" (and the endpoint's token)."""
    log_to_stderr_unless_configured()

    async def run() -> None:
        if ladder and not matchmaker:
            raise AgentError(f"to play on ladder {ladder!r}, give the matchmaker's address too")
        served = await serve_async(bot, address, token, open_to_anyone=open_to_anyone)
        print(f"endpoint agent {bot_label(bot)} serving on port {served.port}", flush=True)
        if address == DEFAULT_ENDPOINT_ADDRESS:  # not chosen: say where it can be dialed from
            log.info(
                'listening on %s: only this machine can dial it (for others: serve(bot, "0.0.0.0:7000", token=...))',
                address,
            )
        if not ladder:
            await serve_until_signal(served)
            return
        queue = asyncio.create_task(hold_ticket(matchmaker, token, ladder, gateway_up=ready()))
        # the ticket leaves first: a table formed while calls in flight finish would dial a server that refuses
        serving = asyncio.create_task(serve_until_signal(served, on_stop=queue.cancel))
        try:
            done, _ = await asyncio.wait({serving, queue}, return_when=asyncio.FIRST_COMPLETED)
            if queue in done and not queue.cancelled():  # cancelled: by the signal, as serving stops
                await queue  # it only ends by raising
            await serving
        finally:
            for task in (serving, queue):
                task.cancel()
            await asyncio.gather(serving, queue, return_exceptions=True)
            await stop_server(served, grace=0)

    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(run())
    except AgentError as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(2) from None


def bot_label(bot: Any) -> str:
    """A built-in bot's name, else the class's: BaseBot's default name ('agent') said nothing."""
    name = getattr(bot, "name", "")
    return name if name and name != BaseBot.name else type(bot).__name__


def ready() -> asyncio.Event:
    """An event already set: an endpoint's ticket waits for no gateway stream."""
    event = asyncio.Event()
    event.set()
    return event


__all__ = [
    "AgentError",
    "BaseBot",
    "BID_BASE",
    "Session",
    "connect",
    "connect_async",
    "run_on_ladder",
    "run_on_ladder_async",
    "serve",
    "serve_async",
]
