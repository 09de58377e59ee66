"""Helpers of the service tests: an engine service in its own process and scripted raw agents."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc

from arena.proto.ohell.v1 import cards_pb2, gateway_pb2, gateway_pb2_grpc, match_pb2
from arena.rpc.auth import auth_metadata

ROOT = Path(__file__).resolve().parents[2]
DROP = object()  # a policy returns this to hang up
HOST_TOKEN = "services-test-host-token-0123"  # the engine process administers with it


class EngineProcess:
    """``ohell engine`` in a subprocess on a free port, relaying through ``redis_url``."""

    def __init__(self, redis_url: str, *extra: str) -> None:
        command = [
            sys.executable,
            "-m",
            "arena.cli",
            "engine",
            "--address",
            "127.0.0.1:0",
            "--redis-url",
            redis_url,
            "--decision-ms",
            "300",
            *extra,
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "OHELL_HOST_TOKEN": HOST_TOKEN}
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True
        )
        deadline = time.monotonic() + 30
        self.port = 0
        assert self.process.stdout is not None
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"engine exited with {self.process.wait()} before serving")
            if line.startswith("engine service on port "):
                self.port = int(line.split()[-1])
                break
        if not self.port:
            raise RuntimeError("engine did not report its port in 30 s")
        self.output: list[str] = []  # drained so the engine never blocks on a full pipe
        threading.Thread(target=self._drain, daemon=True).start()
        self.address = f"127.0.0.1:{self.port}"

    def _drain(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line)

    def stop(self) -> int:
        self.process.terminate()
        try:
            return self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            return -9


def first_legal(request: match_pb2.DecisionRequest) -> match_pb2.Action:
    action = match_pb2.Action(match_id=request.match_id, seat=request.seat, decision_id=request.decision_id)
    if request.kind == match_pb2.DECISION_KIND_BID:
        action.bid = request.legal_bids[0]
    else:
        action.card.CopyFrom(request.legal_cards[0])
    return action


Policy = Callable[["ScriptedAgent", match_pb2.DecisionRequest], Awaitable[Any]]


async def legal_policy(agent: ScriptedAgent, request: match_pb2.DecisionRequest) -> Any:
    return first_legal(request)


class ScriptedAgent:
    """A connected agent written against the raw stubs: it records every event it receives and
    answers decisions with ``policy`` (an Action, None for no answer, or DROP to hang up)."""

    def __init__(self, address: str, token: str, policy: Policy = legal_policy, challenges_open: bool = False) -> None:
        self.address, self.token, self.policy = address, token, policy
        self.metadata = auth_metadata(token) + ((("ohell-challenges", "open"),) if challenges_open else ())
        self.events: list[match_pb2.AgentEvent] = []
        self.decisions: list[match_pb2.DecisionRequest] = []
        self.notices: list[match_pb2.Notice] = []
        self.error: grpc.aio.AioRpcError | None = None
        self.connected = asyncio.Event()
        self.ended = asyncio.Event()
        self.call: Any = None
        self.task: asyncio.Task[None] | None = None

    async def start(self) -> ScriptedAgent:
        self.task = asyncio.create_task(self._run())
        waiter = asyncio.create_task(self.connected.wait())
        await asyncio.wait({self.task, waiter}, timeout=10, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        return self

    async def _run(self) -> None:
        async with grpc.aio.insecure_channel(self.address) as channel:
            self.call = gateway_pb2_grpc.AgentGatewayServiceStub(channel).Connect(metadata=self.metadata)
            try:
                await self.call.initial_metadata()  # the gateway registered the stream
                self.connected.set()
                async for response in self.call:
                    event = response.event
                    self.events.append(event)
                    kind = event.WhichOneof("event")
                    if kind == "notice":
                        self.notices.append(event.notice)
                    elif kind == "match_ended":
                        self.ended.set()
                    elif kind == "decision":
                        self.decisions.append(event.decision)
                        answer = await self.policy(self, event.decision)
                        if answer is DROP:
                            self.call.cancel()
                            return
                        if answer is not None:
                            await self.send(answer)
            except grpc.aio.AioRpcError as error:
                self.error = error
            except asyncio.CancelledError:
                pass

    async def send(self, action: match_pb2.Action) -> None:
        await self.call.write(gateway_pb2.ConnectRequest(action=action))

    async def stop(self) -> None:
        if self.task is not None:
            if self.call is not None:
                self.call.cancel()
            await asyncio.wait({self.task}, timeout=5)


async def until(condition: Callable[[], object], timeout_s: float = 10.0) -> None:
    """Wait (polling every 10 ms) until ``condition()`` is true; TimeoutError after ``timeout_s``."""
    async with asyncio.timeout(timeout_s):
        while not condition():
            await asyncio.sleep(0.01)


def card(index: int) -> cards_pb2.Card:
    return cards_pb2.Card(suit=index // 13 + 1, rank=index % 13 + 2)
