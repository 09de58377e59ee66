"""A raw connected agent for the security tests: records every event, answers with a policy."""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from arena.proto.ohell.v1 import gateway_pb2, gateway_pb2_grpc, match_pb2
from arena.rpc.auth import auth_metadata

Policy = Callable[["Agent", match_pb2.DecisionRequest], Awaitable[match_pb2.Action | None]]


def first_legal(request: match_pb2.DecisionRequest) -> match_pb2.Action:
    action = match_pb2.Action(match_id=request.match_id, seat=request.seat, decision_id=request.decision_id)
    if request.kind == match_pb2.DECISION_KIND_BID:
        action.bid = request.legal_bids[0]
    else:
        action.card.CopyFrom(request.legal_cards[0])
    return action


async def legal(agent: Agent, request: match_pb2.DecisionRequest) -> match_pb2.Action:
    return first_legal(request)


class Agent:
    def __init__(self, address: str, token: str, policy: Policy = legal, challenges_open: bool = False) -> None:
        self.address, self.token, self.policy = address, token, policy
        self.metadata = auth_metadata(token) + ((("ohell-challenges", "open"),) if challenges_open else ())
        self.events: list[match_pb2.AgentEvent] = []
        self.notices: list[match_pb2.Notice] = []
        self.error: grpc.aio.AioRpcError | None = None
        self.connected = asyncio.Event()
        self.call: Any = None
        self.task: asyncio.Task[None] | None = None
        self.writing = asyncio.Lock()  # one write at a time: answers of two matches may be ready at once

    async def start(self) -> Agent:
        self.task = asyncio.create_task(self._run())
        await asyncio.wait_for(self.connected.wait(), 10)
        return self

    async def _run(self) -> None:
        async with grpc.aio.insecure_channel(self.address) as channel:
            self.call = gateway_pb2_grpc.AgentGatewayServiceStub(channel).Connect(metadata=self.metadata)
            try:
                await self.call.initial_metadata()
                self.connected.set()
                async for response in self.call:
                    self.events.append(response.event)
                    if response.event.WhichOneof("event") == "notice":
                        self.notices.append(response.event.notice)
                    elif response.event.WhichOneof("event") == "decision":
                        asyncio.create_task(self._answer(response.event.decision))
            except grpc.aio.AioRpcError as error:
                self.error = error
            except asyncio.CancelledError:
                pass

    async def _answer(self, request: match_pb2.DecisionRequest) -> None:
        action = await self.policy(self, request)
        if action is not None:
            try:
                async with self.writing:
                    await self.call.write(gateway_pb2.ConnectRequest(action=action))
            except Exception:  # the stream ended meanwhile
                pass

    async def until(self, condition: Callable[[Agent], object], what: str, timeout_s: float = 20) -> None:
        """Wait until ``condition(self)`` holds (an event sent, a notice), polling what the stream received."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not condition(self):
            assert loop.time() < deadline, f"timed out after {timeout_s} s waiting for {what}"
            await asyncio.sleep(0.02)

    def sent(self, kind: str, match_id: str) -> list[match_pb2.AgentEvent]:
        """The events of ``kind`` (``"decision"``, ``"match_ended"``...) this agent was sent for ``match_id``."""
        return [
            event
            for event in self.events
            if event.WhichOneof("event") == kind and getattr(event, kind).match_id == match_id
        ]

    @property
    def alive(self) -> bool:
        return self.task is not None and not self.task.done() and self.error is None

    async def stop(self) -> None:
        if self.call is not None:
            self.call.cancel()
        if self.task is not None:
            await asyncio.wait({self.task}, timeout=5)


async def connect_outcomes(address: str, token: str, times: int = 20) -> collections.Counter[str]:
    """Connect to the gateway ``times`` times, one after the other, hanging up once the stream is
    taken: how each fared ("connected", or the status code's name)."""
    outcomes: collections.Counter[str] = collections.Counter()
    async with grpc.aio.insecure_channel(address) as channel:
        gateway = gateway_pb2_grpc.AgentGatewayServiceStub(channel)
        for _ in range(times):
            call = gateway.Connect(metadata=auth_metadata(token))
            try:
                headers = await asyncio.wait_for(call.initial_metadata(), 10)
                outcomes["connected" if headers else (await call.code()).name] += 1
            except grpc.aio.AioRpcError as error:
                outcomes[error.code().name] += 1
            call.cancel()
    return outcomes
