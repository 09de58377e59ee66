"""Whether a process id names a live process: the workers' metrics forget the gauges of pool children
that died unannounced (``arena.ladder.metrics``), and ``ohell up`` tells the processes a killed stack
left behind from a running stack (``arena.local.cli``). Here, in the lowest floor both may import."""

from __future__ import annotations

import os


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # none, or a number no pid can be
        return False
    except PermissionError:  # another user's
        return True
    return True
