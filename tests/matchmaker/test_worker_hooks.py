"""The Celery worker's process hooks (workers/signals.py) and its start-up checks of its settings."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

import pytest
from celery.signals import worker_process_init

from arena.embedded_redis import EmbeddedRedis
from arena.ladder import settings as ladder_settings
from arena.settings import SettingError
from arena.tournament import jobs as tournament_jobs
from workers import signals


def test_a_new_pool_child_keeps_the_collector_off_its_start_up_heap() -> None:
    before = gc.get_threshold()
    try:
        worker_process_init.send(sender=None)  # what billiard's child sends once it has started
        assert gc.get_freeze_count() > 10_000  # this process's modules, as a child's would be
        assert gc.get_threshold() == (signals.YOUNG_GC_THRESHOLD, *before[1:])
        gc.collect()
        cycle: list[object] = []  # what is made from now on is still collected
        cycle.append(cycle)
        del cycle
        assert gc.collect() >= 1
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("OHELL_MATCH_LEASE_S", "ten"),
        ("OHELL_MATCH_LEASE_S", "-1"),
        ("OHELL_VISIBILITY_TIMEOUT_S", "1h"),
        ("OHELL_ARCHIVE_BACKLOG_MAX", "2e4"),
        ("OHELL_METRICS_PORT", "70000"),
        ("OHELL_WORKER_HEARTBEAT_S", "0"),
    ],
)
def test_a_malformed_setting_stops_the_worker_at_start_up_in_one_line(
    redis_server: EmbeddedRedis, name: str, value: str
) -> None:
    """Read only by the tasks, it failed every task with a ValueError while the worker looked well."""
    env = {**os.environ, "REDIS_URL": redis_server.url, name: value}
    command = [sys.executable, "-m", "celery", "-A", "workers.app", "worker", "--pool", "solo", "--without-gossip"]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the worker started with {name}={value!r}")
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0 and len(lines) == 1 and f"{name}={value!r}" in lines[0], done.stderr


@pytest.mark.parametrize("value", ["-1", "nan", "ten"])
def test_the_tournaments_read_the_match_lease_as_the_ladder_does(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    """The tournaments' runner read OHELL_MATCH_LEASE_S with a bare float(), beside the ladder's
    checked reader: it took a lease of -1 or NaN seconds as given, which no lease can be."""
    monkeypatch.setenv("OHELL_MATCH_LEASE_S", value)
    for reader in (ladder_settings.lease_seconds, tournament_jobs.lease_seconds):
        with pytest.raises(SettingError, match=f"OHELL_MATCH_LEASE_S={value!r} must be a number from 0.1 to 86400"):
            reader()
    monkeypatch.setenv("OHELL_MATCH_LEASE_S", " ")
    assert ladder_settings.lease_seconds() == tournament_jobs.lease_seconds() == 10.0


@pytest.mark.slow
def test_a_malformed_backlog_bound_stops_the_matchmaker_at_start_up_in_one_line(redis_server: EmbeddedRedis) -> None:
    """Its forming loop read it each round and failed every round."""
    env = {**os.environ, "OHELL_ARCHIVE_BACKLOG_MAX": "lots"}
    command = [sys.executable, "-m", "services.matchmaker", "--address", "127.0.0.1:0", "--redis-url", redis_server.url]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("the matchmaker started with OHELL_ARCHIVE_BACKLOG_MAX='lots'")
    assert done.returncode == 2 and done.stderr.strip() == (
        "error: OHELL_ARCHIVE_BACKLOG_MAX='lots' must be a whole number from 1"
    ), done.stderr
