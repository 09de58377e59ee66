"""The tournament store and jobs on a real redis-server, tables run in this process."""

from __future__ import annotations

import itertools
import json
import random
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import grpc
import pytest
import redis

from arena.embedded_redis import EmbeddedRedis
from arena.keys import Keys
from arena.play.specs import SeatSpec
from arena.tournament import creation, jobs, operations
from arena.tournament.away import AwayMark, AwaySighting
from arena.tournament.deals import draw_deal_set
from arena.tournament.model import Tournament, TournamentError, TournamentExists, parse_entrant
from arena.tournament.standings import GameResult, duplicate_observations, standings
from arena.tournament.store import TournamentStore
from ohell.state import Game

OPTIONS = {"hand_sizes": [3, 2, 1]}


@pytest.fixture
def tstore(shared_redis_server: EmbeddedRedis, request: pytest.FixtureRequest) -> Iterator[TournamentStore]:
    client = redis.Redis.from_url(shared_redis_server.url)
    yield TournamentStore(client, Keys(f"t-{request.node.name[:40]}:"))
    client.close()


class Queue:
    """A stand-in for Celery in these tests: collects the dispatched tables."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def __call__(self, tourney_id: str, table: str, seats: Sequence[SeatSpec]) -> None:
        self.sent.append((tourney_id, table))

    def drain(self, store: TournamentStore) -> list[str]:
        outcomes = []
        while self.sent:
            tourney_id, table = self.sent.pop(0)
            outcomes.append(jobs.run_table(store, tourney_id, table, self, lease_s=5.0))
        return outcomes


def builtins(*bots: str) -> tuple[SeatSpec, ...]:
    return tuple(SeatSpec.builtin(bot, f"{bot}-{n}") for n, bot in enumerate(bots))


def results_from_records(records: dict[str, dict]) -> list[GameResult]:  # type: ignore[type-arg]
    return [
        GameResult(game.rpartition("/")[0], tuple(s["name"] for s in rec["seats"]), tuple(rec["totals"]))
        for game, rec in records.items()
    ]


def test_round_robin_runs_once_and_standings_agree_with_records(tstore: TournamentStore) -> None:
    entrants = builtins("heuristic", "random", "heuristic", "random", "random", "heuristic")
    tourney = Tournament("rr", entrants, seats=3, deals=1, overrides=OPTIONS)
    queue = Queue()
    plans = jobs.start(tstore, tourney, queue)
    assert len(plans) == 20 and len(queue.sent) == 20
    with pytest.raises(TournamentError, match="exists already"):
        tstore.create(tourney)
    with pytest.raises(TournamentError, match="secret"):
        tstore.records("rr")
    first_table = queue.sent[0][1]
    assert queue.drain(tstore) == ["finished"] * 20
    assert jobs.run_table(tstore, "rr", first_table, queue) == "finished"  # a redelivered task
    progress = tstore.progress("rr")
    assert (progress.state, progress.tables_done, progress.games_done) == ("finished", 20, 60)
    assert sorted(tstore.logged_tables("rr")) == sorted(plan.table_id for plan in plans)
    records = tstore.records("rr")
    assert len(records) == 60 and all(record["complete"] for record in records.values())
    live = standings(duplicate_observations(tstore.game_results("rr")), 300)
    assert standings(duplicate_observations(results_from_records(records)), 300) == live
    assert {row.games for row in live} == {30}  # 10 tables x 3 rotations each
    # every table's first deal was dealt identically in its three rotations, from the stored deal set
    deals = tstore.deals("rr")
    for table in deals:
        firsts = {str(records[f"{table}/d0/r{turn}"]["hands"][0]["deal"]) for turn in range(3)}
        assert len(firsts) == 1


def test_creating_sends_the_deal_sets_in_parts_and_renames_them_into_place(
    tstore: TournamentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No one command or script carries every deal set (a big tournament's ~50 MB held Redis from the
    live matches for a second); the parts end up as the tournament's deal sets, and nothing is left
    behind, also when the id was taken."""
    monkeypatch.setattr(creation, "SEND_BYTES", 4000)
    sent: list[int] = []  # the bytes of each command's arguments
    real_execute = redis.client.Pipeline.execute

    def execute(pipe: redis.client.Pipeline, raise_on_error: bool = True) -> list[object]:
        sent.extend(sum(len(str(arg)) for arg in command[0]) for command in pipe.command_stack)
        return real_execute(pipe, raise_on_error)

    real_run = tstore._run

    def run(script: object, *args: object) -> object:
        sent.append(sum(len(str(arg)) for arg in args))
        return real_run(script, *args)

    monkeypatch.setattr(redis.client.Pipeline, "execute", execute)
    monkeypatch.setattr(tstore, "_run", run)
    tourney = Tournament("parts", builtins(*["random"] * 7), seats=3, deals=2, overrides=OPTIONS)
    tstore.create(tourney)
    deals = tstore.client.hgetall(tstore.keys.tourney_deals("parts"))
    everything = sum(len(value) for value in deals.values())
    assert len(deals) == 35 and max(sent) < everything / 10
    assert len(tstore.table_deals("parts", "r1t0")) == 2
    assert tstore.client.ttl(tstore.keys.tourney_deals("parts")) == -1  # the parts' TTL went with the rename
    with pytest.raises(TournamentError, match="exists already"):
        tstore.create(tourney)
    assert tstore.client.keys(tstore.keys.tourney_deals_new("parts", "*")) == []


