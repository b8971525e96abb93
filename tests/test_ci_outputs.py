"""The outputs CI pipelines read: GitHub annotations and step summary, JUnit, SARIF 2.1.0."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft7Validator
from junitparser import Attr, Error, Failure, IntAttr, JUnitXml, TestCase

from replay.cli import main
from replay.judge.rules import FORMAT, LIVE, PROTOCOL, TRANSCRIPT, describe

from .conftest import ROOT
from .sarifschema import sarif_schema
from .sessionfiles import ev, header, write_session

SESSIONS = ROOT / "fixtures" / "sessions"
EXPECTED = json.loads((SESSIONS / "expected.json").read_text())
CORRUPT = {
    name: {"rule": e["rule"] or e["finding"], "line": e.get("line", 7)}  # seq-gap: the gap is on line 7
    for name, e in EXPECTED.items()
    if e["verdict"] == "corrupt"
}
HOSTILE_ID = 'x%0A\n,: | <script>alert("id")</script> `**'


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False, env=env)
    return result.exit_code, result.output


def create(seq: int, schedule_id: str) -> dict[str, Any]:
    record = {"id": schedule_id, "kind": "after", "prompt": "p", "afterSeconds": 30}
    record["scheduledAt"] = "2026-08-05T12:00:30.000Z"
    return ev(seq, "schedule/change", {"version": 1, "operation": "create", "schedule": record}, 1785931200000)


@pytest.fixture()
def hostile(tmp_path: Path) -> Path:
    """A corrupt session whose file name and reused id hold what each output must escape."""
    path = tmp_path / "a,b:c%d.session.jsonl"
    return write_session(path, [create(0, HOSTILE_ID), create(1, HOSTILE_ID)], header("s|<b>"))


# --- GitHub ---------------------------------------------------------------------------------------


def test_github_annotates_each_violation_with_file_line_and_rule() -> None:
    code, out = run("verify", "--format", "github", str(SESSIONS))
    assert code == 1
    annotations = [line for line in out.splitlines() if line.startswith("::error")]
    assert len(annotations) == len(CORRUPT)
    assert sum(1 for line in out.splitlines() if line.startswith("::notice")) == 2  # related: gate, reuse
    for name, e in CORRUPT.items():
        expected = f"::error file={SESSIONS / name},line={e['line']},title={e['rule']}::"
        assert any(a.startswith(expected) for a in annotations), expected
    assert out.splitlines()[-1] == "8 session(s): 3 ok, 5 corrupt, 0 unreadable; 0 from cache, 0 resumed, 8 read whole"


def test_github_escapes_what_the_command_grammar_reads(hostile: Path) -> None:
    _, out = run("verify", "--format", "github", str(hostile))
    (annotation,) = [line for line in out.splitlines() if line.startswith("::error")]
    head, message = annotation.split("::", 2)[1:]
    assert "a%2Cb%3Ac%25d.session.jsonl" in head and ",line=3,title=fold.create.reuse" in head
    assert "%250A" in message  # the id's own "%0A" is not read back as a line break
    decoded = message.replace("%0A", "\n").replace("%0D", "\r").replace("%25", "%")
    assert "'x%0A\\n,: | <script>" in decoded  # the id as the message quotes it, its LF escaped


def test_github_writes_a_markdown_step_summary_when_asked(tmp_path: Path, hostile: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    code, _ = run(
        "verify", "--format", "github", str(SESSIONS), str(hostile), env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    text = summary.read_text()
    assert code == 1 and text.startswith("earlier step\n### schedlog verify")
    assert "| corrupt | 6 |" in text and "| ok | 3 |" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and ".session.jsonl" in line]
    assert len(rows) == 6 and all(line.count(" | ") == 4 for line in rows)  # no cell broke the table
    assert "<script>" not in text and "&lt;script&gt;" in text and "&#124;" in text


def test_no_step_summary_without_the_variable_or_for_other_formats(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    run("verify", "--format", "json", str(SESSIONS), env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert not summary.exists()


# --- JUnit ----------------------------------------------------------------------------------------


class LocatedCase(TestCase):
    """A testcase with the file and line attributes schedlog writes."""

    file = Attr()
    line = IntAttr()


def test_junit_reads_back_with_a_junit_parser(tmp_path: Path) -> None:
    code, out = run("verify", "--format", "junit", str(SESSIONS))
    report = tmp_path / "report.xml"
    report.write_text(out)
    xml = JUnitXml.fromfile(str(report))
    assert code == 1 and xml._tag == "testsuites"
    (suite,) = list(xml)
    assert suite.tests == 8 and suite.failures == 5 and suite.errors == 0
    assert suite.time is not None and suite.time >= 0
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", suite.timestamp)
    cases = [LocatedCase.fromelem(c._elem) for c in suite]
    assert all(c.file == c.name for c in cases)
    for name, e in CORRUPT.items():
        case = next(c for c in cases if c.file == str(SESSIONS / name))
        assert case.line == e["line"]
        (failure,) = case.result
        assert isinstance(failure, Failure) and failure.type == e["rule"]
    assert sum(1 for c in cases if c.is_passed) == 3


def test_junit_marks_an_unreadable_log_as_an_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.session.jsonl"
    bad.write_bytes(b"\x00\xff garbage")
    report = tmp_path / "report.xml"
    report.write_text(run("verify", "--format", "junit", str(bad))[1])
    (case,) = list(next(iter(JUnitXml.fromfile(str(report)))))
    assert isinstance(case.result[0], Error)


# --- SARIF ----------------------------------------------------------------------------------------


def sarif(*paths: Path | str, jobs: str = "1") -> dict[str, Any]:
    code, out = run("verify", "--format", "sarif", "--jobs", jobs, *map(str, paths))
    assert code in (0, 1, 2)
    value: dict[str, Any] = json.loads(out)
    return value


def test_sarif_structure_rules_and_locations() -> None:
    log = sarif(SESSIONS)
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    results = [r for r in run_["results"] if r["level"] == "error"]
    assert len(results) == len(CORRUPT)
    others = [r for r in run_["results"] if r["level"] != "error"]  # a tool that broke its contract, a lost reminder
    warned = {"tool.result.shape", "delivery.undelivered"}
    assert {r["ruleId"] for r in others} == warned and all(r["level"] == "warning" for r in others)
    for result in results:
        rule = rules[result["ruleIndex"]]
        assert rule["id"] == result["ruleId"] and rule["shortDescription"]["text"] == describe(
            result["ruleId"]
        ).replace("`", "")
        location = result["locations"][0]["physicalLocation"]
        name = next(n for n in CORRUPT if location["artifactLocation"]["uri"].endswith(n))
        assert location["region"]["startLine"] == CORRUPT[name]["line"] and result["ruleId"] == CORRUPT[name]["rule"]
        assert result["level"] == "error" and result["message"]["text"]
    assert sorted(r["id"] for r in rules) == sorted({e["rule"] for e in CORRUPT.values()} | warned)


def test_sarif_fingerprints_are_stable_and_distinct(hostile: Path) -> None:
    one, two = sarif(SESSIONS, hostile), sarif(SESSIONS, hostile, jobs="2")
    prints = [r["partialFingerprints"]["schedlogProblem/v1"] for r in one["runs"][0]["results"]]
    assert prints == [r["partialFingerprints"]["schedlogProblem/v1"] for r in two["runs"][0]["results"]]
    assert len(set(prints)) == len(prints)


def test_sarif_uris_are_uri_references(hostile: Path) -> None:
    (result,) = sarif(hostile)["runs"][0]["results"]
    uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri.startswith("file:///") and uri.endswith("/a%2Cb%3Ac%25d.session.jsonl")


def test_sarif_is_valid_against_the_sarif_2_1_0_schema(tmp_path: Path, hostile: Path) -> None:
    schema = sarif_schema()
    if schema is None:
        pytest.skip("the SARIF 2.1.0 schema cannot be had: npm cannot fetch @datadog/datadog-ci (tests/sarifschema.py)")
    validator = Draft7Validator(schema, format_checker=Draft7Validator.FORMAT_CHECKER)
    unreadable = tmp_path / "bad.session.jsonl"
    unreadable.write_bytes(b"\x00")
    for log in (sarif(SESSIONS), sarif(hostile, unreadable), sarif(SESSIONS / "valid")):
        errors = sorted(validator.iter_errors(log), key=str)
        assert not errors, errors[0]


def test_the_rule_tables_are_the_readmes() -> None:
    from tests.documentation import ALL as readme

    for rows in (PROTOCOL, LIVE, TRANSCRIPT):
        for row in rows:
            cell = ", ".join(f"`{rule}`" for rule in row.ids)
            assert f"| {cell} | {row.text} |" in readme, cell
    assert all(row.ids and all(r.startswith("format.") for r in row.ids) for row in FORMAT)


def test_a_finding_carries_its_pointer_in_every_output(tmp_path: Path) -> None:
    """A reader finding located in an event (its index and JSON pointer) keeps its place in JSON,
    SARIF (a logical location), GitHub annotations and text."""
    path = write_session(tmp_path / "s.session.jsonl", [{**ev(0), "time": 1.5}], header())
    _, out = run("verify", "--format", "json", str(path))
    (found,) = [f for f in json.loads(out)[0]["formatFindings"] if f["code"] == "format.envelope"]
    assert (found["index"], found["pointer"], found["line"]) == (0, "/time", 2)
    _, out = run("verify", "--format", "sarif", str(path))
    (result,) = [r for r in json.loads(out)["runs"][0]["results"] if r["ruleId"] == "format.envelope"]
    assert result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "event 0/time"
    _, out = run("verify", "--format", "github", str(path))
    assert "title=format.envelope::" in out and "(at /time)" in out
    _, out = run("verify", str(path))
    assert "error line 2: format.envelope: " in out and "(at /time)" in out


PLACELESS = frozenset({
    "format.generations",  # the files beside a log
    "format.torn-tail", "format.unreadable", "format.unparsable", "format.blank-line",  # a line, no value
    "host.reminders", "host.message.unreceipted", "host.message.task-deleted",  # counts; a message by id
    "sqlite.row", "sqlite.tail",  # a store's row (located by its seq), no JSON value
})  # fmt: skip
"""Findings about no JSON value: a file, a line that holds none, a count."""


def test_every_finding_about_a_value_points_at_it(tmp_path: Path) -> None:
    """On the bundled sessions and Host fixtures (and on a log with a seq gap, a newer version and
    an undelivered reminder), every finding but the placeless kinds carries its JSON pointer."""
    gap = write_session(tmp_path / "gap.session.jsonl", [ev(0), ev(2)], header())
    newer = write_session(tmp_path / "newer.session.jsonl", [], {**header(), "version": 9})
    _, out = run("verify", "--format", "json", str(ROOT / "fixtures"), str(gap), str(newer))
    found = [(f["code"], f["pointer"]) for r in json.loads(out) for f in r["formatFindings"]]
    codes = {code for code, _ in found}
    assert {"format.seq-gap", "format.version.newer", "delivery.undelivered", "host.receipt.unmatched"} <= codes
    assert {"host.session.missing", "tool.call.refused", "tool.result.shape", "format.is-seeded"} <= codes
    assert [(c, p) for c, p in found if p is None and c not in PLACELESS] == []


def test_every_result_is_one_finding_type() -> None:
    """Reader, Host store, transcript, delivery and protocol results are all invariant.findings.Finding
    values; the violation that makes a session corrupt is one too (an error, with its rule and
    related locations), its JSON as before."""
    import replay
    from invariant.findings import Finding, Violation

    audit = replay.verify_paths([str(p) for p in sorted((ROOT / "fixtures").rglob("*")) if p.is_file()])
    violations = [r.violation for r in audit if r.violation is not None]
    assert len(violations) >= 5 and all(isinstance(v, Violation) and isinstance(v, Finding) for v in violations)
    assert all(v.severity == "error" and v.rule for v in violations)
    assert all(isinstance(f, Finding) for r in audit for f in r.findings)
    gate = next(v for v in violations if v.rule == "fold.gate")
    assert list(gate.to_json()) == ["code", "rule", "index", "seq", "line", "pointer", "message", "related"]
    assert gate.related and gate.related[0].role == "previous-batch"
