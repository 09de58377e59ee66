"""What the Celery tasks do, as plain functions over the store (the tasks are thin shells)."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable

from arena.ladder import metrics
from arena.ladder.hosting import play_match
from arena.ladder.ratings import catch_up
from arena.services.matchmaker.model import Ladder
from arena.services.matchmaker.redis_store import RedisStore

DEFAULT_LEASE_S = 10.0


def lease_seconds() -> float:
    return float(os.environ.get("OHELL_MATCH_LEASE_S", DEFAULT_LEASE_S))


def runner_id() -> str:
    """host:pid:nonce: which process holds a match (the pid lets an operator find it)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class LeaseKeeper:
    """Renews the match lease in the background while the match is played."""

    def __init__(self, store: RedisStore, match_id: str, runner: str, lease_s: float) -> None:
        self._args = (match_id, runner, lease_s)
        self._store = store
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"lease-{match_id}")
        self.lost = False

    def _run(self) -> None:
        while not self._stop.wait(self._args[2] / 3):
            try:
                if not self._store.renew_match(*self._args):
                    self.lost = True
            except Exception:  # Redis briefly away: the lease may lapse, finish stays idempotent
                pass

    def __enter__(self) -> LeaseKeeper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


_LADDERS: dict[tuple[int, str], Ladder] = {}


def _ladder(store: RedisStore, name: str) -> Ladder:
    """Ladder definitions never change once created: read each once per process."""
    key = (id(store), name)
    if key not in _LADDERS:
        _LADDERS[key] = store.get_ladder(name)
    return _LADDERS[key]


def run_match(store: RedisStore, match_id: str, rate: Callable[[str], None], lease_s: float | None = None) -> str:
    """Play ``match_id`` unless it is finished or held by a live runner; returns what happened:
    'finished', 'duplicate' (someone finished it first), 'busy', 'failed' or 'missing'."""
    lease = lease_s or lease_seconds()
    runner = runner_id()
    status = store.start_match(match_id, runner, lease)
    if status != "run":
        metrics.MATCH_RUNS_SKIPPED.labels(status).inc()
        if status == "finished":  # a redelivered task: make sure the ratings caught up
            rate(store.get_match(match_id).ladder)
        return status
    info = store.get_match(match_id)
    ladder = _ladder(store, info.ladder)
    metrics.MATCHES_STARTED.labels(info.ladder).inc()
    started = time.perf_counter()
    with metrics.MATCHES_RUNNING.labels(info.ladder).track_inprogress(), LeaseKeeper(store, match_id, runner, lease):
        record = play_match(match_id, ladder.rules(), info.seats, ladder.think_ms)
    first, _ = store.finish_match(match_id, record, info)
    if first:
        metrics.MATCHES_FINISHED.labels(info.ladder).inc()
        metrics.MATCH_DURATION.labels(info.ladder).observe(time.perf_counter() - started)
        for fault in record.get("faults", ()):
            metrics.MATCH_FAULTS.labels(info.ladder, str(fault.get("kind", "unknown")).lower()).inc()
    else:
        metrics.MATCH_RUNS_SKIPPED.labels("duplicate").inc()
    rate(info.ladder)
    return "finished" if first else "duplicate"


def update_ratings(store: RedisStore, ladder: str) -> int:
    applied = catch_up(store.client, store.keys, ladder)
    if applied:
        metrics.RATING_UPDATES.labels(ladder).inc(applied)
    return applied
