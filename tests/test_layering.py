"""Imports run one way. The floors, lowest first (a unit may import only itself and what its row names):

    unit                  may import
    ohell                 the standard library only, and no I/O modules
    ohell.bots            ohell
    ohell.match           ohell, ohell.bots (games between bots in one process)
    arena.proto           (generated code: itself)
    arena.keys, arena.redis_client, arena.embedded_redis, arena.record_codec, arena.redispatch, arena.clock,
    arena.settings, arena.shown_urls
                          nothing of the project
    arena.archive         arena.record_codec, arena.shown_urls (SQL only: the ladder calls it, never the reverse)
    arena.wire            ohell, arena.proto
    arena.ladder_text     arena.wire (a ladder's settings in words: ohell ladder update, the host page)
    arena.conformance     ohell
    arena.rpc             arena.keys, arena.proto, arena.shown_urls
    arena.play            the engine (ohell, ohell.bots, ohell.match), arena.proto, arena.keys, arena.wire, arena.rpc
    arena.ladder          the engine, arena.proto, arena.keys, arena.redis_client, arena.record_codec, arena.play,
                          arena.redispatch, arena.clock, arena.settings, arena.archive (arena.ladder.archiving only: the
                          job that moves finished matches to SQL)
    arena.tournament      the engine, arena.proto, arena.keys, arena.redis_client, arena.play, arena.redispatch,
                          arena.clock, arena.settings (beside the ladder, never importing it)
    arena.sdk             the engine, arena.proto, arena.wire, arena.rpc
    arena.local           everything of arena below it (not arena.cli), ohell
    arena.cli             arena.local, arena.sdk, ohell (it starts services/ as processes, never imports them)
    services.engine       arena (not arena.local, arena.cli), ohell
    services.matchmaker   the same
    workers               the same
    services.web          the same (reads through the services' gRPC APIs)

and no two modules of the project import each other, directly or through others.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("ohell", "arena", "services", "workers")
IO_MODULES = {"os", "io", "socket", "subprocess", "pathlib", "shutil", "tempfile", "threading", "asyncio", "time"}

ENGINE = {"ohell", "ohell.bots", "ohell.match"}
BASE = {"arena.proto", "arena.keys", "arena.redis_client", "arena.embedded_redis", "arena.wire", "arena.conformance"}
BASE |= {"arena.record_codec", "arena.redispatch", "arena.clock", "arena.settings", "arena.shown_urls"}
BASE |= {"arena.ladder_text"}
BASE |= {"arena.archive"}
LIBRARY = ENGINE | BASE | {"arena.rpc", "arena.play", "arena.ladder", "arena.tournament", "arena.sdk"}
FLOORS: dict[str, set[str]] = {
    "arena": set(),  # the packages' own __init__ modules import nothing
    "services": set(),
    "ohell": set(),
    "ohell.bots": {"ohell"},
    "ohell.match": {"ohell", "ohell.bots"},
    "arena.proto": set(),
    "arena.keys": set(),
    "arena.redis_client": set(),
    "arena.embedded_redis": set(),
    "arena.record_codec": set(),
    "arena.redispatch": set(),
    "arena.clock": set(),
    "arena.settings": set(),
    "arena.shown_urls": set(),
    "arena.archive": {"arena.record_codec", "arena.shown_urls"},
    "arena.wire": {"ohell", "arena.proto"},
    "arena.ladder_text": {"arena.wire"},
    "arena.conformance": {"ohell"},
    "arena.rpc": {"arena.keys", "arena.proto", "arena.shown_urls"},
    "arena.play": {*ENGINE, "arena.proto", "arena.keys", "arena.wire", "arena.rpc"},
    "arena.ladder": {
        *ENGINE,
        "arena.proto",
        "arena.keys",
        "arena.redis_client",
        "arena.record_codec",
        "arena.play",
        "arena.redispatch",
        "arena.clock",
        "arena.settings",
        "arena.archive",
    },
    "arena.sdk": {*ENGINE, "arena.proto", "arena.wire", "arena.rpc"},
    "arena.local": LIBRARY,
    "arena.cli": {"arena.local", "arena.sdk"} | ENGINE,
    "services.engine": LIBRARY,
    "services.matchmaker": LIBRARY,
    "arena.tournament": {
        *ENGINE,
        "arena.proto",
        "arena.keys",
        "arena.redis_client",
        "arena.play",
        "arena.redispatch",
        "arena.clock",
        "arena.settings",
    },
    "workers": LIBRARY,
    "services.web": LIBRARY,
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def project_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "node_modules" not in path.parts:
                modules[module_name(path)] = path
    return modules


MODULES = project_modules()


def unit_of(module: str) -> str:
    """The longest row of FLOORS that ``module`` belongs to."""
    best = max((unit for unit in FLOORS if module == unit or module.startswith(unit + ".")), key=len, default="")
    assert best, f"{module} belongs to no floor: add it to FLOORS"
    return best


def imports_of(module: str) -> set[str]:
    """Every module of the project that ``module`` imports, at any depth of its code."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(), str(path))
    typing_only = {id(inner) for node in ast.walk(tree) if _is_type_checking_block(node) for inner in ast.walk(node)}
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


