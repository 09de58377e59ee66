"""Worker process hooks: serve /metrics from the main process, tidy up after children, keep the
collector off the start-up heap."""

from __future__ import annotations

import gc
import os
import sys
from typing import Any

from celery.signals import worker_init, worker_process_init, worker_process_shutdown, worker_ready

from arena.ladder import metrics, settings


@worker_init.connect
def _serve_metrics(**_: Any) -> None:
    port = settings.metrics_port()
    if not port or not metrics.multiprocess_dir():
        return
    from arena.rpc.metrics_http import start_metrics_server

    metrics.clear_multiprocess_dir()
    address = os.environ.get("OHELL_METRICS_ADDRESS", "127.0.0.1")
    start_metrics_server(port, address, registry=metrics.multiprocess_registry())


# Young collections in a pool child: every this many allocations (Python's default is 700). A game
# allocates a great many short-lived containers, and the records a batch holds until it stores them
# (~2,000 containers each) are walked again by every young collection until they are promoted.
YOUNG_GC_THRESHOLD = 10_000


@worker_process_init.connect
def _tune_collector(**_: Any) -> None:
    """Move every object the child has at start (Celery, kombu, SQLAlchemy, the engine's tables: about
    110,000 of them) out of the collector's reach: otherwise each full collection walks them all
    again, ~40 ms each, about once per 100 light games (0.4-0.6 ms per game: a batch's records
    survive young collections until it stores them). Those objects live as long as the process.
    Young collections run less often (YOUNG_GC_THRESHOLD). What the tasks allocate is collected as
    before."""
    gc.freeze()
    gc.set_threshold(YOUNG_GC_THRESHOLD, *gc.get_threshold()[1:])


@worker_process_shutdown.connect
def _child_exit(pid: int | None = None, **_: Any) -> None:
    metrics.mark_dead(pid or os.getpid())


@worker_ready.connect
def _announce(**_: Any) -> None:
    """One line on stderr whatever the log level: ``arena.local.stack`` waits for it."""
    print(f"ohell worker ready (pid {os.getpid()})", file=sys.stderr, flush=True)
