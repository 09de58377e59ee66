"""Remote seats as the match host sees them: ask for a decision (an AgentEvent carrying a
DecisionRequest), wait at most ``timeout``.

A ``Reply`` carries the agent's Action, or ``undeliverable`` when the agent is not reachable
(a DISCONNECTED fault); ``None`` from ``decide`` means the deadline passed (TIMEOUT).
"""

from __future__ import annotations

import asyncio
import contextlib

import grpc

from arena.play.relay import WRITE_LIMIT_S, AnyEvent, Decision, HostLink, Reply, event_bytes
from arena.proto.ohell.v1 import agent_pb2, match_pb2
from arena.rpc.auth import auth_metadata
from arena.rpc.ratelimit import LocalLimiter, RateLimit
from arena.rpc.server import channel_options
from arena.wire import lenient, message_bytes, wrapped

# grpc.aio's status for a write that met the call already ended (the endpoint's own status, such as a
# refused token, is then lost): said in the fault as what it most likely was
CORE_INTERNAL = "Internal error from Core"
CLOSED_UNREAD = "the endpoint ended the call before reading from it (a refused token? gRPC kept no reason)"
PLAY_METHOD = f"/{agent_pb2.DESCRIPTOR.services_by_name['AgentService'].full_name}/Play"
# Answers from an endpoint to no decision waiting (late, repeated, made up): past this the endpoint is
# flooding the host's loop and its stream is failed, as the gateway closes a connected agent's.
STRAY_ANSWERS = RateLimit(rate=50.0, burst=500)
_EVENT = agent_pb2.PlayRequest.DESCRIPTOR.fields_by_name["event"].number
READER_END_S = 1.0  # how long a hang-up waits for the stream's reader to see its cancelled call end


class ConnectedPlayer:
    """An agent holding a stream to a gateway (here or in another process)."""

    kind = "connected"

    def __init__(self, agent_id: str, link: HostLink) -> None:
        self.agent_id = agent_id
        self.link = link
        self.started: match_pb2.AgentEvent | None = None
        self.resend_start = False

    async def open(self, started: match_pb2.MatchStarted) -> None:
        self.started = match_pb2.AgentEvent(match_started=started)
        self.resend_start = await self.link.send(self.agent_id, self.started) is not None

    async def decide(self, decision: Decision, timeout: float) -> Reply | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout  # the writes spend the same allowance as the answer
        if self.resend_start and self.started is not None:  # it missed the start: it may be back
            self.resend_start = await self.link.send(self.agent_id, self.started, timeout) is not None
        decision_id = decision.decision_id
        future = self.link.expect(self.agent_id, decision_id, deadline)  # None at the deadline
        problem = await self.link.send(self.agent_id, decision, max(0.0, deadline - loop.time()), self.started)
        if problem is not None:
            self.link.forget(self.agent_id, decision_id)
            self.resend_start = True
            return Reply(undeliverable=problem)
        try:
            reply = await future
        except asyncio.CancelledError:
            self.link.forget(self.agent_id, decision_id)
            raise
        if reply is None:
            self.link.forget(self.agent_id, decision_id)
            return None
        if reply.undeliverable:
            self.resend_start = True
        return reply

    async def notify(self, event: match_pb2.AgentEvent) -> None:
        await self.link.send(self.agent_id, event)

    async def close(self) -> None:
        return None


