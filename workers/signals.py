"""Worker process hooks: serve /metrics from the main process, tidy up after children, keep the
collector off the start-up heap."""

from __future__ import annotations

import gc
import os
import sys
from typing import Any

from celery.signals import worker_init, worker_process_init, worker_process_shutdown, worker_ready

from arena.ladder import metrics


@worker_init.connect
def _serve_metrics(**_: Any) -> None:
    port = int(os.environ.get("OHELL_METRICS_PORT", "0") or 0)
    if not port or not metrics.multiprocess_dir():
        return
    from arena.rpc.metrics_http import start_metrics_server

    metrics.clear_multiprocess_dir()
    address = os.environ.get("OHELL_METRICS_ADDRESS", "127.0.0.1")
    start_metrics_server(port, address, registry=metrics.multiprocess_registry())


@worker_process_init.connect
def _freeze_startup_heap(**_: Any) -> None:
    """Move every object the child has at start (Celery, kombu, SQLAlchemy, the engine's tables: about
    110,000 of them) out of the collector's reach. Otherwise each full collection walks them all
    again: a full classic game's record survives young collections until it is stored, so a child
    ran one every few dozen light games, ~40 ms each (0.6 ms per game, more than the finish script).
    Those objects live as long as the process; what the tasks allocate is collected as before."""
    gc.freeze()


@worker_process_shutdown.connect
def _child_exit(pid: int | None = None, **_: Any) -> None:
    metrics.mark_dead(pid or os.getpid())


@worker_ready.connect
def _announce(**_: Any) -> None:
    """One line on stderr whatever the log level: ``arena.local.stack`` waits for it."""
    print(f"ohell worker ready (pid {os.getpid()})", file=sys.stderr, flush=True)
