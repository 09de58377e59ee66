"""Play a bot on a ladder with one call: hold the gateway stream and a ladder ticket.

    run_on_ladder(MyBot(), "127.0.0.1:50051", "127.0.0.1:50052", token="...", ladder="main")

The gateway stream (engine service) carries the decisions; the ticket is held by a
``MatchmakerService.WatchQueue`` stream (matchmaker service), which renews it and names each table
the agent is seated at. Both are re-established with back-off when a service restarts; the
ticket is (re)joined only while the gateway stream is up, since a connected agent's ticket
needs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
from typing import Any

import grpc

from arena.proto.ohell.v1 import matchmaker_pb2, matchmaker_pb2_grpc
from arena.rpc.auth import QUEUED_HEADER, auth_metadata
from arena.rpc.server import channel_options
from arena.sdk.connection import (
    CONNECT_TIMEOUT_S,
    AgentError,
    connect_async,
    established,
    lenient,
    log_to_stderr_unless_configured,
    retrying,
    stream_ended,
)
from arena.sdk.session import Session, printable

log = logging.getLogger("arena.sdk")
# ladders an unknown ladder's refusal names, and characters of each (a ladder's name has at most 64):
# any server may answer at the address, and its list goes whole into one line in the author's terminal
MAX_LADDERS_SHOWN = 20
MAX_NAME_SHOWN = 64
WATCH_QUEUE_METHOD = f"/{matchmaker_pb2.DESCRIPTOR.services_by_name['MatchmakerService'].full_name}/WatchQueue"


async def hold_ticket(
    address: str,
    token: str,
    ladder: str,
    gateway_up: asyncio.Event,
    connect_timeout: float = CONNECT_TIMEOUT_S,
    seated: list[str] | None = None,
    connected: Session | None = None,
) -> None:
    """Hold a ticket on ``ladder`` for as long as this runs (a WatchQueue stream, re-opened after
    any drop once ``gateway_up`` is set); log each seating. ``connected``: the session of the
    gateway stream that is to play the matches (None: an endpoint's ticket). Raises AgentError for
    a wrong or revoked token, an unknown ladder, or no matchmaker at ``address`` for ``connect_timeout`` s."""
    state: dict[str, bool] = {}

    async def watch() -> None:
        await gateway_up.wait()
        async with grpc.aio.insecure_channel(address, options=channel_options()) as channel:
            stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
            watch_queue = channel.unary_stream(
                WATCH_QUEUE_METHOD,
                request_serializer=matchmaker_pb2.WatchQueueRequest.SerializeToString,
                response_deserializer=lenient(matchmaker_pb2.WatchQueueResponse),
            )
            call = watch_queue(matchmaker_pb2.WatchQueueRequest(ladder=ladder), metadata=auth_metadata(token))
            try:
                await established(call, connect_timeout, QUEUED_HEADER)  # the token checked, the ticket queued
            except grpc.aio.AioRpcError as error:
                if error.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
                    raise AgentError(await _no_ladder(stub, address, ladder, error.details() or "")) from None
                raise
            log.info("queued on ladder %r at the matchmaker %s", ladder, address)
            if not state.get("accepted"):  # the first time only
                await _say_what_it_waits_for(stub, ladder)
                if connected is not None:
                    await _warn_unless_connected_kind(stub, connected.agent_id, token)
            state["accepted"] = state["up"] = True
            async for seating in call:
                if seating is None:
                    log.warning(
                        "the matchmaker at %s sent a message that is not a WatchQueueResponse: ignored", address
                    )
                    continue
                log.info("seated at match %s, seat %d", seating.match_id, seating.seat)
                if seated is not None:
                    seated.append(seating.match_id)
        raise stream_ended("matchmaker")

    await retrying(watch, "matchmaker", address, connect_timeout, state)


async def _say_what_it_waits_for(stub: matchmaker_pb2_grpc.MatchmakerServiceStub, ladder: str) -> None:
    """Once, when the ticket is first queued (not again after each reconnection): what a table
    needs, from GetLadder's seats, house fill and tickets waiting. Without it a bot alone on a
    ladder logged "queued" and then nothing for the fill-after time, or for ever without house
    fill; a paused ladder forms no table at all."""
    with contextlib.suppress(grpc.aio.AioRpcError):
        reply = await stub.GetLadder(matchmaker_pb2.GetLadderRequest(name=ladder), timeout=2)
        if reply.ladder.paused:
            log.warning("ladder %r is paused: no table is formed until the host resumes it", ladder)
            return
        seats, others = reply.ladder.seats, max(reply.tickets_waiting - 1, 0)  # the count holds this ticket
        if others + 1 >= seats:
            why = "seated as soon as enough of them are near your rating"
        elif reply.ladder.house_fill:  # any waiting agent's wait counts: the table may form before yours
            who = "one of you has" if others else "you have"
            why = f"house bots fill the empty seats once {who} waited {reply.ladder.fill_after_seconds:g} s"
        else:
            why = f"no house bots fill them: you wait until {seats - 1 - others} more agent(s) queue"
        log.info("ladder %r: %d other agent(s) waiting for a table of %d; %s", ladder, others, seats, why)


async def _warn_unless_connected_kind(
    stub: matchmaker_pb2_grpc.MatchmakerServiceStub, agent_id: str, token: str
) -> None:
    """The token of an endpoint or a built-in agent holds a ticket from a gateway stream too, but its
    matches go to its endpoint or to the workers: the bot was seated, never asked, and said nothing."""
    with contextlib.suppress(grpc.aio.AioRpcError):
        request = matchmaker_pb2.GetAgentRequest(agent_id=agent_id)
        agent = (await stub.GetAgent(request, metadata=auth_metadata(token), timeout=2)).agent
        if agent.kind == matchmaker_pb2.AGENT_KIND_ENDPOINT:
            log.warning(
                "agent %s is registered as an endpoint agent (at %s): the platform dials that address for its"
                " matches, so this bot plays none of them; serve it there (ohell bot run BOT --serve %s)",
                printable(agent_id),
                printable(agent.endpoint[:253]),
                printable(agent.endpoint[:253]) or "HOST:PORT",
            )
        elif agent.kind == matchmaker_pb2.AGENT_KIND_BUILTIN:
            log.warning(
                "agent %s is a built-in agent (bot %s): the workers play its matches, not this bot",
                printable(agent_id),
                printable(agent.bot[:64]),
            )


async def _no_ladder(stub: matchmaker_pb2_grpc.MatchmakerServiceStub, address: str, ladder: str, details: str) -> str:
    """The line for a ladder the matchmaker does not know, naming the ladders it does."""
    names: list[str] = []
    with contextlib.suppress(grpc.aio.AioRpcError):
        listed = await stub.ListLadders(matchmaker_pb2.ListLaddersRequest(), timeout=5)
        names = [entry.name[:MAX_NAME_SHOWN] for entry in listed.ladders]
    more = f" and {len(names) - MAX_LADDERS_SHOWN} more" if len(names) > MAX_LADDERS_SHOWN else ""
    known = f"; its ladders: {', '.join(names[:MAX_LADDERS_SHOWN])}{more}" if names else ""
    return printable(f"the matchmaker at {address} has no ladder {ladder!r}{known} ({details})")  # the server's text


async def run_on_ladder_async(
    bot: Any,
    engine_address: str,
    matchmaker_address: str,
    token: str,
    ladder: str,
    *,
    matches: int | None = None,
    connect_timeout: float = CONNECT_TIMEOUT_S,
    session: Session | None = None,
) -> Session:
    """Play ``bot`` on ``ladder`` until ``matches`` matches have ended (None: for ever): connect
    to the gateway at ``engine_address``, hold a ticket at the matchmaker at
    ``matchmaker_address``, play every table it is seated at. Raises AgentError (one line)."""
    session = session or Session(bot)
    gateway_up = asyncio.Event()
    play = asyncio.create_task(
        connect_async(
            bot,
            engine_address,
            token,
            matches=matches,
            ready=gateway_up,
            connect_timeout=connect_timeout,
            session=session,
        )
    )
    queue = asyncio.create_task(
        hold_ticket(matchmaker_address, token, ladder, gateway_up, connect_timeout, connected=session)
    )
    try:
        done, _ = await asyncio.wait({play, queue}, return_when=asyncio.FIRST_COMPLETED)
        if queue in done:
            await queue  # it only ends by raising
        return await play
    finally:
        for task in (play, queue):
            task.cancel()
        await asyncio.gather(play, queue, return_exceptions=True)


def run_on_ladder(
    bot: Any, engine_address: str, matchmaker_address: str, token: str, ladder: str, **options: Any
) -> Session:
    """``run_on_ladder_async`` in its own event loop, for scripts: logs to stderr (INFO) unless
    logging is configured, and exits with one line (status 2) on an AgentError, 130 on Ctrl-C."""
    log_to_stderr_unless_configured()
    try:
        return asyncio.run(run_on_ladder_async(bot, engine_address, matchmaker_address, token, ladder, **options))
    except AgentError as error:
        print(f"error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    except KeyboardInterrupt:
        raise SystemExit(130) from None
