"""deploy/Dockerfile (there is no Docker daemon here: the file is read, and its build stage's install
is run on this machine): it copies everything the install needs, says which engine it builds, and
the install works with no C compiler (the pure-Python engine)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of the Dockerfile, continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in DOCKERFILE.read_text().splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        word, _, rest = pending.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
        pending = ""
    return out


def stages() -> list[list[tuple[str, str]]]:
    """The instructions of each build stage (from one FROM to the next)."""
    found: list[list[tuple[str, str]]] = []
    for word, rest in instructions():
        if word == "FROM":
            found.append([])
        if found:
            found[-1].append((word, rest))
    return found


def copied_sources(stage: list[tuple[str, str]]) -> list[str]:
    """What a stage copies from the build context (not from another stage)."""
    sources = []
    for word, rest in stage:
        if word == "COPY" and "--from" not in rest:
            sources += shlex.split(rest)[:-1]
    return sources


def test_the_build_stage_copies_all_the_install_needs() -> None:
    build, final = stages()
    sources = copied_sources(build)
    assert all((ROOT / source).exists() for source in sources), sources
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = {pattern.rstrip("*") for pattern in project["tool"]["setuptools"]["packages"]["find"]["include"]}
    needed = {"pyproject.toml", "setup.py", project["project"]["readme"]} | packages
    assert needed <= set(sources), needed - set(sources)
    assert copied_sources(final) == []  # the image takes only the wheel of the build stage
    assert any(word == "COPY" and rest.startswith("--from=build /wheels") for word, rest in final)


def test_the_engine_build_is_chosen_explicitly_and_checked() -> None:
    build, final = stages()
    for stage in (build, final):
        assert ("ARG", "OHELL_PURE=0") in stage  # default: the compiled engine
    runs = [rest for word, rest in build if word == "RUN"]
    compiler = next(run for run in runs if "gcc" in run)
    assert compiler.startswith('if [ "$OHELL_PURE" = "0" ]; then')  # a compiler only for the compiled build
    assert any('OHELL_PURE="$OHELL_PURE" pip wheel' in run for run in runs)
    final_runs = " ".join(rest for word, rest in final if word == "RUN")
    assert "gcc" not in final_runs and "apt-get" not in final_runs  # the image holds no compiler
    assert "ohell.engine_build()" in final_runs and "want = 'compiled' if '$OHELL_PURE' == '0' else 'pure'" in (
        final_runs
    )


# folders of files the processes read at run time beside their modules: the web app's pages and
# scripts, the archive's Alembic migrations (its script template included)
RUNTIME_DATA = ("services/web/templates", "services/web/static", "arena/archive/migrations")


def runtime_data_files() -> list[str]:
    files = [
        str(path.relative_to(ROOT))
        for folder in RUNTIME_DATA
        for path in (ROOT / folder).rglob("*")
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"
    ]
    assert len(files) > 20, files
    return files


@pytest.mark.slow
@pytest.mark.parametrize("how", ["no C compiler", "OHELL_PURE=1"])
def test_the_build_stage_installs_the_pure_engine_without_a_compiler(how: str, tmp_path: Path) -> None:
    """The build stage's ``pip wheel`` on a copy of what it copies, with a compiler that does not
    exist (as in the slim image) or OHELL_PURE=1: a pure wheel, whose engine imports and says so."""
    build, _ = stages()
    context = tmp_path / "src"
    context.mkdir()
    for source in copied_sources(build):
        if (ROOT / source).is_dir():
            shutil.copytree(ROOT / source, context / source, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
        else:
            shutil.copy(ROOT / source, context / source)
    env = {key: value for key, value in os.environ.items() if key != "OHELL_PURE"}
    env |= {"CC": str(tmp_path / "no-such-cc")} if how == "no C compiler" else {"OHELL_PURE": "1"}
    wheels = tmp_path / "wheels"
    command = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-v", "-w", str(wheels), "."]
    built = subprocess.run(command, cwd=context, env=env, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    reason = "compiling the engine failed" if how == "no C compiler" else "OHELL_PURE is set"
    assert f"{reason}" in built.stdout + built.stderr and "installing the pure-Python engine" in built.stderr
    (wheel,) = wheels.glob("*.whl")  # tagged for this platform when the compiler failed, yet holding no
    if how == "OHELL_PURE=1":  # extension; pure by name too when nothing was asked to compile
        assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert wheel.name.startswith(f"ohell_arena-{project['version']}-"), wheel.name  # the image's tag
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(wheel) as archive:
        assert not [name for name in archive.namelist() if name.endswith((".so", ".pyd"))]
        missing = sorted(set(runtime_data_files()) - set(archive.namelist()))
        assert not missing, f"the image would lack {missing} (pyproject.toml's package-data)"
        archive.extractall(unpacked)
    probe = "import ohell, ohell.state; print(ohell.engine_build(), ohell.state.__file__)"
    ran = subprocess.run(
        [sys.executable, "-c", probe],
        env=env | {"PYTHONPATH": str(unpacked)},
        cwd=tmp_path,  # not the repository, whose ohell (and compiled modules) would come first
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    build_name, path = ran.stdout.split()
    assert build_name == "pure" and Path(path).is_relative_to(unpacked)
