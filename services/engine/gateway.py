"""The agent gateway: each agent holds one live stream; match hosts reach it through here.

Hosts in this process call ``deliver`` directly (the gateway registers with ``register_local_gateway``);
hosts elsewhere publish RelayEnvelopes on this gateway's Redis channel (see arena/play/relay.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Coroutine
from typing import Any

import grpc

from arena.keys import PRESENCE_REFRESH_S, PRESENCE_TTL_S, Keys
from arena.play import metrics
from arena.play.relay import (
    PLATFORM_FAULT,
    WRITE_LIMIT_S,
    AnyEvent,
    Decision,
    ReplyTarget,
    Watchdog,
    event_bytes,
    listen,
    publish_reply,
    register_local_gateway,
    reply_to,
    unregister_local_gateway,
)
from arena.proto.ohell.v1 import gateway_pb2, gateway_pb2_grpc, match_pb2, relay_pb2
from arena.rpc.auth import AGENT_ID_HEADER, TokenStore, authenticate, bearer_token
from arena.rpc.ratelimit import LocalLimiter, RateLimit
from arena.wire import lenient, message_bytes, wrapped

_MATCHES_REMEMBERED = 256
# Actions for no pending decision (late, repeated, for another seat or match) each cost the gateway a
# notice written back; an agent answers at most once per decision, so a stream that sends more than
# this is flooding it and is closed RESOURCE_EXHAUSTED (it slowed every other agent's decisions).
UNUSABLE_ACTIONS = RateLimit(rate=50.0, burst=500)
SERVICE = gateway_pb2.DESCRIPTOR.services_by_name["AgentGatewayService"].full_name
# Connect metadata by which an agent accepts challenges from other agents (else only its own
# challenges and the host's may seat it).
CHALLENGES_HEADER = "ohell-challenges"

# Compare-and-delete: drop the presence key (and the challengeable key, KEYS[2]) only if this gateway
# still owns it (else the agent's newer stream at another gateway holds both).
_RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1], KEYS[2]) end return 0"
# Refresh the presence key (and, with ARGV[3] == '1', the challengeable key) unless another gateway
# holds it: the agent connected there since (engines run replicated), so this stream is replaced (0).
_REFRESH = """
local holder = redis.call('get', KEYS[1])
if holder and holder ~= ARGV[1] then return 0 end
redis.call('set', KEYS[1], ARGV[1], 'EX', ARGV[2])
if ARGV[3] == '1' then redis.call('set', KEYS[2], '1', 'EX', ARGV[2]) end
return 1
"""


class WriteTurn:
    """One write at a time on a stream, in the order asked, as an ``asyncio.Lock`` gives; but taken
    without a coroutine when free (``take_now``), as a host's decision nearly always finds it."""

    def __init__(self) -> None:
        self.held = False
        self._waiting: deque[asyncio.Future[None]] = deque()

    def take_now(self) -> bool:
        if self.held or self._waiting:
            return False
        self.held = True
        return True

    async def take(self) -> None:
        if self.take_now():
            return
        turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if not turn.cancelled():  # handed the turn as it was cancelled: pass it on
                self.give()
            elif turn in self._waiting:
                self._waiting.remove(turn)
            raise

    def give(self) -> None:
        while self._waiting:
            turn = self._waiting.popleft()
            if not turn.done():
                turn.set_result(None)  # handed over: ``held`` stays set
                return
        self.held = False

    async def __aenter__(self) -> None:
        await self.take()

    async def __aexit__(self, *_: object) -> None:
        self.give()


