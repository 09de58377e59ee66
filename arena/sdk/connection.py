"""Holding a connected agent's gateway stream, and the one-line errors every SDK call ends with.

Before the first successful connection, an address that does not answer is retried for
``connect_timeout`` seconds and then reported; once connected, a lost connection (a restart of
the engine service, a network blip) is retried with back-off for as long as it takes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc

from arena.proto.ohell.v1 import gateway_pb2
from arena.rpc.auth import AGENT_ID_HEADER, auth_metadata
from arena.rpc.server import channel_options
from arena.sdk.session import Session, printable
from arena.wire import ConversionError, lenient, message_bytes, wrapped
from ohell.errors import OhHellError

log = logging.getLogger("arena.sdk")

CONNECT_METHOD = f"/{gateway_pb2.DESCRIPTOR.services_by_name['AgentGatewayService'].full_name}/Connect"
CONNECT_TIMEOUT_S = 10.0
MAX_BACKOFF_S = 5.0
MAX_RATE_LIMIT_WAIT_S = 300.0  # a retry-after beyond this (a misconfigured host) is not taken at its word
TOO_LARGE = "Received message larger than max"  # gRPC's words for a message over channel_options' limit
HEADERS_TOO_LARGE = "metadata size exceeds"  # ... and for headers over gRPC's own limit
T = TypeVar("T")


def log_to_stderr_unless_configured() -> None:
    """Show the SDK's INFO lines (connected, match started and ended) on stderr when the program has
    configured no logging, as the blocking calls do for a first script; the async ones leave logging
    to the program (a library's rule)."""
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")


class AgentError(OhHellError):
    """Why an agent cannot play, in one line (wrong token, unknown ladder, nothing at the address)."""


class Backoff:
    """Delays between attempts: 0.05 s doubling to ``MAX_BACKOFF_S``; reset after a success."""

    def __init__(self) -> None:
        self.delay = 0.05

    def reset(self) -> None:
        self.delay = 0.05

    async def wait(self) -> None:
        await asyncio.sleep(self.delay)
        self.delay = min(self.delay * 2, MAX_BACKOFF_S)


def explain(error: grpc.aio.AioRpcError, what: str, address: str, accepted_before: bool) -> AgentError | None:
    """The one-line AgentError for a status that retrying cannot fix, else None."""
    code, details = error.code(), printable(error.details() or "")  # the server's text, for a terminal
    if code == grpc.StatusCode.UNAUTHENTICATED:
        if accepted_before:
            return AgentError(f"the {what} at {address} no longer accepts your token (it was revoked?): {details}")
        return AgentError(f"the {what} at {address} refused your token ({details}): use the token the host gave you")
    if code == grpc.StatusCode.PERMISSION_DENIED:
        return AgentError(f"the {what} at {address} refused: {details}")
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED and TOO_LARGE in (details or ""):
        # refused by this side's own limit: the service would send it again on every reconnection
        return AgentError(f"the {what} at {address} sent a message larger than this SDK takes ({details})")
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED and HEADERS_TOO_LARGE in (details or ""):  # no rate limit
        return AgentError(f"the {what} at {address} sent headers larger than this SDK takes ({details})")
    if code == grpc.StatusCode.ABORTED and what == "gateway":
        return AgentError(
            f"another process connected to the gateway at {address} with your token and replaced this one"
        )
    if code == grpc.StatusCode.UNIMPLEMENTED and not accepted_before:
        # another service at the address (the engine's and the matchmaker's swapped): retrying it for
        # connect_timeout s only logged 'lost the matchmaker ...; reconnecting' eight times first
        return AgentError(
            f"the service at {address} is not a {what} ({code.name}: {details}): is it the {what}'s address?"
        )
    return None


def gave_up(error: grpc.aio.AioRpcError, what: str, address: str, waited: float) -> AgentError:
    """Why the first connection did not come in ``waited`` s, with the hint that fits the cause:
    only a network failure gets the address hint."""
    code, status = error.code(), f"{error.code().name}: {printable(error.details() or '')}"
    if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
        retry_after = retry_after_s(error)
        when = f"retry in about {math.ceil(retry_after)} s" if retry_after is not None else "retry later"
        return AgentError(f"the {what} at {address} rate limits this agent ({status}): {when}")
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return AgentError(
            f"cannot reach the {what} at {address} after {waited:g} s ({status}): "
            "is the address right and the service up?"
        )
    return AgentError(f"the {what} at {address} refused the connection for {waited:g} s ({status})")


def retry_after_s(error: grpc.aio.AioRpcError) -> float | None:
    """The seconds a RESOURCE_EXHAUSTED refusal asks the caller to wait (its ``retry-after``
    trailer), else None."""
    if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
        return None
    try:
        seconds = float(dict(error.trailing_metadata() or ()).get("retry-after", ""))
    except (TypeError, ValueError):
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


# what a call fails with while the service is not there yet (not listening, or no headers in time)
NOT_READY = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)


