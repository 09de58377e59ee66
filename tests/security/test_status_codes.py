"""Class 6: every bad input answers INVALID_ARGUMENT naming the field (never UNKNOWN); Spectate
waits longer than a Redis read may block; spectators are bounded per caller and share reads."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

import grpc
import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys, register_agent_token
from arena.proto.ohell.v1 import (
    matchmaker_pb2,
    matchmaker_pb2_grpc,
    rules_pb2,
    rules_service_pb2,
    rules_service_pb2_grpc,
    spectate_pb2,
    spectate_pb2_grpc,
)
from arena.rpc.auth import auth_metadata

from .conftest import HOST_TOKEN, Service
from .feeds import start_matches

pytestmark = pytest.mark.slow  # waits on purpose (a 6 s spectate) and starts service processes


def invalid(call: Callable[..., object], request: object, metadata: object = None) -> str:
    with pytest.raises(grpc.RpcError) as error:
        call(request, metadata=metadata, timeout=20)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT, error.value.details()
    return str(error.value.details())


def test_engine_bad_inputs_are_invalid_argument(start_service: Callable[..., Service]) -> None:
    with start_service("services.engine").channel() as channel:
        garbage = channel.unary_unary("/ohell.v1.RulesService/ScoreHand")  # raw bytes, no serializer
        assert "ScoreHandRequest" in invalid(garbage, b"\xff\xff\xff\xff garbage")
        rules = rules_service_pb2_grpc.RulesServiceStub(channel)
        huge = rules_service_pb2.ScoreHandRequest(
            scoring=rules_pb2.SCORING_ANDERSON, bid=3, tricks=3, hand_size=3, hand_number=2**32 - 1
        )
        assert "hand_number" in invalid(rules.ScoreHand, huge)
        long = rules_service_pb2.ResolveRulesRequest(rules=rules_pb2.Rules(hand_sizes=[1] * 100_000), num_players=4)
        assert "hand_sizes" in invalid(rules.ResolveRules, long)
        spectate = spectate_pb2_grpc.SpectateServiceStub(channel)
        assert "wait_ms" in invalid(
            lambda r, **kw: list(spectate.Spectate(r, **kw)), spectate_pb2.SpectateRequest(match_id="m", wait_ms=10**9)
        )


def test_matchmaker_bad_inputs_are_invalid_argument(start_service: Callable[..., Service]) -> None:
    with start_service("services.matchmaker").channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        host = auth_metadata(HOST_TOKEN)
        stub.CreateLadder(matchmaker_pb2.CreateLadderRequest(ladder=matchmaker_pb2.Ladder(name="l")), metadata=host)
        agent = stub.RegisterAgent(
            matchmaker_pb2.RegisterAgentRequest(name="a", kind=matchmaker_pb2.AGENT_KIND_CONNECTED), metadata=host
        )
        for lease in (1e300, math.inf, -math.inf, math.nan, -5.0):
            request = matchmaker_pb2.JoinQueueRequest(ladder="l", agent_id=agent.agent.agent_id, lease_seconds=lease)
            assert "lease_seconds" in invalid(stub.JoinQueue, request, auth_metadata(agent.token))
        for token in ("²", "9" * 40, "-1", "1e3", " 1", "x"):
            assert "page_token" in invalid(
                stub.GetLeaderboard, matchmaker_pb2.GetLeaderboardRequest(ladder="l", page_token=token)
            )
            assert "page_token" in invalid(
                stub.ListMatches, matchmaker_pb2.ListMatchesRequest(ladder="l", page_token=token)
            )
        for cursor in ("9" * 40 + ":main-1", "²:main-1", "1:" + "m" * 200):  # digits SQL cannot hold, or not ASCII
            assert "page_token" in invalid(
                stub.ListMatches, matchmaker_pb2.ListMatchesRequest(ladder="l", page_token=cursor)
            )
            history = matchmaker_pb2.GetRatingHistoryRequest(
                ladder="l", agent_id=agent.agent.agent_id, page_token=cursor
            )
            assert "page_token" in invalid(stub.GetRatingHistory, history)
        garbage = channel.unary_unary("/ohell.v1.MatchmakerService/GetLadder")
        assert "GetLadderRequest" in invalid(garbage, b"\x0a\xff\xff\xff\xff\x0f")


def test_long_spectate_waits_and_spectator_bounds(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    from services.engine.spectate import MAX_SPECTATES_PER_CALLER

    web_token = "the-web-apps-token-0123456789"
    engine = start_service("services.engine", OHELL_WEB_TOKEN=web_token)
    client = redis.Redis.from_url(redis_server.url)
    with engine.channel() as channel:
        stub = spectate_pb2_grpc.SpectateServiceStub(channel)
        # a wait longer than the Redis client's read timeout ends NOT_FOUND, not UNKNOWN
        with pytest.raises(grpc.RpcError) as missing:
            list(stub.Spectate(spectate_pb2.SpectateRequest(match_id="nobody", wait_ms=6000), timeout=20))
        assert missing.value.code() == grpc.StatusCode.NOT_FOUND
        # many spectators of one match (from several callers) share one reader: one blocked XREAD
        start_matches(redis_server.url, ["later"])
        streams = []
        tokens = [f"spectator-token-{n}" for n in range(3)]
        for number, token in enumerate(tokens):
            register_agent_token(client, f"watcher{number}", token)
        for token in tokens:
            for _ in range(MAX_SPECTATES_PER_CALLER):
                request = spectate_pb2.SpectateRequest(match_id="later", wait_ms=30_000)
                streams.append(stub.Spectate(request, metadata=auth_metadata(token), timeout=60))
        readers = [threading.Thread(target=_drain, args=(call,), daemon=True) for call in streams]
        for reader in readers:
            reader.start()
        _until(lambda: _blocked_reads(client) >= 1)  # the shared reader is waiting for the match's next event
        _until(lambda: _spectate_slots(client) == len(streams))  # every stream is open: each holds its slot
        assert _blocked_reads(client) == 1, f"{len(streams)} spectators hold {_blocked_reads(client)} XREADs"
        # one caller may not open more than its share
        with pytest.raises(grpc.RpcError) as too_many:
            extra = spectate_pb2.SpectateRequest(match_id="other", wait_ms=30_000)
            list(stub.Spectate(extra, metadata=auth_metadata(tokens[0]), timeout=10))
        assert too_many.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        # the host and the web app's token (the web app relays its visitors' live views, each
        # visitor held to 4 by the web app) are not held to one caller's share
        for token in (HOST_TOKEN, web_token):
            for _ in range(MAX_SPECTATES_PER_CALLER + 1):
                request = spectate_pb2.SpectateRequest(match_id="later", wait_ms=30_000)
                streams.append(stub.Spectate(request, metadata=auth_metadata(token), timeout=60))
        time.sleep(1.0)
        assert not any(call.done() for call in streams[-2 * MAX_SPECTATES_PER_CALLER - 2 :])  # none refused
        for call in streams:
            call.cancel()
        for reader in readers:
            reader.join(10)
    client.close()


def _blocked_reads(client: redis.Redis) -> int:
    """Redis connections whose last command is XREAD (a spectator's read of a match's events)."""
    return sum(1 for entry in client.client_list() if entry.get("cmd") == "xread")


def _spectate_slots(client: redis.Redis) -> int:
    """Spectate streams open, each holding a slot in Redis (``Keys.slots``) while it lasts."""
    return sum(client.zcard(key) for key in client.keys(Keys().slots("spectate", "*")))


def _drain(call: object) -> None:
    try:
        for _ in call:  # type: ignore[attr-defined]
            pass
    except grpc.RpcError:
        pass


def _until(condition: Callable[[], bool], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
