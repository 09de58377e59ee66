"""ChallengeService: an authenticated agent starts an ad-hoc match and gets its record.

Match ids in use are remembered so a retry with the same id is ALREADY_EXISTS: in Redis
(``Keys.challenge_id``, SET NX with the events' TTL, shared by every engine service) and,
without Redis, in a bounded in-process list of the most recent ids (``RecentIds``).
"""

from __future__ import annotations

import secrets
import uuid
from collections import OrderedDict
from typing import Any

import grpc

from arena.keys import MATCH_EVENTS_TTL_S, Keys
from arena.play.host import check_seats, host_match, local_events
from arena.play.relay import local_gateway_holding
from arena.play.specs import SeatSpec, SeatSpecError, TimeControl
from arena.proto.ohell.v1 import challenge_pb2, challenge_pb2_grpc
from arena.rpc.auth import TokenStore, authenticate
from arena.wire import record_to_proto, rules_for_table
from ohell.errors import OhHellError

RECENT_IDS = 10_000  # without Redis: how many recent match ids are refused for reuse


def seat_from_proto(seat: challenge_pb2.ChallengeSeat, index: int) -> SeatSpec:
    player = seat.WhichOneof("player")
    field = f"seats[{index}]"
    if player is None:
        raise SeatSpecError(f"{field} sets none of builtin, agent_id, endpoint")
    value = getattr(seat, player)
    if not value:
        raise SeatSpecError(f"{field}.{player} is empty")
    try:
        if player == "builtin":
            return SeatSpec.builtin(value, seat.name or None)
        if player == "agent_id":
            return SeatSpec.connected(value, seat.name or None)
        return SeatSpec.endpoint(value, seat.name or None)
    except SeatSpecError as error:
        raise SeatSpecError(f"{field}: {error}") from None


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
        self, tokens: TokenStore, redis_client: Any | None, default_time: TimeControl, keys: Keys | None = None
    ) -> None:
        self.keys = keys or Keys()
        self.tokens = tokens
        self.redis = redis_client
        self.default_time = default_time
        self.match_ids = RecentIds()

    async def _connected(self, agent_id: str) -> bool:
        if local_gateway_holding(agent_id) is not None:
            return True
        return self.redis is not None and bool(await self.redis.exists(self.keys.agent_presence(agent_id)))

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

    def _parse(self, request: challenge_pb2.ChallengeRequest) -> tuple[Any, list[SeatSpec], TimeControl]:
        seats = [seat_from_proto(seat, index) for index, seat in enumerate(request.seats)]
        check_seats(seats)
        rules = rules_for_table(request.rules, len(seats))  # a schedule the table cannot deal is refused
        return rules, seats, TimeControl.from_proto(request.time_control, self.default_time)

    async def Challenge(
        self, request: challenge_pb2.ChallengeRequest, context: grpc.aio.ServicerContext
    ) -> challenge_pb2.ChallengeResponse:
        await authenticate(context, self.tokens)
        try:  # every check comes before the match id is claimed, so a corrected retry may reuse it
            rules, seats, time_control = self._parse(request)
        except OhHellError as error:  # ConversionError, SeatSpecError, or any engine refusal
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
        for index, seat in enumerate(seats):
            if seat.kind == "connected" and not await self._connected(seat.agent_id):
                await context.abort(
                    grpc.StatusCode.FAILED_PRECONDITION, f"seats[{index}].agent_id={seat.agent_id!r} is not connected"
                )
        match_id = request.match_id or f"challenge-{uuid.uuid4().hex[:12]}"
        if not await self._reserve(match_id):
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, f"match_id={match_id!r} is already in use")
        seed = request.seed or secrets.randbits(63)
        try:
            record = await host_match(
                match_id, rules, seats, seed, time_control=time_control, redis_client=self.redis, keys=self.keys
            )
        except OhHellError as error:  # every argument was checked above: this is the platform's fault
            await context.abort(grpc.StatusCode.INTERNAL, f"match {match_id!r} failed: {error}")
        return challenge_pb2.ChallengeResponse(match_id=match_id, record=record_to_proto(record, rules))