def test_a_taken_id_is_refused_before_any_deal_set_is_drawn_or_sent(
    tstore: TournamentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A taken id was refused by the creating script only, after every deal set was drawn and sent (the
    largest tournament: seconds of drawing and ~50 MB into Redis, for a create sent twice); and with the
    deal sets sent gone meanwhile, the script said to create it again rather than that it exists."""
    tourney = Tournament("taken", builtins(*["random"] * 3), seats=3, overrides=OPTIONS)
    tstore.create(tourney)
    drawn: list[int] = []
    draw = tstore._draw
    monkeypatch.setattr(tstore, "_draw", lambda game, count: drawn.append(count) or draw(game, count))
    with pytest.raises(TournamentExists, match="exists already"):
        tstore.create(tourney)
    assert drawn == []
    plans, summary = json.dumps({"r1t0": "{}"}), tourney.summary().to_json()
    for nonce in ("never-sent", tstore._send_deals("taken", {"r1t0": "[]"})):  # two creations at once
        assert tstore._run(tstore._create, "taken", tourney.to_json(), 0, plans, nonce, summary) == 0
    assert tstore.client.keys(tstore.keys.tourney_deals_new("taken", "*")) == []  # dropped


def test_deal_sets_lost_before_the_creation_abort_it_not_refuse_the_request(tstore: TournamentStore) -> None:
    """The deal sets sent ahead gone when the creating script ran (over STAGED_DEALS_TTL_S to send them,
    or evicted) came back INVALID_ARGUMENT, as if the request were wrong: it is ABORTED (nothing created,
    the same call may succeed), and the same call does."""
    from services.matchmaker.tournaments import _CODES

    tourney = Tournament("lost", builtins(*["random"] * 3), seats=3, overrides=OPTIONS)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tstore, "_send_deals", lambda tourney_id, deals: "never-sent")
        with pytest.raises(TournamentError, match="lost before it was created") as lost:
            tstore.create(tourney)
    assert _CODES.get(type(lost.value)) is grpc.StatusCode.ABORTED
    assert "lost" not in tstore.ids()
    assert len(tstore.create(tourney)) == 1 and "lost" in tstore.ids()


def test_swiss_opens_each_round_once_by_standing(tstore: TournamentStore) -> None:
    entrants = builtins("heuristic", "random", "random", "heuristic", "random", "random", "heuristic")
    tourney = Tournament("sw", entrants, seats=4, format="swiss", rounds=3, deals=1, overrides=OPTIONS)
    queue = Queue()
    assert [len(plan.entrants) for plan in jobs.start(tstore, tourney, queue)] == [4, 3]
    queue.drain(tstore)
    progress = tstore.progress("sw")
    assert (progress.state, progress.round, progress.tables) == ("finished", 3, 6)
    tables = tstore.tables("sw")
    assert sorted(tables) == ["r1t0", "r1t1", "r2t0", "r2t1", "r3t0", "r3t1"]
    assert tstore.open_round("sw", 2, [(0, 1, 2)]) == []  # round 3 exists: nothing opened twice
    for number in (1, 2, 3):
        in_round = [plan.entrants for plan in tables.values() if plan.round == number]
        assert sorted(itertools.chain(*in_round)) == list(range(7))


def test_a_connected_entrant_given_by_name_is_told_to_give_the_id(tstore: TournamentStore) -> None:
    """``--entrant connected:alice`` for a registered alice said only "no registered agent 'alice'"."""
    tstore.client.hset(tstore.keys.agent("a31"), mapping={"name": "alice", "kind": "connected"})
    named = (*builtins("heuristic", "random"), SeatSpec.connected("alice", "alice"))
    with pytest.raises(TournamentError) as refused:
        jobs.start(tstore, Tournament("byname", named, seats=3, deals=2, overrides=OPTIONS), Queue())
    assert str(refused.value) == (
        "tournament.entrants[2].agent_id: no registered agent 'alice': connected:AGENT_ID takes the agent's id"
        " (a12, as `ohell agent list` and the host page's tokens show it), not its name"
    )
    missing = (*builtins("heuristic", "random"), SeatSpec.connected("a99", "a99"))
    with pytest.raises(TournamentError) as refused:  # an id of the right shape: no hint about names
        jobs.start(tstore, Tournament("byid", missing, seats=3, deals=2, overrides=OPTIONS), Queue())
    assert str(refused.value) == "tournament.entrants[2].agent_id: no registered agent 'a99'"


def test_absent_connected_entrant_forfeits_its_table(tstore: TournamentStore) -> None:
    entrants = (*builtins("heuristic", "random"), SeatSpec.connected("a9", "ghost"))
    tourney = Tournament("ff", entrants, seats=3, deals=2, overrides=OPTIONS, grace_s=0.2)
    queue = Queue()
    with pytest.raises(TournamentError, match=r"entrants\[2\].agent_id: no registered agent 'a9'"):
        jobs.start(tstore, tourney, queue)
    tstore.client.hset(tstore.keys.agent("a9"), mapping={"name": "ghost", "kind": "connected"})
    # an id of another shape names no agent, even where a key of that name exists (a9's presence)
    tstore.client.set(tstore.keys.agent_presence("a9"), "gw-1", ex=10)
    presence = tstore.keys.agent_presence("a9").removeprefix(tstore.keys.agent(""))
    assert tstore.client.exists(tstore.keys.agent(presence))
    spoofed = (*builtins("heuristic", "random"), SeatSpec.connected(presence, "spoof"))
    with pytest.raises(TournamentError, match="no registered agent"):
        jobs.start(tstore, Tournament("spoof", spoofed, seats=3, deals=2, overrides=OPTIONS), queue)
    tstore.client.delete(tstore.keys.agent_presence("a9"))
    jobs.start(tstore, tourney, queue)
    assert queue.drain(tstore) == ["finished"]
    rows = {row.entrant: row for row in standings(duplicate_observations(tstore.game_results("ff")), 100)}
    assert rows["ghost"].forfeits == 6 and rows["heuristic-0"].forfeits == 0
    assert tstore.table_state("ff", "r1t0")["forfeits"] == '["ghost"]'
    record = next(iter(tstore.records("ff").values()))
    ghost = next(seat for seat in record["seats"] if seat["name"] == "ghost")
    assert ghost["kind"] == "builtin" and ghost["bot"] == jobs.STAND_IN


def test_bad_tournaments_are_refused() -> None:
    entrants = builtins("random", "random", "random")
    for kwargs, field in (
        ({"seats": 8}, "seats: 8"),
        ({"format": "ladder"}, "format: "),
        ({"deals": 0}, "deals: 0"),
        ({"rounds": 2}, "rounds: 2"),
        ({"grace_s": -1}, "grace_s"),
        ({"overrides": {"hand_sizes": [30]}}, "hand_sizes"),
    ):
        with pytest.raises(TournamentError, match=field):
            Tournament("x", entrants, **kwargs)  # type: ignore[arg-type]
    too_big = "^rules.hand_sizes: a hand of 17 cards, more than the 13 a deck gives each of 4 players$"
    with pytest.raises(TournamentError, match=too_big):  # fits 3 seats, not 4
        Tournament("x", builtins(*["random"] * 4), seats=4, overrides={"hand_sizes": [17]})
    with pytest.raises(TournamentError, match="tourney_id"):
        Tournament("Bad Id!", entrants)
    with pytest.raises(TournamentError, match="own name"):
        Tournament("x", (SeatSpec.builtin("random"),) * 3)


@contextmanager
def sdk_endpoint(token: str = "") -> Iterator[str]:
    """A random-bot endpoint agent served by the SDK in its own process (refusing callers without
    ``token`` when one is given); yields its address."""
    code = (
        "import sys; from arena.sdk import serve; from ohell.bots import make_bot; "
        "serve(make_bot('random', 7), '127.0.0.1:0', sys.argv[1])"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, token], stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        port = re.search(r"serving on port (\d+)", line)
        assert port, f"the agent did not start: {line!r}"
        yield f"127.0.0.1:{port.group(1)}"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def endpoint_agent() -> Iterator[str]:
    with sdk_endpoint() as address:
        yield address


def test_remote_table_is_hosted_with_the_same_deals(
    tstore: TournamentStore, endpoint_agent: str, shared_redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REDIS_URL", shared_redis_server.url)
    entrants = (*builtins("heuristic", "random"), SeatSpec.endpoint(endpoint_agent, "remote"))
    queue = Queue()
    jobs.start(tstore, Tournament("rm", entrants, seats=3, deals=1, overrides=OPTIONS), queue)
    assert queue.drain(tstore) == ["finished"]
    records = tstore.records("rm")
    assert len(records) == 3 and all(record["complete"] and not record["faults"] for record in records.values())
    assert len({str(record["hands"][0]["deal"]) for record in records.values()}) == 1
    for turn in range(3):  # entrant 2 (the endpoint agent) sits in seat (2 + turn) % 3
        seats = records[f"r1t0/d0/r{turn}"]["seats"]
        assert [seat["kind"] for seat in seats].index("endpoint") == (2 + turn) % 3


@pytest.fixture
def guarded_endpoint(tstore: TournamentStore) -> Iterator[tuple[str, str]]:
    """An endpoint agent registered in the store (so it has a dial token) whose server refuses any
    caller without that token; yields (agent id, address)."""
    from arena.ladder.redis_store import RedisStore

    agent, _ = RedisStore(tstore.client, tstore.keys).register_agent("guarded", "endpoint", endpoint="127.0.0.1:1")
    with sdk_endpoint(agent.dial_token) as address:
        tstore.client.hset(tstore.keys.agent(agent.agent_id), "endpoint", address)  # where it came up
        yield agent.agent_id, address


@pytest.mark.parametrize("revoked", [False, True], ids=["kept", "revoked"])  # tstore's prefix: 40 characters
def test_endpoint_entered_by_id(
    tstore: TournamentStore,
    guarded_endpoint: tuple[str, str],
    shared_redis_server: EmbeddedRedis,
    monkeypatch: pytest.MonkeyPatch,
    revoked: bool,
) -> None:
    """A registered endpoint agent entered by id is dialled with its token; revoked before its table
    starts, it is absent there (revoking it once left its dial token, and its tables went on dialling it)."""
    from arena.ladder.redis_store import RedisStore

    monkeypatch.setenv("REDIS_URL", shared_redis_server.url)
    agent_id, address = guarded_endpoint
    entrants = (*builtins("heuristic", "random"), SeatSpec.connected(agent_id, "guarded"))
    queue = Queue()
    jobs.start(tstore, Tournament("reg", entrants, seats=3, deals=1, overrides=OPTIONS, grace_s=0), queue)
    if revoked:
        RedisStore(tstore.client, tstore.keys).set_token(agent_id, rotate=False)
    assert queue.drain(tstore) == ["finished"]
    records = tstore.records("reg")
    seat = next(s for s in records["r1t0/d0/r0"]["seats"] if s["name"] == "guarded")
    if revoked:
        assert tstore.table_state("reg", "r1t0")["forfeits"] == '["guarded"]'
        assert seat["kind"] == "builtin" and seat["bot"] == jobs.STAND_IN
        return
    assert len(records) == 3 and all(record["complete"] and not record["faults"] for record in records.values())
    assert seat == {"name": "guarded", "kind": "endpoint", "agent_id": agent_id, "address": address}  # no token
    assert "token" not in json.dumps(records) and tstore.table_state("reg", "r1t0").get("forfeits") == "[]"


def test_an_entrant_revoked_while_its_table_plays_is_seated_no_further(
    tstore: TournamentStore,
    guarded_endpoint: tuple[str, str],
    shared_redis_server: EmbeddedRedis,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The host revokes a registered endpoint entrant once the first of its table's six games is
    recorded. The table went on dialling it with the token it started with for every game left;
    now the stand-in plays its seat in each of them, under its name, and they count as its forfeits."""
    from arena.ladder.redis_store import RedisStore

    monkeypatch.setenv("REDIS_URL", shared_redis_server.url)
    agent_id, _ = guarded_endpoint
    entrants = (*builtins("heuristic", "random"), SeatSpec.connected(agent_id, "guarded"))
    queue = Queue()
    jobs.start(tstore, Tournament("rev", entrants, seats=3, deals=2, overrides=OPTIONS), queue)
    record_game = tstore.record_game

    def revoking_after_the_first(*args: object) -> bool:
        recorded = record_game(*args)  # type: ignore[arg-type]
        RedisStore(tstore.client, tstore.keys).set_token(agent_id, rotate=False)
        return recorded

    monkeypatch.setattr(tstore, "record_game", revoking_after_the_first)
    assert queue.drain(tstore) == ["finished"]
    kinds = {
        game: next(s for s in rec["seats"] if s["name"] == "guarded") for game, rec in tstore.records("rev").items()
    }
    assert kinds.pop("r1t0/d0/r0")["kind"] == "endpoint"  # played before the revocation
    assert len(kinds) == 5 and all(
        seat == {"name": "guarded", "kind": "builtin", "bot": jobs.STAND_IN} for seat in kinds.values()
    )
    rows = {row.entrant: row for row in standings(duplicate_observations(tstore.game_results("rev")), 10)}
    assert (rows["guarded"].games, rows["guarded"].forfeits) == (6, 5)
    assert tstore.table_state("rev", "r1t0")["forfeits"] == "[]"  # absent from none at its start


def test_absent_entrants_is_told_its_tournament_table_and_check_by_name(tstore: TournamentStore) -> None:
    """Seven arguments by position let a caller swap ``tourney_id`` and ``table`` (both text) unseen."""
    with pytest.raises(TypeError):
        jobs.absent_entrants(tstore, [], 0, None, "t", "r1t0")  # type: ignore[misc]
    assert jobs.absent_entrants(tstore, [], 0, None, tourney_id="t", table="r1t0").names == []


@pytest.mark.slow  # over a second: the quick subset stays quick
def test_a_connected_entrant_coming_online_within_the_grace_plays(tstore: TournamentStore) -> None:
    late, away = SeatSpec.connected("a-late", "late"), SeatSpec.connected("a-away", "away")
    timer = threading.Timer(0.3, lambda: tstore.client.set(tstore.keys.agent_presence("a-late"), "gw-1", ex=10))
    timer.start()
    try:
        assert jobs.absent_entrants(tstore, [late, away, *builtins("random")], grace_s=1.5).names == ["away"]
        assert jobs.absent_entrants(tstore, [late], grace_s=0).names == []
    finally:
        timer.cancel()


def test_sweep_sends_again_tables_whose_runner_or_task_was_lost(tstore: TournamentStore) -> None:
    tourney = Tournament("sweep", builtins(*["random"] * 4), seats=3, deals=1, overrides=OPTIONS)
    queue = Queue()
    plans = jobs.start(tstore, tourney, queue)
    queue.sent.clear()
    assert jobs.sweep(tstore, queue, redispatch_after_s=30) == 0  # just sent: waiting their turn
    dead, held = plans[0].table_id, plans[1].table_id
    assert tstore.start_table("sweep", dead, "gone:1:x", lease_s=30) == "run"
    tstore.client.delete(tstore.keys.tourney_lease("sweep", dead))  # its runner died: the lease lapsed
    assert tstore.start_table("sweep", held, "alive:2:y", lease_s=30) == "run"
    assert jobs.sweep(tstore, queue, redispatch_after_s=0) == 1  # queued ones wait: a table is in play
    assert queue.sent == [("sweep", dead)]
    tstore.client.delete(tstore.keys.tourney_lease("sweep", held))
    queue.sent.clear()
    assert jobs.sweep(tstore, queue, redispatch_after_s=0) == 4  # nothing in play: every lost task
    queue.drain(tstore)
    assert tstore.progress("sweep").state == "finished" and jobs.sweep(tstore, queue) == 0


def test_a_resumed_table_keeps_its_forfeit_decision_without_waiting_again(
    tstore: TournamentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    entrants = (*builtins("heuristic", "random"), SeatSpec.connected("a7", "late"))
    tstore.client.hset(tstore.keys.agent("a7"), mapping={"name": "late", "kind": "connected"})
    queue = Queue()
    jobs.start(tstore, Tournament("keep", entrants, seats=3, deals=1, overrides=OPTIONS, grace_s=60), queue)
    assert tstore.decide_forfeits("keep", "r1t0", ["late"]) == ["late"]  # decided by a runner that then died
    assert tstore.decide_forfeits("keep", "r1t0", []) == ["late"]  # the first decision stands

    def never(*args: object) -> list[str]:
        raise AssertionError("a resumed table waited for presence again")

    monkeypatch.setattr(jobs, "absent_entrants", never)
    assert queue.drain(tstore) == ["finished"]
    assert {row.entrant: row.forfeits for row in standings(duplicate_observations(tstore.game_results("keep")), 10)}[
        "late"
    ] == 3


def test_an_endpoint_entrants_address_is_the_hosts(
    tstore: TournamentStore, endpoint_agent: str, shared_redis_server: EmbeddedRedis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An endpoint entrant given by its address alone is named "endpoint", not by the address (its
    name is public: standings, records, spectators); the export of others has no address at all."""
    monkeypatch.setenv("REDIS_URL", shared_redis_server.url)
    entrant = parse_entrant(f"endpoint:{endpoint_agent}")
    assert entrant.name == "endpoint" and entrant.address == endpoint_agent
    queue = Queue()
    jobs.start(
        tstore,
        Tournament("ea", (*builtins("heuristic", "random"), entrant), seats=3, deals=1, overrides=OPTIONS),
        queue,
    )
    assert queue.drain(tstore) == ["finished"]
    public = "".join(operations.export(tstore, "ea", "json", 100, addresses=False)[0])
    hosts = "".join(operations.export(tstore, "ea", "json", 100)[0])
    assert endpoint_agent not in public and endpoint_agent in hosts
    records = json.loads(public)["records"]
    assert len(records) == 3 and all(not record["faults"] for record in records.values())
    assert all({"name": "endpoint", "kind": "endpoint"} in record["seats"] for record in records.values())
    with pytest.raises(TournamentError, match="'endpoint' is given twice .*=NAME"):
        Tournament("ea2", (*builtins("random"), entrant, parse_entrant("endpoint:127.0.0.1:9")), seats=3)


def test_the_sweep_sends_a_table_whose_runner_died_once_per_runner(tstore: TournamentStore) -> None:
    """A table whose runner died is sent again at once, but only once until another runner starts it
    (or it waited ``redispatch_after_s`` since): it was sent again at every sweep (2 s) for as long
    as its task waited behind others, and each copy then retried every lease period ('busy') for as
    long as the table was played."""
    tourney = Tournament("once", builtins(*["random"] * 3), seats=3, deals=1, overrides=OPTIONS)
    queue = Queue()
    jobs.start(tstore, tourney, queue)
    queue.sent.clear()
    assert tstore.start_table("once", "r1t0", "gone:1:x", lease_s=30) == "run"
    tstore.client.delete(tstore.keys.tourney_lease("once", "r1t0"))  # its runner died: the lease lapsed
    assert [jobs.sweep(tstore, queue, redispatch_after_s=30) for _ in range(3)] == [1, 0, 0]
    assert tstore.start_table("once", "r1t0", "gone:2:y", lease_s=30) == "run"  # the copy started, and died
    tstore.client.delete(tstore.keys.tourney_lease("once", "r1t0"))
    assert [jobs.sweep(tstore, queue, redispatch_after_s=30) for _ in range(2)] == [1, 0]
    assert jobs.sweep(tstore, queue, redispatch_after_s=0) == 1  # that copy was lost too: sent after the wait
    assert queue.drain(tstore)[0] == "finished" and tstore.progress("once").state == "finished"


def test_a_game_lost_with_redis_is_played_again_before_its_table_finishes(
    tstore: TournamentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redis killed and restarted within a lease (AOF with ``everysec``) may come back without the
    last second's writes: here the first game's result, lost once the second is recorded, while the
    runner and its lease live on. The table was then finished without that game, and the tournament
    ended with two games of three; now a table finishes only with all its games, and the runner plays
    the missing one again (same cards, same seeds)."""
    queue = Queue()
    jobs.start(tstore, Tournament("lost", builtins("heuristic", "random", "strong"), deals=1, overrides=OPTIONS), queue)
    record_game = tstore.record_game
    lost: list[str] = []

    def losing_the_first(tourney_id: str, game: str, *args: object) -> bool:
        recorded = record_game(tourney_id, game, *args)  # type: ignore[arg-type]
        if game == "r1t0/d0/r1" and not lost:
            lost.append("r1t0/d0/r0")
            tstore.client.hdel(tstore.keys.tourney_games("lost"), *lost)
            tstore.client.hdel(tstore.keys.tourney_records("lost"), *lost)
        return recorded

    monkeypatch.setattr(tstore, "record_game", losing_the_first)
    assert queue.drain(tstore) == ["finished"]
    progress = tstore.progress("lost")
    assert (progress.state, progress.tables_done, progress.games_done) == ("finished", 1, 3)
    assert sorted(tstore.records("lost")) == ["r1t0/d0/r0", "r1t0/d0/r1", "r1t0/d0/r2"]
    assert tstore.logged_tables("lost") == ["r1t0"]


def test_a_table_no_worker_starts_is_sent_again_less_and_less_often(tstore: TournamentStore) -> None:
    """A queue no worker takes from (the remote worker down) got a copy of every queued table each
    ``redispatch_after_s`` for as long as it lasted (2,880 a day per table), and once a worker came
    back every copy of a table in play retried each lease period. Now each copy waits twice as long
    as the one before, up to 64 times ``redispatch_after_s``; a start begins the count again."""
    tourney = Tournament("lonely", builtins(*["random"] * 3), seats=3, deals=1, overrides=OPTIONS)
    queue = Queue()
    jobs.start(tstore, tourney, queue)
    queue.sent.clear()
    key = tstore.keys.tourney_table("lonely", "r1t0")

    def sweep_after(seconds: float) -> int:
        """A sweep once ``seconds`` have passed since the table was last sent."""
        tstore.client.hset(key, "dispatched_ms", str(int(time.time() * 1000 - seconds * 1000)))
        return jobs.sweep(tstore, queue, redispatch_after_s=10)

    assert [sweep_after(s) for s in (11, 11, 21, 39, 41, 81, 161, 321, 639, 641, 641)] == [
        1,
        0,
        1,
        0,
        1,
        1,
        1,
        1,
        0,
        1,
        1,
    ]
    assert len(queue.sent) == 8
    assert tstore.start_table("lonely", "r1t0", "gone:1:x", lease_s=30) == "run"  # a copy started, and died
    tstore.client.delete(tstore.keys.tourney_lease("lonely", "r1t0"))
    assert jobs.sweep(tstore, queue, redispatch_after_s=10) == 1  # at once: its runner is gone
    assert [sweep_after(s) for s in (11, 11, 21)] == [1, 0, 1]  # the count began again


def test_a_cancelled_tournament_plays_no_further_game_and_keeps_what_was_recorded(
    tstore: TournamentStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host cancels once the fourth game of the first table is recorded: its runner stops before
    the fifth and releases its lease; the other tables, sent already, never start; nothing more is
    recorded, sent again, resumed or ended; the standings count the one complete deal, and the
    deals and records are published as once finished."""
    tourney = Tournament("cx", builtins("heuristic", "random", "heuristic", "random"), deals=2, overrides=OPTIONS)
    queue = Queue()
    jobs.start(tstore, tourney, queue)
    first = queue.sent[0][1]
    record_game = tstore.record_game
    recorded: list[str] = []

    def cancelling_after_the_fourth(tourney_id: str, game: str, *args: object) -> bool:
        recorded.append(game)
        done = record_game(tourney_id, game, *args)  # type: ignore[arg-type]
        if len(recorded) == 4:
            assert operations.cancel(tstore, "cx")[2] == 4  # every table unfinished
        return done

    monkeypatch.setattr(tstore, "record_game", cancelling_after_the_fourth)
    assert queue.drain(tstore) == ["cancelled"] * 4
    assert len(recorded) == 4 and len(tstore.finished_games("cx")) == 4
    assert not tstore.client.exists(tstore.keys.tourney_lease("cx", first))  # released, not left to lapse
    progress = tstore.progress("cx")
    assert (progress.state, progress.tables_done, progress.games_done) == ("cancelled", 0, 4)
    assert progress.finished_ms >= progress.created_ms
    assert {state["state"] for state in tstore.table_states("cx", list(tstore.tables("cx"))).values()} == {"cancelled"}
    assert jobs.run_table(tstore, "cx", first, queue) == "cancelled"  # a task sent again before the cancel
    game = "r1t1/d0/r0"
    assert not record_game("cx", game, {"unit": "r1t1/d0", "seats": [], "scores": [], "forfeited": []}, {})
    assert jobs.sweep(tstore, queue, redispatch_after_s=0) == 0 and queue.sent == []
    with pytest.raises(TournamentError, match="cancelled"):
        jobs.resume(tstore, "cx", queue)
    jobs.advance(tstore, "cx", queue)
    assert tstore.progress("cx") == progress and tstore.finished_games("cx") == set(recorded)
    rows = operations.current_standings(tstore, "cx", 100)
    assert {(row.games, row.deals) for row in rows} == {(3, 1)}  # d0 complete; d1 had one rotation of three
    assert set(tstore.records("cx")) == set(recorded) and len(tstore.deals("cx")) == 4
    pieces, ended = operations.export(tstore, "cx", "json", 100)
    document = json.loads("".join(pieces))
    assert ended and (document["state"], document["finished"], len(document["records"])) == ("cancelled", True, 4)
    with pytest.raises(TournamentError, match=r"tournament_id: the tournament 'cx' was cancelled already"):
        operations.cancel(tstore, "cx")
    with pytest.raises(TournamentError, match=r"tournament_id: no tournament 'nope'"):
        operations.cancel(tstore, "nope")
    jobs.start(tstore, Tournament("done", builtins("random", "random", "random"), deals=1, overrides=OPTIONS), queue)
    assert queue.drain(tstore) == ["finished"]
    with pytest.raises(TournamentError, match=r"tournament_id: the tournament 'done' has finished already"):
        operations.cancel(tstore, "done")


def test_a_table_in_play_when_its_tournament_is_cancelled_keeps_its_deals_until_its_runner_stops(
    tstore: TournamentStore,
) -> None:
    """A runner plays the game in hand to its end after a cancel (it stops before the next one; the
    game is not recorded): the export published every deal set at once, so anyone could read the
    hands of a game its agents were still playing. Its table's deals now wait until the runner lets
    go of the table (as it does before its next game, or its lease lapses)."""
    tourney = Tournament("cp", builtins("heuristic", "random", "heuristic", "random"), deals=1, overrides=OPTIONS)
    queue = Queue()
    jobs.start(tstore, tourney, queue)
    in_play, *others = [table for _, table in queue.sent]
    assert tstore.start_table("cp", in_play, "runner-1", 30.0) == "run"
    assert tstore.next_game("cp", in_play, "runner-1", 30.0) == "run"  # its first game starts
    operations.cancel(tstore, "cp")

    def exported_deals() -> set[str]:
        pieces, ended = operations.export(tstore, "cp", "json", 100)
        assert ended
        return set(json.loads("".join(pieces))["deals"])

    assert exported_deals() == set(others) and set(tstore.deals("cp")) == set(others)
    assert tstore.next_game("cp", in_play, "runner-1", 30.0) == "cancelled"  # the runner stops
    assert exported_deals() == {in_play, *others}


def test_a_shown_deal_set_is_redrawn_once_and_a_stale_runner_records_nothing(tstore: TournamentStore) -> None:
    """A first rotation shown to an agent and never recorded is redrawn (``jobs.unseen_deals``). Two
    runners redrawing it at once (a redelivered task beside a stalled one) keep one draw between them;
    the runner that read the old deal set has its games refused, so one deal set is never played with
    two deals; once a game of the set is recorded it is kept as it is."""
    jobs.start(tstore, Tournament("rd", builtins("heuristic", "random", "strong"), deals=2, overrides=OPTIONS), Queue())
    created, redealt = tstore.dealt("rd", "r1t0")
    game = Game(Tournament("rd", builtins("random", "random", "random"), overrides=OPTIONS).rules(), 3)
    first, second = (draw_deal_set(game, random.Random(seed)) for seed in (1, 2))
    games = ["r1t0/d0/r0", "r1t0/d0/r1", "r1t0/d0/r2"]
    assert tstore.redeal("rd", "r1t0", 0, games, first) == (created, 0)  # never shown: kept
    tstore.mark_shown("rd", "r1t0", 0)
    assert tstore.shown_deals("rd", "r1t0") == [0]
    assert tstore.redeal("rd", "r1t0", 0, games, first) == ([first, created[1]], 1)
    assert tstore.redeal("rd", "r1t0", 0, games, second) == ([first, created[1]], 1)  # the other runner
    assert tstore.shown_deals("rd", "r1t0") == []
    result = {"table": "r1t0", "unit": "r1t0/d0", "seats": [], "scores": [], "forfeited": []}
    assert not tstore.record_game("rd", games[0], result, {}, redealt)  # read before the redraw
    assert tstore.record_game("rd", games[0], result, {}, 1)
    tstore.mark_shown("rd", "r1t0", 0)
    assert tstore.redeal("rd", "r1t0", 0, games, second) == ([first, created[1]], 1)  # a game of it counts


def test_a_builtin_table_marks_no_deal_as_shown(tstore: TournamentStore) -> None:
    """Built-in bots remember nothing between attempts: their tables are replayed as dealt."""
    queue = Queue()
    jobs.start(tstore, Tournament("bt", builtins("heuristic", "random", "strong"), deals=1, overrides=OPTIONS), queue)
    created = tstore.table_deals("bt", "r1t0")
    assert queue.drain(tstore) == ["finished"]
    assert tstore.shown_deals("bt", "r1t0") == [] and tstore.table_deals("bt", "r1t0") == created


def test_an_away_mark_is_stored_with_the_forfeit_decision_and_survives_its_runner(tstore: TournamentStore) -> None:
    """A runner that died right after deciding that an absent entrant forfeits its table left the mark
    with the decision: the entrant's next table, run by another runner, forfeits it without waiting."""
    entrants = (SeatSpec.connected("a5", "ghost"), *builtins("random", "heuristic", "random"))
    tstore.client.hset(tstore.keys.agent("a5"), mapping={"name": "ghost", "kind": "connected"})
    jobs.start(tstore, Tournament("mark", entrants, seats=3, deals=1, overrides=OPTIONS, grace_s=30), Queue())
    first, second = [table for table, plan in tstore.tables("mark").items() if 0 in plan.entrants][:2]
    seats = jobs.table_seats(tstore.get("mark"), tstore.tables("mark")[first])
    absence = jobs.absent_entrants(tstore, seats, 0, tourney_id="mark", table=first)
    assert tstore.decide_forfeits("mark", first, absence.names, absence.away, absence.online) == ["ghost"]
    (mark,) = tstore.away_marks("mark")
    assert (mark.agent_id, mark.name, mark.table) == ("a5", "ghost", first)
    assert tstore.decide_forfeits("mark", first, [], (), ["a5"]) == ["ghost"]  # decided: no mark changes
    started = time.monotonic()
    assert jobs.run_table(tstore, "mark", second, Queue(), lease_s=5.0) == "finished"
    assert time.monotonic() - started < 5 and tstore.table_state("mark", second)["forfeits"] == '["ghost"]'
    assert tstore.away_marks("mark") == [mark]  # still away: its first 'since' stays


def test_a_table_waiting_for_an_entrant_stops_once_another_table_marks_it_away(tstore: TournamentStore) -> None:
    """Two tables waiting for the same absent entrant at once: when one gives up on it, the other does."""
    ghost = SeatSpec.connected("a6", "ghost")
    away = AwayMark("a6", "ghost", 1, "r1t0")
    timer = threading.Timer(0.3, lambda: tstore.decide_forfeits("both", "r1t0", ["ghost"], [AwaySighting(away, 0)]))
    started = time.monotonic()
    timer.start()
    try:
        absence = jobs.absent_entrants(tstore, [ghost, *builtins("random")], 30, tourney_id="both", table="r1t1")
    finally:
        timer.cancel()
    assert time.monotonic() - started < 3 and absence.names == ["ghost"] and absence.online == []


def look(store: TournamentStore, tourney_id: str, table: str, online: bool) -> jobs.Absence:
    """Table ``table``'s wait for its entrants ghost (a7: online or not) and a built-in, ended at once;
    its forfeits not decided yet."""
    presence = store.keys.agent_presence("a7")
    if online:
        store.client.set(presence, "gw-1", ex=10)
    else:
        store.client.delete(presence)
    return jobs.absent_entrants(store, [GHOST, *builtins("random")], 0, tourney_id=tourney_id, table=table)


GHOST = SeatSpec.connected("a7", "ghost")


def test_a_table_that_saw_an_entrant_away_does_not_mark_it_after_a_later_table_saw_it_online(
    tstore: TournamentStore,
) -> None:
    """Table r1t0's wait ended with ghost away; ghost came online and r1t1, starting then, decided its
    forfeits first (clearing any mark); r1t0's decision put the mark back after that: ghost's next
    table would have forfeited it without waiting."""
    first = look(tstore, "race", "r1t0", online=False)
    second = look(tstore, "race", "r1t1", online=True)
    assert tstore.decide_forfeits("race", "r1t1", second.names, second.away, second.online) == []
    assert tstore.decide_forfeits("race", "r1t0", first.names, first.away, first.online) == ["ghost"]
    assert tstore.away_marks("race") == []


def test_a_table_that_did_not_wait_for_a_marked_entrant_never_marks_it_in_its_own_name(
    tstore: TournamentStore,
) -> None:
    """r1t1 did not wait for ghost (marked away by r1t0); r1t2 saw ghost online and cleared the mark
    before r1t1 decided, which then marked ghost away as having forfeited r1t1 "after waiting for it".
    A later table that does wait for it marks it again."""
    first = look(tstore, "named", "r1t0", online=False)
    assert tstore.decide_forfeits("named", "r1t0", first.names, first.away, first.online) == ["ghost"]
    assert [mark.table for mark in tstore.away_marks("named")] == ["r1t0"]
    unwaited = look(tstore, "named", "r1t1", online=False)
    assert unwaited.names == ["ghost"]
    seen = look(tstore, "named", "r1t2", online=True)
    assert tstore.decide_forfeits("named", "r1t2", seen.names, seen.away, seen.online) == []
    assert tstore.decide_forfeits("named", "r1t1", unwaited.names, unwaited.away, unwaited.online) == ["ghost"]
    assert tstore.away_marks("named") == []
    again = look(tstore, "named", "r1t3", online=False)
    assert tstore.decide_forfeits("named", "r1t3", again.names, again.away, again.online) == ["ghost"]
    assert [mark.table for mark in tstore.away_marks("named")] == ["r1t3"]
