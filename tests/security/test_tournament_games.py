"""Tournament tables with a connected agent, on a real engine (its gateway) and redis-server.

A connected agent entered in two tournaments that run at once: both tournaments' first table is
r1t0, and a gateway (and an SDK) tells an agent's games apart by match id, so the games must not
share one. With the game ids alone as match ids, one tournament's decision replaced the other's
pending one at the gateway: the agent's answer went to the wrong table and the other timed out."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys, register_agent_token
from arena.play.specs import SeatSpec
from arena.proto.ohell.v1 import match_pb2
from arena.tournament import jobs
from arena.tournament.model import Tournament
from arena.tournament.standings import duplicate_observations, standings
from arena.tournament.store import TournamentStore

from .agents import Agent, Policy, first_legal
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


def entered(client: redis.Redis, agent_id: str, name: str) -> tuple[SeatSpec, ...]:
    """Register the connected agent ``agent_id`` (token TOKEN); a table of it and two built-in bots."""
    register_agent_token(client, agent_id, TOKEN)
    client.hset(Keys().agent(agent_id), mapping={"name": name, "kind": "connected"})
    return SeatSpec.builtin("heuristic", "h"), SeatSpec.builtin("random", "r"), SeatSpec.connected(agent_id, name)


async def online(engine: Service, client: redis.Redis, agent_id: str, policy: Policy) -> Agent:
    """The agent connected to the engine's gateway, once its presence is in Redis."""
    agent = await Agent(engine.address, TOKEN, policy).start()
    deadline = time.monotonic() + 10
    while not client.exists(Keys().agent_presence(agent_id)) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    return agent


