"""The matchmaker's readers of a tournament whose standings are being computed for the first time
wait for that one computation without holding a thread: each waited in ``asyncio.to_thread``, and
six of them (the default pool's threads on 2 cores) stalled every other RPC's store call behind
them. An in-process matchmaker on a real Redis, its default pool made small, and the cache itself;
the computation is held until the test lets it end."""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys
from arena.ladder.redis_store import RedisStore
from arena.play.specs import SeatSpec
from arena.proto.ohell.v1 import matchmaker_pb2 as pb
from arena.proto.ohell.v1 import matchmaker_pb2_grpc
from arena.proto.ohell.v1 import tournament_pb2 as tpb
from arena.rpc.server import Service, create_server, stop_server
from arena.tournament import jobs, operations
from arena.tournament.model import Tournament, TournamentError
from arena.tournament.standings import Standing
from arena.tournament.store import TournamentStore
from services.matchmaker.servicer import MatchmakerServicer

POOL = 4  # the matchmaker's default thread pool: one computes, the readers must leave the rest free
READERS = 8
DEADLINE_S = 30.0


class CountingCache(operations.StandingsCache):
    """Counts the reads that reached the cache (a reader held in a thread never gets this far)."""

    entered = 0
    told_to_wait = 0  # reads that raised StandingsPending

    def get(self, *args: Any, **kwargs: Any) -> list[Standing]:
        self.entered += 1
        try:
            return super().get(*args, **kwargs)
        except operations.StandingsPending:
            self.told_to_wait += 1
            raise


async def until(condition: Callable[[], bool], what: str) -> None:
    try:
        async with asyncio.timeout(DEADLINE_S):
            while not condition():
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"timed out after {DEADLINE_S} s waiting for {what}") from None


@dataclass
class Held:
    """A tournament "slow" of no game yet whose standings computation is held until ``release``."""

    tourneys: TournamentStore
    release: threading.Event
    computed: list[str]  # the tournaments whose standings were computed


@pytest.fixture
def held(shared_redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch) -> Iterator[Held]:
    client = redis.Redis.from_url(shared_redis_server.url)
    tourneys = TournamentStore(client, Keys(f"wait{secrets.token_hex(4)}:"))
    entrants = tuple(SeatSpec.builtin(bot, f"{bot}-{n}") for n, bot in enumerate(("heuristic", "random", "random")))
    jobs.start(tourneys, Tournament("slow", entrants, deals=1), nowhere)
    state = Held(tourneys, threading.Event(), [])
    compute = operations.current_standings

    def holding(store: TournamentStore, tourney_id: str, replicates: int = 100) -> list[Standing]:
        state.computed.append(tourney_id)
        state.release.wait(DEADLINE_S * 2)
        return compute(store, tourney_id, replicates)

    monkeypatch.setattr(operations, "current_standings", holding)
    try:
        yield state
    finally:
        state.release.set()
        client.close()


def nowhere(tourney_id: str, table: str, seats: Sequence[SeatSpec]) -> None:
    """The tables are not played: the standings of no game are enough."""


@asynccontextmanager
async def matchmaker(held: Held) -> AsyncIterator[tuple[matchmaker_pb2_grpc.MatchmakerServiceStub, CountingCache]]:
    """An in-process matchmaker of ``held``'s tournaments (a stub to it, its cache); ``held`` is
    released on leaving."""
    tourneys = held.tourneys
    servicer = MatchmakerServicer(
        RedisStore(tourneys.client, tourneys.keys), tourneys=tourneys, tourney_dispatch=nowhere
    )
    cache = servicer.standings_cache = CountingCache()
    name = pb.DESCRIPTOR.services_by_name["MatchmakerService"].full_name

    def register(server: grpc.aio.Server) -> None:
        matchmaker_pb2_grpc.add_MatchmakerServiceServicer_to_server(servicer, server)

    served = await create_server("127.0.0.1:0", [Service(name, register)])
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{served.port}") as channel:
            yield matchmaker_pb2_grpc.MatchmakerServiceStub(channel), cache
    finally:
        held.release.set()
        await stop_server(served, 0)


def test_readers_waiting_for_the_first_standings_hold_no_thread(held: Held) -> None:
    release, computed = held.release, held.computed

    async def run() -> None:
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(POOL))
        async with matchmaker(held) as (stub, cache):
            request = tpb.GetTournamentRequest(tournament_id="slow")
            readers = [asyncio.ensure_future(stub.GetTournament(request)) for _ in range(READERS)]
            await until(lambda: cache.entered >= READERS, f"{READERS} readers at the cache")
            assert computed == ["slow"] and not release.is_set()
            listed = await stub.ListLadders(pb.ListLaddersRequest(), timeout=DEADLINE_S)  # a thread to run in
            assert list(listed.ladders) == [] and not release.is_set()
            release.set()
            replies = await asyncio.wait_for(asyncio.gather(*readers), DEADLINE_S)
            assert computed == ["slow"]  # one computation, for all of them
            assert all(reply.tournament.tournament_id == "slow" and not reply.standings for reply in replies)

    asyncio.run(run())


