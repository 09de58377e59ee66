"""ChallengeService: an authenticated agent (or the host) starts an ad-hoc match and gets its record.

Who may sit where: an agent may seat built-in bots, itself, and connected agents that opted in
(their gateway stream carries ``ohell-challenges: open``); only the host may seat other agents or
dial an endpoint address. A caller-chosen seed is allowed only when every remote seat is the
caller's own (or for the host): otherwise the seed is secret until the record is returned.
Deadlines have a floor (``MIN_DECISION_MS``) and, but for the host's challenges, ceilings
(``MAX_DECISION_MS``, ``MAX_TIME_BANK_MS``), schedules a ceiling (``MAX_MATCH_HANDS``), and each
caller plays at most ``MAX_CHALLENGES_PER_CALLER`` challenges at once, on all engine replicas
together (``Slots``). Built-in bots decide on a
small thread pool, never on the service's event loop.

Caller-chosen match ids are 1-64 of letters, digits, '_', '.', '-' and never have the shape of a
ladder match id (``<ladder>-<n>``), so a challenge can never write into a ladder match's keys.
Match ids in use are remembered so a retry with the same id is ALREADY_EXISTS: in Redis
(``Keys.challenge_id``, SET NX with the events' TTL, shared by every engine service) and,
without Redis, in a bounded in-process list of the most recent ids (``RecentIds``).
"""

from __future__ import annotations

import contextlib
import re
import secrets
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import grpc

from arena.keys import MATCH_EVENTS_TTL_S, Keys
from arena.play.host import check_seats, host_match, local_events
from arena.play.relay import local_gateway_holding
from arena.play.specs import SeatSpec, SeatSpecError, TimeControl, check_endpoint
from arena.proto.ohell.v1 import challenge_pb2, challenge_pb2_grpc, match_pb2
from arena.rpc.auth import TokenStore, authenticate, bearer_token, is_host
from arena.rpc.ratelimit import caller_of
from arena.wire import record_to_proto, rules_for_table, within
from ohell.errors import OhHellError
from ohell.schedule import hand_sizes
from services.engine.slots import Slots

RECENT_IDS = 10_000  # without Redis: how many recent match ids are refused for reuse
MIN_DECISION_MS = 100  # a challenge cannot set a deadline an agent cannot meet
# Nor one that holds the seated agents for hours (the host is not held to these: docs/operations.md).
MAX_DECISION_MS = 60_000
MAX_TIME_BANK_MS = 600_000
MAX_MATCH_HANDS = 100
MAX_CHALLENGES_PER_CALLER = 2
# The hosts of challenges have a Redis pool of their own: each one with a connected seat listens on
# a connection for its whole match (an agent's may last hours), and on the engine's one pool of 100,
# 110 of them failed the token lookups of every other call (an agent's Connect: UNAVAILABLE).
HOST_CONNECTIONS = 512
# Challenges in play on one engine, whoever asked (the host too): past the pool a host found no
# connection to listen on, and the challenge failed 'cannot reach its Redis (MaxConnectionsError):
# retry'. Half the pool: each match listens on one, and its events and relayed decisions take more
# for a moment.
MAX_HOSTED = HOST_CONNECTIONS // 2
# Of those, the challenges of agents that registered themselves (open self-registration): a stranger
# registers agents at will (5 an address, then 1 a minute), each holding 2 challenges for hours (its own
# seat answering at the last moment), and 128 of them held every challenge of the engine, the host's too.
MAX_SELF_REGISTERED_HOSTED = MAX_HOSTED // 4
BOT_THREADS = 2  # built-in bots of every challenge decide here, off the event loop
CHALLENGE_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
LADDER_MATCH_ID = re.compile(r"^[a-z0-9][a-z0-9_.]{0,63}-[0-9]+$")  # arena.ladder's "<ladder>-<n>"
MAX_SEAT_NAME = 64  # as an agent's name
MAX_SEAT_VALUE = 253  # a bot's name, an agent id, or host:port


def check_match_id(match_id: str) -> None:
    if not CHALLENGE_ID.fullmatch(match_id):
        raise SeatSpecError(f"match_id: {match_id[:80]!r} must be 1-64 of letters, digits, '_', '.', '-'")
    if LADDER_MATCH_ID.fullmatch(match_id):
        raise SeatSpecError(f"match_id: {match_id!r} has the shape of a ladder match id ('<ladder>-<n>'): pick another")


def check_ceilings(time_control: match_pb2.TimeControl) -> None:
    for field, most in (("decision_ms", MAX_DECISION_MS), ("time_bank_ms", MAX_TIME_BANK_MS)):
        value = getattr(time_control, field)
        if value > most:
            raise SeatSpecError(f"time_control.{field}: {value} is over {most} (the host's challenges may set more)")


