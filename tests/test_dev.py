"""dev.py, the README's set-up command, on a Python whose venv cannot bring pip: Debian's and
Ubuntu's python3 without the python3-venv package make the interpreter of a venv, then fail in
ensurepip. dev.py says so in one line, and a .venv left without pip is made again, not used."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import venv
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def load_dev(root: Path) -> ModuleType:
    shutil.copy(ROOT / "dev.py", root / "dev.py")
    spec = importlib.util.spec_from_file_location(f"dev_{root.name}", root / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def has_pip(python: Path) -> bool:
    return subprocess.run([str(python), "-c", "import pip"], capture_output=True).returncode == 0


def test_a_python_whose_ensurepip_fails_gets_one_line_and_no_half_made_venv(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    dev = load_dev(tmp_path)

    class DebianBuilder:  # what EnvBuilder does there: the interpreter first, then ensurepip fails
        def __init__(self, **options: object) -> None:
            pass

        def create(self, folder: Path) -> None:
            (Path(folder) / "bin").mkdir(parents=True)
            (Path(folder) / "bin" / "python").touch()
            raise subprocess.CalledProcessError(1, ["python", "-m", "ensurepip"])

    monkeypatch.setattr(dev.venv, "EnvBuilder", DebianBuilder)
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "setup.py").write_text("")
    with pytest.raises(SystemExit) as exited:
        dev.ensure_env("")
    assert "python3-venv" in str(exited.value)
    assert not (tmp_path / ".venv").exists()


@pytest.mark.slow  # makes a venv with pip (ensurepip: a few seconds)
def test_a_venv_left_without_pip_is_made_again(tmp_path: Path) -> None:
    venv.EnvBuilder(with_pip=False).create(tmp_path / ".venv")  # what a failed ensurepip leaves
    python = tmp_path / ".venv" / "bin" / "python"
    assert python.exists() and not has_pip(python)
    shutil.copy(ROOT / "dev.py", tmp_path / "dev.py")
    (tmp_path / "pyproject.toml").write_text("not toml [[[\n")  # the install then fails at once, offline
    (tmp_path / "setup.py").write_text("")
    done = subprocess.run([sys.executable, "dev.py", "demo"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode != 0  # the project cannot install: only the venv is looked at here
    assert "No module named pip" not in done.stderr
    assert has_pip(python), done.stdout + done.stderr
