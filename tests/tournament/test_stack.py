"""Tournaments on the real stack: Celery workers play the tables; a worker child is SIGKILLed mid-table."""

from __future__ import annotations

import csv
import json
import os
import signal
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import redis

from arena.cli import main
from arena.embedded_redis import EmbeddedRedis, free_port
from arena.local.stack import Stack
from arena.tournament.standings import GameResult, duplicate_observations, standings
from arena.tournament.store import TournamentStore

from ..ladder.helpers import register_connected, wait_until

pytestmark = pytest.mark.slow  # starts whole stacks of processes


def cli(stack: Stack, *args: str) -> None:
    """An ``ohell tournament`` command: a gRPC client of the stack's matchmaker, with the host token."""
    connection = ["--matchmaker", stack.matchmaker_address, "--host-token-file", str(stack.host_token_path)]
    assert main(["tournament", *args, *connection]) == 0


def standings_from_records(records: dict[str, dict]) -> list:  # type: ignore[type-arg]
    games = [
        GameResult(game.rpartition("/")[0], tuple(seat["name"] for seat in record["seats"]), tuple(record["totals"]))
        for game, record in records.items()
    ]
    return standings(duplicate_observations(games), 500)


def test_round_robin_of_six_builtins_completes_and_exports(
    make_stack: Callable[..., Stack], redis_server: EmbeddedRedis, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stack = make_stack(engine=False, remote_worker=False)
    bots = ("heuristic", "random", "heuristic", "random", "heuristic", "random")
    entrants = [f"--entrant=builtin:{bot}={bot}-{n}" for n, bot in enumerate(bots)]
    cli(stack, "list")  # none yet: said on standard error (it printed nothing); standard output stays empty
    assert capsys.readouterr() == ("", "no tournaments yet (create one: ohell tournament create --help)\n")
    cli(stack, "create", "six", *entrants, "--deals", "1", "--option", "hand_sizes=[3,2,1]")
    assert "tournament six: 20 tables in round 1, 60 games in all" in capsys.readouterr().out
    store = TournamentStore(redis.Redis.from_url(redis_server.url))
    wait_until(lambda: store.progress("six").state == "finished", 120, "the round robin to finish", poll=0.2)
    progress = store.progress("six")
    assert (progress.tables, progress.tables_done, progress.games_done) == (20, 20, 60)
    assert Counter(store.logged_tables("six")) == Counter({table: 1 for table in store.tables("six")})
    cli(stack, "export", "six", "--replicates", "500", "--format", "json", "--out", str(tmp_path / "six.json"))
    cli(stack, "export", "six", "--replicates", "500", "--out", str(tmp_path / "six.csv"))
    exported = json.loads((tmp_path / "six.json").read_text())
    assert len(exported["records"]) == 60 and len(exported["deals"]) == 20
    recomputed = standings_from_records(exported["records"])
    assert [row.entrant for row in recomputed] == [row["entrant"] for row in exported["standings"]]
    assert [row.mean_duplicate for row in recomputed] == [row["mean_duplicate"] for row in exported["standings"]]
    assert [row.ci_low for row in recomputed] == [row["ci_low"] for row in exported["standings"]]
    rows = list(csv.DictReader((tmp_path / "six.csv").open()))
    assert [row["entrant"] for row in rows] == [row.entrant for row in recomputed]
    assert sum(row.games for row in recomputed) == 180
    capsys.readouterr()
    cli(stack, "resume", "six")  # it said "sent 0 unfinished table(s) again: -"
    assert capsys.readouterr().out.strip() == "six: no unfinished table to send again (`ohell tournament status six`)"


def test_worker_child_killed_mid_table_resumes_and_counts_every_table_once(
    make_stack: Callable[..., Stack], redis_server: EmbeddedRedis, tmp_path: Path
) -> None:
    stack = make_stack(engine=False, remote_worker=False)
    entrants = ["--entrant=builtin:strong", "--entrant=builtin:heuristic", "--entrant=builtin:random"]
    cli(stack, "create", "kill", *entrants, "--deals", "3", "--option", "hand_sizes=[4,3,2,1]")
    store = TournamentStore(redis.Redis.from_url(redis_server.url))
    wait_until(lambda: store.progress("kill").games_done >= 1, 60, "the first game of the table", poll=0.05)
    state = store.table_state("kill", "r1t0")
    assert state["state"] == "running" and store.progress("kill").games_done < 9
    os.kill(int(state["runner"].split(":")[1]), signal.SIGKILL)  # the pool child playing the table
    cli(stack, "status", "kill")  # progress and provisional standings while it runs
    cli(stack, "standings", "kill", "--replicates", "200")
    cli(stack, "export", "kill", "--format", "json", "--replicates", "200", "--out", str(tmp_path / "k.json"))
    running = json.loads((tmp_path / "k.json").read_text())
    assert not running["finished"] and "records" not in running and "deals" not in running
    # provisional standings count the deals played in every rotation (none yet, or some)
    assert {row["entrant"] for row in running["standings"]} in (set(), {"strong", "heuristic", "random"})
    assert all(row["games"] % 3 == 0 and row["games"] == 3 * row["deals"] for row in running["standings"])
    wait_until(lambda: store.progress("kill").state == "finished", 120, "the killed table to be resumed", poll=0.2)
    assert int(store.table_state("kill", "r1t0")["attempts"]) >= 2
    assert store.logged_tables("kill") == ["r1t0"]
    records = store.records("kill")
    assert len(records) == store.progress("kill").games_done == 9
    assert standings_from_records(records) == standings(duplicate_observations(store.game_results("kill")), 500)


def test_whole_worker_killed_mid_table_is_recovered_by_the_sweep(
    make_stack: Callable[..., Stack], redis_server: EmbeddedRedis
) -> None:
    """SIGKILL to the worker's main process and its children: nothing requeues the task; the
    matchmaker's tournament sweep sends the table again once its lease lapses."""
    stack = make_stack(engine=False, remote_worker=False)
    entrants = ["--entrant=builtin:strong", "--entrant=builtin:heuristic", "--entrant=builtin:random"]
    cli(stack, "create", "whole", *entrants, "--deals", "3", "--option", "hand_sizes=[4,3,2,1]")
    store = TournamentStore(redis.Redis.from_url(redis_server.url))
    wait_until(lambda: store.progress("whole").games_done >= 1, 60, "the first game of the table", poll=0.05)
    worker = stack.workers[0].popen
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    wait_until(lambda: store.progress("whole").state == "finished", 90, "the table to be recovered", poll=0.2)
    assert int(store.table_state("whole", "r1t0")["attempts"]) >= 2 and stack.worker_restarts >= 1
    assert store.logged_tables("whole") == ["r1t0"] and len(store.records("whole")) == 9


def test_cancelled_mid_run_no_game_is_played_after(
    make_stack: Callable[..., Stack], redis_server: EmbeddedRedis, capsys: pytest.CaptureFixture[str]
) -> None:
    """`ohell tournament cancel` while a worker plays the table: the runner stops before its next game
    and releases its lease (30 s here: gone at once only if released), no game is recorded after."""
    stack = make_stack(engine=False, remote_worker=False, env={"OHELL_MATCH_LEASE_S": "30"})
    entrants = ["--entrant=builtin:heuristic", "--entrant=builtin:random", "--entrant=builtin:heuristic=h2"]
    cli(stack, "create", "stop", *entrants, "--deals", "50")  # 150 full classic games: minutes
    store = TournamentStore(redis.Redis.from_url(redis_server.url))
    wait_until(lambda: store.progress("stop").games_done >= 3, 60, "the first games of the table", poll=0.05)
    capsys.readouterr()
    cli(stack, "cancel", "stop")
    recorded = store.progress("stop").games_done
    assert recorded < 150 and capsys.readouterr().out.strip() == (
        f"stop: cancelled; 1 unfinished table stopped, {recorded}/150 games recorded stay; the standings are final "
        "(`ohell tournament standings stop`)"
    )
    lease = store.keys.tourney_lease("stop", "r1t0")
    wait_until(lambda: not store.client.exists(lease), 10, "the runner to stop and release its lease", poll=0.05)
    time.sleep(2)  # a runner that went on would record a game every few tenths of a second
    progress = store.progress("stop")
    assert (progress.state, progress.games_done, len(store.records("stop"))) == ("cancelled", recorded, recorded)
    assert store.table_state("stop", "r1t0")["state"] == "cancelled" and store.logged_tables("stop") == []
    cli(stack, "status", "stop")
    cli(stack, "standings", "stop")
    cli(stack, "list")
    out = capsys.readouterr().out
    assert f"stop: cancelled, round 1 of 1, 0/1 tables, {recorded}/150 games played" in out
    assert "stop: final (cancelled) standings" in out and "stop\tcancelled\tround 1\t0/1 tables" in out
    connection = ["--matchmaker", stack.matchmaker_address, "--host-token-file", str(stack.host_token_path)]
    for command, said in (
        ("resume", "ResumeTournament: FAILED_PRECONDITION: tournament_id: the tournament 'stop' was cancelled"),
        ("cancel", "CancelTournament: FAILED_PRECONDITION: tournament_id: the tournament 'stop' was cancelled already"),
    ):
        assert main(["tournament", command, "stop", *connection]) == 2
        assert said in " ".join(capsys.readouterr().err.split())
    assert store.progress("stop").games_done == recorded


def test_status_names_the_connected_entrant_a_table_waits_for_and_until_when(
    make_stack: Callable[..., Stack], redis_server: EmbeddedRedis, capsys: pytest.CaptureFixture[str]
) -> None:
    """A table waiting out a connected entrant's grace period read only 'running 0/3', naming no one."""
    stack = make_stack(engine=False)
    agent_id, _ = register_connected(stack, "ghost")
    entrants = ["--entrant=builtin:random", "--entrant=builtin:heuristic", f"--entrant=connected:{agent_id}"]
    cli(stack, "create", "wait", *entrants, "--deals", "1", "--grace-s", "120", "--option", "hand_sizes=[2,1]")
    store = TournamentStore(redis.Redis.from_url(redis_server.url))
    wait_until(lambda: "waiting" in store.table_state("wait", "r1t0"), 60, "the table to wait for ghost", poll=0.05)
    capsys.readouterr()
    before = time.time()
    cli(stack, "status", "wait")
    out = " ".join(capsys.readouterr().out.split())
    line = out[out.index("table r1t0 waits") :]
    until = time.strftime(
        "%H:%M:%S UTC", time.gmtime(json.loads(store.table_state("wait", "r1t0")["waiting"])["until_ms"] / 1000)
    )
    assert line.startswith(f"table r1t0 waits for ghost (connected, not online) until {until} (")
    left_s = int(line.split(" (")[2].split(" s from now")[0])
    assert 0 < left_s <= 120 - (time.time() - before) + 1 and line.endswith(
        "s from now); whoever is still away then forfeits the table"
    )
    cli(stack, "standings", "wait")  # a table of headers alone, before
    assert capsys.readouterr().out.strip() == "wait: provisional standings: No game has finished yet."
    cli(stack, "cancel", "wait")  # the runner gives up its wait: nothing left to wait for
    capsys.readouterr()
    cli(stack, "status", "wait")
    assert "waits for" not in capsys.readouterr().out


def test_tables_with_an_unreachable_endpoint_leave_the_remote_workers_log_clean(
    make_stack: Callable[..., Stack], redis_server: EmbeddedRedis
) -> None:
    """The remote worker hosts each table on a thread of its pool, in an event loop of its own closed when
    the table ends: gRPC work an endpoint seat left pending then ended in a closed loop, and its log read
    "ERROR/MainProcess Exception in callback PollerCompletionQueue._handle_events ... RuntimeError: Event
    loop is closed" (tests/services/test_faults.py has the same in one process)."""
    stack = make_stack(engine=False, concurrency=1)
    entrants = [f"--entrant=builtin:random=random-{n}" for n in range(5)]
    entrants.append(f"--entrant=endpoint:127.0.0.1:{free_port()}=nowhere")  # nothing listens there
    cli(stack, "create", "far", *entrants, "--deals", "2", "--option", "hand_sizes=[2,1]")
    store = TournamentStore(redis.Redis.from_url(redis_server.url))
    wait_until(lambda: store.progress("far").state == "finished", 120, "the tournament to finish", poll=0.2)
    assert store.progress("far").games_done == 20 * 2 * 3  # those of the endpoint's 10 tables too
    log = (stack.log_dir / "worker-remote.log").read_text()
    assert "Traceback" not in log and "ERROR" not in log, log[-3000:]
