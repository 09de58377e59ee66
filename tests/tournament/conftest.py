"""Fixtures of the tournament tests: the ladder tests' whole stack, the security tests' single services."""

from __future__ import annotations

from ..ladder.conftest import make_stack
from ..security.conftest import start_service

__all__ = ["make_stack", "start_service"]
