"""The worker's heartbeat: a consumer bootstep that touches workers.health's file from the Celery
event loop (the hub's timer), so only a main process whose loop turns produces it. Celery runs
this loop with a Redis broker whatever the pool (prefork, threads)."""

from __future__ import annotations

from typing import Any

from celery import bootsteps

from workers import health


class Heartbeat(bootsteps.StartStopStep):  # type: ignore[misc]
    """Beats every OHELL_WORKER_HEARTBEAT_S seconds while the loop runs. Registered again by Celery
    each time the consumer reconnects to the broker; no beat while it is disconnected."""

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.path = health.heartbeat_path()
        self.interval = health.heartbeat_interval()
        health.forget(self.path)

    def register_with_event_loop(self, parent: Any, hub: Any) -> None:
        health.beat(self.path)
        hub.call_repeatedly(self.interval, health.beat, self.path)
