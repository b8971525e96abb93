"""`schedlog check` and `schedlog cron` end to end."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from replay.cli import main

from .conftest import protocol_examples
from .sessionfiles import header, line, write_session

CANDIDATES = [e for e in protocol_examples() if "candidate" in e]


def run(*args: str, input: bytes | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)
    return result.exit_code, result.output


@pytest.mark.parametrize("e", CANDIDATES, ids=[e["name"] for e in CANDIDATES])
def test_check_agrees_with_every_candidate_example(tmp_path: Path, e: dict[str, Any]) -> None:
    log = write_session(tmp_path / "log.jsonl", e["events"], header("s", e["seedLength"]))
    whole_event = e["name"].endswith("ok") or len(e["name"]) % 2 == 0  # exercise both candidate forms
    candidate = tmp_path / "candidate.json"
    candidate.write_bytes(line(e["candidate"] if whole_event else e["candidate"]["data"]))
    code, out = run("check", "--format", "json", str(log), str(candidate))
    verdict = json.loads(out)
    assert verdict["verdict"] == ("accepted" if e["expect"] == "ok" else "rejected")
    assert code == (0 if e["expect"] == "ok" else 1)
    if e["expect"] == "ok" and "active" in e:
        assert [r["id"] for r in verdict["active"]] == e["active"]
    if e["expect"] == "corrupt":
        assert verdict["stage"] == ("live" if e["rule"].startswith("live.cron") else "fold")


def test_check_text_names_stage_rule_and_message(tmp_path: Path) -> None:
    e = next(x for x in CANDIDATES if x["name"] == "live-cron-dispatch-stale-occurrence")
    log = write_session(tmp_path / "log.jsonl", e["events"])
    code, out = run("check", str(log), "-", input=line(e["candidate"]))
    assert code == 1
    assert out.startswith("rejected (live): live.cron.dispatch.occurrence: occurrenceAt 2026-08-06T09:00:00.000Z")


def test_check_other_event_types_are_not_checked(tmp_path: Path) -> None:
    log = write_session(tmp_path / "log.jsonl", [])
    code, out = run("check", str(log), "-", input=line({"type": "turn/start", "seq": 0, "time": 0, "data": {}}))
    assert code == 0 and "not checked" in out


@pytest.mark.parametrize("candidate", [b"{not json", b""])
def test_check_bad_candidate_is_a_usage_error(tmp_path: Path, candidate: bytes) -> None:
    log = write_session(tmp_path / "log.jsonl", [])
    code, out = run("check", str(log), "-", input=candidate)
    assert code == 2 and "Traceback" not in out


def test_check_unreadable_log_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    code, _ = run("check", str(tmp_path / "empty.jsonl"), "-", input=b"{}")
    assert code == 2
    code, _ = run("check", str(tmp_path / "missing.jsonl"), "-", input=b"{}")
    assert code == 2


@pytest.mark.parametrize(("zone", "code"), [("UTC", 0), ("Europe/Berlin", 1)])
def test_check_cron_create_at_the_first_minute_of_year_1(tmp_path: Path, zone: str, code: int) -> None:
    """The target check asks for the first occurrence after the minute before `scheduledAt`,
    which here lies in year 0: a verdict (an occurrence in UTC; in Berlin's local mean time
    none), never a traceback."""
    log = write_session(tmp_path / "log.jsonl", [])
    schedule = {"id": "schedule-1", "kind": "cron", "prompt": "p", "cron": "0 0 * * *", "timeZone": zone}
    candidate = {
        "version": 1,
        "operation": "create",
        "schedule": {**schedule, "scheduledAt": "0001-01-01T00:00:00.000Z"},
    }
    got, out = run("check", str(log), "-", input=line(candidate))
    assert got == code
    assert out.startswith("accepted" if code == 0 else "rejected (live): live.cron.create.target")


def test_cron_json_shows_canonical_forms_and_dst_shifts() -> None:
    code, out = run(
        "cron", "30 01 * * *", "--tz", "US/Eastern", "--after", "2026-10-31T00:00:00.000Z",
        "--count", "3", "--format", "json",
    )  # fmt: skip
    r = json.loads(out)
    assert code == 0 and r["canonical"] == "30 1 * * *" and r["canonicalTimeZone"] == "America/New_York"
    assert [o["utc"] for o in r["occurrences"]] == [
        "2026-10-31T05:30:00.000Z",
        "2026-11-01T05:30:00.000Z",
        "2026-11-02T06:30:00.000Z",
    ]
    assert [o["shifted"] for o in r["occurrences"]] == [False, False, True]
    assert r["occurrences"][0]["local"] == "2026-10-31 01:30" and r["occurrences"][0]["dst"] is True


@pytest.mark.parametrize(
    ("expr", "tz", "code"),
    [
        ("*/4 * * * *", "UTC", "frequency_too_high"),
        ("0 9 * * MON", "UTC", "invalid_rule"),
        ("0 9 * * *", "EST", "invalid_time_zone"),
        ("0 0 31 2 *", "UTC", "no_future_occurrence"),
    ],
)
def test_cron_refusals_exit_1_with_the_code(expr: str, tz: str, code: str) -> None:
    status, out = run("cron", expr, "--tz", tz, "--after", "2026-01-01T00:00:00.000Z", "--format", "json")
    assert status == 1 and json.loads(out)["code"] == code


def test_cron_bad_after_is_a_usage_error() -> None:
    status, _ = run("cron", "0 9 * * *", "--tz", "UTC", "--after", "tomorrow")
    assert status == 2


def test_version_names_tzdata_and_icu() -> None:
    _, out = run("--version")
    assert "tzdata" in out and "ICU 78.3" in out


@pytest.mark.parametrize(
    ("typed", "ms"),
    [
        ("2026-08-05T12:00:00.000Z", 1785931200000),
        ("2026-08-05T12:00:00Z", 1785931200000),
        ("2026-08-05T12:00:00.5Z", 1785931200500),
        ("2026-08-05T12:00:00.001Z", 1785931200001),
        ("2026-08-05T14:00:00+02:00", 1785931200000),
        ("2026-08-05", None),
        ("2026-08-05T12:00:00", None),
        ("yesterday", None),
    ],
)
def test_an_option_instant_may_be_typed_without_milliseconds(typed: str, ms: int | None) -> None:
    """`cron --after` and `verify --now` take the instants people type, not only the canonical
    form a log holds (it refused 2026-08-05T12:00:00Z)."""
    from replay.cli.running import typed_instant

    assert typed_instant(typed) == ms
    result = CliRunner().invoke(main, ["cron", "0 9 * * *", "--tz", "UTC", "--after", typed, "--count", "1"])
    assert result.exit_code == (0 if ms is not None else 2), result.output
