"""The matchmaker reads its batch size from ``$OHELL_MATCH_BATCH`` when ``--batch`` is not given
(docs/operations.md, "Environment"). A malformed value stopped it with a ValueError traceback,
raised after its gRPC server had started; now it is one line naming the variable, as the other
settings are, and nothing is started."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_malformed_batch_size_in_the_environment_is_one_line() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OHELL_") and k != "REDIS_URL"}
    done = subprocess.run(
        # nothing listens on port 1: the matchmaker must stop before it needs its Redis
        [sys.executable, *"-m services.matchmaker --address 127.0.0.1:0 --redis-url redis://127.0.0.1:1/0".split()],
        cwd=ROOT,
        env=env | {"OHELL_MATCH_BATCH": "99"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip().splitlines() == ["error: OHELL_MATCH_BATCH='99' must be a whole number from 1 to 32"]
    assert "matchmaker service on port" not in done.stdout