def _is_type_checking_block(node: ast.AST) -> bool:
    """``if TYPE_CHECKING:``: imports for the type checker only, never run."""
    return isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING"


GRAPH = {module: imports_of(module) for module in MODULES}


def imported_roots(path: Path) -> set[str]:
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_every_import_points_down_the_floors() -> None:
    wrong = []
    for module, targets in GRAPH.items():
        unit = unit_of(module)
        for target in targets:
            target_unit = unit_of(target)
            if target_unit != unit and target_unit not in FLOORS[unit]:
                wrong.append(f"{module} ({unit}) imports {target} ({target_unit})")
    assert not wrong, "\n".join(wrong)


def test_no_import_cycle_between_modules() -> None:
    """Depth-first search for a back edge; a package importing its own submodules counts too."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = 1
        path.append(module)
        for target in sorted(GRAPH[module]):
            if state.get(target) == 1:
                return path[path.index(target) :] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[module] = 2
        return None

    for module in sorted(GRAPH):
        if module not in state and (cycle := visit(module)):
            raise AssertionError("import cycle: " + " -> ".join(cycle))


def test_the_floor_table_catches_an_import_that_runs_back_up() -> None:
    assert "arena.ladder" not in FLOORS["arena.play"] and "services.engine" not in FLOORS["workers"]
    assert unit_of("arena.play.host") == "arena.play" and unit_of("services.engine.gateway") == "services.engine"
    assert "arena.play.host" in GRAPH["arena.ladder.matchplay"]  # lazy imports inside functions are seen


def test_only_the_archiving_job_of_the_ladder_imports_the_archive() -> None:
    importers = {
        m
        for m, targets in GRAPH.items()
        if unit_of(m) == "arena.ladder" and "arena.archive" in {unit_of(t) for t in targets}
    }
    assert importers == {"arena.ladder.archiving"}, importers


def test_the_ladder_and_the_tournaments_share_one_clock() -> None:
    """``now_ms`` was defined in both model modules (the tournament's may not import the ladder's):
    it is in ``arena.clock``, below both, and defined nowhere else."""
    defined = {
        module
        for module, path in MODULES.items()
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.FunctionDef) and node.name == "now_ms"
    }
    assert defined == {"arena.clock"}, defined


def test_the_ladder_and_the_tournaments_share_one_match_lease_setting() -> None:
    """``lease_seconds`` was defined in both jobs modules, the tournaments' with a bare float() and a
    default of its own: OHELL_MATCH_LEASE_S is read in ``arena.settings``, below both, and nowhere else."""
    defined, named = set(), set()
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef) and node.name == "lease_seconds":
                defined.add(module)
            if isinstance(node, ast.Constant) and node.value == "OHELL_MATCH_LEASE_S":
                named.add(module)
    assert defined == named == {"arena.settings"}, (defined, named)


def test_engine_imports_only_the_standard_library_and_itself() -> None:
    engine_files = sorted((ROOT / "ohell").rglob("*.py"))
    assert engine_files
    for path in engine_files:
        foreign = {root for root in imported_roots(path) if root != "ohell" and root not in sys.stdlib_module_names}
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
    for folder in (*PACKAGES, "bench", "examples"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if "node_modules" in path.parts:
                continue
            assert "tests" not in imported_roots(path), f"{path.relative_to(ROOT)} imports tests"


def private_imports(path: Path) -> list[str]:
    """What ``path`` imports of another distribution's private parts: a module or name starting with ``_``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            dotted = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module != "__future__":
            dotted = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in dotted:
            parts = name.split(".")
            if parts[0] not in PACKAGES and any(part.startswith("_") for part in parts):
                found.append(name)
    return found


def test_no_module_imports_a_private_part_of_a_library() -> None:
    """A private module may go in any release of its library (probes took gRPC's asyncio reflection
    servicer from grpc_reflection.v1alpha._async; reflection.aio is its public name). grpc's code
    generator writes the imports of arena.proto (grpc._utilities), not this project."""
    wrong = {
        module: names
        for module, path in MODULES.items()
        if unit_of(module) != "arena.proto" and (names := private_imports(path))
    }
    assert not wrong, wrong
