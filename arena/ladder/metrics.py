"""Prometheus metrics of the ladder (matchmaker and workers).

Under Celery's prefork pool every child process counts into files in PROMETHEUS_MULTIPROC_DIR,
which must be set before ``prometheus_client`` is first imported (``workers.app`` does
it); the worker's main process serves them all (``multiprocess_registry``).
"""

from __future__ import annotations

import glob
import os
import re

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, multiprocess

from arena.ladder.processes import process_exists

DURATION_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
WAIT_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900)

# workers
MATCHES_STARTED = Counter("ohell_matches_started_total", "Match runs started (a retry counts again)", ["ladder"])
MATCHES_FINISHED = Counter("ohell_matches_finished_total", "Matches finished and logged (once each)", ["ladder"])
MATCHES_FAILED = Counter("ohell_matches_failed_total", "Match runs that failed", ["ladder", "reason"])
MATCH_RUNS_SKIPPED = Counter("ohell_match_runs_skipped_total", "Match deliveries with nothing to do", ["reason"])
MATCH_DURATION = Histogram(
    "ohell_match_duration_seconds", "Wall time of one match", ["ladder"], buckets=DURATION_BUCKETS
)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32)
MATCH_BATCH_SIZE = Histogram(
    "ohell_match_batch_size", "Matches a worker started together (one task run)", buckets=BATCH_BUCKETS
)
MATCHES_RUNNING = Gauge("ohell_matches_running", "Matches being played now", ["ladder"], multiprocess_mode="livesum")
MATCH_FAULTS = Counter("ohell_match_faults_total", "Seat faults in finished matches", ["ladder", "kind"])
RATING_UPDATES = Counter("ohell_rating_updates_total", "Matches applied to the ratings", ["ladder"])
MATCHES_ARCHIVED = Counter("ohell_matches_archived_total", "Matches written to the SQL archive (once each)", ["ladder"])
ARCHIVE_ERRORS = Counter("ohell_archive_errors_total", "Archive runs that failed", ["reason"])

# matchmaker
TICKETS_WAITING = Gauge(
    "ohell_tickets_waiting", "Tickets in a ladder's queue", ["ladder"], multiprocess_mode="mostrecent"
)
QUEUE_WAIT = Histogram(
    "ohell_queue_wait_seconds", "Time from joining the queue to being seated", ["ladder"], buckets=WAIT_BUCKETS
)
TABLES_FORMED = Counter("ohell_tables_formed_total", "Tables formed (matches created)", ["ladder"])
CLAIMS_REJECTED = Counter(
    "ohell_table_claims_rejected_total", "Tables not formed because an agent left or was taken", ["ladder"]
)
MATCHES_REDISPATCHED = Counter(
    "ohell_matches_redispatched_total", "Matches sent to the workers again by the recovery sweep", ["ladder"]
)

ARCHIVE_BACKLOG = Gauge(
    "ohell_archive_backlog",
    "Finished matches waiting in Redis for the SQL archive",
    multiprocess_mode="mostrecent",
)
FORMING_PAUSED = Counter(
    "ohell_forming_paused_total", "Forming rounds skipped because the archive backlog is full", ["ladder"]
)

_PID_FILE = re.compile(r"_(\d+)\.db$")


def multiprocess_dir() -> str | None:
    return os.environ.get("PROMETHEUS_MULTIPROC_DIR") or os.environ.get("prometheus_multiproc_dir")


def clear_multiprocess_dir() -> None:
    """Remove counts left by an earlier run (call once, in the parent, before children start)."""
    directory = multiprocess_dir()
    if directory:
        os.makedirs(directory, exist_ok=True)
        for path in glob.glob(os.path.join(directory, "*.db")):
            os.remove(path)


class _LiveCollector(multiprocess.MultiProcessCollector):
    """Before each scrape, forgets the live gauges of children that died without saying so
    (SIGKILL, OOM): ``mark_process_dead`` is otherwise only called from a clean child exit."""

    def collect(self):  # type: ignore[no-untyped-def]
        for path in glob.glob(os.path.join(self._path, "*.db")):
            found = _PID_FILE.search(path)
            if found and not process_exists(int(found.group(1))):
                multiprocess.mark_process_dead(int(found.group(1)), self._path)
        return super().collect()


def multiprocess_registry() -> CollectorRegistry:
    registry = CollectorRegistry()
    _LiveCollector(registry)
    return registry


def mark_dead(pid: int) -> None:
    if multiprocess_dir():
        multiprocess.mark_process_dead(pid)
