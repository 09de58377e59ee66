"""Batches of built-in matches on the real stack (redis-server, matchmaker, Celery worker processes):
a worker killed mid-batch loses no match and counts none twice; a duplicated batch task is harmless."""

from __future__ import annotations

import os
import signal
import threading
import urllib.request
from collections.abc import Callable

import pytest
from celery import Celery
from prometheus_client.parser import text_string_to_metric_families

from arena.clock import now_ms
from arena.embedded_redis import EmbeddedRedis
from arena.ladder.matchlog import read_log
from arena.ladder.redis_store import RedisStore
from arena.ladder.routing import QUEUE_BUILTIN, RUN_MATCHES
from arena.local.stack import WORKER_READY, Stack

from .helpers import builtin_ladder, leave_all, match_state, scrape, settle, wait_until
from .test_faults import assert_rated_exactly_once

pytestmark = pytest.mark.slow  # starts whole stacks of processes; `-m "not slow"` leaves it out

BATCH = ("--sweep-every", "0.5", "--tick", "0.02", "--batch", "4")


def start_one_batch(store: RedisStore, name: str) -> tuple[list[str], list[str]]:
    """A paused ladder of 16 built-in agents (~0.3 s per match), then unpaused: its first forming
    round seats all four tables, sent as one batch. Returns (agents, the batch's match ids)."""
    agents = builtin_ladder(store, name, bots=("heuristic", "random") * 8, think_ms=10, paused=True)
    store.set_paused(name, False)
    batch = [f"{name}-{n}" for n in range(1, 5)]
    wait_until(lambda: store.client.exists(store.keys.match_lease(batch[0])), 20, "the batch to start")
    return agents, batch


def mid_batch_runner(store: RedisStore, ladder: str, batch: list[str]) -> str:
    """Wait until the batch has stored a match and still holds others; the runner holding them."""

    def unfinished() -> list[str]:
        states = [store.client.hget(store.keys.match(match_id), "state") for match_id in batch]
        return [match_id for match_id, state in zip(batch, states, strict=True) if state == b"running"]

    wait_until(lambda: store.client.xlen(store.keys.log(ladder)) >= 1 and len(unfinished()) >= 2, 20, "mid-batch")
    runners = {store.client.hget(store.keys.match(match_id), "runner") for match_id in unfinished()}
    assert len(runners) == 1, runners  # claimed together, held by one task run
    return runners.pop().decode()


def assert_none_lost(stack: Stack, store: RedisStore, ladder: str, batch: list[str]) -> None:
    ids = assert_rated_exactly_once(store, ladder, 4)
    assert len(ids) == int(store.client.get(store.keys.match_seq))  # every match created was logged, once
    assert set(batch) <= set(ids)
    assert all(match_state(stack, store, match_id)[0] == "finished" for match_id in batch)


def test_a_child_killed_mid_batch_loses_none_and_duplicated_batches_are_harmless(
    make_stack: Callable[..., Stack], store: RedisStore, redis_server: EmbeddedRedis
) -> None:
    stack = make_stack(engine=False, metrics=True, matchmaker_args=BATCH)
    agents, batch = start_one_batch(store, "k")
    runner = mid_batch_runner(store, "k", batch)
    held = [  # the batch's matches not stored yet: each one is started again after the kill
        m for m in batch if store.client.hmget(store.keys.match(m), "runner", "state") == [runner.encode(), b"running"]
    ]
    os.kill(int(runner.split(":")[1]), signal.SIGKILL)  # the pool child playing the batch
    stored = {summary["match_id"] for _, summary in read_log(store.client, store.keys, "k")}
    held = [m for m in held if m not in stored]  # (one may have been stored just before the kill)
    wait_until(lambda: all(match_state(stack, store, m)[0] == "finished" for m in batch), 40, "the batch's recovery")
    assert held and all(match_state(stack, store, m)[1] >= 2 for m in held)
    wait_until(lambda: store.client.xlen(store.keys.log("k")) >= 12, 40, "the ladder to go on")
    leave_all(store, "k", agents)
    settle(store, ["k"], timeout=40)
    assert_none_lost(stack, store, "k", batch)
    assert scrape(stack.metrics_ports["worker-builtin0"], "ohell_match_batch_size_count") >= 1

    # one batch sent three times at once, and once more after it finished; the matchmaker is stopped
    # first so that the tables are formed by this test's claim and not by its forming loop
    next(proc for proc in stack.procs if proc.name == "matchmaker").stop()
    for agent in agents[:8]:
        store.join("k", agent, None)
    claimed = [match_id for match_id in store.claim("k", [agents[:4], agents[4:8]], now_ms()) if match_id]
    assert len(claimed) == 2
    sender = Celery(broker=redis_server.url)
    copies = [
        threading.Thread(
            target=sender.send_task, args=(RUN_MATCHES,), kwargs={"args": [claimed], "queue": QUEUE_BUILTIN}
        )
        for _ in range(3)
    ]
    for thread in copies:
        thread.start()
    for thread in copies:
        thread.join()
    wait_until(lambda: all(match_state(stack, store, m)[0] == "finished" for m in claimed), 40, "the duplicated batch")
    sender.send_task(RUN_MATCHES, args=[claimed], queue=QUEUE_BUILTIN)
    settle(store, ["k"])
    assert [match_state(stack, store, m) for m in claimed] == [("finished", 1)] * 2  # the copies found them held
    assert_none_lost(stack, store, "k", batch + claimed)


