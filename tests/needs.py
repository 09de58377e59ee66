"""What a test needs beyond the project's own install: OpenSpiel, Node.js and npm, buf, PostgreSQL's
server binaries. Without it the test is skipped, its reason listed in the summary (``-rs`` in
pyproject.toml's addopts); in CI (``CI`` set, as ``.ci/run`` sets it) it fails instead, saying what
to install, so CI never passes with such a test silently left out. What only a network service
outside the machine gives (the npm registry: the Node example's packages, buf through npx) is a
skip in CI too (``offline``), its reason in the summary."""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest


def missing(what: str, install: str) -> NoReturn:
    """Skip for ``what`` is missing, or fail in CI; ``install`` says how to get it."""
    __tracebackhide__ = True  # the summary names the test's line, not this one
    if os.environ.get("CI"):
        pytest.fail(f"CI must run this test, but {what}: {install}", pytrace=False)
    pytest.skip(f"{what}: {install}")


def offline(what: str, install: str) -> NoReturn:
    """Skip, in CI too, for ``what`` a network service outside the machine (the npm registry) did not
    give: CI installs what a test needs from the machine's own package sources, but cannot make a
    registry answer, and a run must not fail for that. The reason is in the summary all the same."""
    __tracebackhide__ = True
    pytest.skip(f"{what}: {install}")


def import_or_missing(module: str, install: str) -> ModuleType:
    """``module`` imported, or ``missing`` (a skip, a failure in CI) when it cannot be."""
    __tracebackhide__ = True
    try:
        return importlib.import_module(module)
    except ImportError as error:
        missing(f"{module} cannot be imported ({error})", install)
