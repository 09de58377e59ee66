"""The repository passes its own linters: ``ruff check`` and ``mypy``, both configured in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run_tool(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -m <tool> ...`` from this environment, at the repository root (where its config is).
    mypy with a fresh cache takes ~1 min of CPU; the suite's other workers on 2 shared cores stretched
    it past 2 min once, so the timeout only catches a hang."""
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_ruff_check_is_clean() -> None:
    done = run_tool("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, f"ruff check . failed:\n{done.stdout}{done.stderr}"


@pytest.mark.slow
def test_mypy_is_clean(tmp_path: Path) -> None:
    # The packages come from [tool.mypy]; a fresh cache keeps the checkout free of .mypy_cache.
    done = run_tool("mypy", "--cache-dir", str(tmp_path / "mypy-cache"))
    assert done.returncode == 0, f"mypy failed:\n{done.stdout}{done.stderr}"
    assert "Success" in done.stdout, done.stdout
