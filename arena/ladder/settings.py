"""The ladder workers' numeric settings from the environment. Each getter raises ``SettingError``
(one line naming the variable) for a malformed value; ``check`` reads them all, so a worker checks
them once as it starts instead of failing every task."""

from __future__ import annotations

import math
import os

DEFAULT_LEASE_S = 10.0
DEFAULT_VISIBILITY_TIMEOUT_S = 3600
DEFAULT_BACKLOG_MAX = 20_000  # tables stop forming when this many finished matches wait for the archive


class SettingError(ValueError):
    """A setting in the environment that cannot be used, in one line."""


def _read(name: str, default: float, whole: bool, low: float, high: float = math.inf) -> float:
    raw = os.environ.get(name, "")
    if not raw.strip():
        return default
    kind = "a whole number" if whole else "a number"
    try:
        value = int(raw) if whole else float(raw)
    except ValueError:
        value = math.nan
    if not low <= value <= high:  # NaN and infinities fail here too
        top = "" if high == math.inf else f" to {high:g}"
        raise SettingError(f"{name}={raw!r} must be {kind} from {low:g}{top}")
    return value


def lease_seconds() -> float:
    """``OHELL_MATCH_LEASE_S``: how long a match stays held after its runner's last renewal."""
    return _read("OHELL_MATCH_LEASE_S", DEFAULT_LEASE_S, False, 0.1, 86_400)


def visibility_timeout_s() -> int:
    """``OHELL_VISIBILITY_TIMEOUT_S``: when an unacknowledged task of a dead worker is delivered again."""
    return int(_read("OHELL_VISIBILITY_TIMEOUT_S", DEFAULT_VISIBILITY_TIMEOUT_S, True, 1))


def backlog_max() -> int:
    """``OHELL_ARCHIVE_BACKLOG_MAX``: the bound on Redis memory while the database is away."""
    return int(_read("OHELL_ARCHIVE_BACKLOG_MAX", DEFAULT_BACKLOG_MAX, True, 1))


def metrics_port() -> int:
    """``OHELL_METRICS_PORT``: where a worker serves /metrics; 0 = not at all."""
    return int(_read("OHELL_METRICS_PORT", 0, True, 0, 65_535))


def check() -> None:
    """Read every setting; SettingError for the first that cannot be used."""
    lease_seconds()
    visibility_timeout_s()
    backlog_max()
    metrics_port()