def seat_from_proto(seat: challenge_pb2.ChallengeSeat, index: int) -> SeatSpec:
    player = seat.WhichOneof("player")
    field = f"seats[{index}]"
    if player is None:
        raise SeatSpecError(f"{field}: sets none of builtin, agent_id, endpoint")
    value = getattr(seat, player)
    if not value:
        raise SeatSpecError(f"{field}.{player}: empty")
    # unbounded, a name went into every event and the record (a record too large to return)
    for name, text, most in (("name", seat.name, MAX_SEAT_NAME), (player, value, MAX_SEAT_VALUE)):
        if len(text) > most:
            raise SeatSpecError(f"{field}.{name}: {len(text)} characters, at most {most}")
    # the name reaches every seated agent (the SDK logs it in its author's terminal) and spectator
    if not seat.name.isprintable():
        raise SeatSpecError(f"{field}.name: must be printable text (no control character, line break or bidi override)")
    if player == "endpoint":
        check_endpoint(value, f"{field}.endpoint")
    try:
        if player == "builtin":
            return SeatSpec.builtin(value, seat.name or None)
        if player == "agent_id":
            return SeatSpec.connected(value, seat.name or None)
        return SeatSpec.endpoint(value, seat.name or None)
    except SeatSpecError as error:
        raise SeatSpecError(within(field, str(error))) from None


class RecentIds:
    """The ``capacity`` most recently added ids; the oldest is forgotten first."""

    def __init__(self, capacity: int = RECENT_IDS) -> None:
        self.capacity = capacity
        self.ids: OrderedDict[str, None] = OrderedDict()

    def __contains__(self, item: str) -> bool:
        return item in self.ids

    def __len__(self) -> int:
        return len(self.ids)

    def add(self, item: str) -> bool:
        """Remember ``item``; False when it was already there."""
        if item in self.ids:
            return False
        self.ids[item] = None
        if len(self.ids) > self.capacity:
            self.ids.popitem(last=False)
        return True


