"""A pytest plugin: the session logs a project names become test items, judged by schedlog.

Installed with the `testing` extra (entry point `schedlog`, so pytest loads it by itself). In
the project's pytest configuration:

    [tool.pytest.ini_options]
    schedlog_logs = ["fixtures/sessions/**/*.jsonl", "fixtures/sessions/**/*.jsonl.zstd"]

Each file matching a pattern (relative to the rootdir, among the paths pytest collects) is one
test: schedlog verifies it and compares the report with the expected verdict in the sidecar
file (`expected.json` by default) of its directory or the nearest one above it, keyed by the
log's path relative to the sidecar's directory:

    {"corrupt/reused-id.session.jsonl": {"verdict": "corrupt", "rule": "fold.create.reuse", "line": 25}}

Keys compared when given: `verdict`, `rule`, `index`, `line`, `finding` (a finding code the
report must hold), `active` (the ids active after the fold). A log without an entry must be ok.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SIDECAR = "expected.json"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("schedlog_logs", "Glob patterns (from the rootdir) of session logs to verify as tests.", "linelist")
    parser.addini("schedlog_expected", "The sidecar file naming expected verdicts.", default=SIDECAR)
    parser.addini("schedlog_profile", "The profile logs are judged by (auto: each log's own).", default="auto")
    parser.addini("schedlog_mode", "The reader mode: strict or lenient.", default="strict")


def _selected(config: pytest.Config) -> set[Path]:
    """Every file the configured patterns match (computed once per run)."""
    cached: set[Path] | None = getattr(config, "_schedlog_logs", None)
    if cached is None:
        root = config.rootpath
        patterns = config.getini("schedlog_logs")
        cached = {p.resolve() for pattern in patterns for p in root.glob(pattern) if p.is_file()}
        config._schedlog_logs = cached  # type: ignore[attr-defined]
    return cached


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.resolve() in _selected(parent.config):
        found: SessionLogFile = SessionLogFile.from_parent(parent, path=file_path)
        return found
    return None


class SessionLogFile(pytest.File):
    """A session log file: one test."""

    def collect(self) -> Iterator[pytest.Item]:
        yield SessionLogItem.from_parent(self, name="verify")


class VerdictMismatch(Exception):
    """The report differs from the expected verdict."""

    def __init__(self, differences: list[str], report: str) -> None:
        super().__init__("; ".join(differences))
        self.differences = differences
        self.report = report


def expected_for(log: Path, root: Path, sidecar: str = SIDECAR) -> tuple[dict[str, Any], Path | None]:
    """The expected verdict of `log` from the nearest sidecar at or above its directory (up to
    `root`), and that sidecar; `{"verdict": "ok"}` when none names it."""
    log = log.resolve()
    for folder in log.parents:
        candidate = folder / sidecar
        if candidate.is_file():
            table = json.loads(candidate.read_text(encoding="utf-8"))
            key = log.relative_to(folder).as_posix()
            if key in table:
                entry: dict[str, Any] = table[key]
                return entry, candidate
        if folder == root.resolve():
            break
    return {"verdict": "ok"}, None


def differences(expected: dict[str, Any], report: dict[str, Any]) -> list[str]:
    """How a report (`SessionReport.to_json()`) differs from an expected verdict."""
    v = report.get("violation") or {}
    got = {
        "verdict": str(report["verdict"]),
        "rule": v.get("rule"),
        "index": v.get("index"),
        "line": v.get("line"),
        "active": [r["id"] for r in report.get("active", [])],
    }
    out = [f"{k}: expected {expected[k]!r}, got {got[k]!r}" for k in got if k in expected and expected[k] != got[k]]
    from replay.judge.report import FINDING_LISTS  # (loaded with the verifier, once a log is verified)

    finding = expected.get("finding")
    codes = [f["code"] for name, _ in FINDING_LISTS for f in report.get(name, [])]
    if finding is not None and finding not in codes:
        out.append(f"finding: expected {finding!r} among {codes}")
    return out


class SessionLogItem(pytest.Item):
    """Verify one log and compare with its expected verdict."""

    def runtest(self) -> None:
        from replay.judge.textline import text_line
        from replay.judge.verify import verify_path
        from replay.reading import Reading

        config = self.config
        reading = Reading.of(config.getini("schedlog_profile"), config.getini("schedlog_mode"))
        assert self.path is not None
        report = verify_path(str(self.path), reading)
        expected, _ = expected_for(self.path, config.rootpath, config.getini("schedlog_expected"))
        found = differences(expected, report.to_json())
        if found:
            raise VerdictMismatch(found, text_line(report))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, VerdictMismatch):
            lines = ["schedlog verdict differs from the expected one:", *excinfo.value.differences, ""]
            return "\n".join([*lines, excinfo.value.report])
        return str(super().repr_failure(excinfo, style))

    def reportinfo(self) -> tuple[Path, int, str]:
        assert self.path is not None
        return self.path, 0, f"schedlog verify {self.path.name}"
