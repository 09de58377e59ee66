"""Match leases: who runs a match, and one thread per process that keeps the leases it holds alive.

A runner (one task run) holds the lease of every match it started (``RedisStore.start_matches``:
for a batch, all of its matches at once) until it finishes or gives up each one. When the runner
dies, its leases lapse and the matchmaker's sweep sends those matches again.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Protocol


def runner_id() -> str:
    """host:pid:nonce: which process holds a match (the pid lets an operator find it)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Renewable(Protocol):
    def renew_match(self, match_id: str, runner: str, lease_s: float) -> bool: ...


class Held:
    """The matches one ``holding`` block keeps leased; ``drop`` one once it is finished or given up."""

    def __init__(self, renewer: LeaseRenewer, match_ids: list[str]) -> None:
        self._renewer = renewer
        self.match_ids = match_ids

    def drop(self, match_id: str) -> None:
        self._renewer.forget([match_id])


class LeaseRenewer:
    """One background thread per process renews the leases of the matches it is playing (a
    thread per match would cost more than a short match: starting one waits for the GIL)."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[Renewable, str, float, float]] = {}  # store, runner, lease, leased at
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
            with self._lock:  # only leases a third through: a match just started was leased by its start
                due = [(m, held) for m, held in self._held.items() if now - held[3] >= held[2] / 3]
            for match_id, (store, runner, lease, _) in due:
                try:
                    store.renew_match(match_id, runner, lease)
                except Exception:  # Redis briefly away: the lease may lapse; finish stays idempotent
                    continue
                with self._lock:
                    if match_id in self._held:
                        self._held[match_id] = (store, runner, lease, now)

    def forget(self, match_ids: Iterable[str]) -> None:
        with self._lock:
            for match_id in match_ids:
                self._held.pop(match_id, None)

    @contextmanager
    def holding(self, store: Renewable, match_ids: Iterable[str], runner: str, lease_s: float) -> Iterator[Held]:
        """Keep the leases of ``match_ids`` (just started by ``runner``) alive until the block ends."""
        ids = list(match_ids)
        with self._lock:
            self._ensure_thread()
            shortest = min((lease for _, _, lease, _ in self._held.values()), default=1.0)
            now = time.monotonic()
            for match_id in ids:
                self._held[match_id] = (store, runner, lease_s, now)
        if ids and lease_s < shortest:  # wake the thread only when it must renew sooner than it planned
            self._wake.set()
        try:
            yield Held(self, ids)
        finally:
            self.forget(ids)


RENEWER = LeaseRenewer()
