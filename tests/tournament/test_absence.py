"""Connected entrants away from a tournament, on real processes: a redis-server, the Celery workers
(``make_stack``) or an engine whose gateway holds a connected agent (tables run in this process, one
at a time, so that the agent comes back between two of them).

An absent connected entrant made each of its tables wait the whole grace period before forfeiting
it (a round robin's tables of one author away: hours of a worker), and a table waiting out its
grace period when its tournament was cancelled went on waiting to the end of it."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys, register_agent_token
from arena.local.stack import Stack
from arena.play.specs import SeatSpec
from arena.tournament import jobs
from arena.tournament.model import Tournament
from arena.tournament.standings import Standing, duplicate_observations, standings
from arena.tournament.store import TournamentStore

from ..ladder.helpers import register_connected, wait_until
from ..security.agents import Agent
from ..security.conftest import Service
from .test_stack import cli

pytestmark = pytest.mark.slow  # whole stacks of processes, and one grace period waited out each
GRACE_S = 5.0
SHORT = {"hand_sizes": [2, 1]}


def store_standings(store: TournamentStore, tourney_id: str) -> list[Standing]:
    return standings(duplicate_observations(store.game_results(tourney_id)), 10)


def seconds_played(store: TournamentStore, tourney_id: str, table: str) -> float:
    """From the start of the table's (last) run to its end."""
    state = store.table_state(tourney_id, table)
    return (int(state["finished_ms"]) - int(state["started_ms"])) / 1000


def ghost_tables(store: TournamentStore, tourney_id: str) -> list[str]:
    """The tables of entrant 0 (the connected one in these tests), in the order they were sent."""
    return [table for table, plan in store.tables(tourney_id).items() if 0 in plan.entrants]


