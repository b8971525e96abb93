"""Lint, format and strict typing stay clean; the layering rule holds."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

BIN = Path(sys.executable).parent


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)


def test_ruff_check() -> None:
    proc = _run(str(BIN / "ruff"), "check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_ruff_format() -> None:
    proc = _run(str(BIN / "ruff"), "format", "--check", ".")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.slow
def test_mypy_strict() -> None:
    proc = _run(str(BIN / "mypy"), "--strict", "invariant", "replay")
    assert proc.returncode == 0, proc.stdout + proc.stderr


FORBIDDEN_IN_INVARIANT = {"os", "io", "pathlib", "time", "sys"}
"""Standard-library modules that touch the outside (files, the clock, the process)."""


def _imports(path: Path) -> set[str]:
    """The absolute module names a file imports (`from a.b import c` counts `a.b` and `a.b.c`)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


@pytest.mark.parametrize("path", sorted((ROOT / "invariant").glob("*.py")), ids=lambda p: p.name)
def test_invariant_is_pure(path: Path) -> None:
    tree = ast.parse(path.read_text())
    imported = {name.split(".")[0] for name in _imports(path)}
    outside = imported - sys.stdlib_module_names - {"invariant", "__future__"}
    assert not outside, f"invariant imports beyond the standard library: {sorted(outside)}"
    assert not imported & FORBIDDEN_IN_INVARIANT
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert "open" not in calls
    if path.name != "zones.py":  # the only reader of package data: zone names and tzdata rules
        assert "importlib" not in imported and "resources" not in path.read_text()


ROOMS = {
    "replay.terminal": 0,
    "replay.atomic": 0,
    "replay.reading": 0,
    "replay.logs": 1,
    "replay.audit": 2,
    "replay.conform": 2,
    "replay.duck": 3,
    "replay.sim": 3,
    "replay.schemafiles": 3,
    "replay.fleet": 4,
    "replay.cli": 5,
    "replay.testing": 6,
}
"""Each room of `replay/` with its layer: a module may import from its own room and from lower
layers, never from a higher one or a sibling room of its layer (the package `replay` itself
only re-exports)."""


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _room(module: str) -> str | None:
    return next((room for room in ROOMS if module == room or module.startswith(room + ".")), None)


REPLAY_MODULES = {_module(p): p for p in sorted((ROOT / "replay").rglob("*.py"))}


def _replay_imports(path: Path) -> set[str]:
    """The replay modules a file imports (a name imported from a package counts when it is a module)."""
    return {name for name in _imports(path) if name in REPLAY_MODULES}


@pytest.mark.parametrize("module", sorted(m for m in REPLAY_MODULES if m != "replay"))
def test_replay_imports_go_down_the_rooms(module: str) -> None:
    room = _room(module)
    assert room is not None, f"{module} belongs to no room of ROOMS"
    for imported in _replay_imports(REPLAY_MODULES[module]):
        other = _room(imported)
        assert other is not None, f"{module} imports {imported}, which is no room's (the package only re-exports)"
        assert other == room or ROOMS[other] < ROOMS[room], f"{module} ({room}) imports up or across: {imported}"


def test_replay_import_graph_has_no_cycle() -> None:
    # a module's own packages are initialised before it (importing them back is no cycle)
    graph = {m: {i for i in _replay_imports(p) if not (m + ".").startswith(i + ".")} for m, p in REPLAY_MODULES.items()}
    done: set[str] = set()

    def visit(module: str, path: tuple[str, ...]) -> None:
        assert module not in path, "import cycle: " + " -> ".join((*path, module))
        if module in done:
            return
        for imported in graph.get(module, ()):
            visit(imported, (*path, module))
        done.add(module)

    for module in graph:
        visit(module, ())
