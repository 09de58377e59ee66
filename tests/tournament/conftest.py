"""Fixtures of the tournament tests: the ladder tests' whole stack."""

from __future__ import annotations

from ..ladder.conftest import make_stack

__all__ = ["make_stack"]
