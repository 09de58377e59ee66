"""The Python agent SDK: write a class with ``bid`` and ``play``, then one call plays it.

    class MyBot(BaseBot):
        def bid(self, obs): return obs.legal_bids[0]          # tricks
        def play(self, obs): return obs.legal_actions[0]      # a card 0..51

    connect(MyBot(), "127.0.0.1:50051", token="...")   # a connected agent (dials the gateway)
    serve(MyBot(), "0.0.0.0:7000")                     # an endpoint agent (the platform dials it)

Bots see the engine's ``ohell.observation.Observation`` (cards as ints, ``legal_actions`` set),
the same object built-in bots read, so any built-in bot can also play over the network.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc

from arena.proto.ohell.v1 import agent_pb2, agent_pb2_grpc, gateway_pb2, gateway_pb2_grpc, match_pb2
from arena.rpc.auth import auth_metadata, bearer_token
from arena.rpc.server import Served, Service, channel_options, create_server, serve_until_signal
from arena.wire import (
    ConversionError,
    card_to_proto,
    legal_actions_of,
    observation_from_proto,
    rules_from_proto,
)
from ohell.observation import Observation
from ohell.rules import Rules
from ohell.state import BID_BASE, Trick

FATAL_CODES = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED)


class BaseBot:
    """Subclass and override ``bid`` (return tricks) and ``play`` (return a card 0..51)."""

    name = "agent"

    def bid(self, observation: Observation) -> int:
        raise NotImplementedError

    def play(self, observation: Observation) -> int:
        raise NotImplementedError

    def on_event(self, event: match_pb2.AgentEvent) -> None:
        """Every event (match start, hand and match results, notices); override to watch."""


class Session:
    """Turns AgentEvents into Actions for one bot (any number of matches at once)."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self.rules: dict[str, Rules] = {}
        self.tricks: dict[str, tuple[int, tuple[Trick, ...]]] = {}  # match id -> hand number, its finished tricks
        self.matches_ended = 0

    def handle(self, event: match_pb2.AgentEvent) -> match_pb2.Action | None:
        kind = event.WhichOneof("event")
        if kind == "decision":
            return self.decide(event.decision)
        if kind == "match_started":
            self.rules[event.match_started.match_id] = rules_from_proto(event.match_started.rules)
        elif kind == "match_ended":
            self.rules.pop(event.match_ended.match_id, None)
            self.tricks.pop(event.match_ended.match_id, None)
            self.matches_ended += 1
        if hasattr(self.bot, "on_event"):
            self.bot.on_event(event)
        return None

    def decide(self, request: match_pb2.DecisionRequest) -> match_pb2.Action:
        rules = self.rules.get(request.match_id) or Rules()
        hand_number = request.observation.hand_number
        known = self.tricks.get(request.match_id)
        observation = observation_from_proto(
            request.observation,
            rules,
            legal_actions_of(request),
            known[1] if known is not None and known[0] == hand_number else (),
        )
        self.tricks[request.match_id] = (hand_number, observation.tricks)
        action = match_pb2.Action(match_id=request.match_id, seat=request.seat, decision_id=request.decision_id)
        if request.kind == match_pb2.DECISION_KIND_BID:
            action.bid = int(self.bot.bid(observation))
        else:
            action.card.CopyFrom(card_to_proto(int(self.bot.play(observation))))
        return action


async def connect_async(
    bot: Any,
    address: str,
    token: str,
    *,
    matches: int | None = None,
    reconnect: bool = True,
    ready: asyncio.Event | None = None,
) -> Session:
    """Hold the agent's stream to the gateway at ``address``; reconnect when it drops. Returns
    after ``matches`` matches have ended (``None``: never). UNAUTHENTICATED or PERMISSION_DENIED
    end it with ``grpc.aio.AioRpcError``."""
    session = Session(bot)
    delay = 0.05
    while True:
        try:
            async with grpc.aio.insecure_channel(address, options=channel_options()) as channel:
                call = gateway_pb2_grpc.AgentGatewayServiceStub(channel).Connect(metadata=auth_metadata(token))
                await call.initial_metadata()  # sent once the gateway has registered the stream
                if ready is not None:
                    ready.set()
                delay = 0.05
                async for response in call:
                    action = session.handle(response.event)
                    if action is not None:
                        await call.write(gateway_pb2.ConnectRequest(action=action))
                    if matches is not None and session.matches_ended >= matches:
                        call.cancel()
                        return session
        except grpc.aio.AioRpcError as error:
            if error.code() in FATAL_CODES or not reconnect:
                raise
        if not reconnect:
            return session
        await asyncio.sleep(delay)
        delay = min(delay * 2, 2.0)


def connect(bot: Any, address: str, token: str, **options: Any) -> Session:
    """``connect_async`` in its own event loop (blocks)."""
    return asyncio.run(connect_async(bot, address, token, **options))


class _AgentServicer(agent_pb2_grpc.AgentServiceServicer):
    def __init__(self, bot: Any, token: str = "") -> None:
        self.bot = bot
        self.token = token

    async def Play(
        self, request_iterator: AsyncIterator[agent_pb2.PlayRequest], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[agent_pb2.PlayResponse]:
        if self.token and bearer_token(context.invocation_metadata()) != self.token:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "wrong or missing 'authorization: Bearer <token>'")
        session = Session(self.bot)
        async for request in request_iterator:
            try:
                action = session.handle(request.event)
            except ConversionError as error:  # e.g. an observation with PHASE_UNSPECIFIED
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
            if action is not None:
                yield agent_pb2.PlayResponse(action=action)


async def serve_async(bot: Any, address: str = "127.0.0.1:0", token: str = "") -> Served:
    """Start serving ``bot`` as an endpoint agent; returns the started server and its port."""
    servicer = _AgentServicer(bot, token)
    name = agent_pb2.DESCRIPTOR.services_by_name["AgentService"].full_name
    return await create_server(
        address, [Service(name, lambda server: agent_pb2_grpc.add_AgentServiceServicer_to_server(servicer, server))]
    )


def serve(bot: Any, address: str = "0.0.0.0:7000", token: str = "") -> None:
    """Serve ``bot`` until SIGTERM/SIGINT (blocks)."""

    async def run() -> None:
        served = await serve_async(bot, address, token)
        print(f"agent {getattr(bot, 'name', 'agent')} serving on port {served.port}", flush=True)
        await serve_until_signal(served)

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run())


__all__ = ["BaseBot", "BID_BASE", "Session", "connect", "connect_async", "serve", "serve_async"]
