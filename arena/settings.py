"""Reading the workers' numeric settings from the environment, and the one both the ladder and the
tournaments use: the match lease. A getter raises ``SettingError`` (one line naming the variable)
for a malformed value."""

from __future__ import annotations

import math
import os

LEASE_ENV = "OHELL_MATCH_LEASE_S"
DEFAULT_LEASE_S = 10.0
LEASE_BOUNDS_S = (0.1, 86_400.0)


class SettingError(ValueError):
    """A setting in the environment that cannot be used, in one line."""


def read_number(name: str, default: float, whole: bool, low: float, high: float = math.inf) -> float:
    """The number in ``$name`` (``default`` when unset or blank), from ``low`` to ``high``."""
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
    """``OHELL_MATCH_LEASE_S``: how long a match (a ladder's, a tournament table) stays held after its
    runner's last renewal."""
    return read_number(LEASE_ENV, DEFAULT_LEASE_S, False, *LEASE_BOUNDS_S)
