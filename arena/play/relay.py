"""How a match host reaches connected agents: directly when the gateway holding the agent's
stream is in this process, else through Redis pub/sub (docs/protocol.md, "Relay").

Host -> agent: ``GET ohell:agent:{id}:gateway`` -> gateway id, then ``PUBLISH
ohell:gateway:{gid}`` a RelayEnvelope(to_agent, reply_channel). Agent -> host: the gateway
``PUBLISH``es RelayEnvelope(from_agent) to the reply channel ``ohell:host:{host_id}``; when the
agent is not connected, or its stream ends with a decision pending, it publishes
RelayEnvelope(undeliverable, decision_id) instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import uuid
from collections.abc import Callable, Coroutine, Mapping
from typing import Any, Protocol

from arena.keys import Keys
from arena.proto.ohell.v1 import match_pb2, relay_pb2
from arena.wire import wrapped

# How long one write to an agent's stream may wait when no decision deadline bounds it (an event
# that asks nothing: MatchStarted, HandEnded, MatchEnded, a Notice). Past it the agent is taken to
# have stopped reading and is disconnected.
WRITE_LIMIT_S = 5.0

# Starts the reason of an undeliverable event when the platform (Redis), not the agent, failed: the
# ladder voids a match spoiled this way instead of rating it (arena.ladder.jobs).
PLATFORM_FAULT = "platform: "


def platform_faults(record: Mapping[str, Any]) -> list[str]:
    """The details of a match record's faults that were the platform's, not the agents'."""
    details = (str(fault.get("detail", "")) for fault in record.get("faults", ()))
    return [detail for detail in details if detail.startswith(PLATFORM_FAULT)]


_TO_AGENT = relay_pb2.RelayEnvelope.DESCRIPTOR.fields_by_name["to_agent"].number

# A host in this process: called with (agent id, decision id, the Action or None, why none comes).
LocalReply = Callable[[str, int, match_pb2.Action | None, str], None]
ReplyTarget = LocalReply | str  # local callback or Redis channel


class LocalGateway(Protocol):
    def holds(self, agent_id: str) -> bool: ...

    def accepts_challenges(self, agent_id: str) -> bool: ...

    async def deliver(self, agent_id: str, event: AnyEvent, reply: ReplyTarget, timeout: float) -> str | None: ...


_LOCAL_GATEWAYS: list[LocalGateway] = []  # gateways running in this process


def register_local_gateway(gateway: LocalGateway) -> None:
    """Hosts in this process deliver straight to ``gateway`` (no Redis) while it is registered."""
    _LOCAL_GATEWAYS.append(gateway)


def unregister_local_gateway(gateway: LocalGateway) -> None:
    if gateway in _LOCAL_GATEWAYS:
        _LOCAL_GATEWAYS.remove(gateway)


def local_gateway_holding(agent_id: str) -> LocalGateway | None:
    """The gateway of this process that holds ``agent_id``'s stream, if any."""
    for gateway in _LOCAL_GATEWAYS:  # a loop, not next() over a generator: on every event's path
        if gateway.holds(agent_id):
            return gateway
    return None


class Watchdog:
    """Deadlines (event-loop time) for many waits with one timer: ``expire(key)`` runs for each key
    still watched when its deadline passes. The timer is re-armed only when it fires with keys
    left or a new deadline comes before it, not once per wait as ``asyncio.timeout`` or
    ``call_later`` would (a timer made and cancelled is ~2-5 µs of every decision)."""

    def __init__(self, expire: Callable[[Any], None]) -> None:
        self._expire = expire
        self._deadlines: dict[Any, float] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._at = math.inf

    def watch(self, key: Any, deadline: float) -> None:
        self._deadlines[key] = deadline
        if deadline < self._at:
            self._arm(deadline)

    def unwatch(self, key: Any) -> None:
        self._deadlines.pop(key, None)

    def _arm(self, when: float) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._at = when
        self._timer = asyncio.get_running_loop().call_at(when, self._fire)

    def _fire(self) -> None:
        self._timer, self._at = None, math.inf
        now = asyncio.get_running_loop().time()
        for key in [key for key, deadline in self._deadlines.items() if deadline <= now]:
            del self._deadlines[key]
            self._expire(key)
        if self._deadlines:
            self._arm(min(self._deadlines.values()))


