"""Lint, format and strict typing stay clean; the layering rule holds."""

from __future__ import annotations

import ast
import importlib
import shutil
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
    if path.name == "exports.py":  # imports the package's own modules by name, on first use
        assert "resources" not in path.read_text()
    elif path.name != "zones.py":  # the only reader of package data: zone names and tzdata rules
        assert "importlib" not in imported and "resources" not in path.read_text()


ROOMS = {
    "replay.terminal": 0,
    "replay.atomic": 0,
    "replay.reading": 1,
    "replay.modes": 0,
    "replay.exitstatus": 0,
    "replay.lines": 2,
    "replay.sources": 3,
    "replay.logs": 4,
    "replay.judge": 5,
    "replay.conform": 5,
    "replay.schemafiles": 5,
    "replay.cache": 6,
    "replay.live": 6,
    "replay.audit": 7,
    "replay.tools": 8,
    "replay.duck": 8,
    "replay.sim": 8,
    "replay.fleet": 9,
    "replay.cli": 10,
    "replay.testing": 11,
    "replay.entry": 11,
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


# --- start-up: each package loads a name's module when the name is first used ---------------------


def _checked_imports(package: str) -> dict[str, set[str]]:
    """The names a package's `if TYPE_CHECKING:` block imports, by module (relative to it)."""
    tree = ast.parse((ROOT / package / "__init__.py").read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    found: dict[str, set[str]] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module is not None
        module = node.module if node.level else node.module.removeprefix(package + ".")
        found.setdefault(module, set()).update(a.name for a in node.names)
    return found


@pytest.mark.parametrize("package", ["invariant", "replay"])
def test_each_lazy_name_is_what_type_checkers_see(package: str) -> None:
    """`_HOMES` and the block for type checkers name the same modules and names, every name of
    `__all__` has a home, and each resolves to its home module's object."""
    module = importlib.import_module(package)
    homes = {home: set(names) for home, names in module._HOMES.items()}
    assert homes == _checked_imports(package)
    assert set(module.__all__) == {name for names in homes.values() for name in names}
    for home, names in homes.items():
        for name in names:
            assert getattr(module, name) is getattr(importlib.import_module(f"{package}.{home}"), name)
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018


def test_fold_is_the_function_even_after_its_module_is_imported() -> None:
    """The fold's module is `folding`: were it `fold`, importing it would rebind the package's
    `fold` to the module, which the lazy exports would then hand out."""
    code = "import invariant.folding, invariant.delivery; from invariant import fold; print(callable(fold))"
    assert _python(code).stdout.strip() == "True"


def _python(code: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    return done


HEAVY = (
    "duckdb",
    "dask",
    "distributed",
    "pyarrow",
    "replay.judge",
    "replay.cache",
    "replay.live",
    "replay.audit",
    "replay.tools",
    "replay.duck",
    "replay.conform",
    "replay.sim.simulator",
)
LOADED = "import sys, atexit; atexit.register(lambda: print(*sorted(sys.modules), file=sys.stderr)); "


def _heavy(code: str) -> set[str]:
    """The heavy modules (HEAVY) loaded by the end of `code`, run in a fresh interpreter."""
    modules = set(_python(LOADED + code).stderr.split())
    return {m for m in modules if m.startswith(HEAVY)}


def test_the_command_line_starts_without_the_judge_or_duckdb() -> None:
    assert _heavy("from replay.cli import main; main(['--help'], standalone_mode=False)") == set()


def test_verify_runs_without_duckdb_or_dask() -> None:
    loaded = _heavy("from replay.cli import main; main(['verify', 'fixtures/sessions'], standalone_mode=False)")
    assert "replay.judge.verify" in loaded
    assert not {m for m in loaded if m.startswith(("duckdb", "dask", "distributed", "pyarrow"))}


def test_a_verify_the_cache_answers_loads_neither_the_reader_nor_what_it_does_not_use(tmp_path: Path) -> None:
    """A re-audit of unchanged logs costs what it loads: not the judge, the reader, worker
    pools, the Host cross-check (no store among the logs) or the CI outputs (issue 50)."""
    args = ["verify", "--cache-dir", str(tmp_path), "fixtures/sessions"]
    run = f"from replay.cli import main; main({args!r}, standalone_mode=False)"
    _python(run)  # the cache learns the logs
    modules = set(_python(LOADED + run).stderr.split())
    unused = ("replay.judge.verify", "replay.logs.logfile", "replay.judge.hoststore", "replay.cli.output.ci")
    assert {m for m in modules if m.startswith(unused) or m in ("multiprocessing", "concurrent.futures")} == set()
    assert {"csv", "traceback"} & modules == set()  # (the text output's hit)


def test_a_text_verify_the_cache_answers_makes_no_report(tmp_path: Path) -> None:
    """A hit's text is kept beside its report (replay.judge.held): over ok logs the cache
    answers, neither the reports' values nor the fold they hold are loaded (issue 50)."""
    folder = tmp_path / "ok"
    folder.mkdir()
    for k, path in enumerate(sorted((ROOT / "fixtures" / "sessions" / "valid").iterdir())):
        shutil.copy(path, folder / f"{k}-{path.name}")
    assert len(list(folder.iterdir())) == 3
    args = ["verify", "--cache-dir", str(tmp_path / "cache"), str(folder)]
    run = f"from replay.cli import main; main({args!r}, standalone_mode=False)"
    _python(run)
    done = _python(LOADED + run)
    assert "from cache" in done.stdout and " ok," in done.stdout
    modules = set(done.stderr.split())
    assert {"replay.judge.report", "invariant.folding", "invariant.findings", "pickle"} & modules == set()


def test_the_pytest_plugin_loads_the_verifier_only_to_verify_a_log() -> None:
    assert _heavy("import replay.testing.plugin") == set()


# --- the reader in layers (replay/sources, replay/logs) -----------------------------------------

READER_LAYERS = {
    "replay.sources.bytesource": 0,
    "replay.logs.frames": 1,
    "replay.logs.notes": 1,
    "replay.logs.committed": 2,
    "replay.logs.fastruns": 2,
    "replay.logs.header": 2,
    "replay.logs.records": 3,
    "replay.logs.fastpath": 4,
    "replay.logs.plainlog": 4,
    "replay.logs.zstdlog": 4,
    "replay.logs.readstate": 4,
    "replay.logs.logfile": 5,
}
"""The reader's layers, bytes up to the reader: each imports only layers below it."""
JUDGES_VOCABULARY = {"invariant.detect", "invariant.tools.judge", "replay.judge"}
READER_ROOMS = ("replay.lines.", "replay.sources.", "replay.logs.")


@pytest.mark.parametrize("module", sorted(READER_LAYERS))
def test_the_reader_layers_import_only_lower_ones(module: str) -> None:
    for imported in _replay_imports(REPLAY_MODULES[module]) & set(READER_LAYERS):
        assert READER_LAYERS[imported] < READER_LAYERS[module], f"{module} imports {imported}"


@pytest.mark.parametrize("module", sorted(m for m in REPLAY_MODULES if m.startswith(READER_ROOMS)))
def test_the_reader_holds_none_of_the_judges_vocabulary(module: str) -> None:
    """The judge hands the reader a selector of the events it wants; the reader knows no clue
    needles and no tool-call parsing of its own."""
    imported = _imports(REPLAY_MODULES[module])
    assert not {name for name in imported if any(name.startswith(v) for v in JUDGES_VOCABULARY)}


def test_no_property_test_can_fail_for_slowness() -> None:
    """The suite's Hypothesis profile has no deadline, and no test sets one of its own."""
    from hypothesis import settings

    assert settings().deadline is None
    for path in sorted((ROOT / "tests").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.keyword) and node.arg == "deadline":
                assert isinstance(node.value, ast.Constant) and node.value.value is None, f"{path.name}:{node.lineno}"


LONGEST_CLASS = 250
"""Issue 50: no class holds more lines than this (the reader was one of 730)."""


def test_no_class_anywhere_is_over_its_length() -> None:
    """Issue 50 for replay/, issue 67 for every package of the repository."""
    long = [
        f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for folder in ("invariant", "replay", "fixtures", "fuzz", "bench", "tests")
        for path in sorted((ROOT / folder).rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef) and (node.end_lineno or 0) - node.lineno + 1 > LONGEST_CLASS
    ]
    assert not long, long


def test_replay_keeps_at_most_eight_modules_at_its_top() -> None:
    """What every room shares, and nothing a room of its own serves (issue 63, item 17)."""
    top = sorted(p.name for p in (ROOT / "replay").glob("*.py"))
    assert len(top) <= 8, top


LONGEST_COMMAND_MODULE = 400
"""Issue 67: a command line in modules, one per command or group (click's own pattern), none
longer than this, its output layer's included (the report page's HTML is a file of its own)."""


def test_no_module_of_the_command_line_is_over_its_length() -> None:
    long = {
        str(path.relative_to(ROOT)): n
        for path in sorted((ROOT / "replay" / "cli").rglob("*.py"))
        if (n := len(path.read_text().splitlines())) > LONGEST_COMMAND_MODULE
    }
    assert not long, long


def test_each_room_says_what_it_owns_and_what_it_may_import() -> None:
    """Every room of ROOMS that is a folder opens with a docstring naming what it imports."""
    for room in ROOMS:
        init = ROOT / room.replace(".", "/") / "__init__.py"
        if init.exists():
            doc = ast.get_docstring(ast.parse(init.read_text())) or ""
            assert "import" in doc.lower(), f"{room}: {doc[:80]!r}"
