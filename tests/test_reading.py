"""One reading value for every command: checked once, an override of the header's seedLength,
and no function of replay/ taking the reading's options one by one."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from invariant.profiles import AFTER_ONLY, CALENDAR
from replay.cli import main
from replay.cli.group import every_command
from replay.cli.output import Format
from replay.reading import DEFAULT_READING, Mode, Reading

from .conftest import ROOT

SESSIONS = ROOT / "fixtures" / "sessions"
OPTIONS = {"profile", "mode", "seed_length", "ideal"}


def test_reading_resolves_names_once() -> None:
    reading = Reading.of("after-only", "lenient", 3, True)
    assert reading == Reading(AFTER_ONLY, Mode.LENIENT, 3, True)
    assert Reading.of() == DEFAULT_READING == Reading(None, Mode.STRICT, None, False)  # auto: each session's own
    assert Reading.of("auto") == DEFAULT_READING and Reading.of("calendar").profile is CALENDAR


@pytest.mark.parametrize(
    "kwargs", [{"profile": "fixed"}, {"mode": "loose"}, {"seed_length": -1}, {"seed_length": True}]
)
def test_reading_refuses_what_it_cannot_mean(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        Reading.of(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"now": 253402300800000},  # a millisecond past 9999-12-31T23:59:59.999Z (issue 49's input)
        {"now": -62135596800001},  # a millisecond before 0001-01-01
        {"now": True},
        {"now": 1.5},
        {"now": "2026-08-05T12:00:00.000Z"},
    ],
)
def test_a_reading_refuses_an_instant_it_cannot_use_when_made(kwargs: dict[str, object]) -> None:
    """`now` is formatted into the Host store's messages: one outside the canonical instants'
    years would raise deep inside a verify, so the Reading refuses it where it is made."""
    with pytest.raises(ValueError, match="now must be None or epoch milliseconds within years 0001-9999"):
        Reading(**kwargs)  # type: ignore[arg-type]


def test_the_last_and_first_canonical_instants_are_a_readings_now() -> None:
    from replay.judge.verify import verify_path

    stores = sorted((ROOT / "fixtures" / "host" / "stores").glob("*.json"))
    assert stores
    for now in (253402300799999, -62135596800000):
        for store in stores:
            verify_path(str(store), Reading(now=now))  # judged, never raising


@pytest.mark.parametrize("days, records", [(0, None), (3651, None), (None, 0), (None, 10_001), (True, None)])
def test_a_retention_refuses_bounds_the_host_does_not_allow(days: object, records: object) -> None:
    from invariant.retention import Retention

    with pytest.raises(ValueError, match="retention"):
        Retention(days, records)  # type: ignore[arg-type]


def test_reading_takes_no_names_unresolved() -> None:
    with pytest.raises(TypeError):
        Reading("calendar")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Reading(CALENDAR, "strict")  # type: ignore[arg-type]


@pytest.mark.parametrize("header_seed", [0, 7, "7", None, 2.5])
def test_a_seed_length_override_beats_the_header(header_seed: object) -> None:
    assert Reading().seed_for(header_seed) == header_seed  # as written: the fold checks its bounds
    assert Reading(seed_length=4).seed_for(header_seed) == 4


def _functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    found = []
    for path in sorted((ROOT / "replay").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append((f"{path.relative_to(ROOT)}:{node.lineno} {node.name}", node))
    return found


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    a = node.args
    return {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}


def test_no_function_takes_the_reading_options_one_by_one() -> None:
    """mode and seed_length travel only inside a Reading; a function may take a profile or the
    ideal flag alone (the simulator, the cron report), never several of the options."""
    offenders = []
    for where, node in _functions():
        options = _parameters(node) & OPTIONS
        if node.name in ("of", "__post_init__"):  # the Reading's own constructor
            continue
        if options & {"mode", "seed_length"} or len(options) > 1:
            offenders.append(f"{where}({', '.join(sorted(options))})")
    assert not offenders, offenders
    assert len(_functions()) > 200  # the walk saw replay/'s functions


def test_the_cli_hands_a_reading_to_the_library() -> None:
    runner = CliRunner()
    path = str(SESSIONS / "valid" / "fork-child.session.jsonl")
    result = runner.invoke(main, ["verify", "--format", "json", "--seed-length", "0", "--mode", "lenient", path])
    (report,) = json.loads(result.output)
    assert report["seedLength"] == 0  # the override, not the header's
    assert runner.invoke(main, ["verify", "--mode", "loose", path]).exit_code == 2


def _format_choices() -> dict[str, list[str]]:
    choices = {}
    for name, command in every_command().items():
        for param in command.params:
            if param.name == "fmt":
                assert param.opts == ["--format"]
                choices[name] = list(param.type.choices)  # type: ignore[attr-defined]
    return choices


def test_every_format_option_is_the_shared_one() -> None:
    """One vocabulary: every --format offers members of Format, declared once (format_option)."""
    choices = _format_choices()
    assert set(choices) == {
        "verify",
        "replay",
        "check",
        "cron",
        "sql",
        "inspect",
        "simulate",
        "conform",
        "explain",
        "watch",
        "repair",
    }
    vocabulary = {f.value for f in Format}
    assert all(set(offered) <= vocabulary and offered[0] == "text" for offered in choices.values())
    declared = [p for p in (ROOT / "replay").rglob("*.py") if '"--format"' in p.read_text()]
    assert [p.relative_to(ROOT).as_posix() for p in declared] == ["replay/cli/output/__init__.py"]


def test_the_readme_lists_each_commands_formats() -> None:
    from tests.documentation import ALL as readme

    for name, offered in _format_choices().items():
        usage = next(
            line for line in readme.splitlines() if line.startswith(f"schedlog {name} ") and "[--format" in line
        )
        assert f"[--format {'|'.join(offered)}]" in usage, (name, usage)


def test_verify_csv_has_a_row_per_session(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["verify", "--format", "csv", str(SESSIONS)])
    lines = result.output.splitlines()
    assert lines[0].startswith("path,session_id,verdict,event_count,schedule_event_count,")
    as_json = json.loads(runner.invoke(main, ["verify", "--format", "json", str(SESSIONS)]).output)
    assert len(lines) == 1 + len(as_json)
    assert sum(",corrupt," in line for line in lines) == sum(r["verdict"] == "corrupt" for r in as_json)


def test_replay_reports_as_verify_does(tmp_path: Path) -> None:
    runner = CliRunner()
    verified = runner.invoke(main, ["verify", "--format", "jsonl", str(SESSIONS)])
    replayed = runner.invoke(main, ["replay", str(SESSIONS), "--db", str(tmp_path / "x.duckdb"), "--format", "jsonl"])
    assert replayed.exit_code == verified.exit_code == 1
    assert replayed.output == verified.output


def test_check_and_inspect_speak_json_lines_and_json(tmp_path: Path) -> None:
    runner = CliRunner()
    log = SESSIONS / "valid" / "reminders.session.jsonl"
    candidate = tmp_path / "c.json"
    candidate.write_text('{"version": 1, "operation": "delete", "id": "schedule-404"}')
    line = runner.invoke(main, ["check", "--format", "jsonl", str(log), str(candidate)]).output
    assert line.count("\n") == 1 and json.loads(line)["verdict"] == "rejected"
    db = tmp_path / "x.duckdb"
    runner.invoke(main, ["replay", str(SESSIONS), "--db", str(db)])
    summary = json.loads(runner.invoke(main, ["inspect", str(db), "--format", "json"]).output)
    assert summary["sessions_by_verdict"][0]["verdict"] == "corrupt"
    assert list(summary) == ["sessions_by_verdict", "rules_violated", "format_findings", "active_reminders"]


def test_one_column_vocabulary_for_csv_parquet_and_the_sessions_table(tmp_path: Path) -> None:
    """CSV, the Parquet verdict parts and the replay database's `sessions` table name a session's
    verdict record alike (VERDICT_COLUMNS): `session_id`, `event_count`, ..., never `session`,
    `events`; the table holds every one of them."""
    import duckdb

    from replay.judge.verdicts import VERDICT_COLUMNS

    runner = CliRunner()
    csv_header = runner.invoke(main, ["verify", "--format", "csv", str(SESSIONS)]).output.splitlines()[0].split(",")
    runner.invoke(main, ["verify", "--format", "parquet", "--output", str(tmp_path / "parts"), str(SESSIONS)])
    runner.invoke(main, ["replay", "--db", str(tmp_path / "x.duckdb"), str(SESSIONS)])
    with duckdb.connect() as con:
        parquet = [d[0] for d in con.execute(f"SELECT * FROM read_parquet('{tmp_path}/parts/*.parquet')").description]
    with duckdb.connect(str(tmp_path / "x.duckdb"), read_only=True) as con:
        table = [d[0] for d in con.execute("SELECT * FROM sessions").description]
    assert csv_header == parquet == list(VERDICT_COLUMNS)
    assert set(VERDICT_COLUMNS) <= set(table)
    inspected = json.loads(runner.invoke(main, ["inspect", str(tmp_path / "x.duckdb"), "--format", "json"]).output)
    assert all(" " not in key for key in inspected)
    assert set(inspected["sessions_by_verdict"][0]) == {"verdict", "sessions", "event_count", "schedule_event_count"}
