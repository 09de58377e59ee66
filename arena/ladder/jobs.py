"""What the Celery tasks do, as plain functions over the store (the tasks are thin shells)."""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from arena.ladder import metrics
from arena.ladder.matchplay import play_match
from arena.ladder.model import Ladder
from arena.ladder.redis_store import RedisStore
from arena.ladder.store import NotFound
from arena.play.relay import PLATFORM_FAULT
from arena.play.specs import SeatSpec

DEFAULT_LEASE_S = 10.0


def lease_seconds() -> float:
    return float(os.environ.get("OHELL_MATCH_LEASE_S", DEFAULT_LEASE_S))


def runner_id() -> str:
    """host:pid:nonce: which process holds a match (the pid lets an operator find it)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class LeaseRenewer:
    """One background thread per process renews the leases of the matches it is playing (a
    thread per match would cost more than a short match: starting one waits for the GIL)."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[RedisStore, str, float, float]] = {}  # store, runner, lease, leased at
        self._lock = threading.Lock()
        self._pid = 0
        self._wake = threading.Event()

    def _ensure_thread(self) -> None:
        if self._pid != os.getpid():  # first use, or first use after a fork (threads do not survive it)
            self._pid = os.getpid()
            threading.Thread(target=self._run, daemon=True, name="lease-renewer").start()

    def _run(self) -> None:
        while True:
            with self._lock:
                period = min((lease for _, _, lease, _ in self._held.values()), default=1.0) / 3
            self._wake.wait(period)
            self._wake.clear()
            now = time.monotonic()
            with self._lock:  # only leases a third through: a match just started was leased by start_match
                due = [(m, held) for m, held in self._held.items() if now - held[3] >= held[2] / 3]
            for match_id, (store, runner, lease, _) in due:
                try:
                    store.renew_match(match_id, runner, lease)
                except Exception:  # Redis briefly away: the lease may lapse; finish stays idempotent
                    continue
                with self._lock:
                    if match_id in self._held:
                        self._held[match_id] = (store, runner, lease, now)

    @contextmanager
    def holding(self, store: RedisStore, match_id: str, runner: str, lease_s: float) -> Iterator[None]:
        with self._lock:
            self._ensure_thread()
            shortest = min((lease for _, _, lease, _ in self._held.values()), default=1.0)
            self._held[match_id] = (store, runner, lease_s, time.monotonic())
        if lease_s < shortest:  # wake the thread only when it must renew sooner than it planned
            self._wake.set()
        try:
            yield
        finally:
            with self._lock:
                self._held.pop(match_id, None)


RENEWER = LeaseRenewer()


_LADDERS: dict[tuple[int, str], tuple[float, Ladder]] = {}
LADDER_CACHE_S = 5.0  # the host may update a ladder: a definition is read again after this long


def _ladder(store: RedisStore, name: str) -> Ladder:
    """A ladder's definition, read at most once per LADDER_CACHE_S per process."""
    key = (id(store), name)
    cached = _LADDERS.get(key)
    if cached is None or time.monotonic() - cached[0] > LADDER_CACHE_S:
        cached = _LADDERS[key] = (time.monotonic(), store.get_ladder(name))
    return cached[1]


def run_match(
    store: RedisStore,
    match_id: str,
    rate: Callable[[str], None],
    lease_s: float | None = None,
    archive: Callable[[], None] | None = None,
) -> str:
    """Play ``match_id`` unless it is finished or held by a live runner; rate it, then ask for it to be
    archived (``archive``, off the match path). Returns what happened: 'finished', 'duplicate'
    (someone finished it first), 'voided' (spoiled by the platform: failed, not logged, not rated),
    'busy', 'failed' or 'missing' (unknown, or archived and forgotten)."""
    lease = lease_s or lease_seconds()
    runner = runner_id()
    status, info = store.start_match_info(match_id, runner, lease)
    if info is None:
        metrics.MATCH_RUNS_SKIPPED.labels(status).inc()
        if status == "finished":  # a redelivered task: make sure the ratings caught up
            rate(match_id.rpartition("-")[0])
            if archive is not None:
                archive()
        return status
    ladder = _ladder(store, info.ladder)
    metrics.MATCHES_STARTED.labels(info.ladder).inc()
    started = time.perf_counter()
    running = metrics.MATCHES_RUNNING.labels(info.ladder)
    with running.track_inprogress(), RENEWER.holding(store, match_id, runner, lease):
        record = play_match(
            match_id, ladder.rules(), info.seats, info.seed or store.ensure_seed(match_id), ladder.think_ms
        )
    spoiled = spoiled_by_platform(record, info.seats)
    if spoiled:  # the agents did nothing wrong: the match is voided, never rated as their loss
        store.fail_match(match_id, f"voided: {spoiled}")
        metrics.MATCH_RUNS_SKIPPED.labels("voided").inc()
        return "voided"
    try:
        first, _ = store.finish_match(match_id, record, info)
    except NotFound:  # another runner finished it and the archive took it meanwhile
        first = False
    if first:
        metrics.MATCHES_FINISHED.labels(info.ladder).inc()
        metrics.MATCH_DURATION.labels(info.ladder).observe(time.perf_counter() - started)
        for fault in record.get("faults", ()):
            metrics.MATCH_FAULTS.labels(info.ladder, str(fault.get("kind", "unknown")).lower()).inc()
    else:
        metrics.MATCH_RUNS_SKIPPED.labels("duplicate").inc()
    rate(info.ladder)
    if archive is not None:
        archive()
    return "finished" if first else "duplicate"


def spoiled_by_platform(record: dict[str, Any], seats: list[SeatSpec]) -> str:
    """Why the platform, not the agents, spoiled this match ('' if it did not): a relay failure
    (Redis) reached the match host, or every remote seat (two or more) was forfeited for being
    disconnected, which is what a lost Redis or gateway looks like from the host."""
    faults = record.get("faults", [])
    if any(str(fault.get("detail", "")).startswith(PLATFORM_FAULT) for fault in faults):
        return "the platform lost Redis during the match"
    remote = [seat for seat, spec in enumerate(seats) if spec.kind != "builtin"]
    forfeited = set(record.get("forfeited", []))
    kinds = {seat: {f["kind"] for f in faults if f["seat"] == seat} for seat in remote}
    if len(remote) >= 2 and all(seat in forfeited and kinds[seat] == {"DISCONNECTED"} for seat in remote):
        return "every remote seat was forfeited as disconnected"
    return ""


def update_ratings(store: RedisStore, ladder: str) -> int:
    applied = store.catch_up_ratings(ladder)
    if applied:
        metrics.RATING_UPDATES.labels(ladder).inc(applied)
    return applied
