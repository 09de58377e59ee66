"""Which engine build runs: the mypyc-compiled modules or the pure-Python ``.py`` files.

CI sets ``OHELL_EXPECT_BUILD=compiled`` (so a silent fallback to pure Python fails there) and runs
tests/engine a second time with ``python -X ohell_pure``, which must run the ``.py`` files.
"""

from __future__ import annotations

import importlib
import os
import sys

from ohell import engine_build
from tests.needs import missing

HOT_MODULES = ("cards", "chance", "hand", "scoring", "schedule", "state")  # as in setup.py


def _is_compiled(name: str) -> bool:
    path = importlib.import_module(f"ohell.{name}").__file__ or ""
    return not path.endswith(".py")


def test_the_hot_modules_are_all_compiled_or_all_pure() -> None:
    compiled = [name for name in HOT_MODULES if _is_compiled(name)]
    assert compiled in ([], list(HOT_MODULES)), f"only {compiled} are compiled"
    assert engine_build() == ("compiled" if compiled else "pure")


def test_the_build_asked_for_is_the_one_running() -> None:
    expected = "pure" if "ohell_pure" in sys._xoptions else os.environ.get("OHELL_EXPECT_BUILD")
    if expected is None:
        missing("no build asked for", "set OHELL_EXPECT_BUILD=compiled or pure, or run python -X ohell_pure")
    assert engine_build() == expected


def test_the_rest_of_the_engine_stays_interpreted() -> None:
    for name in ("rules", "observation", "referee", "bots.strong"):
        assert not _is_compiled(name), name
