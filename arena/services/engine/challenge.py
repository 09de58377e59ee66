"""ChallengeService: an authenticated agent starts an ad-hoc match and gets its record."""

from __future__ import annotations

import secrets
import uuid
from typing import Any

import grpc

from arena.proto.ohell.v1 import challenge_pb2, challenge_pb2_grpc
from arena.services.common import keyspace
from arena.services.common.auth import TokenStore, authenticate
from arena.services.engine.convert import ConversionError, record_to_proto, rules_from_proto
from arena.services.engine.host import LOCAL_EVENTS, check_seats, host_match
from arena.services.engine.relay import LOCAL_GATEWAYS
from arena.services.engine.specs import SeatSpec, SeatSpecError, TimeControl


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


class ChallengeApi(challenge_pb2_grpc.ChallengeServiceServicer):
    def __init__(self, tokens: TokenStore, redis_client: Any | None, default_time: TimeControl) -> None:
        self.tokens = tokens
        self.redis = redis_client
        self.default_time = default_time
        self.match_ids: set[str] = set()

    async def _connected(self, agent_id: str) -> bool:
        if any(agent_id in gateway.connections for gateway in LOCAL_GATEWAYS):  # type: ignore[attr-defined]
            return True
        return self.redis is not None and bool(await self.redis.exists(keyspace.agent_presence(agent_id)))

    async def _match_exists(self, match_id: str) -> bool:
        if match_id in self.match_ids or match_id in LOCAL_EVENTS.events:
            return True
        return self.redis is not None and bool(await self.redis.exists(keyspace.match_events(match_id)))

    async def Challenge(self, request: challenge_pb2.ChallengeRequest, context: grpc.aio.ServicerContext):  # type: ignore[no-untyped-def]
        await authenticate(context, self.tokens)
        invalid = grpc.StatusCode.INVALID_ARGUMENT
        try:
            rules = rules_from_proto(request.rules)
            seats = [seat_from_proto(seat, index) for index, seat in enumerate(request.seats)]
            check_seats(seats)
            time_control = TimeControl.from_proto(request.time_control, self.default_time)
        except (ConversionError, SeatSpecError) as error:
            await context.abort(invalid, str(error))
        for index, seat in enumerate(seats):
            if seat.kind == "connected" and not await self._connected(seat.agent_id):
                await context.abort(grpc.StatusCode.FAILED_PRECONDITION,
                                    f"seats[{index}].agent_id={seat.agent_id!r} is not connected")
        match_id = request.match_id or f"challenge-{uuid.uuid4().hex[:12]}"
        if await self._match_exists(match_id):
            await context.abort(grpc.StatusCode.ALREADY_EXISTS, f"match_id={match_id!r} is already in use")
        self.match_ids.add(match_id)
        seed = request.seed or secrets.randbits(63)
        record = await host_match(match_id, rules, seats, seed, time_control=time_control, redis_client=self.redis)
        return challenge_pb2.ChallengeResponse(match_id=match_id, record=record_to_proto(record, rules))
