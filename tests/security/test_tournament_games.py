"""A connected agent entered in two tournaments that run at once: both tournaments' first table is
r1t0, and a gateway (and an SDK) tells an agent's games apart by match id, so the games must not
share one. With the game ids alone as match ids, one tournament's decision replaced the other's
pending one at the gateway: the agent's answer went to the wrong table and the other timed out."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys, register_agent_token
from arena.play.specs import SeatSpec
from arena.proto.ohell.v1 import match_pb2
from arena.tournament import jobs
from arena.tournament.model import Tournament
from arena.tournament.store import TournamentStore

from .agents import Agent, first_legal
from .conftest import Service

pytestmark = pytest.mark.slow  # an engine process and twelve games
TOKEN = "twin-token-0123456789"


class Queue:
    """Celery's stand-in: runs each dispatched table in turn."""

    def __init__(self, store: TournamentStore) -> None:
        self.store, self.sent = store, list[tuple[str, str]]()

    def __call__(self, tourney_id: str, table: str, seats: object) -> None:
        self.sent.append((tourney_id, table))

    def drain(self) -> None:
        while self.sent:
            jobs.run_table(self.store, *self.sent.pop(0), self, lease_s=5.0)


def test_one_agent_in_two_running_tournaments_gets_each_game_apart(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", redis_server.url)  # the match host finds the agent's gateway there
    engine = start_service("services.engine")
    client = redis.Redis.from_url(redis_server.url)
    register_agent_token(client, "a1", TOKEN)
    client.hset(Keys().agent("a1"), mapping={"name": "twin", "kind": "connected"})
    store = TournamentStore(client, Keys())
    entrants = (SeatSpec.builtin("heuristic", "h"), SeatSpec.builtin("random", "r"), SeatSpec.connected("a1", "twin"))
    queues = [Queue(store), Queue(store)]
    for name, queue in zip(("twin-a", "twin-b"), queues, strict=True):
        jobs.start(store, Tournament(name, entrants, seats=3, deals=2, overrides={"hand_sizes": [3, 2, 1]}), queue)

    async def thinking(agent: Agent, request: match_pb2.DecisionRequest) -> match_pb2.Action:
        await asyncio.sleep(0.03)  # an agent that thinks a little: both tables wait on it at once
        return first_legal(request)

    async def run() -> None:
        agent = await Agent(engine.address, TOKEN, thinking).start()
        deadline = time.monotonic() + 10
        while not client.exists(Keys().agent_presence("a1")) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await asyncio.gather(*(asyncio.to_thread(queue.drain) for queue in queues))
        await agent.stop()
        assert not agent.notices, agent.notices

    asyncio.run(run())
    for name in ("twin-a", "twin-b"):
        records = store.records(name)
        assert len(records) == 6 and not [f for record in records.values() for f in record["faults"]], name
        assert {record["match_id"] for record in records.values()} == {f"{name}/{game}" for game in records}
