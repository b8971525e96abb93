"""The bundled corpus: conformance vectors equal the spec's, session fixtures match expected.json."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from replay.judge.verify import verify_path

from .conftest import CONFORMANCE, ROOT, SHARED_SPEC

SESSIONS = ROOT / "fixtures" / "sessions"
EXPECTED = json.loads((SESSIONS / "expected.json").read_text())
VECTORS = [
    "protocol-examples.jsonl",
    "calendar-examples.jsonl",
    "owner-scenarios.jsonl",
    "fixed-rate-examples.jsonl",
    "host-cron-examples.jsonl",
    "zones-icu.json",
]


@pytest.mark.parametrize("name", VECTORS)
def test_conformance_vectors_equal_the_spec(name: str) -> None:
    if not SHARED_SPEC.is_dir():
        pytest.skip(f"spec folder not present at {SHARED_SPEC} (fresh clone without ../shared)")
    assert (CONFORMANCE / name).read_bytes() == (SHARED_SPEC / name).read_bytes()


def test_every_spec_example_file_is_vendored() -> None:
    if not SHARED_SPEC.is_dir():
        pytest.skip(f"spec folder not present at {SHARED_SPEC}")
    examples = [*SHARED_SPEC.glob("*.jsonl"), *SHARED_SPEC.glob("*.json")]
    assert sorted(p.name for p in examples) == sorted(VECTORS)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_session_fixture_verdict(name: str) -> None:
    expect = EXPECTED[name]
    report = verify_path(str(SESSIONS / name))
    assert report.verdict == expect["verdict"]
    if "active" in expect:
        assert report.folded is not None and [r.id for r in report.folded.active] == expect["active"]
    if expect.get("rule"):
        v = report.violation
        assert v is not None and (v.rule, v.index, v.line) == (expect["rule"], expect["index"], expect["line"])
    if "finding" in expect:
        assert any(f.code == expect["finding"] and f.severity == "error" for f in report.findings)


def test_every_fixture_file_is_listed() -> None:
    files = {str(p.relative_to(SESSIONS)) for p in SESSIONS.rglob("*.jsonl*")}
    assert files == set(EXPECTED)


def test_fixtures_are_what_the_generator_writes(tmp_path: Path) -> None:
    copy = tmp_path / "fixtures"
    shutil.copytree(ROOT / "fixtures", copy, ignore=shutil.ignore_patterns("conformance", "sessions", "formats"))
    subprocess.run([sys.executable, str(copy / "generate.py")], check=True, capture_output=True)
    for tree in ("sessions", "formats"):
        for path in (ROOT / "fixtures" / tree).rglob("*"):
            if path.is_file():
                assert (copy / tree / path.relative_to(ROOT / "fixtures" / tree)).read_bytes() == path.read_bytes(), (
                    path
                )
