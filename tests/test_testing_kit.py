"""The kit for Python hosts: the pytest plugin (run with pytester) and the public strategies."""

from __future__ import annotations

import json
import shutil

import pytest
from hypothesis import given, settings

from invariant import ScheduleLogError, fold
from invariant.live import check_candidate
from replay.testing.strategies import Candidate, CorruptLog, GeneratedLog, candidate_events, corrupt_logs, valid_logs

from .conftest import ROOT

SESSIONS = ROOT / "fixtures" / "sessions"
CONFIG = """
[pytest]
schedlog_logs =
    logs/**/*.jsonl
    logs/**/*.jsonl.zstd
"""


@pytest.fixture()
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeini(CONFIG)
    shutil.copytree(SESSIONS, pytester.path / "logs")
    return pytester


def test_each_named_log_is_a_test_judged_against_its_sidecar(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("-v", "logs")
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(["*logs/corrupt/reused-id.session.jsonl::verify PASSED*"])


def test_a_verdict_other_than_the_expected_one_fails_with_the_difference(project: pytest.Pytester) -> None:
    sidecar = project.path / "logs" / "expected.json"
    table = json.loads(sidecar.read_text())
    table["corrupt/reused-id.session.jsonl"]["rule"] = "fold.gate"
    del table["corrupt/gate-too-soon.session.jsonl"]  # no entry: must be ok, and is not
    table["valid/reminders.session.jsonl"]["active"] = ["schedule-9"]
    sidecar.write_text(json.dumps(table))
    result = project.runpytest_subprocess("logs")
    result.assert_outcomes(passed=5, failed=3)
    result.stdout.fnmatch_lines(
        [
            "*verdict: expected 'ok', got 'corrupt'*",
            "*rule: expected 'fold.gate', got 'fold.create.reuse'*",
            "*active: expected [[]'schedule-9'[]], got [[]'schedule-3'[]]*",  # [[] is a literal [
        ]
    )


def test_a_nearer_sidecar_wins_and_unnamed_files_are_not_collected(project: pytest.Pytester) -> None:
    (project.path / "logs" / "corrupt" / "expected.json").write_text(
        json.dumps({"seq-gap.session.jsonl": {"verdict": "corrupt", "finding": "format.torn-tail"}})
    )
    (project.path / "logs" / "notes.txt").write_text("not a log")
    result = project.runpytest_subprocess("logs")
    result.assert_outcomes(passed=7, failed=1)  # the nearer sidecar names seq-gap (wrongly); the rest fall through


def test_without_configuration_the_plugin_collects_nothing(pytester: pytest.Pytester) -> None:
    shutil.copytree(SESSIONS, pytester.path / "logs")
    assert pytester.runpytest_subprocess("logs").ret == pytest.ExitCode.NO_TESTS_COLLECTED


SETTINGS = settings(max_examples=150, deadline=None)


@SETTINGS
@given(valid_logs())
def test_valid_logs_fold_to_their_model(log: GeneratedLog) -> None:
    assert [r.id for r in fold(log.events, log.seed_length).active] == list(log.model.active)


@SETTINGS
@given(corrupt_logs())
def test_corrupt_logs_break_the_rule_they_name(log: CorruptLog) -> None:
    with pytest.raises(ScheduleLogError) as info:
        fold(log.events, log.seed_length)
    assert (info.value.rule, info.value.index) == (log.rule, log.index)


@SETTINGS
@given(candidate_events())
def test_candidates_get_the_verdict_they_name(candidate: Candidate) -> None:
    if candidate.rule is None:
        check_candidate(candidate.events, candidate.payload, candidate.seed_length)
        return
    with pytest.raises(ScheduleLogError) as info:
        check_candidate(candidate.events, candidate.payload, candidate.seed_length)
    assert info.value.rule == candidate.rule and info.value.index == len(candidate.events)
