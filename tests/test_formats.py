"""Session-log formats v0-v4 (formats.md): v0 logs rewritten into v2, v3 and v4 framing judge the
same, the adversarial variants each get their own finding, and a version above 4 is not judged."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
import zstandard

from replay.judge.report import SessionReport
from replay.judge.verdicts import Verdict
from replay.judge.verify import verify_path
from replay.logs.logfile import SessionLog

from .conftest import REAL_LOGS, ROOT, requires_real_logs

_spec = importlib.util.spec_from_file_location("upgrade", ROOT / "fixtures" / "upgrade.py")
assert _spec is not None and _spec.loader is not None
upgrade_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(upgrade_module)
upgrade, log_bytes = upgrade_module.upgrade, upgrade_module.log_bytes

FIXTURES = sorted(p for p in (ROOT / "fixtures" / "sessions").rglob("*.session.jsonl"))
REAL = sorted(REAL_LOGS.glob("*.jsonl")) if REAL_LOGS.is_dir() else []


def _v0(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    log = SessionLog(str(path))
    events = [e for entry in log.entries() for e in entry.events()]
    return dict(log.head.header or {}), events


def _write(directory: Path, header: dict[str, Any], events: list[dict[str, Any]], zstd: bool = False) -> Path:
    name = "session.jsonl" if header["version"] == 0 else f"session.v{header['version']}.jsonl"
    directory.mkdir(parents=True, exist_ok=True)
    data = log_bytes(header, events)
    if not zstd:
        path = directory / name
        path.write_bytes(data)
        return path
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    lines = data.splitlines(keepends=True)
    frames = [compressor.compress(lines[0])] + [
        compressor.compress(b"".join(lines[i : i + 5])) for i in range(1, len(lines), 5)
    ]
    path = directory / (name + ".zstd")
    path.write_bytes(b"".join(frames))
    return path


def _same_judgement(original: SessionReport, converted: SessionReport, renumbered: dict[int, int]) -> None:
    if original.violation is None:
        assert converted.violation is None, converted.violation
    else:
        assert converted.violation is not None and converted.violation.rule == original.violation.rule
        if original.violation.index is not None:
            assert converted.violation.index == renumbered[original.violation.index]
    assert (original.folded is None) == (converted.folded is None)
    if original.folded is not None and converted.folded is not None:
        assert [r.to_json() for r in converted.folded.active] == [r.to_json() for r in original.folded.active]
    errors = [f for f in converted.findings if f.severity == "error"]
    assert not errors, errors  # the upgrade writes the committed prefix in clean framing


def _check_upgrades(path: Path, tmp_path: Path) -> None:
    original = verify_path(str(path))
    header, events = _v0(path)
    for version in (2, 3, 4):
        for zstd in (False, True):
            head, upgraded, renumbered = upgrade(header, events, version)
            converted = verify_path(str(_write(tmp_path / f"v{version}{'z' if zstd else ''}", head, upgraded, zstd)))
            _same_judgement(original, converted, renumbered)
            assert converted.format_version == version


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_fixture_upgraded_to_every_version_judges_the_same(path: Path, tmp_path: Path) -> None:
    _check_upgrades(path, tmp_path)


@requires_real_logs
@pytest.mark.parametrize("name", [p.name for p in REAL])
def test_real_log_upgraded_to_every_version_judges_the_same(name: str, tmp_path: Path) -> None:
    _check_upgrades(REAL_LOGS / name, tmp_path)


def _fork_v4() -> tuple[dict[str, Any], list[dict[str, Any]]]:
    header, events = _v0(ROOT / "fixtures" / "sessions" / "valid" / "fork-child.session.jsonl")
    head, upgraded, _ = upgrade(header, events, 4)
    return head, upgraded


def test_the_fork_cut_moves_to_the_inherited_marker(tmp_path: Path) -> None:
    head, events = _fork_v4()
    report = verify_path(str(_write(tmp_path, head, events)))
    markers = [e["seq"] for e in events if e["type"] == "session/end-seed" and e["data"] == {"inherited": True}]
    assert head["isSeeded"] is True and len(markers) == 1
    assert report.verdict is Verdict.OK and report.seed_length == markers[0]


def _finding_codes(report: SessionReport) -> set[str]:
    return {f.code for f in report.findings if f.severity == "error"}


def _adversarial() -> dict[str, tuple[str, dict[str, Any], list[dict[str, Any]]]]:
    head, events = _fork_v4()
    unmarked = [{**e, "data": {}} if e["type"] == "session/end-seed" else e for e in events]
    return {
        "isSeeded without marker": ("session.v4.jsonl", head, unmarked),
        "marker without isSeeded": ("session.v4.jsonl", {**head, "isSeeded": False}, events),
        "seedLength in a v4 header": ("session.v4.jsonl", {**head, "seedLength": 3}, events),
        "name says v3, header v4": ("session.v3.jsonl", head, events),
    }


@pytest.mark.parametrize("case", sorted(_adversarial()))
def test_adversarial_variant_gets_its_own_finding(case: str, tmp_path: Path) -> None:
    name, head, events = _adversarial()[case]
    (tmp_path / name).write_bytes(log_bytes(head, events))
    report = verify_path(str(tmp_path / name))
    expected, named = {
        "isSeeded without marker": ("format.is-seeded", "no session/end-seed marker"),
        "marker without isSeeded": ("format.is-seeded", "not isSeeded"),
        "seedLength in a v4 header": ("format.header", "seedLength"),
        "name says v3, header v4": ("format.name-version", "identifies v3"),
    }[case]
    assert report.verdict is Verdict.CORRUPT and _finding_codes(report) == {expected}
    assert named in next(f.message for f in report.findings if f.code == expected)


@pytest.mark.parametrize("case", ["isSeeded without marker", "marker without isSeeded"])
def test_a_seeded_mismatch_is_refused_in_lenient_mode_too(case: str, tmp_path: Path) -> None:
    """formats.md §5: either mismatch refuses the log, whatever the mode (the cut is unknown)."""
    from replay.reading import Mode, Reading

    name, head, events = _adversarial()[case]
    (tmp_path / name).write_bytes(log_bytes(head, events))
    report = verify_path(str(tmp_path / name), Reading(mode=Mode.LENIENT))
    assert report.verdict is Verdict.CORRUPT and _finding_codes(report) == {"format.is-seeded"}


def test_a_version_above_4_is_not_judged(tmp_path: Path) -> None:
    head, events = _fork_v4()
    path = tmp_path / "session.v5.jsonl"
    path.write_bytes(log_bytes({**head, "version": 5}, events))
    report = verify_path(str(path))
    assert report.verdict is Verdict.UNSUPPORTED and report.violation is None and report.events == 0
    assert [f.code for f in report.findings] == ["format.version.newer"]


def test_packed_rows_exist_only_in_v0_and_v1(tmp_path: Path) -> None:
    path = ROOT / "fixtures" / "sessions" / "valid" / "reminders.session.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    head = json.loads(lines[0])
    as_v1 = tmp_path / "session.v1.jsonl"
    as_v1.write_bytes(json.dumps({**head, "version": 1}).encode() + b"\n" + b"".join(lines[1:]))
    assert verify_path(str(as_v1)).verdict is Verdict.OK  # v1 is the v0 layout
    head2 = {k: v for k, v in head.items() if k != "seedLength"} | {"version": 2, "isSeeded": False}
    as_v2 = tmp_path / "session.v2.jsonl"
    as_v2.write_bytes(json.dumps(head2).encode() + b"\n" + b"".join(lines[1:]))
    report = verify_path(str(as_v2))
    assert report.verdict is Verdict.CORRUPT
    assert any("rows exist in v0 and v1 only" in f.message for f in report.findings)


FORMATS = ROOT / "fixtures" / "formats"


def test_every_surface_says_what_judged_the_session(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from replay.cli import main

    log = str(FORMATS / "fixed-rate" / "v4" / "session.v4.jsonl.zstd")
    (report,) = json.loads(CliRunner().invoke(main, ["verify", "--format", "json", log]).output)
    assert (report["formatVersion"], report["generation"], report["profile"]) == (4, 4, "fixed-rate")
    assert "reminders from the schedule plugin" in report["profileEvidence"]
    junit = CliRunner().invoke(main, ["verify", "--format", "junit", log]).output
    assert (
        '<property name="profile" value="fixed-rate"/>' in junit
        and '<property name="formatVersion" value="4"/>' in junit
    )
    db = tmp_path / "f.duckdb"
    CliRunner().invoke(main, ["replay", str(FORMATS), "--db", str(db)])
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT format_version, generation, profile, profile_source, verdict FROM sessions "
            "WHERE path LIKE '%fixed-rate/v4%'"
        ).fetchall()
    assert rows == [(4, 4, "fixed-rate", "evidence", "ok")]


def test_check_takes_candidates_against_a_v4_log(tmp_path: Path) -> None:
    from replay.tools.candidate import check_log_candidate

    log = str(FORMATS / "fixed-rate" / "v4" / "session.v4.jsonl.zstd")
    delete = json.dumps({"version": 1, "operation": "delete", "id": "schedule-1"}).encode()
    verdict = check_log_candidate(log, delete)
    assert verdict.accepted and [r["id"] for r in verdict.active] == ["schedule-2"]
    cron = {"id": "schedule-9", "kind": "cron", "prompt": "standup", "cron": "0 9 * * *", "timeZone": "UTC",
            "scheduledAt": "2026-08-06T09:00:00.000Z"}  # fmt: skip
    refused = check_log_candidate(log, json.dumps({"version": 1, "operation": "create", "schedule": cron}).encode())
    assert not refused.accepted and refused.rule == "decode.record.kind"  # the log is fixed-rate: no cron


def test_check_folds_a_forked_v4_log_from_its_inherited_marker(tmp_path: Path) -> None:
    from replay.tools.candidate import check_log_candidate

    log = str(FORMATS / "fork" / "inherited-marker" / "session.v4.jsonl")
    delete = json.dumps({"version": 1, "operation": "delete", "id": "schedule-1"}).encode()
    verdict = check_log_candidate(log, delete)  # cut at the marker: the parent's create of the id is inherited
    assert verdict.accepted, verdict.message
    unmarked = check_log_candidate(str(FORMATS / "fork" / "no-marker" / "session.v4.jsonl"), delete)
    assert not unmarked.accepted and unmarked.stage == "load"  # isSeeded without a marker: not loadable