async def retrying(
    attempt: Callable[[], Awaitable[T]],
    what: str,
    address: str,
    connect_timeout: float,
    state: dict[str, bool],
) -> T:
    """Run ``attempt`` until it returns, retrying transient failures with back-off. A failure
    before any success is fatal after ``connect_timeout`` s, and at once when a rate limit asks
    for a longer wait than that leaves. A rate limit's ``retry-after`` is waited out before the
    next try (hammering would only keep the limit spent). ``attempt`` sets ``state["up"]``
    once its call is established and ``state["accepted"]`` once any call was."""
    backoff = Backoff()
    loop = asyncio.get_running_loop()
    first_try = loop.time()
    while True:
        state["up"] = False
        try:
            return await attempt()
        except grpc.aio.AioRpcError as error:
            fatal = explain(error, what, address, state.get("accepted", False))
            if fatal is not None:
                raise fatal from None
            pause = retry_after_s(error)
            waited = loop.time() - first_try
            if not state.get("accepted", False) and waited + (pause or 0.0) > connect_timeout:
                raise gave_up(error, what, address, connect_timeout) from None
            if pause is not None:
                log.warning("the %s at %s rate limits this agent: retrying in %.1f s", what, address, pause)
                await asyncio.sleep(min(max(pause, 0.05), MAX_RATE_LIMIT_WAIT_S))  # never a busy loop
                continue
            if state["up"] or error.code() not in NOT_READY:
                # not up: the service answered and ended the call at once (its headers and its status
                # can arrive together, and grpc.aio then gives the status alone); its reason is news,
                # but only a stream that was up resets the back-off (no hammering a service that refuses)
                if state["up"]:
                    backoff.reset()
                log.warning(
                    "lost the %s at %s (%s: %s); reconnecting", what, address, error.code().name, error.details()
                )
            else:
                log.debug("%s at %s not ready: %s", what, address, error.code().name)
        await backoff.wait()


