"""Faults on the real stack: a worker child killed mid-match, duplicated tasks, a Redis restart."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable

import pytest
from celery import Celery

from arena.clock import now_ms
from arena.embedded_redis import EmbeddedRedis
from arena.ladder.matchlog import read_log
from arena.ladder.ratings import replay, stored_ratings
from arena.ladder.redis_store import RedisStore
from arena.ladder.routing import QUEUE_BUILTIN, RUN_MATCH
from arena.local.stack import Stack

from .helpers import builtin_ladder, leave_all, match_state, scrape, settle, wait_until

pytestmark = pytest.mark.slow  # starts whole stacks of processes; `-m "not slow"` leaves it out


def logged_ids(store: RedisStore, ladder: str) -> list[str]:
    return [summary["match_id"] for _, summary in read_log(store.client, store.keys, ladder)]


def assert_rated_exactly_once(store: RedisStore, ladder: str, seats: int) -> list[str]:
    entries = list(read_log(store.client, store.keys, ladder))
    ids = [summary["match_id"] for _, summary in entries]
    assert len(ids) == len(set(ids))
    ratings, stats = replay(summary for _, summary in entries)
    assert stored_ratings(store.client, store.keys, ladder) == ratings
    assert sum(counts[0] for counts in stats.values()) == seats * len(ids)
    return ids


def test_worker_killed_mid_match_and_duplicated_tasks(
    make_stack: Callable[..., Stack], store: RedisStore, redis_server: EmbeddedRedis
) -> None:
    stack = make_stack(engine=False)
    agents = builtin_ladder(store, "slow", bots=("heuristic", "random") * 2, think_ms=40)  # ~1 s per match
    wait_until(lambda: store.client.exists(store.keys.match_lease("slow-1")), 20, "the first match to start")
    runner = store.client.hget(store.keys.match("slow-1"), "runner").decode()
    os.kill(int(runner.split(":")[1]), signal.SIGKILL)  # the pool child playing it
    wait_until(lambda: match_state(stack, store, "slow-1")[0] == "finished", 30, "the killed match to be recovered")
    assert match_state(stack, store, "slow-1")[1] >= 2
    leave_all(store, "slow", agents)
    settle(store, ["slow"])
    assert logged_ids(store, "slow").count("slow-1") == 1

    # the same match sent three times at once, and once more after it finished; the matchmaker is
    # stopped first so that the table is formed by this test's claim and not by its forming loop
    next(proc for proc in stack.procs if proc.name == "matchmaker").stop()
    for agent in agents:
        store.join("slow", agent, None)
    (match_id,) = store.claim("slow", [agents], now_ms())
    sender = Celery(broker=redis_server.url)
    threads = [
        threading.Thread(
            target=sender.send_task, args=(RUN_MATCH,), kwargs={"args": [match_id], "queue": QUEUE_BUILTIN}
        )
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wait_until(lambda: match_state(stack, store, match_id)[0] == "finished", 30, "the duplicated match to finish")
    sender.send_task(RUN_MATCH, args=[match_id], queue=QUEUE_BUILTIN)
    settle(store, ["slow"])
    assert match_state(stack, store, match_id) == ("finished", 1)  # the duplicates found it held or finished
    ids = assert_rated_exactly_once(store, "slow", 4)
    assert ids.count(match_id) == 1


def test_redis_restart_loses_no_finished_match_or_rating(
    make_stack: Callable[..., Stack], store: RedisStore, redis_server: EmbeddedRedis
) -> None:
    make_stack(engine=False, matchmaker_args=("--sweep-every", "0.5", "--tick", "0.02", "--redispatch-after", "3"))
    agents = builtin_ladder(store, "r", bots=("heuristic", "random") * 4, think_ms=2)
    wait_until(lambda: store.client.xlen(store.keys.log("r")) >= 20, 30, "20 logged matches")
    before = logged_ids(store, "r")
    rated_before = store.client.get(store.keys.rated("r"))
    redis_server.restart()  # SIGTERM: redis-server writes its AOF out and stops; then the same dir again
    after_restart = logged_ids(store, "r")
    assert after_restart[: len(before)] == before  # every finished match is still logged
    assert rated_before is None or store.client.get(store.keys.rated("r")) is not None
    wait_until(
        lambda: store.client.xlen(store.keys.log("r")) >= len(after_restart) + 20,
        45,
        "the ladder to go on after the restart",
    )
    leave_all(store, "r", agents)
    settle(store, ["r"], timeout=45)
    ids = assert_rated_exactly_once(store, "r", 4)
    created = int(store.client.get(store.keys.match_seq))
    assert len(ids) == created  # no match lost or stuck: each one finished and logged once


def test_whole_worker_killed_mid_match_is_recovered_by_the_sweep(
    make_stack: Callable[..., Stack], store: RedisStore
) -> None:
    """SIGKILL to the worker's main process and its children: nothing requeues the task (the
    broker would only after its visibility timeout); the matchmaker's sweep sends the match
    again once its lease lapses, and the restarted worker plays it."""
    stack = make_stack(engine=False, metrics=True)
    agents = builtin_ladder(store, "w", bots=("heuristic", "random") * 2, think_ms=40)
    wait_until(lambda: store.client.exists(store.keys.match_lease("w-1")), 20, "the first match to start")
    worker = stack.workers[0].popen
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    wait_until(lambda: match_state(stack, store, "w-1")[0] == "finished", 40, "the match to be recovered")
    assert match_state(stack, store, "w-1")[1] >= 2 and stack.worker_restarts >= 1
    leave_all(store, "w", agents)
    settle(store, ["w"])
    assert assert_rated_exactly_once(store, "w", 4).count("w-1") == 1
    assert scrape(stack.metrics_ports["matchmaker"], "ohell_matches_redispatched_total") >= 1
