"""Imports run one way: the engine is pure (stdlib only), bots import only the engine."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IO_MODULES = {"os", "io", "socket", "subprocess", "pathlib", "shutil", "tempfile", "threading", "asyncio", "time"}


def imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_engine_imports_only_the_standard_library_and_itself() -> None:
    engine_files = sorted((ROOT / "ohell").rglob("*.py"))
    assert engine_files
    for path in engine_files:
        foreign = {
            root for root in imported_roots(path) if root != "ohell" and root not in sys.stdlib_module_names
        }
        assert not foreign, f"{path.relative_to(ROOT)} imports {sorted(foreign)}"


def test_engine_does_no_io() -> None:
    for path in sorted((ROOT / "ohell").rglob("*.py")):
        io = imported_roots(path) & IO_MODULES
        if path.name == "strong.py" or path.parent.name == "bots":
            io -= {"time"}  # search bots read a clock to respect their time budget
        assert not io, f"{path.relative_to(ROOT)} imports I/O modules {sorted(io)}"
        source = path.read_text()
        assert "open(" not in source and "print(" not in source, f"{path.relative_to(ROOT)} does I/O"


def test_nothing_outside_tests_imports_tests() -> None:
    for folder in ("ohell", "arena", "bench", "examples"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "node_modules" in path.parts:
                continue
            assert "tests" not in imported_roots(path), f"{path.relative_to(ROOT)} imports tests"


def test_engine_does_not_import_the_platform() -> None:
    for path in sorted((ROOT / "ohell").rglob("*.py")):
        assert "arena" not in imported_roots(path), f"{path.relative_to(ROOT)} imports arena"