class Counting:
    """A policy that answers the first legal action after ``think_s``, counting the decisions;
    ``first_hands``: (match id, the agent's cards) at the first bid of each game it is shown."""

    def __init__(self, think_s: float = 0.02) -> None:
        self.think_s, self.decisions = think_s, 0
        self.first_hands: list[tuple[str, list[tuple[int, int]]]] = []

    async def __call__(self, agent: Agent, request: match_pb2.DecisionRequest) -> match_pb2.Action:
        self.decisions += 1
        seen = request.observation
        if request.kind == match_pb2.DECISION_KIND_BID and seen.hand_number == 1:
            self.first_hands.append((request.match_id, sorted((card.suit, card.rank) for card in seen.hand)))
        await asyncio.sleep(self.think_s)
        return first_legal(request)

    async def reach(self, count: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while self.decisions < count and time.monotonic() < deadline:
            await asyncio.sleep(0.01)


def one_table(
    start_service: Callable[..., Service],
    redis_server: EmbeddedRedis,
    monkeypatch: pytest.MonkeyPatch,
    tourney_id: str,
    agent_id: str,
) -> tuple[Service, redis.Redis, TournamentStore]:
    """An engine, and tournament ``tourney_id`` of one table: the connected agent ``agent_id`` and two
    bots, one deal set of four hands of four cards (20 decisions of the agent per game)."""
    monkeypatch.setenv("REDIS_URL", redis_server.url)
    engine = start_service("services.engine")
    client = redis.Redis.from_url(redis_server.url)
    store = TournamentStore(client, Keys())
    entrants = entered(client, agent_id, "steady")
    jobs.start(
        store, Tournament(tourney_id, entrants, seats=3, deals=1, overrides={"hand_sizes": [4] * 4}), Queue(store)
    )
    return engine, client, store


def until_lease_lapses(store: TournamentStore, tourney_id: str, timeout_s: float = 30) -> None:
    """Until the table r1t0's lease is gone (its runner died or raised: it lapses, nothing renews it)."""
    lease = store.keys.tourney_lease(tourney_id, "r1t0")
    deadline = time.monotonic() + timeout_s
    while store.client.exists(lease):
        assert time.monotonic() < deadline, f"the lease of {tourney_id}/r1t0 never lapsed"
        time.sleep(0.05)


def assert_played_cleanly(store: TournamentStore, tourney_id: str, agent: Agent) -> None:
    records = store.records(tourney_id)
    faults = {game: record["faults"] for game, record in records.items()}
    assert len(records) == 3 and not any(faults.values()), faults
    assert_one_deal(records)
    assert not agent.notices, agent.notices


def assert_one_deal(records: dict[str, dict[str, Any]]) -> None:
    """Every rotation of the deal set was played with the same cards (duplicate scoring compares them)."""
    dealt = {json.dumps([hand["deal"] for hand in record["hands"]]) for record in records.values()}
    assert len(dealt) == 1, "the rotations of one deal set were played with different cards"


def test_one_agent_in_two_running_tournaments_gets_each_game_apart(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", redis_server.url)  # the match host finds the agent's gateway there
    engine = start_service("services.engine")
    client = redis.Redis.from_url(redis_server.url)
    entrants = entered(client, "a1", "twin")
    store = TournamentStore(client, Keys())
    queues = [Queue(store), Queue(store)]
    for name, queue in zip(("twin-a", "twin-b"), queues, strict=True):
        jobs.start(store, Tournament(name, entrants, seats=3, deals=2, overrides={"hand_sizes": [3, 2, 1]}), queue)

    async def run() -> None:
        agent = await online(engine, client, "a1", Counting(0.03))  # thinks a little: both tables wait on it at once
        await asyncio.gather(*(asyncio.to_thread(queue.drain) for queue in queues))
        await agent.stop()
        assert not agent.notices, agent.notices

    asyncio.run(run())
    for name in ("twin-a", "twin-b"):
        records = store.records(name)
        assert len(records) == 6 and not [f for record in records.values() for f in record["faults"]], name
        assert {record["match_id"] for record in records.values()} == {f"{name}/{game}" for game in records}


LEASE_S = 3.0


class RelayOutage:
    """Redis failing the match host's relay for a moment: the host (this process) relays as user
    'relay', whose PUBLISH ``start()`` refuses for half a second (a Redis restart does the same, but
    whether a decision is in flight then is down to timing)."""

    def __init__(self, client: redis.Redis, redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch) -> None:
        self.client = client
        client.acl_setuser(
            "relay", enabled=True, passwords=["+relay-pw"], keys=["*"], channels=["*"], commands=["+@all"]
        )
        monkeypatch.setenv("REDIS_URL", redis_server.url.replace("redis://", "redis://relay:relay-pw@"))
        self.restore = threading.Timer(0.5, lambda: client.acl_setuser("relay", enabled=True, commands=["+publish"]))

    def start(self) -> None:
        self.client.acl_setuser("relay", enabled=True, commands=["-publish"])
        self.restore.start()


def run_until_finished(store: TournamentStore, tourney_id: str) -> list[str]:
    """Run the table r1t0 as its task would be retried until the tournament finishes: the outcomes."""
    outcomes: list[str] = []
    while store.progress(tourney_id).state != "finished" and len(outcomes) < 10:
        try:
            # a lease of 1 s was lost ('busy') by a game stalled on a loaded machine (tests in parallel)
            outcomes.append(jobs.run_table(store, tourney_id, "r1t0", Queue(store), lease_s=LEASE_S))
        except Exception as error:  # the task is retried
            outcomes.append(type(error).__name__)
        if outcomes[-1] != "finished":
            until_lease_lapses(store, tourney_id)  # the lease of the attempt that raised
    return outcomes


def played_online(
    engine: Service, store: TournamentStore, tourney_id: str, agent_id: str, policy: Policy, outage: RelayOutage
) -> list[str]:
    """``run_until_finished`` with the agent ``agent_id`` online, answering with ``policy``."""

    async def run() -> list[str]:
        agent = await online(engine, store.client, agent_id, policy)
        outcomes = await asyncio.to_thread(run_until_finished, store, tourney_id)
        await agent.stop()
        return outcomes

    outcomes = asyncio.run(run())
    outage.restore.join()
    return outcomes


def test_a_game_the_platform_spoiled_is_played_again_not_charged_to_the_agent(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis fails the match host's relay mid-game (``RelayOutage``): the host cannot reach the
    connected entrant ('platform: ...' faults, default actions, a forfeit after max_faults). The
    ladder voids such a match; a tournament recorded it once and for all, charging the agent the
    platform's failure. The game is played again instead."""
    engine, client, store = one_table(start_service, redis_server, monkeypatch, "cut", "a2")
    outage = RelayOutage(client, redis_server, monkeypatch)
    decisions = 0

    async def thinking(agent: Agent, request: match_pb2.DecisionRequest) -> match_pb2.Action:
        nonlocal decisions
        decisions += 1
        if decisions == 3:  # mid-game: the host's next PUBLISH to the agent's gateway fails
            outage.start()
        return first_legal(request)

    outcomes = played_online(engine, store, "cut", "a2", thinking, outage)
    records = store.records("cut")
    faults = {game: [f["detail"] for f in record["faults"]] for game, record in records.items()}
    assert len(records) == 3 and not any(faults.values()), faults
    assert outcomes[0] == "PlatformFailed" and outcomes[-1] == "finished", outcomes
    assert {row.entrant: row.forfeits for row in standings(duplicate_observations(store.game_results("cut")), 10)} == {
        "h": 0,
        "r": 0,
        "steady": 0,
    }


def test_a_first_rotation_the_platform_spoiled_is_redealt_not_shown_again(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The platform spoils the first rotation's game mid-game (as above): the agent has seen its hand
    and the cards the other seats played. Replayed with the same cards, the agent got the same hand
    again and knew what the others held; the deal set is drawn afresh instead, and all its rotations
    play the new one (duplicate scoring compares the same cards)."""
    engine, client, store = one_table(start_service, redis_server, monkeypatch, "seen", "a5")
    created = store.table_deals("seen", "r1t0")
    outage = RelayOutage(client, redis_server, monkeypatch)
    counting = Counting(0)

    async def thinking(agent: Agent, request: match_pb2.DecisionRequest) -> match_pb2.Action:
        action = await counting(agent, request)
        if counting.decisions == 1:  # in the first game: the host's next PUBLISH to the gateway fails
            outage.start()
        return action

    outcomes = played_online(engine, store, "seen", "a5", thinking, outage)
    assert outcomes[0] == "PlatformFailed" and outcomes[-1] == "finished", outcomes
    spoiled, replayed = [hand for match_id, hand in counting.first_hands if match_id == "seen/r1t0/d0/r0"]
    assert spoiled != replayed, "the replayed first rotation showed the agent the same cards again"
    redealt = store.table_deals("seen", "r1t0")
    assert redealt != created and store.table_state("seen", "r1t0")["redealt"] == "1"
    records = store.records("seen")
    assert len(records) == 3 and not any(record["faults"] for record in records.values())
    assert_one_deal(records)
    assert store.deals("seen")["r1t0"] == [deal_set.to_dict() for deal_set in redealt]


RUN_TABLE = """
import sys
from arena.keys import Keys
from arena.tournament import jobs
from arena.tournament.store import TournamentStore
store = TournamentStore.connect(sys.argv[1], Keys())
print(jobs.run_table(store, sys.argv[2], sys.argv[3], lambda *args: None, lease_s=1.0), flush=True)
"""


@pytest.mark.parametrize("killed_at", [25, 5])
def test_a_remote_table_whose_runner_is_killed_mid_game_is_resumed_cleanly(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch, killed_at: int
) -> None:
    """The process hosting a table with a connected entrant is SIGKILLed while the agent is in a
    game: the next attempt plays the games not recorded (the interrupted one again, same match id),
    and the agent answers them as it does any other: no fault, no forfeit, no notice. Killed in the
    second game (decision 25 of 20 a game: rotation r1), it is replayed as dealt; in the first (r0),
    whose cards the agent would otherwise see again, the deal set is drawn afresh first."""
    engine, client, store = one_table(start_service, redis_server, monkeypatch, "kt", "a3")
    policy = Counting()

    async def run() -> Agent:
        agent = await online(engine, client, "a3", policy)
        runner = subprocess.Popen([sys.executable, "-c", RUN_TABLE, redis_server.url, "kt", "r1t0"])
        try:
            await policy.reach(killed_at)
            runner.send_signal(signal.SIGKILL)
        finally:
            runner.wait(10)
        assert len(store.finished_games("kt")) == killed_at // 20
        await asyncio.to_thread(until_lease_lapses, store, "kt")  # the dead runner's
        assert await asyncio.to_thread(jobs.run_table, store, "kt", "r1t0", Queue(store), 1.0) == "finished"
        await agent.stop()
        return agent

    agent = asyncio.run(run())
    assert_played_cleanly(store, "kt", agent)
    state = store.table_state("kt", "r1t0")
    assert int(state["attempts"]) == 2 and int(state.get("redealt", 0)) == (killed_at < 20)
    killed = f"kt/r1t0/d0/r{killed_at // 20}"  # the game interrupted, then played again
    first, again = [hand for match_id, hand in policy.first_hands if match_id == killed]
    assert (first != again) == (killed_at < 20), "a first rotation replayed as dealt, or a later one redealt"


def test_a_runner_that_lost_its_lease_stops_playing_the_table(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runner stalled past its lease (SIGSTOP) while a table with a connected entrant is in play;
    the table is run again meanwhile and the new runner gets into the second game. The stalled
    runner, let go, ends the game it was in and then stops ('busy'): it went on with every remaining
    game, hosting each one a second time, with the same match ids, for the same agent (which was
    then told FAILED_PRECONDITION for answers that reached the other host: one run in two). That
    game was the first rotation's, shown to the agent and not recorded: the new runner redealt the
    deal set, and the stalled runner's record of it (the old cards) is refused, not kept beside the
    new deal's other rotations."""
    engine, client, store = one_table(start_service, redis_server, monkeypatch, "st", "a4")
    policy = Counting()

    async def run() -> Agent:
        agent = await online(engine, client, "a4", policy)
        stalled = subprocess.Popen(
            [sys.executable, "-c", RUN_TABLE, redis_server.url, "st", "r1t0"], stdout=subprocess.PIPE, text=True
        )
        try:
            await policy.reach(5)
            stalled.send_signal(signal.SIGSTOP)  # a worker stalled past its lease
            await asyncio.to_thread(until_lease_lapses, store, "st")
            second = asyncio.create_task(asyncio.to_thread(jobs.run_table, store, "st", "r1t0", Queue(store), 1.0))
            await policy.reach(policy.decisions + 25)
            stalled.send_signal(signal.SIGCONT)
            outcomes = [await second, (await asyncio.to_thread(stalled.communicate, None, 60))[0].strip()]
            assert outcomes == ["finished", "busy"], outcomes
        finally:
            stalled.kill()
        await agent.stop()
        return agent

    assert_played_cleanly(store, "st", asyncio.run(run()))
    assert store.table_state("st", "r1t0")["redealt"] == "1"
