"""The worker's Celery consumer, riding out a Redis restart.

With tasks in flight (acks_late), Celery 5.7 / kombu 5.7 close the lost broker connection after
``collect()`` has already dropped its connection info; the Redis channel then tries to put the
unacknowledged tasks back and fails with ``AttributeError: 'NoneType' object has no attribute
'hostname'``, which ``ignore_errors`` does not cover: the worker exits ("Unrecoverable error").
Here the lost connection is dropped without that cleanup; a task still running acknowledges
later through its old channel, and anything unacknowledged is redelivered after the visibility
timeout (the matchmaker's sweep sends a match again sooner, once its lease lapses).
"""

from __future__ import annotations

import logging

from celery.worker.consumer import Consumer as CeleryConsumer

log = logging.getLogger(__name__)


class Consumer(CeleryConsumer):  # type: ignore[misc]
    def on_connection_error_after_connected(self, exc: Exception) -> None:
        """Drop the lost connection without collecting it: its channels keep their connection
        info, so tasks that finish later acknowledge through it once Redis is back (or fail with
        a connection error kombu already ignores) instead of crashing the worker."""
        log.warning("broker connection lost (%r): reconnecting; tasks in flight go on", exc)
        self.connection = None
