"""The Celery app: configuration only. Broker and result backend: REDIS_URL.

Environment: REDIS_URL (default redis://127.0.0.1:6379/0), OHELL_METRICS_PORT (serve /metrics
from the worker's main process; 0 or unset = off), PROMETHEUS_MULTIPROC_DIR (made if unset when
metrics are on), OHELL_VISIBILITY_TIMEOUT_S (when an unacknowledged task of a dead worker is
delivered again; default 3600), OHELL_MATCH_LEASE_S (see arena.ladder.settings; tournament tables too),
OHELL_ARCHIVE_BACKLOG_MAX, OHELL_MATCH_BATCH, OHELL_WORKER_HEARTBEAT and OHELL_WORKER_HEARTBEAT_S (the
liveness check's heartbeat: workers.health). A malformed one stops the worker as it starts, in one
line (arena.ladder.settings).
"""

from __future__ import annotations

import os
import sys
import tempfile

from arena.ladder import settings
from arena.ladder.routing import batch_size
from workers.health import heartbeat_interval

try:  # read by the tasks: malformed, each task would fail while the worker looked well
    settings.check()
    batch_size()
    heartbeat_interval()
except ValueError as error:
    sys.exit(f"ohell worker: {error}")

# Must happen before anything imports prometheus_client (the tasks do, via arena.ladder.metrics).
if settings.metrics_port() and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="ohell-worker-metrics-")
if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):  # prometheus_client writes there and needs it to exist
    os.makedirs(os.environ["PROMETHEUS_MULTIPROC_DIR"], exist_ok=True)

from arena.keys import DEFAULT_REDIS_URL, Keys  # noqa: E402
from arena.ladder.routing import make_celery  # noqa: E402
from workers.heartbeat import Heartbeat  # noqa: E402

REDIS_URL = os.environ.get("REDIS_URL", DEFAULT_REDIS_URL)

app = make_celery(REDIS_URL, include=["workers.tasks"], prefix=Keys.from_env().prefix)
app.conf.worker_consumer = "workers.consumer:Consumer"  # rides out a Redis restart with tasks in flight
app.steps["consumer"].add(Heartbeat)  # the liveness check's heartbeat (python -m workers.health)

import workers.signals  # noqa: E402,F401  (metrics server in the main process)