def test_a_reader_that_stops_waiting_leaves_the_computation_to_the_others(held: Held) -> None:
    """An RPC cancelled while it awaits the computation (``asyncio.wrap_future``) cancels the future
    it awaits: that must not end the wait of the other readers, nor fail the computing one."""
    cache = operations.StandingsCache()
    progress = held.tourneys.progress("slow")
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(cache.get, held.tourneys, "slow", 100, progress)
        deadline = time.monotonic() + DEADLINE_S
        while not held.computed:
            assert time.monotonic() < deadline, "the computation did not start"
            time.sleep(0.02)
        with pytest.raises(operations.StandingsPending) as pending:
            cache.get(held.tourneys, "slow", 100, progress, block=False)
        assert not pending.value.done.cancel()
        held.release.set()
        assert first.result(timeout=DEADLINE_S) == [] and pending.value.done.result(timeout=DEADLINE_S) is None
    assert cache.get(held.tourneys, "slow", 100, progress, block=False) == [] and held.computed == ["slow"]


def test_a_computation_that_fails_fails_every_reader_waiting_for_it(
    held: Held, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The readers that waited for a computation that raised (Redis away midway) were each woken to
    compute again, one after another: as many failed bootstraps, each seconds of CPU, as there were
    readers. They are given its error now."""
    release, computed = held.release, held.computed

    def failing(store: TournamentStore, tourney_id: str, replicates: int = 100) -> list[Standing]:
        computed.append(tourney_id)
        release.wait(DEADLINE_S * 2)
        raise redis.ConnectionError("Redis went away midway")

    monkeypatch.setattr(operations, "current_standings", failing)
    cache = operations.StandingsCache()
    progress = held.tourneys.progress("slow")
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(cache.get, held.tourneys, "slow", 100, progress)
        deadline = time.monotonic() + DEADLINE_S
        while not computed:
            assert time.monotonic() < deadline, "the computation did not start"
            time.sleep(0.02)
        waiting = []
        for _ in range(3):
            with pytest.raises(operations.StandingsPending) as pending:
                cache.get(held.tourneys, "slow", 100, progress, block=False)
            waiting.append(pending.value.done)
        release.set()
        with pytest.raises(redis.ConnectionError):
            first.result(timeout=DEADLINE_S)
        for done in waiting:  # what they await in the event loop (asyncio.wrap_future) raises it
            assert isinstance(done.exception(timeout=DEADLINE_S), redis.ConnectionError)
            with pytest.raises(redis.ConnectionError):
                done.result()  # and so does a blocking reader's wait
    assert computed == ["slow"]  # one computation failed, for all of them
    with pytest.raises(redis.ConnectionError):  # a later read tries again
        cache.get(held.tourneys, "slow", 100, progress)
    assert computed == ["slow", "slow"]


def test_readers_over_grpc_are_refused_as_the_one_that_computed(held: Held, monkeypatch: pytest.MonkeyPatch) -> None:
    """A domain error of the computation reaches the readers that awaited it with its code and text,
    not as an unexpected error (UNKNOWN)."""
    release, computed = held.release, held.computed

    def refusing(store: TournamentStore, tourney_id: str, replicates: int = 100) -> list[Standing]:
        computed.append(tourney_id)
        release.wait(DEADLINE_S * 2)
        raise TournamentError("replicates: refused midway")

    monkeypatch.setattr(operations, "current_standings", refusing)

    async def run() -> list[BaseException | tpb.GetTournamentResponse]:
        async with matchmaker(held) as (stub, cache):
            request = tpb.GetTournamentRequest(tournament_id="slow")
            readers = [asyncio.ensure_future(stub.GetTournament(request)) for _ in range(3)]
            await until(lambda: bool(computed) and cache.told_to_wait >= 2, "2 readers waiting for the computing one")
            release.set()
            return await asyncio.wait_for(asyncio.gather(*readers, return_exceptions=True), DEADLINE_S)

    replies = asyncio.run(run())
    assert computed == ["slow"]
    for reply in replies:
        assert isinstance(reply, grpc.aio.AioRpcError), reply
        assert (reply.code(), reply.details()) == (grpc.StatusCode.INVALID_ARGUMENT, "replicates: refused midway")