class Connection:
    """One agent's live stream and what is pending on it. Hosts write to the stream directly
    (one write at a time), which saves a task hop on every decision."""

    def __init__(
        self, agent_id: str, context: grpc.aio.ServicerContext, challengeable: bool = False, token: str = ""
    ) -> None:
        self.agent_id = agent_id
        self.context = context
        self.token = token  # checked again now and then: a revoked token ends the stream
        self.challengeable = challengeable  # other agents may seat it in their challenges
        self.write_lock = WriteTurn()
        self.closed = asyncio.Event()
        self.seats: OrderedDict[str, int] = OrderedDict()  # match id -> the agent's seat
        self.started: dict[str, match_pb2.AgentEvent] = {}  # match id -> its MatchStarted
        # (match id, decision id) -> where the answer goes, the request's AgentEvent bytes, until when (loop time)
        self.pending: dict[tuple[str, int], tuple[ReplyTarget, bytes, float]] = {}
        self.fatal: tuple[grpc.StatusCode, str] | None = None
        self._writes = Watchdog(self._expire)  # the tasks of the sends in progress, cancelled past their deadline
        self._expired: set[asyncio.Task[Any]] = set()  # sends the watchdog cancelled

    def learn_seat(self, match_id: str, seat: int) -> None:
        self.seats[match_id] = seat
        self.seats.move_to_end(match_id)
        while len(self.seats) > _MATCHES_REMEMBERED:
            old, _ = self.seats.popitem(last=False)
            self.started.pop(old, None)
            self.lapse(old)  # its host died mid-decision, or the agent is in too many matches to answer

    def lapse(self, match_id: str) -> None:
        """Forget the decisions of ``match_id`` still pending (the host no longer waits for them)."""
        for stale in [key for key in self.pending if key[0] == match_id]:
            del self.pending[stale]

    async def send(self, event: AnyEvent, timeout: float = WRITE_LIMIT_S) -> str | None:
        """Write ``event``, waiting at most ``timeout`` s (for the lock and the flow-control
        window): an agent that stops reading its stream is disconnected, not waited for."""
        return await self.write(event_bytes(event), timeout)

    async def write(self, event: bytes, timeout: float = WRITE_LIMIT_S) -> str | None:
        """``send`` of an AgentEvent's bytes."""
        if self.closed.is_set():
            return f"agent {self.agent_id!r} is disconnecting" + (f": {self.fatal[1]}" if self.fatal else "")
        data = wrapped(event)  # the ConnectResponse's bytes, without copying the event into one
        task = asyncio.current_task()
        assert task is not None
        self._writes.watch(task, asyncio.get_running_loop().time() + timeout)
        try:
            if not self.write_lock.take_now():
                await self.write_lock.take()
            try:
                await self.context.write(data)
            finally:
                self.write_lock.give()
        except asyncio.CancelledError:
            if task not in self._expired or task.uncancel() > 0:  # cancelled by someone else: pass it on
                raise
            why = f"agent {self.agent_id!r} is not reading its stream (a write waited {timeout:.3g} s)"
            self.end(grpc.StatusCode.DEADLINE_EXCEEDED, why)
            return why
        except Exception as error:  # the stream ended under us
            self.end()
            return f"agent {self.agent_id!r} stream failed: {type(error).__name__}"
        finally:
            self._writes.unwatch(task)
            self._expired.discard(task)
        return None

    def _expire(self, task: asyncio.Task[Any]) -> None:
        self._expired.add(task)
        task.cancel()

    def end(self, code: grpc.StatusCode | None = None, message: str = "") -> None:
        if code is not None and self.fatal is None:
            self.fatal = (code, message)
        self.closed.set()

    def take_over(self, old: Connection) -> list[bytes]:
        """A new stream replaces ``old``: keep its matches; returns the AgentEvents' bytes to re-send."""
        self.seats, self.started, self.pending = old.seats, old.started, old.pending
        matches = {match_id for match_id, _ in self.pending}
        resend = [self.started[m].SerializeToString() for m in matches if m in self.started]
        return resend + [event for _, event, _ in self.pending.values()]