class Decision:
    """A DecisionRequest on its way to a seat: the bytes of its ``AgentEvent`` (the host writes them
    straight from the engine's values, ``arena.wire.DecisionWriter``) and the fields a gateway keys
    it by. Hosts send it where they would send the event; a gateway in this process writes the
    bytes to the agent's stream as they are."""

    __slots__ = ("data", "decision_id", "match_id", "seat")

    def __init__(self, match_id: str, seat: int, decision_id: int, data: bytes) -> None:
        self.match_id = match_id
        self.seat = seat
        self.decision_id = decision_id
        self.data = data

    @classmethod
    def of(cls, event: match_pb2.AgentEvent) -> Decision:
        """The decision an ``AgentEvent`` message carries (one relayed through Redis, a test's)."""
        request = event.decision
        return cls(request.match_id, request.seat, request.decision_id, event.SerializeToString())


AnyEvent = match_pb2.AgentEvent | Decision  # what hosts send: a message, or a decision's bytes


def event_bytes(event: AnyEvent) -> bytes:
    """The ``AgentEvent``'s bytes."""
    return event.data if isinstance(event, Decision) else event.SerializeToString()


class Reply:
    """What came back for one decision: an action, or why none will come."""

    __slots__ = ("action", "undeliverable")

    def __init__(self, action: match_pb2.Action | None = None, undeliverable: str = "") -> None:
        self.action = action
        self.undeliverable = undeliverable


