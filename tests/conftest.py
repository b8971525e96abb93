"""Shared test fixtures: where the conformance vectors and the real logs live."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

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