def test_an_absent_entrants_later_tables_forfeit_it_without_waiting_again(
    make_stack: Callable[..., Stack], redis_server: EmbeddedRedis, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two connected entrants away, ghost at tables 0-2 and late at 1-3 (one remote worker thread: one
    table after the other). Table 0 waits the grace period for ghost, table 1 for late alone (ghost
    forfeits it at once), tables 2 and 3 wait for no one: each played in far less than the grace period."""
    stack = make_stack(engine=False, remote_concurrency=1)
    ghost, _ = register_connected(stack, "ghost")
    late, _ = register_connected(stack, "late")
    entrants = [f"--entrant=connected:{ghost}", "--entrant=builtin:random", "--entrant=builtin:heuristic"]
    entrants.append(f"--entrant=connected:{late}")  # 4 tables of 3
    options = ("--deals", "1", "--grace-s", f"{GRACE_S:g}", "--option", "hand_sizes=[2,1]")
    cli(stack, "create", "away", *entrants, *options)
    store = TournamentStore(redis.Redis.from_url(redis_server.url))
    tables = list(store.tables("away"))
    assert len(tables) == 4

    def forfeited_and_waiting() -> bool:
        states = [store.table_state("away", table) for table in tables]
        return any("forfeits" in state for state in states) and any("waiting" in state for state in states)

    wait_until(forfeited_and_waiting, 60, "a table to wait for late, ghost's first table forfeited", poll=0.05)
    capsys.readouterr()
    cli(stack, "status", "away")  # while it runs: whom a table waits for, who is away since when
    status = " ".join(capsys.readouterr().out.split())
    wait_until(lambda: store.progress("away").state == "finished", 60, "the tournament to finish", poll=0.1)
    played = {table: seconds_played(store, "away", table) for table in tables}
    assert sorted(played.values())[2] >= GRACE_S, played  # those that waited (for ghost, for late)
    assert sorted(played.values())[1] < GRACE_S / 2, f"a table waited again for an entrant away: {played}"
    forfeits = {table: json.loads(store.table_state("away", table)["forfeits"]) for table in tables}
    assert forfeits == {"r1t0": ["ghost"], "r1t1": ["ghost", "late"], "r1t2": ["ghost", "late"], "r1t3": ["late"]}
    assert {row.entrant: row.forfeits for row in store_standings(store, "away")} == {
        "ghost": 9,
        "late": 9,
        "random": 0,
        "heuristic": 0,
    }
    marks = {mark.name: mark for mark in store.away_marks("away")}
    assert (marks["ghost"].agent_id, marks["ghost"].table, marks["late"].table) == (ghost, "r1t0", "r1t1")
    since = time.strftime("%H:%M:%S UTC", time.gmtime(marks["ghost"].since_ms / 1000))
    assert f"ghost (connected) away since {since}: forfeited table r1t0 after waiting for it;" in status
    assert "table r1t1 waits for late (connected, not online) until" in status
    assert "late (connected) away since" not in status  # waited for: not away yet


def test_cancelling_a_tournament_stops_a_table_waiting_out_its_grace_at_once(
    make_stack: Callable[..., Stack], redis_server: EmbeddedRedis
) -> None:
    """The runner waiting for an absent entrant stopped only at the end of the grace period (120 s here)."""
    stack = make_stack(engine=False, env={"OHELL_MATCH_LEASE_S": "30"})  # a lease gone at once: released
    agent_id, _ = register_connected(stack, "ghost")
    entrants = [f"--entrant=connected:{agent_id}", "--entrant=builtin:random", "--entrant=builtin:heuristic"]
    cli(stack, "create", "quit", *entrants, "--deals", "1", "--grace-s", "120", "--option", "hand_sizes=[2,1]")
    store = TournamentStore(redis.Redis.from_url(redis_server.url))
    wait_until(lambda: "waiting" in store.table_state("quit", "r1t0"), 60, "the table to wait for ghost", poll=0.05)
    lease = store.keys.tourney_lease("quit", "r1t0")
    assert store.client.exists(lease)
    cli(stack, "cancel", "quit")
    cancelled = time.monotonic()
    wait_until(lambda: not store.client.exists(lease), 5, "the waiting runner to stop and release its lease")
    assert time.monotonic() - cancelled < 3
    state = store.table_state("quit", "r1t0")
    assert state["state"] == "cancelled" and "forfeits" not in state  # stopped in its wait: nothing decided
    assert store.progress("quit").games_done == 0 and store.away_marks("quit") == []


TOKEN = "away-token-0123456789"


def test_an_entrant_back_online_is_seated_again(
    start_service: Callable[..., Service], redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Away at its first table (waited for, forfeited) and its second (forfeited at once), online again
    before its third: seated there, it plays its games, and its mark is cleared."""
    monkeypatch.setenv("REDIS_URL", redis_server.url)  # the match host of this process relays through it
    engine = start_service("services.engine")
    client = redis.Redis.from_url(redis_server.url)
    store = TournamentStore(client, Keys())
    register_agent_token(client, "a1", TOKEN)
    client.hset(Keys().agent("a1"), mapping={"name": "ghost", "kind": "connected"})
    bots = (SeatSpec.builtin("random", "r"), SeatSpec.builtin("heuristic", "h"), SeatSpec.builtin("random", "r2"))
    grace = 2.0
    sent: list[str] = []
    entrants = (SeatSpec.connected("a1", "ghost"), *bots)
    tourney = Tournament("back", entrants, seats=3, deals=1, overrides=SHORT, grace_s=grace)
    jobs.start(store, tourney, lambda _tourney, table, _seats: sent.append(table))
    first, second, third = ghost_tables(store, "back")
    assert sent[:3] == [first, second, third]

    def run(table: str) -> float:
        started = time.monotonic()
        assert jobs.run_table(store, "back", table, lambda *_: None, lease_s=5.0) == "finished"
        return time.monotonic() - started

    assert run(first) >= grace
    assert run(second) < grace / 2
    assert [json.loads(store.table_state("back", t)["forfeits"]) for t in (first, second)] == [["ghost"]] * 2

    async def online_for_the_third() -> None:
        agent = await Agent(engine.address, TOKEN).start()
        presence = Keys().agent_presence("a1")
        while not client.exists(presence):
            await asyncio.sleep(0.05)
        await asyncio.to_thread(run, third)  # seated (its forfeits, below), not timed: 3 relayed games took
        # 0.3-0.5 s of the 1 s that grace / 2 allowed at a load of 11 on 2 cores
        await agent.stop()

    asyncio.run(online_for_the_third())
    assert json.loads(store.table_state("back", third)["forfeits"]) == [] and store.away_marks("back") == []
    (rest,) = set(sent) - {first, second, third}  # the bots' table: then the tournament has ended
    run(rest)
    records = {game: record for game, record in store.records("back").items() if game.startswith(f"{third}/")}
    seats = [next(seat for seat in record["seats"] if seat["name"] == "ghost") for record in records.values()]
    assert len(seats) == 3 and all(seat["kind"] == "connected" for seat in seats)
    assert all(not record["faults"] for record in records.values())
    assert {row.entrant: (row.games, row.forfeits) for row in store_standings(store, "back")}["ghost"] == (9, 6)