class Gateway(gateway_pb2_grpc.AgentGatewayServiceServicer):
    def __init__(self, tokens: TokenStore, redis_client: Any | None = None, keys: Keys | None = None) -> None:
        self.keys = keys or Keys()
        self.tokens = tokens
        self.redis = redis_client
        self.gateway_id = uuid.uuid4().hex
        self.connections: dict[str, Connection] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.stopping = False  # the streams it ends from now on are the platform's doing, not the agents'
        self._relaying: set[asyncio.Task[None]] = set()  # relayed events being written
        # actions answered with a notice, per agent (not per stream: reconnecting gets no fresh allowance)
        self.unusable = LocalLimiter(UNUSABLE_ACTIONS)

    def add_to_server(self, server: grpc.aio.Server) -> None:
        """Register ``Connect`` as the generated code does, but with a response serializer that
        also takes the bytes ``Connection.send`` encodes itself."""
        handlers = {
            "Connect": grpc.stream_stream_rpc_method_handler(
                self.Connect,
                request_deserializer=lenient(gateway_pb2.ConnectRequest),  # None: bytes that are none
                response_serializer=message_bytes,
            )
        }
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, handlers),))
        server.add_registered_method_handlers(SERVICE, handlers)

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        register_local_gateway(self)
        if self.redis is not None:
            channel = self.keys.gateway_channel(self.gateway_id)
            self._tasks.append(await listen(self.redis, channel, self._relayed, self._mark_present))
            self._tasks.append(asyncio.create_task(self._refresh_presence()))

    async def stop(self) -> None:
        self.stopping = True
        unregister_local_gateway(self)
        for connection in list(self.connections.values()):
            connection.end(grpc.StatusCode.UNAVAILABLE, "the engine service is shutting down")
        for task in [*self._tasks, *self._relaying]:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # ------------------------------------------------------------------ host side
    def holds(self, agent_id: str) -> bool:
        return agent_id in self.connections and asyncio.get_running_loop() is self.loop

    def accepts_challenges(self, agent_id: str) -> bool:
        connection = self.connections.get(agent_id)
        return connection is not None and connection.challengeable

    async def deliver(
        self, agent_id: str, event: AnyEvent, reply: ReplyTarget, timeout: float = WRITE_LIMIT_S
    ) -> str | None:
        if self.stopping:
            return f"{PLATFORM_FAULT}the engine service holding agent {agent_id!r} is shutting down"
        connection = self.connections.get(agent_id)
        if connection is None:
            return f"agent {agent_id!r} is not connected"
        if not isinstance(event, Decision):
            kind = event.WhichOneof("event")
            if kind == "decision":
                event = Decision.of(event)
            else:
                if kind == "match_started":
                    connection.learn_seat(event.match_started.match_id, event.match_started.seat)
                    connection.started[event.match_started.match_id] = event
                elif kind == "match_ended":  # nothing of it is re-sent on a new stream
                    connection.started.pop(event.match_ended.match_id, None)
                    connection.lapse(event.match_ended.match_id)
                return await connection.send(event, timeout)
        connection.learn_seat(event.match_id, event.seat)
        if connection.pending:
            connection.lapse(event.match_id)  # one decision per match at a time: older ones lapsed
        key = (event.match_id, event.decision_id)
        # the host stops waiting at the end of ``timeout`` (its allowance): an answer after it is late
        connection.pending[key] = (reply, event.data, asyncio.get_running_loop().time() + timeout)
        problem = await connection.write(event.data, timeout)
        if problem is not None:
            connection.pending.pop(key, None)
        return problem

    async def _relayed(self, data: bytes) -> None:
        """Write a relayed event in a task of its own: awaited here, one agent that stops reading
        would hold up the events of every agent of this gateway for its write allowance. Events of
        one agent keep their order: each task reaches the agent's write lock (FIFO) without
        awaiting anything first, so in the order the tasks were made."""
        envelope = relay_pb2.RelayEnvelope.FromString(data)
        if envelope.WhichOneof("body") == "to_agent":
            task = asyncio.create_task(self._deliver_relayed(envelope))
            self._relaying.add(task)
            task.add_done_callback(self._relaying.discard)

    async def _deliver_relayed(self, envelope: relay_pb2.RelayEnvelope) -> None:
        with contextlib.suppress(Exception):  # as listen() did: one failed delivery must not log a traceback
            event = envelope.to_agent
            timeout = WRITE_LIMIT_S
            if event.WhichOneof("event") == "decision":  # the host's allowance: deadline plus bank
                request = event.decision
                timeout = (request.deadline_ms + request.observation.time_bank_ms) / 1000
            problem = await self.deliver(envelope.agent_id, event, envelope.reply_channel, timeout)
            if problem is not None and envelope.to_agent.WhichOneof("event") == "decision":
                await publish_reply(
                    self.redis,
                    envelope.reply_channel,
                    relay_pb2.RelayEnvelope(
                        agent_id=envelope.agent_id,
                        undeliverable=problem,
                        decision_id=envelope.to_agent.decision.decision_id,
                    ),
                )

    async def _refresh_presence(self) -> None:
        while True:
            await asyncio.sleep(PRESENCE_REFRESH_S)
            await self._mark_present()
            await self._drop_revoked()

    async def _drop_revoked(self) -> None:
        """End the stream of an agent whose token the host revoked or rotated since it connected."""
        for agent_id, connection in list(self.connections.items()):
            try:
                holder = await self.tokens.agent_for_token(connection.token)
            except Exception:  # Redis away: check again next time
                return
            if holder != agent_id:
                connection.end(grpc.StatusCode.UNAUTHENTICATED, "the agent's token was revoked or rotated")

    async def _mark_present(self) -> None:
        """(Re)write the presence key of every agent held here; Redis away: next time. A stream whose
        agent has connected at another gateway since ends ABORTED, as when it connects again here."""
        assert self.redis is not None
        held = list(self.connections.items())
        with contextlib.suppress(Exception):
            async with self.redis.pipeline(transaction=False) as pipe:
                for agent_id, connection in held:
                    keys = (self.keys.agent_presence(agent_id), self.keys.challengeable(agent_id))
                    pipe.eval(_REFRESH, 2, *keys, self.gateway_id, PRESENCE_TTL_S, int(connection.challengeable))
                refreshed = await pipe.execute()
            for (agent_id, connection), ours in zip(held, refreshed, strict=True):
                if not ours:
                    why = f"agent {agent_id!r} connected again at another gateway: this stream is replaced"
                    connection.end(grpc.StatusCode.ABORTED, why)

    async def _publish(self, channel: str, envelope: relay_pb2.RelayEnvelope) -> None:
        if self.redis is not None:
            await publish_reply(self.redis, channel, envelope)

    # ------------------------------------------------------------------ agent side
    async def Connect(
        self, request_iterator: AsyncIterator[gateway_pb2.ConnectRequest], context: grpc.aio.ServicerContext
    ) -> None:
        agent_id = await authenticate(context, self.tokens)
        metadata = context.invocation_metadata() or ()
        opted_in = any(key.lower() == CHALLENGES_HEADER and value == "open" for key, value in metadata)
        connection = Connection(agent_id, context, opted_in, bearer_token(metadata) or "")
        resend: list[bytes] = []
        old = self.connections.get(agent_id)
        if old is not None:
            old.end(grpc.StatusCode.ABORTED, f"agent {agent_id!r} connected again: this stream is replaced")
            resend = connection.take_over(old)
        metrics.AGENTS_CONNECTED.labels("replaced" if old is not None else "new").inc()
        self.connections[agent_id] = connection
        reader: asyncio.Task[None] | None = None
        try:
            # Hosts may send to the new stream from now on: their events wait on its write lock until
            # the headers and what is re-sent (each match's MatchStarted first) are out, in order.
            async with connection.write_lock:
                if self.redis is not None:
                    with contextlib.suppress(Exception):  # Redis away: local hosts still reach the agent
                        await self.redis.set(self.keys.agent_presence(agent_id), self.gateway_id, ex=PRESENCE_TTL_S)
                        if connection.challengeable:
                            await self.redis.set(self.keys.challengeable(agent_id), b"1", ex=PRESENCE_TTL_S)
                        else:
                            await self.redis.delete(self.keys.challengeable(agent_id))
                await context.send_initial_metadata(((AGENT_ID_HEADER, agent_id),))  # the agent knows it is live
                try:
                    for event in resend:
                        await asyncio.wait_for(context.write(wrapped(event)), WRITE_LIMIT_S)
                except Exception:  # the new stream failed under us, or its agent does not read it: it is over
                    connection.end()
            reader = asyncio.create_task(self._read(connection))
            await connection.closed.wait()
            if connection.fatal is not None:
                await context.abort(*connection.fatal)
        finally:
            if reader is not None:
                reader.cancel()
            await self._closed(connection)

    async def _read(self, connection: Connection) -> None:
        try:
            while connection.fatal is None:
                request = await connection.context.read()
                if request is grpc.aio.EOF:
                    break
                if request is None:
                    connection.end(grpc.StatusCode.INVALID_ARGUMENT, "a message that is not a ConnectRequest")
                    return
                rest = self._take_action(connection, request.action)
                if rest is not None:  # a notice, or a reply published to a host elsewhere
                    await rest
        except Exception:  # the transport failed under us: the stream is over
            pass
        connection.end()

    async def _on_action(self, connection: Connection, request: gateway_pb2.ConnectRequest) -> None:
        rest = self._take_action(connection, request.action)
        if rest is not None:
            await rest

    def _take_action(self, connection: Connection, action: match_pb2.Action) -> Coroutine[Any, Any, None] | None:
        """Check an agent's action and hand it to its host: a host in this process gets it here and
        now (None returned: no coroutine made, no loop turn); what is left to await otherwise (a
        notice to write, a reply to publish) is returned."""
        full_id, decision_id = action.match_id, action.decision_id  # each read of a upb field looks it up by name
        if not full_id:
            return self._notice(connection, "INVALID_ARGUMENT", "action.match_id: empty (echo the DecisionRequest's)")
        seat = connection.seats.get(full_id)
        if seat is None or seat != action.seat:
            match_id = full_id[:80]  # quoted in the notice: a caller's value, of any length
            agent = connection.agent_id
            where = (
                f"action.match_id: agent {agent!r} has no seat in match {match_id!r}"
                if seat is None
                else f"action.seat: agent {agent!r} sits in seat {seat} of match {match_id!r}, not seat {action.seat}"
            )
            # a notice, not the end of the stream (unless it floods: _notice): a late or misdirected
            # answer must not cost the agent its other matches (an ended stream faults them DISCONNECTED)
            return self._notice(connection, "PERMISSION_DENIED", where)
        pending = connection.pending.pop((full_id, decision_id), None)
        if pending is None or pending[2] < asyncio.get_running_loop().time():
            return self._notice(
                connection,
                "FAILED_PRECONDITION",
                (
                    f"action.decision_id: {decision_id} of match {full_id[:80]!r} is not pending "
                    "(already answered, timed out or never asked)"
                ),
            )
        action.DiscardUnknownFields()  # fields an Action does not have go no further (to Redis, to the host)
        target = pending[0]
        if callable(target):
            target(connection.agent_id, decision_id, action, "")
            return None
        return reply_to(target, connection.agent_id, decision_id, action, "", self._publish)

    async def _notice(self, connection: Connection, code: str, message: str) -> None:
        if self.unusable.wait_ms(connection.agent_id) > 0:
            limit = UNUSABLE_ACTIONS
            why = (
                f"more than {limit.burst} actions (or {limit.rate:g} a second) that answered no pending decision: "
                "the stream is closed"
            )
            connection.end(grpc.StatusCode.RESOURCE_EXHAUSTED, why)
            return
        await connection.send(match_pb2.AgentEvent(notice=match_pb2.Notice(code=code, message=message)))

    async def _closed(self, connection: Connection) -> None:
        agent_id = connection.agent_id
        if self.connections.get(agent_id) is not connection:
            return  # replaced: the new stream took over what was pending
        del self.connections[agent_id]
        why = f"agent {agent_id!r} disconnected with the decision pending"
        if self.stopping:
            why = f"{PLATFORM_FAULT}the engine service holding agent {agent_id!r} shut down with the decision pending"
        for (_, decision_id), (reply, _, _) in connection.pending.items():
            await reply_to(reply, agent_id, decision_id, None, why, self._publish)
        connection.pending.clear()
        if self.redis is not None:
            with contextlib.suppress(Exception):
                keys = (self.keys.agent_presence(agent_id), self.keys.challengeable(agent_id))
                await self.redis.eval(_RELEASE, 2, *keys, self.gateway_id)
