"""The Celery worker's process hooks (workers/signals.py) that do not need a running worker."""

from __future__ import annotations

import gc

from celery.signals import worker_process_init

from workers import signals


def test_a_new_pool_child_keeps_the_collector_off_its_start_up_heap() -> None:
    before = gc.get_threshold()
    try:
        worker_process_init.send(sender=None)  # what billiard's child sends once it has started
        assert gc.get_freeze_count() > 10_000  # this process's modules, as a child's would be
        assert gc.get_threshold() == (signals.YOUNG_GC_THRESHOLD, *before[1:])
        gc.collect()
        cycle: list[object] = []  # what is made from now on is still collected
        cycle.append(cycle)
        del cycle
        assert gc.collect() >= 1
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
