"""Shared test fixtures: where the conformance vectors and the real logs live."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

settings.register_profile("schedlog", deadline=None)
settings.load_profile("schedlog")
"""No property test may fail for slowness (a loaded CI machine once broke the 200 ms default):
speed is the benchmarks' business (bench/)."""

ROOT = Path(__file__).resolve().parent.parent
CONFORMANCE = ROOT / "fixtures" / "conformance"
SHARED = ROOT.parent / "shared"
SHARED_SPEC = SHARED / "spec"
REAL_LOGS = SHARED / "real-logs"


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def protocol_examples() -> list[dict[str, Any]]:
    return load_jsonl(CONFORMANCE / "protocol-examples.jsonl")


requires_real_logs = pytest.mark.skipif(
    not REAL_LOGS.is_dir(), reason=f"real session logs not present at {REAL_LOGS} (fresh clone without ../shared)"
)


@pytest.fixture(autouse=True)
def _own_verdict_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test's commands keep their verdict cache in a folder of the test's own (the CLI's
    cache is on by default): no test reads what another left, nor the user's cache."""
    monkeypatch.setenv("SCHEDLOG_CACHE_DIR", str(tmp_path_factory.mktemp("verdict-cache")))
