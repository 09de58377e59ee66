"""The ladder workers' numeric settings from the environment (read by ``arena.settings``, where the
match lease the tournaments share is). Each getter raises ``SettingError`` (one line naming the
variable) for a malformed value; ``check`` reads them all, so a worker checks
them once as it starts instead of failing every task."""

from __future__ import annotations

from arena.settings import SettingError, lease_seconds, read_number

__all__ = ["SettingError", "backlog_max", "check", "lease_seconds", "metrics_port", "visibility_timeout_s"]

DEFAULT_VISIBILITY_TIMEOUT_S = 3600
DEFAULT_BACKLOG_MAX = 20_000  # tables stop forming when this many finished matches wait for the archive


def visibility_timeout_s() -> int:
    """``OHELL_VISIBILITY_TIMEOUT_S``: when an unacknowledged task of a dead worker is delivered again."""
    return int(read_number("OHELL_VISIBILITY_TIMEOUT_S", DEFAULT_VISIBILITY_TIMEOUT_S, True, 1))


def backlog_max() -> int:
    """``OHELL_ARCHIVE_BACKLOG_MAX``: the bound on Redis memory while the database is away."""
    return int(read_number("OHELL_ARCHIVE_BACKLOG_MAX", DEFAULT_BACKLOG_MAX, True, 1))


def metrics_port() -> int:
    """``OHELL_METRICS_PORT``: where a worker serves /metrics; 0 = not at all."""
    return int(read_number("OHELL_METRICS_PORT", 0, True, 0, 65_535))


def check() -> None:
    """Read every setting; SettingError for the first that cannot be used."""
    lease_seconds()
    visibility_timeout_s()
    backlog_max()
    metrics_port()
