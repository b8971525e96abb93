"""The generated v1 JSON Schemas: well-formed, committed, and in agreement with the decoder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from invariant import ScheduleLogError, fold
from invariant.schemas import documents
from replay.cli import main
from replay.logs.logfile import SessionLog

from .conftest import REAL_LOGS, ROOT, protocol_examples, requires_real_logs
from .schemahelp import valid

CHANGE = "schedule-change.v1.schema.json"


@pytest.mark.parametrize("name", sorted(documents()))
def test_schema_passes_the_2020_12_metaschema(name: str) -> None:
    Draft202012Validator.check_schema(documents()[name])
    doc = documents()[name]
    assert doc["$id"].startswith("urn:schedlog:schema:") and doc["title"] and doc["description"]


def test_committed_schemas_equal_the_generated_ones() -> None:
    code = CliRunner().invoke(main, ["schemas", "--check", "--out", str(ROOT / "schemas")]).exit_code
    assert code == 0, "schemas/ is stale: run `schedlog schemas`"


def test_schemas_check_reports_a_stale_or_extra_file(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "schemas", tmp_path / "s")
    (tmp_path / "s" / "session-header.schema.json").write_text("{}\n")
    (tmp_path / "s" / "old.schema.json").write_text('{"$id": "urn:schedlog:schema:old"}\n')
    (tmp_path / "s" / "theirs.schema.json").write_text('{"$id": "https://example.org/theirs"}\n')
    result = CliRunner().invoke(main, ["schemas", "--check", "--out", str(tmp_path / "s")])
    assert result.exit_code == 1
    assert "session-header.schema.json: differs" in result.output and "old.schema.json: not generated" in result.output
    assert "theirs" not in result.output  # another project's schema is not ours to judge


def test_regenerating_makes_a_stale_folder_pass_the_check(tmp_path: Path) -> None:
    """What --check calls stale, writing mends: a schedlog schema this version does not generate
    (a renamed one) is removed; every other file in the folder, schemas of others included, stays."""
    shutil.copytree(ROOT / "schemas", tmp_path / "s")
    (tmp_path / "s" / "tools" / "old.schema.json").write_text('{"$id": "urn:schedlog:schema:tools:old"}\n')
    kept = {"notes.json": "{}\n", "theirs.schema.json": '{"$id": "urn:other"}\n', "broken.schema.json": "{"}
    for name, text in kept.items():
        (tmp_path / "s" / name).write_text(text)
    result = CliRunner().invoke(main, ["schemas", "--out", str(tmp_path / "s")])
    assert result.exit_code == 0 and "removed " + str(tmp_path / "s" / "tools" / "old.schema.json") in result.output
    assert not (tmp_path / "s" / "tools" / "old.schema.json").exists()
    assert CliRunner().invoke(main, ["schemas", "--check", "--out", str(tmp_path / "s")]).exit_code == 0
    assert all((tmp_path / "s" / name).read_text() == text for name, text in kept.items())


def test_an_unwritable_schemas_target_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    result = CliRunner().invoke(main, ["schemas", "--out", str(tmp_path / "file" / "sub")])
    assert result.exit_code == 2 and "cannot write" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_schemas_are_written_deterministically(tmp_path: Path) -> None:
    for out in ("a", "b"):
        assert CliRunner().invoke(main, ["schemas", "--out", str(tmp_path / out)]).exit_code == 0
    for path in (tmp_path / "a").rglob("*.json"):
        assert path.read_bytes() == (tmp_path / "b" / path.relative_to(tmp_path / "a")).read_bytes()
    assert not list(tmp_path.rglob("*.tmp"))


def _owned_payloads(e: dict[str, Any]) -> list[object]:
    seed = e["seedLength"] if isinstance(e["seedLength"], int) and e["seedLength"] >= 0 else 0
    events = e["events"][seed:] + ([e["candidate"]] if "candidate" in e else [])
    return [ev["data"] for ev in events if ev["type"] == "schedule/change"]


OK = [e for e in protocol_examples() if e["expect"] == "ok"]


@pytest.mark.parametrize("e", OK, ids=[e["name"] for e in OK])
def test_ok_example_payloads_validate(e: dict[str, Any]) -> None:
    for payload in _owned_payloads(e):
        assert valid(CHANGE, payload), payload


def _structurally_corrupt() -> list[tuple[str, object]]:
    out = []
    for e in protocol_examples():
        if e["expect"] != "corrupt" or "candidate" in e:
            continue
        try:
            fold(e["events"], e["seedLength"])
        except ScheduleLogError as err:
            if err.rule.startswith("decode."):
                assert err.index is not None
                out.append((e["name"], e["events"][err.index]["data"]))
    return out


CORRUPT = _structurally_corrupt()


def test_structural_examples_are_many() -> None:
    assert len(CORRUPT) == 97


@pytest.mark.parametrize(("name", "payload"), CORRUPT, ids=[c[0] for c in CORRUPT])
def test_structurally_corrupt_example_payloads_fail(name: str, payload: object) -> None:
    assert not valid(CHANGE, payload)


@requires_real_logs
@pytest.mark.parametrize("path", sorted(REAL_LOGS.glob("*.jsonl")) if REAL_LOGS.is_dir() else [], ids=lambda p: p.name)
def test_real_log_records_against_the_log_schemas(path: Path) -> None:
    lines = path.read_bytes().splitlines()
    header = json.loads(lines[0])
    log = SessionLog(str(path))
    list(log.entries())
    header_errors = [f for f in log.findings if f.code == "format.header" and f.severity == "error"]
    assert valid("session-header.schema.json", header) == (not header_errors)
    for raw in lines[1:]:
        record = json.loads(raw)
        if record["type"] in ("text-chunks", "reasoning-chunks", "tool-call-chunks"):
            assert valid("chunk-row.schema.json", record)
        else:
            assert valid("session-event.schema.json", record), record


def test_event_schema_types_schedule_change_data() -> None:
    event = {"type": "schedule/change", "seq": 0, "time": 0, "data": {"version": 1, "operation": "delete", "id": "x"}}
    assert valid("session-event.schema.json", event)
    event["data"] = {"version": 1, "operation": "delete", "id": " x"}
    assert not valid("session-event.schema.json", event)
    assert valid("session-event.schema.json", {"type": "other", "seq": 0, "time": 0, "data": {"id": " x"}})


TOOL_VALUES = [
    (
        "tools/schedule_create.result.schema.json",
        {
            "id": "schedule-1",
            "kind": "after",
            "prompt": "check logs",
            "afterSeconds": 30,
            "scheduledAt": "2026-08-05T12:00:30.000Z",
            "state": "scheduled",
            "deliveryMode": "session-local",
        },
        True,
    ),
    (
        "tools/schedule_create.result.schema.json",
        {
            "id": "schedule-1",
            "kind": "after",
            "prompt": "p",
            "afterSeconds": 30,
            "scheduledAt": "2026-08-05T12:00:30.000Z",
            "state": "overdue",
            "deliveryMode": "session-local",
            "deliveryNotBefore": "2026-08-05T12:00:30.000Z",
        },
        False,
    ),
    (
        "tools/schedule_create.result.schema.json",
        {
            "code": "timezone_confirmation_required",
            "message": "m",
            "sessionTimeZone": "unavailable",
            "clientTimeZones": [],
        },
        True,
    ),
    (
        "tools/schedule_create.result.schema.json",
        {"code": "persistence_uncertain", "message": "m", "operation": "create", "id": "schedule-2"},
        True,
    ),
    ("tools/schedule_create.result.schema.json", {"code": "schedule_not_found", "message": "m"}, False),
    ("tools/schedule_list.result.schema.json", [], True),
    (
        "tools/schedule_list.result.schema.json",
        [
            {
                "id": "e",
                "kind": "every",
                "prompt": "p",
                "everySeconds": 300,
                "scheduledAt": "2026-08-05T12:20:00.000Z",
                "state": "overdue",
                "deliveryMode": "session-local",
                "deliveryNotBefore": "2026-08-05T12:22:34.000Z",
            }
        ],
        True,
    ),
    ("tools/schedule_delete.result.schema.json", {"id": "x", "deleted": True}, True),
    ("tools/schedule_delete.result.schema.json", {"id": "x", "deleted": False, "code": "schedule_not_found"}, True),
    ("tools/schedule_delete.result.schema.json", {"id": "x", "deleted": 1}, False),
    ("tools/schedule_create.args.schema.json", {"prompt": "p", "at": {"date": "2026-08-06", "time": "09:00:00"}}, True),
    (
        "tools/schedule_create.args.schema.json",
        {"prompt": "p", "at": {"date": "2026-08-06", "time": "9", "x": 1}},
        False,
    ),
    ("tools/schedule_create.args.schema.json", {"prompt": "p", "after_seconds": 5, "undeclared": True}, True),
    ("tools/schedule_delete.args.schema.json", {"id": 5}, False),
    ("tools/schedule_list.args.schema.json", {"anything": 1}, True),
]


@pytest.mark.parametrize(("name", "value", "expected"), TOOL_VALUES)
def test_tool_schemas(name: str, value: object, expected: bool) -> None:
    assert valid(name, value) is expected


def test_a_vendored_subset_is_checked_for_what_it_holds(tmp_path: Path) -> None:
    """A project vendoring one schema: `schemas --check --vendored` (the pre-commit hook) passes
    while that one is current and fails once it differs; the full check wants them all."""
    from click.testing import CliRunner

    from replay.cli import main

    source = next(p for p in sorted((ROOT / "schemas").rglob("*.json")))
    vendored = tmp_path / "schemas" / source.relative_to(ROOT / "schemas")
    vendored.parent.mkdir(parents=True)
    vendored.write_bytes(source.read_bytes())
    out = str(tmp_path / "schemas")
    assert CliRunner().invoke(main, ["schemas", "--check", "--vendored", "--out", out]).exit_code == 0
    assert CliRunner().invoke(main, ["schemas", "--check", "--out", out]).exit_code == 1
    vendored.write_text(vendored.read_text().replace('"type"', '"type" ', 1))
    stale = CliRunner().invoke(main, ["schemas", "--check", "--vendored", "--out", out])
    assert stale.exit_code == 1 and "differs from the generated schema" in stale.output
    empty = tmp_path / "empty"
    empty.mkdir()
    none = CliRunner().invoke(main, ["schemas", "--check", "--vendored", "--out", str(empty)])
    assert none.exit_code == 1 and "no schema schedlog generates" in none.output
