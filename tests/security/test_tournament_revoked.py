"""A connected tournament entrant whose token the host revokes while its table is in play, on a
real engine (its gateway) and redis-server: the game in play ends as it is, and the agent is seated
in no game after it."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from arena.embedded_redis import EmbeddedRedis
from arena.keys import token_hash
from arena.ladder.redis_store import RedisStore
from arena.proto.ohell.v1 import match_pb2
from arena.tournament import jobs
from arena.tournament.standings import duplicate_observations, standings

from .agents import Agent, first_legal
from .conftest import Service
from .test_tournament_games import TOKEN, Queue, one_table, online

pytestmark = pytest.mark.slow  # an engine process and three games


def test_a_connected_entrant_revoked_mid_table_is_seated_no_further(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Revoked once the first of its table's three games is recorded. The gateway ends its stream
    within about 2 s, and the table's next game began at once: the agent was asked to play it still
    (and, its stream gone, was charged DISCONNECTED faults in the games after). The stand-in plays its
    seat now, under its name, and those games count as its forfeits."""
    engine, client, store = one_table(start_service, redis_server, monkeypatch, "rvk", "a1")
    client.hset(store.keys.agent("a1"), mapping={"agent_id": "a1", "token_sha": token_hash(TOKEN)})  # as registered
    asked: set[str] = set()

    async def playing(agent: Agent, request: match_pb2.DecisionRequest) -> match_pb2.Action:
        asked.add(request.match_id)
        return first_legal(request)

    record_game = store.record_game

    def revoking_after_the_first(*args: object) -> bool:
        recorded = record_game(*args)  # type: ignore[arg-type]
        RedisStore(client, store.keys).set_token("a1", rotate=False)
        return recorded

    monkeypatch.setattr(store, "record_game", revoking_after_the_first)
    queue = Queue(store)
    queue.sent.append(("rvk", "r1t0"))

    async def run() -> None:
        agent = await online(engine, client, "a1", playing)
        await asyncio.to_thread(queue.drain)
        await agent.stop()

    asyncio.run(run())
    assert asked == {"rvk/r1t0/d0/r0"}
    seats = {game: next(s for s in rec["seats"] if s["name"] == "steady") for game, rec in store.records("rvk").items()}
    assert seats.pop("r1t0/d0/r0")["kind"] == "connected"
    assert list(seats.values()) == [{"name": "steady", "kind": "builtin", "bot": jobs.STAND_IN}] * 2
    assert not any(rec["faults"] for rec in store.records("rvk").values())
    rows = {row.entrant: row for row in standings(duplicate_observations(store.game_results("rvk")), 10)}
    assert (rows["steady"].games, rows["steady"].forfeits) == (3, 2)
    client.close()
