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


FORBIDDEN_IN_INVARIANT = {"replay", "click", "duckdb", "zstandard", "orjson", "os", "io", "pathlib", "time", "sys"}


@pytest.mark.parametrize("path", sorted((ROOT / "invariant").glob("*.py")), ids=lambda p: p.name)
def test_invariant_is_pure(path: Path) -> None:
    tree = ast.parse(path.read_text())
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module.split(".")[0])
    assert not imported & FORBIDDEN_IN_INVARIANT
    calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert "open" not in calls
    if path.name != "zones.py":  # the only reader of package data: zone names and tzdata rules
        assert "importlib" not in imported and "resources" not in path.read_text()