async def connect_async(
    bot: Any,
    address: str,
    token: str,
    *,
    matches: int | None = None,
    reconnect: bool = True,
    ready: asyncio.Event | None = None,
    connect_timeout: float = CONNECT_TIMEOUT_S,
    session: Session | None = None,
) -> Session:
    """Hold the agent's stream to the gateway at ``address`` and play every decision it brings;
    reconnect when it drops. Returns after ``matches`` matches have ended (``None``: never).
    Raises ``AgentError`` (one line) for a wrong or revoked token, a stream replaced by another
    process, or an address with no gateway for ``connect_timeout`` s."""
    session = session or Session(bot)
    state: dict[str, bool] = {}

    async def hold() -> Session:
        async with grpc.aio.insecure_channel(address, options=channel_options()) as channel:
            call = open_connect(channel, token)
            agent_id = await established(call, connect_timeout, AGENT_ID_HEADER)  # once the stream is registered
            session.agent_id = agent_id[:64]
            if not state.get("accepted"):  # which agent the token is: the author's first question
                log.info("connected to the gateway at %s as agent %s", address, printable(agent_id[:64]) or "?")
            elif not state["up"]:
                log.info("reconnected to the gateway at %s", address)
            state["accepted"] = state["up"] = True
            if ready is not None:
                ready.set()
            while (response := await call.read()) is not grpc.aio.EOF:  # read/write: no async iterator
                if response is None:  # bytes that are no ConnectResponse (lenient)
                    log.warning("the gateway at %s sent a message that is not a ConnectResponse: ignored", address)
                    continue
                action = handled(session, response.event)
                if action is not None:  # a ConnectRequest's bytes, without copying the action into one
                    await call.write(wrapped(action.SerializeToString()))
                if matches is not None and session.matches_ended >= matches:
                    call.cancel()
                    return session
        if not reconnect:
            return session
        raise stream_ended("gateway")

    if not reconnect:
        try:
            return await hold()
        except grpc.aio.AioRpcError as error:
            raise explain(error, "gateway", address, False) or AgentError(
                f"the gateway at {address}: {error.code().name}: {printable(error.details() or '')}"
            ) from None
    return await retrying(hold, "gateway", address, connect_timeout, state)


def handled(session: Session, event: Any) -> Any:
    """``session.handle(event)``; an event this SDK cannot read (from a newer or a buggy platform)
    is logged in one line and left unanswered, instead of ending the agent and all its matches."""
    try:
        return session.handle(event)
    except Exception as error:  # the bot's own exceptions are caught in the session: this is the event's
        kind = event.WhichOneof("event")
        why = str(error) if isinstance(error, ConversionError) else f"{type(error).__name__}: {error}"
        log.warning("cannot read a %s event from the gateway (%s): left unanswered; is the SDK up to date?", kind, why)
        return None


def open_connect(channel: grpc.aio.Channel, token: str) -> Any:
    """The agent's Connect stream; its writes take a ConnectRequest or the bytes of one."""
    connect = channel.stream_stream(
        CONNECT_METHOD, request_serializer=message_bytes, response_deserializer=lenient(gateway_pb2.ConnectResponse)
    )
    return connect(metadata=auth_metadata(token))


# How long a call whose headers lack the service's mark of acceptance waits for its status: a call
# refused before its headers comes back trailers-only, and grpc.aio can hand back the (empty)
# headers before the status. A service older than the mark sends it never: past this, taken as up.
UNMARKED_WAIT_S = 1.0


async def established(call: Any, timeout: float, accepted_mark: str) -> str:
    """Wait at most ``timeout`` s for the call's response headers; raise its AioRpcError when it
    failed instead (grpc.aio returns empty headers then), DEADLINE_EXCEEDED when none came (a
    service that takes the call and never answers was waited for without end). ``accepted_mark``:
    the header the service sends when it takes the call; returns its value ('' without one)."""
    try:
        async with asyncio.timeout(timeout):
            headers = await call.initial_metadata()
    except TimeoutError:
        call.cancel()
        raise grpc.aio.AioRpcError(
            grpc.StatusCode.DEADLINE_EXCEEDED,
            grpc.aio.Metadata(),
            grpc.aio.Metadata(),
            f"no answer within {timeout:g} s",
        ) from None
    mark = str(dict(headers or ()).get(accepted_mark, ""))
    if not call.done() and not mark:
        # the timeout cancels only this wait (grpc.aio's code() awaits a future of its own), not the
        # call; no task is started, so none is left pending until the call ends
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(UNMARKED_WAIT_S):
                await call.code()
    if call.done():
        code = await call.code()
        if code != grpc.StatusCode.OK:  # the trailers too: a rate limit's retry-after is there
            trailers = await call.trailing_metadata()
            raise grpc.aio.AioRpcError(code, grpc.aio.Metadata(), trailers, await call.details())
    return mark


def stream_ended(what: str) -> grpc.aio.AioRpcError:
    """The error that makes ``retrying`` open a stream again that the server ended cleanly."""
    return grpc.aio.AioRpcError(
        grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), f"the {what} ended the stream"
    )
