"""The .proto contract: buf STANDARD lint clean, committed Python code current, importable."""

from __future__ import annotations

import importlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from arena.proto import generate
from tests.needs import import_or_missing, offline

ROOT = Path(__file__).resolve().parents[2]
# the grpc stubs name the grpcio-tools that wrote them; a newer one writes the same code
GENERATED_BY = re.compile(r"^GRPC_GENERATED_VERSION = '([0-9.]+)'$", re.MULTILINE)


def without_generator_version(code: str) -> str:
    return GENERATED_BY.sub("GRPC_GENERATED_VERSION = ''", code)


def test_committed_generated_code_is_current(tmp_path: Path) -> None:
    import_or_missing("grpc_tools", "pip install -e '.[test]' (grpcio-tools, a test extra, regenerates the code)")
    written = generate.generate(tmp_path)
    committed = generate.OUTPUT_DIR
    names = sorted(path.name for path in written)
    assert names == sorted(p.name for p in committed.glob("*_pb2*.py*")), "run: python -m arena.proto.generate"
    for name in names:
        fresh, kept = (tmp_path / name).read_text(), (committed / name).read_text()
        assert without_generator_version(fresh) == without_generator_version(kept), (
            f"arena/proto/ohell/v1/{name} is stale: run python -m arena.proto.generate"
        )
    assert len(generate.proto_files()) * 3 == len(names)  # _pb2.py, _pb2.pyi, _pb2_grpc.py per proto


def test_the_stubs_ask_for_no_newer_grpcio_than_the_project_requires() -> None:
    """The stubs refuse to load under a grpcio older than the grpcio-tools that wrote them: written by
    a newer one than pyproject.toml's lower bound, they would break an install that the bound allows."""
    required = re.search(r'"grpcio>=([0-9.]+)"', (ROOT / "pyproject.toml").read_text())
    assert required is not None
    for stub in sorted(generate.OUTPUT_DIR.glob("*_pb2_grpc.py")):
        written_by = GENERATED_BY.search(stub.read_text())
        assert written_by is not None and written_by.group(1) == required.group(1), (
            f"{stub.name} was written by grpcio-tools {written_by and written_by.group(1)}: regenerate it with "
            f"grpcio-tools {required.group(1)} (pip install grpcio-tools=={required.group(1)})"
        )


def test_every_proto_imports_under_the_arena_package() -> None:
    for proto in generate.proto_files():
        module = importlib.import_module(f"arena.proto.ohell.v1.{proto.stem}_pb2")
        assert module.DESCRIPTOR.package == "ohell.v1"
        assert module.DESCRIPTOR.name == f"ohell/v1/{proto.name}"


def _buf_command() -> list[str] | None:
    local = shutil.which("buf")
    if local:
        return [local]
    if shutil.which("npx") is None:
        return None
    probe = subprocess.run(
        ["npx", "--no-install", "buf", "--version"], cwd=ROOT / "protos", capture_output=True, timeout=60
    )
    if probe.returncode == 0:
        return ["npx", "--no-install", "buf"]
    probe = subprocess.run(
        ["npx", "--yes", "@bufbuild/buf", "--version"], cwd=ROOT / "protos", capture_output=True, timeout=180
    )
    return ["npx", "--yes", "@bufbuild/buf"] if probe.returncode == 0 else None


@pytest.mark.slow
def test_buf_lint_standard_is_clean() -> None:
    command = _buf_command()
    if command is None:
        offline("buf is not available", "install buf, or Node.js's npx with the npm registry in reach (@bufbuild/buf)")
    result = subprocess.run([*command, "lint"], cwd=ROOT / "protos", capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_rpc_and_field_is_documented() -> None:
    for proto in generate.proto_files():
        lines = proto.read_text().splitlines()
        for number, line in enumerate(lines):
            text = line.strip()
            declares = text.startswith(("rpc ", "message ", "enum ", "service ")) or (
                text.endswith(";") and "=" in text and not text.startswith(("option", "syntax", "package"))
            )
            if declares:
                assert lines[number - 1].strip().startswith("//"), f"{proto.name}:{number + 1} lacks a comment: {text}"
