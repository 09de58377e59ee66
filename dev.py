"""Project bootstrap: needs only Python 3.11+ and git.

    python3 dev.py demo   # make .venv, install the project, run the local ladder of built-in bots
    python3 dev.py test   # make .venv, install the project with its test extras, run the tests

Extra arguments after the command go to the program (``ohell`` or ``pytest``). ``test`` spreads the
tests over one pytest-xdist worker per core (``-n auto --dist worksteal``: a worker with no tests left takes
half of another's; ``-n 0`` after it runs them in one process).
Installing compiles
the engine's hot modules (setup.py); with no extra arguments ``test`` then runs tests/engine a second
time on the pure-Python engine (``python -X ohell_pure``), so both builds are tested.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"


def has_pip() -> bool:
    """A venv whose ensurepip failed has its interpreter but no pip: installing into it fails every time."""
    return PYTHON.exists() and subprocess.run([str(PYTHON), "-c", "import pip"], capture_output=True).returncode == 0


def create_env() -> None:
    print(f"creating {VENV}", flush=True)
    try:
        venv.EnvBuilder(with_pip=True, clear=True).create(VENV)
    except subprocess.CalledProcessError:
        shutil.rmtree(VENV, ignore_errors=True)
        sys.exit(f"cannot create {VENV}: this Python's ensurepip failed (Debian, Ubuntu: apt-get install python3-venv)")


def ensure_env(extras: str) -> None:
    """Create the virtual environment and (re)install the project when pyproject.toml, setup.py or
    the engine's sources changed (the install compiles those, so an edit needs a new install)."""
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py runs on whatever python3 the machine has
        sys.exit(f"ohell-arena needs Python 3.11 or newer, this is {sys.version.split()[0]}")
    inputs = [ROOT / "pyproject.toml", ROOT / "setup.py", *sorted((ROOT / "ohell").glob("*.py"))]
    digest = hashlib.sha256(b"".join(path.read_bytes() for path in inputs) + extras.encode()).hexdigest()
    stamp = VENV / ".ohell-installed"
    if stamp.exists() and stamp.read_text() == digest:
        return
    if not has_pip():
        create_env()
    target = f".[{extras}]" if extras else "."
    print(f"installing {target} into {VENV}", flush=True)
    subprocess.run(
        [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check", "-q", "-e", target],
        cwd=ROOT,
        check=True,
    )
    stamp.write_text(digest)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("demo", "test"):
        print(__doc__)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "demo":
        ensure_env("")
        return subprocess.call([str(BIN / "ohell"), "demo", *rest], cwd=ROOT)
    ensure_env("test")
    # worksteal: a worker that runs out of tests takes half of the other's (tests/conftest.py runs the slow first)
    spread = ["-n", "auto", "--dist", "worksteal"]
    status = subprocess.call([str(PYTHON), "-m", "pytest", *spread, *rest], cwd=ROOT)
    if rest or status != 0:
        return status
    print("tests/engine again on the pure-Python engine (python -X ohell_pure)", flush=True)
    # in one process: xdist's workers would not inherit -X ohell_pure
    return subprocess.call([str(PYTHON), "-X", "ohell_pure", "-m", "pytest", "tests/engine"], cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
