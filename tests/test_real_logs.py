"""The real harness logs in ../shared/real-logs give the results SOURCE.md states."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from replay.judge.verify import verify_path
from replay.logs.logfile import SessionLog
from replay.reading import Reading

from .conftest import REAL_LOGS, requires_real_logs

pytestmark = requires_real_logs


@dataclass(frozen=True)
class Expected:
    file: str
    lines: int
    events: int
    rows: int
    seed_length: int | None
    end_seed: list[int]
    strict: str
    lenient: str


def _expected() -> list[Expected]:
    source = REAL_LOGS / "SOURCE.md"
    if not source.is_file():
        return []
    rows = []
    for raw in source.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in raw.strip().strip("|").split("|")]
        if len(cells) != 10 or not cells[0].startswith("`") or not cells[2].isdigit():
            continue
        m = re.search(r"scan stops at (\d+)", cells[3])
        rows.append(
            Expected(
                file=cells[0].strip("`"),
                lines=int(cells[2]),
                events=int(m.group(1)) if m else int(cells[3].split()[0]),
                rows=int(cells[4]),
                seed_length=None if cells[5] in ("–", "-") else int(cells[5]),
                end_seed=[] if cells[6] in ("–", "-") else [int(x) for x in cells[6].split(",")],
                strict=cells[7].replace("`", ""),
                lenient=cells[8].replace("`", ""),
            )
        )
    return rows


EXPECTED = _expected()


def test_source_table_lists_every_file() -> None:
    listed = {e.file for e in EXPECTED}
    present = {p.name for p in REAL_LOGS.glob("*.jsonl")}
    assert len(EXPECTED) == 23 and listed == present


def _check_outcome(log: SessionLog, outcome: str) -> None:
    if outcome == "accept":
        assert not log.rejected, [f.message for f in log.findings]
        return
    assert outcome.startswith("reject: ")
    reason = outcome.removeprefix("reject: ").split(" before a committed")[0]
    errors = [f.message for f in log.findings if f.severity == "error"]
    assert log.rejected and any(reason in m for m in errors), (reason, errors)


@pytest.mark.parametrize("expected", EXPECTED, ids=[e.file for e in EXPECTED])
def test_real_log_matches_source(expected: Expected) -> None:
    path = REAL_LOGS / expected.file
    raw = path.read_bytes()
    assert raw.count(b"\n") == expected.lines
    for mode, outcome in (("strict", expected.strict), ("lenient", expected.lenient)):
        log = SessionLog(str(path), Reading.of(mode=mode))
        entries = list(log.entries())
        assert log.event_count == expected.events
        assert sum(1 for e in entries if e.row is not None) <= expected.rows
        if not log.rejected:
            assert sum(1 for e in entries if e.row is not None) == expected.rows
        end_seeds = [
            e.event_index for e in entries if e.event is not None and e.event.get("type") == "session/end-seed"
        ]
        assert end_seeds == expected.end_seed
        assert (log.head.header or {}).get("seedLength") == expected.seed_length
        _check_outcome(log, outcome)
    report = verify_path(str(path))
    assert report.events == expected.events and report.violation is None and report.schedule_events == 0
    assert report.verdict == ("ok" if expected.strict == "accept" else "corrupt")


@pytest.mark.parametrize(
    ("child", "parent", "seed"),
    [
        ("subagent-fork.session.1.jsonl", "subagent-fork.session.jsonl", 42),
        ("subagent-mixed.session.2.jsonl", "subagent-mixed.session.jsonl", 36),
    ],
)
def test_fork_child_prefix_equals_parent_events(child: str, parent: str, seed: int) -> None:
    def events(name: str) -> list[dict[str, object]]:
        log = SessionLog(str(REAL_LOGS / name))
        return [e for entry in log.entries() for e in entry.events()]

    child_events = events(child)
    assert child_events[:seed] == events(parent)[:seed]
    assert child_events[seed]["type"] == "session/end-seed"


def test_marker_line_is_not_the_event_index() -> None:
    log = SessionLog(str(REAL_LOGS / "subagent-fork.session.1.jsonl"))
    marker = next(e for e in log.entries() if e.event is not None and e.event["type"] == "session/end-seed")
    assert (marker.line, marker.event_index) == (22, 42)


def test_shared_real_logs_are_not_copied_into_the_project() -> None:
    root = Path(__file__).resolve().parent.parent
    names = {p.name for p in REAL_LOGS.glob("*.jsonl")}
    copies = [p for p in root.rglob("*.jsonl") if p.name in names and ".venv" not in p.parts]
    assert copies == []