class EndpointPlayer:
    """An agent running its own AgentService: one Play stream per match, redialled once per
    decision after a failure. Its faults' details never name its address: the record is public,
    the address the host's (the record's seat holds it for the host)."""

    kind = "endpoint"

    def __init__(self, address: str, token: str = "") -> None:
        self.address = address
        self.metadata = auth_metadata(token) if token else None
        self.channel: grpc.aio.Channel | None = None
        self.call: grpc.aio.StreamStreamCall | None = None
        self.reader: asyncio.Task[None] | None = None
        self.waiting: dict[int, asyncio.Future[Reply | None]] = {}
        self.started: match_pb2.MatchStarted | None = None
        self.broken = ""
        self.stray = LocalLimiter(STRAY_ANSWERS, max_callers=1)

    async def open(self, started: match_pb2.MatchStarted) -> None:
        self.started = started
        await self._dial(WRITE_LIMIT_S)

    async def _dial(self, timeout: float) -> None:
        await self._hang_up()
        self.broken = ""
        # by DNS, always: gRPC reads "unix:80" (a host named "unix") as its scheme, a local socket
        self.channel = grpc.aio.insecure_channel(f"dns:///{self.address}", options=channel_options())
        play = self.channel.stream_stream(
            PLAY_METHOD,
            request_serializer=message_bytes,
            response_deserializer=lenient(agent_pb2.PlayResponse),
        )
        self.call = play(metadata=self.metadata)
        if self.started is not None:
            await self._write(match_pb2.AgentEvent(match_started=self.started), timeout)
        # reading starts after the first write: a receive pending while the endpoint refuses the
        # call (UNAUTHENTICATED) can surface as INTERNAL in grpc.aio, hiding the endpoint's reason
        self.reader = asyncio.create_task(self._read(self.call))

    async def _write(self, event: AnyEvent, timeout: float) -> bool:
        """Write ``event`` within ``timeout`` s; past it the endpoint has stopped reading: broken."""
        if self.call is None or self.broken:
            return False
        try:
            async with asyncio.timeout(timeout):
                await self.call.write(wrapped(event_bytes(event), _EVENT))  # a PlayRequest's bytes
            return True
        except TimeoutError:
            self._fail(f"the endpoint is not reading its Play stream (a write waited {timeout:.3g} s)")
            return False
        except Exception as error:  # AioRpcError, UsageError, InvalidStateError: the stream is gone
            self._fail(await self._final_status(error))
            return False

    async def _final_status(self, error: BaseException) -> str:
        """The status the endpoint ended the call with (a failed write may only say INTERNAL)."""
        if self.call is not None:
            with contextlib.suppress(Exception):
                code = await asyncio.wait_for(self.call.code(), 1.0)
                if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                    return f"{code.name}: the endpoint is not reachable"
                details = await self.call.details()
                if code == grpc.StatusCode.INTERNAL and details == CORE_INTERNAL:
                    return CLOSED_UNREAD
                if code is not None and code != grpc.StatusCode.OK:
                    return f"{code.name}: {_their_text(details)}"
        return _describe(error)

    async def _read(self, call: grpc.aio.StreamStreamCall) -> None:
        try:
            async for response in call:
                if response is None:  # bytes that are no PlayResponse (lenient)
                    self._fail("the endpoint sent a message that is not a PlayResponse")
                    return
                future = self.waiting.pop(response.action.decision_id, None)
                if future is not None and not future.done():
                    future.set_result(Reply(action=response.action))
                elif self.stray.wait_ms("") > 0:
                    limit = STRAY_ANSWERS
                    self._fail(f"more than {limit.burst} answers (or {limit.rate:g} a second) to no pending decision")
                    return
            self._fail("the endpoint ended its Play stream")
        except grpc.aio.AioRpcError as error:
            self._fail(_describe(error))
        except asyncio.CancelledError:
            raise

    def _fail(self, why: str) -> None:
        self.broken = why
        for future in self.waiting.values():
            if not future.done():
                future.set_result(Reply(undeliverable=why))
        self.waiting.clear()

    async def decide(self, decision: Decision, timeout: float) -> Reply | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout  # the writes spend the same allowance as the answer
        if self.broken:
            await self._dial(timeout)
        decision_id = decision.decision_id
        future: asyncio.Future[Reply | None] = loop.create_future()
        self.waiting[decision_id] = future
        if not await self._write(decision, max(0.0, deadline - loop.time())):
            self.waiting.pop(decision_id, None)
            return Reply(undeliverable=self.broken or "the endpoint is not reachable")
        reply = await wait_reply(future, max(0.0, deadline - loop.time()))
        if reply is None:
            self.waiting.pop(decision_id, None)
        return reply

    async def notify(self, event: match_pb2.AgentEvent) -> None:
        await self._write(event, WRITE_LIMIT_S)

    async def _hang_up(self) -> None:
        # The call is cancelled and its reader left to end on that: a reader cancelled itself leaves its read
        # pending in gRPC, which ends later, maybe after this event loop has closed (a Celery thread's, whose
        # match is over): whichever loop runs then logged "PollerCompletionQueue._handle_events ... Event loop
        # is closed" (tests/services/test_faults.py).
        if self.call is not None:
            self.call.cancel()
        cancelled: asyncio.CancelledError | None = None  # this task's own: hang up all the same, then raise it
        if self.reader is not None:
            try:
                await asyncio.wait({self.reader}, timeout=READER_END_S)
            except asyncio.CancelledError as error:
                cancelled = error
            self.reader.cancel()  # none that outlives the call's end
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.reader
            self.reader = None
        if self.channel is not None:
            await self.channel.close()
            self.channel = None
        self.call = None
        if cancelled is not None:
            raise cancelled

    async def close(self) -> None:
        """Half-close, then hang up once the endpoint has ended the call (it read all it was sent),
        at most ``WRITE_LIMIT_S`` later: closing the channel at once cancelled the call, and the
        endpoint's server dropped what it had not yet read (often the MatchEnded just written)."""
        try:
            if self.call is not None and not self.broken:
                with contextlib.suppress(Exception):
                    await self.call.done_writing()
                    if self.reader is not None:
                        await asyncio.wait_for(asyncio.shield(self.reader), WRITE_LIMIT_S)
        finally:  # cancelled while it waited: the call, reader and channel end all the same
            await self._hang_up()


async def wait_reply(future: asyncio.Future[Reply | None], timeout: float) -> Reply | None:
    """The reply, or None after ``timeout`` seconds (cheaper than asyncio.wait_for: no extra
    future or loop turn on the common path)."""
    handle = asyncio.get_running_loop().call_later(timeout, _expire, future)
    try:
        return await future
    finally:
        handle.cancel()


def _expire(future: asyncio.Future[Reply | None]) -> None:
    if not future.done():
        future.set_result(None)


def _describe(error: BaseException) -> str:
    """Why the endpoint failed, without the transport's network details (which would tell a
    closed port from an open one): the status code, and the endpoint's own message otherwise."""
    if isinstance(error, grpc.aio.AioRpcError):
        if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            return f"{error.code().name}: the endpoint is not reachable"
        return f"{error.code().name}: {_their_text(error.details())}"
    return type(error).__name__


def _their_text(details: str | None) -> str:
    """The endpoint's own message, at most 200 characters, as printable text: it goes into the
    record, which ``ohell match show`` prints in the host's terminal (no escape sequences there)."""
    return "".join(c if c.isprintable() else "?" for c in (details or "")[:200])
