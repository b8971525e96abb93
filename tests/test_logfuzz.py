"""The session-log fuzzer (fuzz/logs.py, issue 33): a bounded run in the suite finds nothing, each
class of failure it reports is found when it is there, and every input is made again from its
seed and index alone. The campaign itself (a million inputs) runs by hand: `python -m fuzz.logs`."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import REAL_LOGS, ROOT

sys.path.insert(0, str(ROOT))
from fuzz import logs as fuzz

SEED = 20261202


@pytest.fixture(scope="module")
def pool() -> list[fuzz.Source]:
    return fuzz.sources(REAL_LOGS)


def test_the_sources_hold_every_version_plain_and_zstd(pool: list[fuzz.Source]) -> None:
    names = [s.name for s in pool]
    for version in (0, 2, 3, 4):
        assert any(f".v{version}.session" in n and not n.endswith(".zstd") for n in names), version
        assert any(f".v{version}.session" in n and n.endswith(".zstd") for n in names), version
    if REAL_LOGS.is_dir():
        assert len(pool) > 100


def test_a_bounded_fuzz_finds_nothing(pool: list[fuzz.Source]) -> None:
    """400 seeded inputs (the campaign's first) through every check: no crash, no
    non-determinism, no fast/exact difference, every JSON report parses."""
    summary = fuzz.Summary(SEED)
    for index in range(400):
        item = fuzz.make(SEED, index, pool)
        summary.add(SEED, index, item.source, fuzz.check(item))
    assert summary.failed == 0, summary.to_json()["failures"]


def test_an_input_is_made_again_from_its_seed_and_index(pool: list[fuzz.Source], tmp_path: Path) -> None:
    made = [fuzz.make(SEED, index, pool) for index in (0, 1, 4711)]
    assert made == [fuzz.make(SEED, index, pool) for index in (0, 1, 4711)]
    assert len({m.data for m in made}) == 3
    assert fuzz.main(["--show", f"{SEED}:4711", "--out", str(tmp_path), "--real-logs", str(REAL_LOGS)]) == 0
    assert (tmp_path / made[2].name).read_bytes() == made[2].data


def _break(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """Make the judge fail in one way the fuzzer must report."""
    from replay.cli.output import reports
    from replay.judge import verify
    from replay.logs.logfile import SessionLog

    judged = verify.verify_log
    calls: list[int] = []

    def broken(log: Any, sink: Any = None) -> Any:
        calls.append(1)
        report = judged(log, sink)
        if how == "crash":
            raise ValueError("boom")
        if how == "nondeterministic" and len(calls) == 2:
            return judged(SessionLog("other.jsonl", data=b"not a log\n"))
        if how == "fast-exact" and not log.fast:
            return judged(SessionLog("other.jsonl", data=b"not a log\n"))
        return report

    monkeypatch.setattr(verify, "verify_log", broken)
    if how == "not-json":
        monkeypatch.setattr(reports, "render", lambda *args, **kwargs: '{"tag":Infinity}')
    if how == "hang":
        monkeypatch.setattr(fuzz, "check", lambda item: time.sleep(3))


@pytest.mark.parametrize("how", ["crash", "nondeterministic", "fast-exact", "not-json", "hang"])
def test_each_class_of_failure_is_found(monkeypatch: pytest.MonkeyPatch, pool: list[fuzz.Source], how: str) -> None:
    _break(monkeypatch, how)
    monkeypatch.setattr(fuzz, "_POOL", pool)
    import signal

    previous = signal.signal(signal.SIGALRM, fuzz._alarm)
    try:
        _, _, _, outcome = fuzz._one((SEED, 0, 0.2))
    finally:
        signal.signal(signal.SIGALRM, previous)
    assert outcome.kind == how
    if how == "crash":
        assert outcome.detail.startswith("ValueError at ")


@pytest.mark.slow
def test_the_campaign_runs_in_spawned_workers_and_writes_its_summary(tmp_path: Path) -> None:
    assert fuzz.main(["--count", "60", "--jobs", "2", "--out", str(tmp_path), "--real-logs", str(REAL_LOGS)]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["inputs"] == 60 and summary["classes"]["ok"] == 60 and summary["failures"] == []