def test_a_whole_worker_killed_mid_batch_is_recovered_match_by_match(
    make_stack: Callable[..., Stack], store: RedisStore
) -> None:
    """SIGKILL to the worker's main process and children: the batch's task is not requeued (the
    broker would only after its visibility timeout), but every match of the batch was leased when
    the batch started, so the sweep sends each one again, alone, once the leases lapse; even those
    the dead batch never began."""
    # a match the dead worker had taken but not started is sent again only after --redispatch-after:
    # shorter than its default (30 s), which the test waited out at the end
    redispatch_after_s = 12
    stack = make_stack(engine=False, matchmaker_args=(*BATCH, "--redispatch-after", str(redispatch_after_s)))
    agents, batch = start_one_batch(store, "w")
    mid_batch_runner(store, "w", batch)
    first_sent = {match_id: store.dispatched(match_id).at_ms for match_id in batch}
    worker = stack.workers[0].popen
    os.killpg(worker.pid, signal.SIGKILL)
    worker.wait()
    resent_after_ms: dict[str, int] = {}  # read while polling: the archive deletes a finished match's hash

    def recovered() -> bool:
        for match_id in batch:
            sent_ms = store.dispatched(match_id).at_ms
            if sent_ms and sent_ms != first_sent[match_id]:
                resent_after_ms.setdefault(match_id, sent_ms - first_sent[match_id])
        return all(match_state(stack, store, m)[0] == "finished" for m in batch)

    wait_until(recovered, 40, "the batch's recovery")
    # those not stored before the kill were sent again as their leases lapsed, not by
    # --redispatch-after's resend (they were all leased)
    assert resent_after_ms and max(resent_after_ms.values()) < redispatch_after_s * 1000, resent_after_ms
    assert stack.worker_restarts >= 1
    leave_all(store, "w", agents)
    settle(store, ["w"], timeout=40)
    assert_none_lost(stack, store, "w", batch)


def batch_sizes(port: int) -> dict[str, float]:
    """The worker's ``ohell_match_batch_size`` histogram: cumulative count by bucket bound ("2.0", ...)."""
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return {
        sample.labels["le"]: sample.value
        for family in text_string_to_metric_families(body)
        for sample in family.samples
        if sample.name == "ohell_match_batch_size_bucket"
    }


def test_the_matchmakers_batch_size_decides_the_batches_workers_form_next(
    make_stack: Callable[..., Stack], store: RedisStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host sets the matchmaker's --batch 2 (the workers' environment says nothing): the batches a
    worker forms and plays itself after storing one (jobs.form_next) hold at most 2 matches too.
    The matchmaker sends one batch of two tables and stops; 24 more agents wait in the queue; then a
    worker of one process starts: storing that batch, it finds 32 agents, 8 tables, and no task
    waiting, so it keeps one batch and sends the rest (with the workers' default, 6, it kept 4)."""
    monkeypatch.delenv("OHELL_MATCH_BATCH", raising=False)
    stack = make_stack(
        engine=False,
        metrics=True,
        remote_worker=False,
        builtin_workers=0,
        matchmaker_args=("--sweep-every", "60", "--tick", "0.02", "--batch", "2"),
    )
    # all eight queue before the loop may form (it would otherwise send the first four alone)
    agents = builtin_ladder(store, "n", bots=("random",) * 8, paused=True)
    store.set_paused("n", False)
    wait_until(lambda: store.builtin_tasks_waiting() == 1, 20, "the matchmaker's batch of two tables")
    assert int(store.client.get(store.keys.match_seq)) == 2
    next(proc for proc in stack.procs if proc.name == "matchmaker").stop()
    for index in range(24):
        agent, _ = store.register_agent(f"n-late-{index}", "builtin", bot="random")
        store.join("n", agent.agent_id, None, enroll=True)
        agents.append(agent.agent_id)
    stack.start_worker("builtin0", concurrency=1).wait_for(WORKER_READY, 60)
    wait_until(lambda: store.client.xlen(store.keys.log("n")) >= 24, 60, "the workers to carry the ladder on")
    store.set_paused("n", True)
    settle(store, ["n"], timeout=40)
    sizes = batch_sizes(stack.metrics_ports["worker-builtin0"])
    assert sizes["+Inf"] >= 3, sizes  # the matchmaker's batch and batches the worker formed itself
    assert sizes["2.0"] == sizes["+Inf"], f"a worker formed a batch of more than 2 matches: {sizes}"