class HostLink:
    """The host's side of the relay, for one match."""

    def __init__(self, redis_client: Any | None = None, keys: Keys | None = None) -> None:
        self.redis = redis_client  # redis.asyncio.Redis or None (local gateways only)
        self.keys = keys or Keys()
        self.host_id = uuid.uuid4().hex
        self.channel = self.keys.host_channel(self.host_id)
        self._waiting: dict[tuple[str, int], asyncio.Future[Reply | None]] = {}
        self._deadlines = Watchdog(_time_out)  # a decision unanswered at its deadline gets None
        self._gateway_of: dict[str, str] = {}
        self._reader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        if self.redis is not None:
            self._reader = await listen(self.redis, self.channel, self._on_message)

    async def close(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader

    def expect(self, agent_id: str, decision_id: int, deadline: float = math.inf) -> asyncio.Future[Reply | None]:
        """The future of a decision's reply; it gets None at ``deadline`` (loop time) if no reply
        came by then."""
        future: asyncio.Future[Reply | None] = asyncio.get_running_loop().create_future()
        self._waiting[(agent_id, decision_id)] = future
        if deadline < math.inf:
            self._deadlines.watch(future, deadline)
        return future

    def forget(self, agent_id: str, decision_id: int) -> None:
        future = self._waiting.pop((agent_id, decision_id), None)
        if future is not None:
            self._deadlines.unwatch(future)

    def send(
        self,
        agent_id: str,
        event: AnyEvent,
        timeout: float = WRITE_LIMIT_S,
        preface: match_pb2.AgentEvent | None = None,
    ) -> Coroutine[Any, Any, str | None]:
        """Deliver ``event`` (a local stream write may take at most ``timeout`` s), awaited: None when
        handed on, else a sentence why it could not be. Never raises: a Redis failure is a reason.
        ``preface`` (the match's MatchStarted) goes first when the agent is found on another gateway
        than the one remembered, which died: the new one never saw the match start. A gateway in
        this process is found now and its ``deliver`` returned as it is (no frame of ours around it)."""
        gateway = local_gateway_holding(agent_id)
        if gateway is not None:
            return gateway.deliver(agent_id, event, self.answer, timeout)
        return self._relay(agent_id, event, preface)

    async def _relay(self, agent_id: str, event: AnyEvent, preface: match_pb2.AgentEvent | None) -> str | None:
        if self.redis is None:
            return f"agent {agent_id!r} is not connected to this engine service"
        # RelayEnvelope(agent_id, reply_channel, to_agent=event) without copying the event into it
        head = relay_pb2.RelayEnvelope(agent_id=agent_id, reply_channel=self.channel).SerializeToString()
        data = head + wrapped(event_bytes(event), _TO_AGENT)
        try:
            for attempt in range(2):  # a gateway remembered from an earlier event may be gone: ask the presence once
                gateway_id = self._gateway_of.get(agent_id)
                remembered = gateway_id is not None
                if gateway_id is None:
                    found = await self.redis.get(self.keys.agent_presence(agent_id))
                    if found is None:
                        return f"agent {agent_id!r} is not connected to any gateway"
                    gateway_id = found.decode() if isinstance(found, bytes) else str(found)
                    self._gateway_of[agent_id] = gateway_id
                channel = self.keys.gateway_channel(gateway_id)
                if attempt and preface is not None:  # one channel, one listener: the two stay in order
                    await self.redis.publish(channel, head + wrapped(preface.SerializeToString(), _TO_AGENT))
                if await self.redis.publish(channel, data):
                    return None
                self._gateway_of.pop(agent_id, None)
                if not remembered:
                    break
        except Exception as error:  # Redis away: this event is lost, the match goes on
            self._gateway_of.pop(agent_id, None)
            return f"{PLATFORM_FAULT}cannot relay to agent {agent_id!r}: Redis failed ({type(error).__name__}: {error})"
        # the agent's presence names a gateway that no longer listens: that process died, not the agent
        return f"{PLATFORM_FAULT}the gateway holding agent {agent_id!r} is gone"

    def receive(self, envelope: relay_pb2.RelayEnvelope) -> None:
        """A reply relayed by a gateway in another process."""
        body = envelope.WhichOneof("body")
        if body == "from_agent":
            self.answer(envelope.agent_id, envelope.from_agent.decision_id, envelope.from_agent, "")
        elif body == "undeliverable":
            self.answer(envelope.agent_id, envelope.decision_id, None, envelope.undeliverable)

    def answer(self, agent_id: str, decision_id: int, action: match_pb2.Action | None, undeliverable: str) -> None:
        """The agent's ``action`` for a decision, or why none will come (a gateway in this process
        calls this directly: no envelope is built)."""
        if action is None:
            self._gateway_of.pop(agent_id, None)
        future = self._waiting.pop((agent_id, decision_id), None)
        if future is not None:
            self._deadlines.unwatch(future)
            if not future.done():
                future.set_result(Reply(undeliverable=undeliverable) if action is None else Reply(action=action))

    async def _on_message(self, data: bytes) -> None:
        self.receive(relay_pb2.RelayEnvelope.FromString(data))


def _time_out(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_result(None)


async def listen(
    client: Any,
    channel: str,
    handle: Callable[[bytes], Coroutine[Any, Any, None]],
    on_resubscribe: Callable[[], Coroutine[Any, Any, None]] | None = None,
) -> asyncio.Task[None]:
    """Subscribe to ``channel`` (subscribed when this returns) and pass each message to
    ``handle``; when the connection to Redis drops, subscribe again and call ``on_resubscribe``.
    Messages sent meanwhile are lost (pub/sub keeps nothing): the decisions they carried become
    faults when their deadline passes."""
    first = client.pubsub(ignore_subscribe_messages=True)
    await first.subscribe(channel)

    async def run() -> None:
        pubsub: Any = first
        while True:
            try:
                if pubsub is None:
                    pubsub = client.pubsub(ignore_subscribe_messages=True)
                    await pubsub.subscribe(channel)
                    if on_resubscribe is not None:
                        await on_resubscribe()
                async for message in pubsub.listen():
                    if message.get("type") == "message":
                        with contextlib.suppress(Exception):  # one bad envelope must not stop the rest
                            await handle(message["data"])
            except asyncio.CancelledError:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()
                raise
            except Exception:
                pass
            with contextlib.suppress(Exception):
                await pubsub.aclose()
            pubsub = None
            await asyncio.sleep(0.1)

    return asyncio.create_task(run())


async def publish_reply(redis_client: Any, channel: str, envelope: relay_pb2.RelayEnvelope) -> None:
    """Best effort: with Redis away the host's deadline turns the lost reply into a fault."""
    with contextlib.suppress(Exception):
        await redis_client.publish(channel, envelope.SerializeToString())


async def reply_to(
    target: ReplyTarget,
    agent_id: str,
    decision_id: int,
    action: match_pb2.Action | None,
    undeliverable: str,
    publish: Callable[[str, relay_pb2.RelayEnvelope], Coroutine[Any, Any, None]] | None,
) -> None:
    """Send the agent's ``action`` for ``decision_id`` (or, with None, why none comes) to a host:
    call a local host directly or publish a RelayEnvelope to its channel (awaited, so the reply
    cannot be lost with an unreferenced task)."""
    if callable(target):
        target(agent_id, decision_id, action, undeliverable)
    elif publish is not None:
        if action is not None:
            envelope = relay_pb2.RelayEnvelope(agent_id=agent_id, from_agent=action)
        else:
            envelope = relay_pb2.RelayEnvelope(agent_id=agent_id, undeliverable=undeliverable, decision_id=decision_id)
        await publish(target, envelope)
