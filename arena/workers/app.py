"""The Celery app: configuration only. Broker and result backend: REDIS_URL.

Environment: REDIS_URL (default redis://127.0.0.1:6379/0), OHELL_METRICS_PORT (serve /metrics
from the worker's main process; 0 or unset = off), PROMETHEUS_MULTIPROC_DIR (made if unset when
metrics are on), OHELL_VISIBILITY_TIMEOUT_S (when an unacknowledged task of a dead worker is
delivered again; default 3600), OHELL_MATCH_LEASE_S (see arena.ladder.jobs).
"""

from __future__ import annotations

import os
import tempfile

# Must happen before anything imports prometheus_client (the tasks do, via arena.ladder.metrics).
if os.environ.get("OHELL_METRICS_PORT", "0") not in ("", "0") and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="ohell-worker-metrics-")
if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):  # prometheus_client writes there and needs it to exist
    os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)

from celery import Celery  # noqa: E402
from kombu import Exchange, Queue  # noqa: E402

from arena.ladder.keys import DEFAULT_REDIS_URL  # noqa: E402
from arena.workers.routing import ALL_QUEUES, QUEUE_BUILTIN, QUEUE_RATINGS, RUN_MATCH, UPDATE_RATINGS  # noqa: E402

REDIS_URL = os.environ.get("REDIS_URL", DEFAULT_REDIS_URL)

app = Celery("ohell", broker=REDIS_URL, backend=REDIS_URL, include=["arena.workers.tasks"])
app.conf.update(
    task_acks_late=True,  # a task is acknowledged only when it returns: a dead worker's task comes back
    task_reject_on_worker_lost=True,  # ... at once when a pool child dies (SIGKILL, OOM)
    worker_prefetch_multiplier=1,  # one match at a time per process
    task_queues=[Queue(name, Exchange(name), routing_key=name) for name in ALL_QUEUES],
    task_default_queue=QUEUE_BUILTIN,
    task_default_exchange=QUEUE_BUILTIN,
    task_default_routing_key=QUEUE_BUILTIN,
    task_routes={RUN_MATCH: {"queue": QUEUE_BUILTIN}, UPDATE_RATINGS: {"queue": QUEUE_RATINGS}},
    task_ignore_result=True,  # state lives in the store; the backend is for ad-hoc inspection
    task_serializer="json",
    accept_content=["json"],
    broker_transport_options={"visibility_timeout": int(os.environ.get("OHELL_VISIBILITY_TIMEOUT_S", 3600))},
    broker_connection_retry_on_startup=True,
    broker_connection_max_retries=None,  # ride out a Redis restart
    worker_hijack_root_logger=False,
    worker_send_task_events=False,
)

import arena.workers.signals  # noqa: E402,F401  (metrics server in the main process)
