"""A worker's liveness check (python -m workers.health): alive while its event loop turns, even with
a pool child stuck in a long match; reported within its --max-age once the main process hangs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.embedded_redis import EmbeddedRedis

from .helpers import wait_until

MAX_AGE_S = 2.0


def check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "workers.health", "--max-age", str(MAX_AGE_S)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=30)


def wait_for(env: dict[str, str], returncode: int, timeout: float) -> subprocess.CompletedProcess[str]:
    """The check's answer once it is ``returncode``; the last answer when ``timeout`` ran out first."""
    deadline = time.monotonic() + timeout
    while True:
        done = check(env)
        if done.returncode == returncode or time.monotonic() > deadline:
            return done
        time.sleep(0.1)


def last_beat(env: dict[str, str]) -> float:
    """When the worker last beat: its heartbeat file's time."""
    return Path(env["OHELL_WORKER_HEARTBEAT"]).stat().st_mtime


def wait_for_beats_past(env: dict[str, str], moment: float, what: str) -> None:
    """Until the worker beat after ``moment`` (the heartbeat file's clock): it beats on."""
    wait_until(lambda: last_beat(env) > moment, 60, what)


def children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


@pytest.fixture
def worker_env(redis_server: EmbeddedRedis, tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "REDIS_URL": redis_server.url,
        "OHELL_WORKER_HEARTBEAT": str(tmp_path / "heartbeat"),
        "OHELL_WORKER_HEARTBEAT_S": "0.2",
    }


def start_worker(env: dict[str, str], pool: str) -> Iterator[subprocess.Popen[bytes]]:
    command = [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "-Q", "ohell.builtin"]
    command += ["--pool", pool, "--concurrency", "1", "--without-gossip", "--without-mingle"]
    worker = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield worker
    finally:
        os.kill(worker.pid, signal.SIGCONT)
        for child in children(worker.pid):
            os.kill(child, signal.SIGCONT)
        worker.terminate()
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


@pytest.mark.slow
@pytest.mark.parametrize("pool", ["prefork", "threads"])
def test_a_hung_worker_is_reported_within_the_checks_max_age(worker_env: dict[str, str], pool: str) -> None:
    assert check(worker_env).returncode == 1  # not started: no heartbeat
    for worker in start_worker(worker_env, pool):
        done = wait_for(worker_env, 0, timeout=60)
        assert done.returncode == 0, done.stdout
        wait_for_beats_past(worker_env, last_beat(worker_env) + MAX_AGE_S, "beats past the max age")  # not just once
        assert check(worker_env).returncode == 0
        os.kill(worker.pid, signal.SIGSTOP)  # the main process hangs: its loop no longer turns
        done = wait_for(worker_env, 1, timeout=MAX_AGE_S + 30)
        assert done.returncode == 1, done.stdout
        lines = done.stdout.strip().splitlines()
        assert len(lines) == 1 and "stuck" in lines[0] and f"(over {MAX_AGE_S:g} s)" in lines[0], done.stdout
        assert time.time() - last_beat(worker_env) > MAX_AGE_S  # no beat since: stuck for the beat's age
        os.kill(worker.pid, signal.SIGCONT)
        done = wait_for(worker_env, 0, timeout=30)
        assert done.returncode == 0, done.stdout


@pytest.mark.slow
def test_a_pool_child_busy_for_long_does_not_make_the_worker_look_dead(worker_env: dict[str, str]) -> None:
    """A remote match can take minutes in a child: the heartbeat comes from the loop, not from tasks."""
    for worker in start_worker(worker_env, "prefork"):
        done = wait_for(worker_env, 0, timeout=60)
        assert done.returncode == 0, done.stdout
        (child,) = children(worker.pid)
        os.kill(child, signal.SIGSTOP)  # as busy as can be, for longer than the check's max age
        stopped_at = last_beat(worker_env)
        wait_for_beats_past(worker_env, stopped_at + MAX_AGE_S * 2, "beats with the child stopped")
        done = check(worker_env)
        assert done.returncode == 0, done.stdout


@pytest.mark.slow
def test_a_worker_that_reconnected_to_redis_beats_again(
    redis_server: EmbeddedRedis, worker_env: dict[str, str]
) -> None:
    """Celery registers the heartbeat with its loop again each time the consumer reconnects."""
    for _ in start_worker(worker_env, "prefork"):
        done = wait_for(worker_env, 0, timeout=60)
        assert done.returncode == 0, done.stdout
        redis_server.stop()
        done = wait_for(worker_env, 1, timeout=MAX_AGE_S + 30)
        assert done.returncode == 1, done.stdout  # no loop while reconnecting: no beat (docs/operations.md)
        redis_server.start()
        done = wait_for(worker_env, 0, timeout=60)
        assert done.returncode == 0, done.stdout
