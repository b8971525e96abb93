"""The schemas compile in ajv 8 strict mode (with ajv-formats) and ajv agrees with jsonschema.

Agreement on many values proves the patterns mean the same in ECMAScript as in Python.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from invariant.schemas import documents, schema_id

from .conftest import ROOT, protocol_examples
from .schemahelp import valid
from .test_schema_equivalence import headers, payloads, rows
from .test_schemas import TOOL_VALUES
from .test_transcripts import EXAMPLES, RESULTS, folder, mutated

AJV = ROOT / "tests" / "ajv"
pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: ajv check skipped")


def _ensure_ajv() -> None:
    if not (AJV / "node_modules" / "ajv").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=AJV, check=True, capture_output=True)


def ajv(cases: list[tuple[str, object]]) -> dict[str, Any]:
    _ensure_ajv()
    proc = subprocess.run(
        ["node", "check.mjs", str(ROOT / "schemas")],
        cwd=AJV,
        input=json.dumps(cases),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def test_every_schema_compiles_in_strict_mode() -> None:
    compiled = set(ajv([])["compiled"])
    assert compiled == {doc["$id"] for doc in documents().values()}


def _draw(strategy: st.SearchStrategy[Any], n: int) -> list[Any]:
    out: list[Any] = []

    @settings(max_examples=n, database=None, derandomize=True)
    @given(strategy)
    def collect(value: Any) -> None:
        out.append(value)

    collect()
    return out


def test_ajv_agrees_with_jsonschema() -> None:
    change = schema_id("schedule-change.v1.schema.json")
    cases: list[tuple[str, object]] = []
    for e in protocol_examples():
        for event in [*e["events"], *([e["candidate"]] if "candidate" in e else [])]:
            if event["type"] == "schedule/change":
                cases.append((change, event["data"]))
    cases += [(change, p) for p in _draw(payloads(), 400)]
    cases += [(schema_id("chunk-row.schema.json"), r) for r in _draw(rows(), 200)]
    cases += [(schema_id("session-header.schema.json"), h) for h in _draw(headers(), 200)]
    cases += [(schema_id(name), value) for name, value, _ in TOOL_VALUES]
    for pool, part in ((EXAMPLES, "args"), (RESULTS, "result")):  # the Host 1.0 and seed 002 tools
        for (surface, tool), value in _draw(mutated(pool), 150):
            cases.append((schema_id(f"{folder(surface)}/{tool}.{part}.schema.json"), value))
    names = {doc["$id"]: name for name, doc in documents().items()}
    expected = [valid(names[sid], value) for sid, value in cases]
    assert ajv(cases)["results"] == expected
    assert 0.2 < sum(expected) / len(expected) < 0.8  # both verdicts are well represented
