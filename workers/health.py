"""Is this container's worker alive? ``python -m workers.health [--max-age SECONDS]``.

The worker's main process touches a heartbeat file from its Celery event loop (workers.heartbeat)
every OHELL_WORKER_HEARTBEAT_S seconds (default 5). This command exits 0 when that file was
touched within --max-age seconds (default 60), else 1 with one line saying why. A stuck consumer
loop stops the beat; a long match does not (it plays in a pool child or thread, not in the loop).
It reads one file and imports neither Celery nor the app: cheap enough to run every few seconds.

The file: OHELL_WORKER_HEARTBEAT (default /tmp/ohell-worker-heartbeat; /tmp is writable under a
read-only root filesystem). One worker per container, or one file each.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

DEFAULT_PATH = "/tmp/ohell-worker-heartbeat"
DEFAULT_INTERVAL_S = 5.0
DEFAULT_MAX_AGE_S = 60.0


def heartbeat_path() -> Path:
    return Path(os.environ.get("OHELL_WORKER_HEARTBEAT") or DEFAULT_PATH)


def heartbeat_interval() -> float:
    """OHELL_WORKER_HEARTBEAT_S: seconds between two beats of the worker's loop (over 0)."""
    text = os.environ.get("OHELL_WORKER_HEARTBEAT_S", "")
    try:
        value = float(text) if text else DEFAULT_INTERVAL_S
    except ValueError:
        value = -1.0
    if not value > 0:
        raise ValueError(f"OHELL_WORKER_HEARTBEAT_S={text!r} must be a number of seconds over 0")
    return value


def beat(path: Path) -> None:
    """Record that the loop ran now (the file's modification time)."""
    path.touch()


def forget(path: Path) -> None:
    """A new worker starts with no heartbeat: one left by the last one (same /tmp) proves nothing."""
    path.unlink(missing_ok=True)


def why_dead(path: Path, max_age: float, now: float | None = None) -> str | None:
    """None when the heartbeat is at most ``max_age`` seconds old, else why the worker is not alive."""
    try:
        touched = path.stat().st_mtime
    except FileNotFoundError:
        return f"no heartbeat at {path}: the worker has not started its event loop"
    except OSError as error:
        return f"cannot read the heartbeat at {path}: {error}"
    age = (time.time() if now is None else now) - touched
    if age > max_age:
        return f"heartbeat {age:.0f} s old (over {max_age:g} s) at {path}: the worker's event loop is stuck"
    return None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m workers.health", description="Is this container's worker alive?")
    parser.add_argument("--max-age", type=float, default=DEFAULT_MAX_AGE_S, help="seconds (default 60)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    reason = why_dead(heartbeat_path(), args.max_age)
    if reason:
        print(f"ohell worker not alive: {reason}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
