"""Class 8 continued: tournament exports are streams, each held open in the matchmaker (with the
piece it is writing) for as long as its reader does not read. One caller could open as many as its
rate limit let it, and keep them: 100 unread exports of a 26 MB export held 33 MB of the matchmaker
for as long as the caller liked, at 100 new ones a second. Now a caller holds at most
MAX_EXPORTS_PER_CALLER at once."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator

import grpc
import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.ladder.redis_store import RedisStore
from arena.play.specs import SeatSpec
from arena.proto.ohell.v1 import matchmaker_pb2_grpc
from arena.proto.ohell.v1 import tournament_pb2 as tpb
from arena.rpc.auth import auth_metadata
from arena.tournament import jobs
from arena.tournament.model import Tournament
from arena.tournament.store import TournamentStore
from services.matchmaker.tournaments import EXPORT_CHUNK, MAX_EXPORTS_PER_CALLER

from .conftest import HOST_TOKEN, Service

pytestmark = pytest.mark.slow  # starts a matchmaker and streams 24 MB exports

JSON = tpb.ExportTournamentRequest(tournament_id="big", format=tpb.EXPORT_FORMAT_JSON)


def finished_tournament(store: TournamentStore) -> None:
    """A finished tournament whose JSON export is 24 MB, as one of 10,000 deal sets is: more than
    the transport takes in before its reader reads, so an unread export stays open."""
    sent: list[str] = []
    entrants = tuple(SeatSpec.builtin("random", f"r{n}") for n in range(3))
    tourney = Tournament("big", entrants, seats=3, deals=1, overrides={"hand_sizes": [1]})
    jobs.start(store, tourney, lambda t, table, seats: sent.append(table))
    while sent:
        jobs.run_table(store, "big", sent.pop(0), lambda t, table, seats: sent.append(table), lease_s=5.0)
    assert store.progress("big").state == "finished"
    padding = json.dumps({"padding": "x" * 1_000_000})
    store.client.hset(store.keys.tourney_records("big"), mapping={f"z{n:02}": padding for n in range(24)})


def opened(
    stub: matchmaker_pb2_grpc.MatchmakerServiceStub, metadata: object = None
) -> Iterator[tpb.ExportTournamentResponse]:
    """An export whose first piece has come (so the matchmaker holds it open), its rest unread."""
    call = stub.ExportTournament(JSON, metadata=metadata, timeout=60)
    first = next(call)
    assert first.finished and len(first.data) >= EXPORT_CHUNK
    return call


def test_one_caller_holds_a_few_exports_at_once(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis
) -> None:
    client = redis.Redis.from_url(redis_server.url)
    finished_tournament(TournamentStore(client))
    _, token = RedisStore(client).register_agent("exporter", "connected")
    matchmaker = start_service("services.matchmaker")
    with matchmaker.channel() as channel:
        stub = matchmaker_pb2_grpc.MatchmakerServiceStub(channel)
        held = [opened(stub) for _ in range(MAX_EXPORTS_PER_CALLER)]
        with pytest.raises(grpc.RpcError) as refused:
            next(stub.ExportTournament(JSON, timeout=60))
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, refused.value.details()
        assert f"{MAX_EXPORTS_PER_CALLER} exports" in str(refused.value.details())
        agent = auth_metadata(token)  # another caller: a share of its own
        held += [opened(stub, agent) for _ in range(MAX_EXPORTS_PER_CALLER)]
        held.append(opened(stub, auth_metadata(HOST_TOKEN)))  # the host is not held to it
        held[0].cancel()  # type: ignore[attr-defined]
        deadline = time.monotonic() + 20
        while True:  # the matchmaker notices the cancellation and frees the share
            try:
                held.append(opened(stub))
                break
            except grpc.RpcError as error:
                assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and time.monotonic() < deadline
        for call in held:
            call.cancel()  # type: ignore[attr-defined]
    client.close()