class ChallengeApi(challenge_pb2_grpc.ChallengeServiceServicer):
    def __init__(
        self,
        tokens: TokenStore,
        redis_client: Any | None,
        default_time: TimeControl,
        keys: Keys | None = None,
        host_token: str | None = None,
        host_redis: Any | None = None,
    ) -> None:
        self.keys = keys or Keys()
        self.tokens = tokens
        self.redis = redis_client
        self.host_redis = host_redis or redis_client  # the matches' hosts' (HOST_CONNECTIONS)
        self.default_time = default_time
        self.host_token = host_token
        self.match_ids = RecentIds()
        self.bots = ThreadPoolExecutor(BOT_THREADS, thread_name_prefix="challenge-bots")
        self.playing = Slots("challenge", MAX_CHALLENGES_PER_CALLER, redis_client, self.keys)
        self.hosted = 0  # challenges in play on this engine (MAX_HOSTED)
        self.self_hosted = 0  # those of them that self-registered agents asked for (MAX_SELF_REGISTERED_HOSTED)

    @contextlib.asynccontextmanager
    async def _hosting(self, context: grpc.aio.ServicerContext, self_registered: bool) -> AsyncIterator[None]:
        """One of the MAX_HOSTED challenges in play on this engine (for a self-registered caller, one
        of the MAX_SELF_REGISTERED_HOSTED among them); RESOURCE_EXHAUSTED past them."""
        if self.hosted >= MAX_HOSTED:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{MAX_HOSTED} challenges are in play on this engine: try again once one has ended",
            )
        if self_registered and self.self_hosted >= MAX_SELF_REGISTERED_HOSTED:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{MAX_SELF_REGISTERED_HOSTED} challenges of self-registered agents are in play on this engine:"
                " try again once one has ended",
            )
        self.hosted += 1
        self.self_hosted += self_registered
        try:
            yield
        finally:
            self.hosted -= 1
            self.self_hosted -= self_registered

    async def _self_registered(self, agent_id: str | None) -> bool:
        """Whether the calling agent registered itself (without Redis no agent can)."""
        if agent_id is None or self.redis is None:
            return False
        return await self.redis.hget(self.keys.agent(agent_id), "self_registered") in (b"1", "1")

    async def _connected(self, agent_id: str) -> bool:
        if local_gateway_holding(agent_id) is not None:
            return True
        return self.redis is not None and bool(await self.redis.exists(self.keys.agent_presence(agent_id)))

    async def _revoked(self, agent_id: str) -> bool:
        """Whether the host revoked the agent's token (its gateway stream ends within a few seconds;
        it is seated nowhere from the revocation on)."""
        return self.redis is not None and await self.redis.hget(self.keys.agent(agent_id), "token_sha") in (b"", "")

    async def _challengeable(self, agent_id: str) -> bool:
        gateway = local_gateway_holding(agent_id)
        if gateway is not None and gateway.accepts_challenges(agent_id):
            return True
        return self.redis is not None and bool(await self.redis.exists(self.keys.challengeable(agent_id)))

    async def _check_access(
        self, context: grpc.aio.ServicerContext, caller: str | None, seats: list[SeatSpec], seed: int
    ) -> None:
        """PERMISSION_DENIED for a seat the caller may not fill or a seed it may not choose."""
        if caller is None:  # the host
            return
        for index, seat in enumerate(seats):
            if seat.kind == "endpoint":
                await context.abort(
                    grpc.StatusCode.PERMISSION_DENIED,
                    f"seats[{index}].endpoint: only the host may dial an endpoint (register it as an agent)",
                )
            if seat.kind == "connected" and seat.agent_id != caller and not await self._challengeable(seat.agent_id):
                await context.abort(
                    grpc.StatusCode.PERMISSION_DENIED,
                    f"seats[{index}].agent_id: {seat.agent_id!r} is not yours and does not accept challenges",
                )
        if seed and any(seat.kind == "connected" and seat.agent_id != caller for seat in seats):
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED, "seed: only a challenge among your own agents and bots may set it"
            )

    async def _reserve(self, match_id: str) -> bool:
        """Claim ``match_id`` for a new match; False when a match has (or had) it."""
        if match_id in self.match_ids or match_id in local_events().events:
            return False
        if self.redis is not None:
            if await self.redis.exists(self.keys.match_events(match_id)):
                return False
            claimed = await self.redis.set(self.keys.challenge_id(match_id), b"1", nx=True, ex=MATCH_EVENTS_TTL_S)
            if not claimed:
                return False
        return self.match_ids.add(match_id)

    def _parse(self, request: challenge_pb2.ChallengeRequest, host: bool) -> tuple[Any, list[SeatSpec], TimeControl]:
        seats = [seat_from_proto(seat, index) for index, seat in enumerate(request.seats)]
        check_seats(seats)
        rules = rules_for_table(request.rules, len(seats))  # a schedule the table cannot deal is refused
        if len(hand_sizes(rules, len(seats))) > MAX_MATCH_HANDS:
            raise SeatSpecError(f"rules: a schedule of more than {MAX_MATCH_HANDS} hands")
        time_control = TimeControl.from_proto(request.time_control, self.default_time)
        if time_control.decision_ms < MIN_DECISION_MS:
            raise SeatSpecError(f"time_control.decision_ms: {time_control.decision_ms} is under {MIN_DECISION_MS}")
        if not host:  # the caller's values: the service's own defaults are the operator's choice
            check_ceilings(request.time_control)
        if request.match_id:
            check_match_id(request.match_id)
        return rules, seats, time_control

    async def Challenge(
        self, request: challenge_pb2.ChallengeRequest, context: grpc.aio.ServicerContext
    ) -> challenge_pb2.ChallengeResponse:
        host = is_host(bearer_token(context.invocation_metadata()), self.host_token)
        caller = None if host else await authenticate(context, self.tokens)
        try:  # every check comes before the match id is claimed, so a corrected retry may reuse it
            rules, seats, time_control = self._parse(request, host)
        except OhHellError as error:  # ConversionError, SeatSpecError, or any engine refusal
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        await self._check_access(context, caller, seats, request.seed)
        for index, seat in enumerate(seats):
            if seat.kind == "connected" and not await self._connected(seat.agent_id):
                await context.abort(
                    grpc.StatusCode.FAILED_PRECONDITION, f"seats[{index}].agent_id: {seat.agent_id!r} is not connected"
                )
            if seat.kind == "connected" and await self._revoked(seat.agent_id):
                await context.abort(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    f"seats[{index}].agent_id: the token of {seat.agent_id!r} was revoked",
                )
        lease = None if host else await self.playing.claim(caller_of(context))
        if lease is None and not host:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{MAX_CHALLENGES_PER_CALLER} of your challenges are in play: wait for one to end",
            )
        match_id = request.match_id or f"challenge.{uuid.uuid4().hex[:16]}"  # no '-': never a ladder id
        try:
            # before the id is claimed: a refused call may retry with it
            async with self._hosting(context, await self._self_registered(caller)):
                if not await self._reserve(match_id):
                    await context.abort(grpc.StatusCode.ALREADY_EXISTS, f"match_id: {match_id!r} is already in use")
                seed = request.seed or secrets.randbits(63)
                record = await host_match(
                    match_id,
                    rules,
                    seats,
                    seed,
                    time_control=time_control,
                    redis_client=self.host_redis,
                    keys=self.keys,
                    bot_executor=self.bots,
                )
        except OhHellError as error:  # every argument was checked above: this is the platform's fault
            await context.abort(grpc.StatusCode.INTERNAL, f"match {match_id!r} failed: {error}")
        finally:
            if lease is not None:
                await lease.release()
        return challenge_pb2.ChallengeResponse(match_id=match_id, record=record_to_proto(record, rules))
