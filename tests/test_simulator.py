"""The reference live-owner simulator: conformance scenarios, logs, determinism, CLI."""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import json
import os
import subprocess
import sys
import time as time_module
import weakref
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import replay
from invariant import fold
from invariant.profiles import CALENDAR
from replay.cli import main
from replay.cli.output import emit
from replay.judge.verify import verify_bytes, verify_path
from replay.reading import Mode, Reading
from replay.sim.fuzz import MAX_RECURRING, _is_recurring, check, fuzz, generate, run_checked, scenario_json
from replay.sim.limits import MAX_STEPS
from replay.sim.scenarios import unmet_expectations
from replay.sim.simulator import Scenario, ScenarioError, Simulation, TooManyEvents

from .conftest import CONFORMANCE, ROOT, load_jsonl

SCENARIOS = load_jsonl(CONFORMANCE / "owner-scenarios.jsonl")
NAMES = [s["name"] for s in SCENARIOS]


def test_there_are_fifty_scenarios() -> None:
    assert len(SCENARIOS) == 50 and len(set(NAMES)) == 50


@pytest.mark.parametrize("scenario", SCENARIOS, ids=NAMES)
def test_scenario_matches_strictly(scenario: dict[str, Any]) -> None:
    result = replay.simulate(scenario)
    assert unmet_expectations(result, scenario["expect"]) == []


@pytest.mark.parametrize("scenario", SCENARIOS, ids=NAMES)
def test_simulated_log_is_a_valid_session_log(tmp_path: Path, scenario: dict[str, Any]) -> None:
    sim = Simulation(Scenario.from_json(scenario))
    result = sim.run()
    path = tmp_path / "session.jsonl"
    path.write_bytes(result.session_log())
    report = verify_path(str(path))
    if scenario["name"] == "corrupt-log":  # its history was seeded corrupt on purpose
        assert report.verdict == "corrupt" and report.violation is not None
        return
    assert report.verdict == "ok", (report.violation, report.findings)
    assert report.folded is not None
    assert report.folded == fold(result.events, sim.host.seed_length)
    assert check(result, sim.host.seed_length) == []


@pytest.mark.parametrize("path", sorted((ROOT / "fixtures" / "scenarios").glob("*.json")), ids=lambda p: p.name)
def test_readable_scenario_files_are_the_conformance_ones(path: Path) -> None:
    scenario = json.loads(path.read_text())
    assert scenario == next(s for s in SCENARIOS if s["name"] == scenario["name"])
    code = CliRunner().invoke(main, ["simulate", str(path)]).exit_code
    assert code == 0


def test_a_finished_run_is_freed_without_the_cyclic_collector() -> None:
    """No reference cycle holds a run: a fleet of runs (fuzz, benchmarks) would otherwise keep
    every finished log in memory until the collector's next pass over the whole heap."""
    scenarios = [Scenario.from_json(s) for s in SCENARIOS] + [generate(seed, 80) for seed in range(20)]
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for scenario in scenarios:
            simulation = Simulation(scenario)
            simulation.run()
            host = weakref.ref(simulation.host)
            del simulation
            assert host() is None, scenario.name
    finally:
        if was_enabled:
            gc.enable()


# --- determinism ----------------------------------------------------------------------------------


def _owners_delivery_findings(scenario: Scenario, mode: Mode = Mode.STRICT) -> list[object]:
    """The delivery findings a simulated run's log draws at the events its owner and tools
    wrote: a `log` step's history is the scenario's own, written as given (a dispatch there has
    the reminder message its scenario gives it: none)."""
    result = Simulation(scenario).run()
    history = [step["args"]["data"] for step in scenario.steps if step["do"] == "log"]
    given = {k for k, e in enumerate(result.events) if e["type"] == "schedule/change" and e["data"] in history}
    report = verify_bytes("session.jsonl", result.session_log(), Reading(mode=mode))
    return [f for f in report.findings if f.code.startswith("delivery.") and f.index not in given]


@pytest.mark.parametrize("mode", list(Mode))
@pytest.mark.parametrize("scenario", SCENARIOS, ids=NAMES)
def test_a_simulated_log_draws_no_delivery_finding(scenario: dict[str, Any], mode: Mode) -> None:
    """The owner queues each reminder (an inbox insertion whose text is the framing) before the
    dispatches it announces, and the message becomes a user/message with the same id: a
    simulated log verifies with no delivery finding (issue 63, item 11)."""
    assert _owners_delivery_findings(Scenario.from_json(scenario), mode) == []


def test_the_owner_queues_and_delivers_each_reminder_it_sends() -> None:
    scenario = next(s for s in SCENARIOS if s["name"] == "one-shot-lifecycle")
    result = Simulation(Scenario.from_json(scenario)).run()
    types = [e["type"] for e in result.events]
    assert types.count("agent/inbox/spliced") == types.count("user/message") == len(result.followups) > 0
    for k, event in enumerate(result.events):
        if event["type"] == "agent/inbox/spliced":
            (message,) = event["data"]["inserted"]
            assert result.events[k + 1]["type"] == "schedule/change"  # (queued before the dispatch)
            delivered = next(e for e in result.events[k:] if e["type"] == "user/message")
            assert delivered["data"] == message and delivered["time"] >= event["time"]


@given(seed=st.integers(0, 10**6))
def test_a_generated_run_draws_no_delivery_finding(seed: int) -> None:
    assert _owners_delivery_findings(generate(seed, 40)) == [], seed


def _digest(seed: int) -> str:
    result = Simulation(generate(seed, 60)).run()
    blob = json.dumps([result.expectations(), result.events], sort_keys=True).encode() + result.session_log()
    return hashlib.sha256(blob).hexdigest()


def test_same_seed_gives_byte_identical_output() -> None:
    assert _digest(7) == _digest(7)
    assert _digest(7) != _digest(8)


def test_nothing_reads_the_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> float:
        raise AssertionError("the simulator read the process clock")

    expected = _digest(11)
    for name in ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "sleep"):
        monkeypatch.setattr(time_module, name, forbidden)

    class NoNow(datetime):
        @classmethod
        def now(cls, tz: object = None) -> NoNow:  # type: ignore[override]
            raise AssertionError("the simulator read datetime.now")

    monkeypatch.setattr("datetime.datetime", NoNow)
    assert _digest(11) == expected


def test_output_does_not_depend_on_the_process_time_zone() -> None:
    code = f"import sys; sys.path.insert(0, {str(ROOT)!r}); from tests.test_simulator import _digest; print(_digest(5))"
    digests = set()
    for tz in ("UTC", "America/New_York", "Asia/Kolkata", "Pacific/Chatham"):
        env = {**os.environ, "TZ": tz}
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        digests.add(proc.stdout.strip())
    assert len(digests) == 1


# --- the fuzzer ----------------------------------------------------------------------------------------


def test_fuzz_holds_on_the_reference_model() -> None:
    runs, failures = fuzz(100, 60, 40)
    assert runs == 60 and failures == []


def test_fuzz_catches_an_owner_that_ignores_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    import invariant.delivery

    def one_minute_gate(last: str | None) -> int | None:
        return None if last is None else (invariant.delivery.parse_instant(last) or 0) + 60_000

    monkeypatch.setattr(invariant.delivery, "gate_instant", one_minute_gate)
    found = None
    for seed in range(0, 400, 2):
        scenario = generate(seed, 40, faults=False)
        if run_checked(scenario, True)[1]:
            found = seed
            break
    assert found is not None, "the broken owner was never caught"
    _, failures = fuzz(found, 1, 40)
    (failure,) = failures
    assert any(v.invariant in ("log folds", "gate spacing") for v in failure.violations)
    assert len(failure.scenario.steps) <= 8  # shrunk
    assert run_checked(failure.scenario, True)[1]  # and it still reproduces


def test_fuzz_under_after_only_catches_tools_that_accept_later_kinds(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under `--profile after-only` the log must fold with that revision's decoder: tools that
    let an every/cron/at create through are caught, and the report says how to reproduce."""
    from replay.sim.tools import Tools

    checked = Tools.create_phase_a

    def lax(self: Tools, args: Any) -> Any:
        kept, self.profile = self.profile, CALENDAR
        try:
            return checked(self, args)
        finally:
            self.profile = kept

    monkeypatch.setattr(Tools, "create_phase_a", lax)
    result = CliRunner().invoke(main, ["fuzz", "--profile", "after-only", "--runs", "6", "--steps", "20"])
    assert result.exit_code == 1
    assert "log folds: decode.record.kind" in result.output
    assert "(schedlog simulate FILE --profile after-only reproduces it)" in result.output
    _, failures = fuzz(0, 6, 20, "after-only")
    assert failures and all(run_checked(f.scenario, f.seed % 2 == 0, "after-only")[1] for f in failures)
    assert fuzz(0, 6, 20)[1] == []  # the same tools are right for the calendar revision


def test_a_long_fuzz_run_keeps_a_bounded_number_of_records() -> None:
    """A scenario makes at most MAX_RECURRING every/cron creates, so a batch (and the events of a
    step) stays bounded and a run's cost grows linearly with its steps."""
    scenario = generate(0, 1500, faults=False)
    calls = [c for s in scenario.steps for c in (s["args"]["calls"] if s["do"] == "parallel" else [s])]
    recurring = [c for c in calls if c["do"] == "create" and _is_recurring(c["args"])]
    assert len(recurring) == MAX_RECURRING
    result, violations = run_checked(scenario, True)
    assert result is not None and violations == []
    batches: dict[str, int] = {}
    for payload in result.appended:
        if "acceptedAt" in payload:
            batches[payload["acceptedAt"]] = batches.get(payload["acceptedAt"], 0) + 1
    assert 1 < max(batches.values()) <= MAX_RECURRING


# --- CLI -----------------------------------------------------------------------------------------------------


def test_simulate_cli_writes_a_log_verify_accepts(tmp_path: Path) -> None:
    log = tmp_path / "out.jsonl"
    result = CliRunner().invoke(
        main, ["simulate", str(ROOT / "fixtures/scenarios/one-shot-lifecycle.json"), "--log", str(log)]
    )
    assert result.exit_code == 0 and "expectations: met" in result.output
    assert "followup" in result.output and "[SCHEDULE REMINDER]" in result.output
    assert verify_path(str(log)).verdict == "ok"


def test_simulate_timeline_shows_control_characters_as_escapes(tmp_path: Path) -> None:
    """JSON leaves C1 controls and DEL raw (a prompt may hold them); the text timeline escapes them."""
    prompt = "wake\x9b2J up\x7f"
    scenario = json.loads(_steps({"do": "start", "args": {}}))
    at = scenario["steps"][0]["at"]
    scenario["steps"].append({"at": at, "do": "create", "args": {"prompt": prompt, "after_seconds": 60}})
    scenario["steps"].append({"at": "2026-08-05T12:02:00.000Z", "do": "advance", "args": {}})
    (tmp_path / "s.json").write_text(json.dumps(scenario))
    result = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.json")])
    assert result.exit_code == 0 and "[SCHEDULE REMINDER]" in result.output
    assert "\x9b" not in result.output and "\x7f" not in result.output
    assert "wake\\x9b2J up\\x7f" in result.output


def test_simulate_cli_json_and_name_selection() -> None:
    path = str(CONFORMANCE / "owner-scenarios.jsonl")
    result = CliRunner().invoke(main, ["simulate", path, "--name", "timer-segmentation", "--format", "json"])
    out = json.loads(result.output)
    assert result.exit_code == 0 and out["unmet"] == [] and len(out["followups"]) == 1
    assert CliRunner().invoke(main, ["simulate", path]).exit_code == 2  # which one?


def test_simulate_cli_reports_unmet_expectations(tmp_path: Path) -> None:
    scenario = dict(SCENARIOS[0])
    scenario["expect"] = {**scenario["expect"], "followups": []}
    (tmp_path / "s.json").write_text(json.dumps(scenario))
    result = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.json")])
    assert result.exit_code == 1 and "NOT met: followups" in result.output


def _steps(step: dict[str, Any]) -> str:
    """A scenario of one step at its start."""
    return json.dumps({"start": "2026-08-05T12:00:00.000Z", "steps": [{"at": "2026-08-05T12:00:00.000Z", **step}]})


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        "[]",
        '{"name":"x","start":"soon","steps":[]}',
        '{"start":"2026-08-05T12:00:00.000Z","steps":[{"do":"dance"}]}',
        # a verb's missing or mistyped arguments are refused before the run starts
        _steps({"do": "jump", "args": {}}),
        _steps({"do": "jump", "args": {"to": "tomorrow"}}),
        _steps({"do": "fail_followup", "args": {"times": "x"}}),
        _steps({"do": "fail_append", "args": {"times": 1}}),
        _steps({"do": "flush_outcomes", "args": {"outcomes": "ok"}}),
        _steps({"do": "parallel", "args": {"calls": [{"do": "nope"}]}}),
        _steps({"do": "idle", "args": [1]}),
        _steps({"do": "on_claim_log", "args": {}}),
        _steps({"do": "log", "args": {"data": 1}}).replace("1}}", "1e400}}"),  # Infinity has no JSON
        _steps({"do": "log", "args": {"data": 1}}).replace("1}}", "[" * 5000 + "]" * 5000 + "}}"),  # too deep
        # so are mistyped scenario fields, which would otherwise be read loosely or not at all
        _steps({"do": "list", "cancelled": "yes"}),
        _steps({"do": "parallel", "args": {"calls": [{"do": "list", "cancelled": 1}]}}),
        '{"name":5,"start":"2026-08-05T12:00:00.000Z","steps":[]}',
        '{"session":[],"start":"2026-08-05T12:00:00.000Z","steps":[]}',
        '{"session":{"timeZone":5},"start":"2026-08-05T12:00:00.000Z","steps":[]}',
        '{"expect":[],"start":"2026-08-05T12:00:00.000Z","steps":[]}',
        '{"expect":{"trace":{}},"start":"2026-08-05T12:00:00.000Z","steps":[]}',
        '{"expect":{"folowups":[]},"start":"2026-08-05T12:00:00.000Z","steps":[]}',  # misspelt: unchecked
    ],
)
def test_simulate_cli_bad_scenarios_are_usage_errors(tmp_path: Path, content: str) -> None:
    (tmp_path / "bad.json").write_text(content)
    result = CliRunner().invoke(main, ["simulate", str(tmp_path / "bad.json")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_null_session_and_expect_read_as_absent() -> None:
    scenario = Scenario.from_json({"start": "2026-08-05T12:00:00.000Z", "steps": [], "session": None, "expect": None})
    assert scenario.time_zone is None and scenario.name == "scenario"


def test_log_data_nested_deeper_than_the_writer_goes_is_refused() -> None:
    """Data read elsewhere than from a file (a Python caller's, say) is checked as the log writer
    will need it: the standard library's writer stops at Python's recursion limit."""
    data: list[object] = []
    for _ in range(5000):
        data = [data]
    scenario = json.loads(_steps({"do": "log", "args": {"data": 1}}))
    scenario["steps"][0]["args"]["data"] = data
    with pytest.raises(ScenarioError, match=r"args\.data must be JSON"):
        Scenario.from_json(scenario)


def test_simulate_cli_scenario_of_garbage_bytes_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_bytes(b"\x8f\xff{garbage")
    result = CliRunner().invoke(main, ["simulate", str(tmp_path / "bad.json")])
    assert result.exit_code == 2 and "not UTF-8" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_simulate_cli_unwritable_log_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    scenario = tmp_path / "s.json"
    scenario.write_text(_steps({"do": "start"}))
    for log in (tmp_path / "file" / "x.jsonl", Path("/proc/schedlog-test.jsonl")):
        result = CliRunner().invoke(main, ["simulate", str(scenario), "--log", str(log)])
        assert result.exit_code == 2 and f"cannot write {log}:" in result.output  # the target, not a temp file
        assert result.exception is None or isinstance(result.exception, SystemExit)


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        ("", None, "holds no scenario"),
        ("[1, 2]", None, "holds no scenario"),
        ('{"name": "a"}\n{"name": "b"}\n', None, "holds 2 scenarios; choose one with --name (a, b)"),
        ('{"name": "a"}\n{"name": "b"}\n', "c", "holds 0 scenarios named 'c' (names: a, b)"),
        ('{"name": "a"}\n{"name": "a"}\n', "a", "holds 2 scenarios named 'a' (names: a, a)"),
    ],
)
def test_simulate_cli_says_which_scenario_is_missing(
    tmp_path: Path, content: str, name: str | None, message: str
) -> None:
    (tmp_path / "s.jsonl").write_text(content)
    result = CliRunner().invoke(main, ["simulate", str(tmp_path / "s.jsonl"), *(["--name", name] if name else [])])
    assert result.exit_code == 2 and message in result.output


DAY_OF_FIVE_MINUTE_REMINDERS = {
    "name": "day",
    "start": "2026-08-05T12:00:00.000Z",
    "steps": [
        {"at": "2026-08-05T12:00:00.000Z", "do": "start"},
        {"at": "2026-08-05T12:00:00.000Z", "do": "create", "args": {"prompt": "p", "every_seconds": 300}},
        {"at": "2026-08-06T11:59:00.000Z", "do": "advance"},
    ],
}
"""One create and 287 dispatches (12:05 to 11:55): 288 appended events."""


def test_max_events_bounds_a_run() -> None:
    assert len(replay.simulate(DAY_OF_FIVE_MINUTE_REMINDERS, max_events=288).appended) == 288
    with pytest.raises(TooManyEvents, match=r"more than 287 events by 2026-08-06T11:55:00\.000Z"):
        replay.simulate(DAY_OF_FIVE_MINUTE_REMINDERS, max_events=287)


def test_the_bound_counts_reminder_text_not_only_events() -> None:
    """A 100 KB prompt dispatched every five minutes holds 100 KB per reminder sent: the run is
    refused once its text passes TEXT_PER_EVENT characters per event allowed (it reached 7.9 GB
    within an event bound that counted events only)."""
    from replay.sim.simulator import TEXT_PER_EVENT

    steps = [dict(step) for step in DAY_OF_FIVE_MINUTE_REMINDERS["steps"]]  # type: ignore[union-attr]
    steps[1] = {**steps[1], "args": {"prompt": "x" * 100_000, "every_seconds": 300}}
    big = {**DAY_OF_FIVE_MINUTE_REMINDERS, "steps": steps}
    with pytest.raises(
        TooManyEvents, match=rf"more than {288 * TEXT_PER_EVENT:,} characters of text .* by 2026-08-05T12:10"
    ):
        replay.simulate(big, max_events=288)
    assert len(replay.simulate(big, max_events=288_000).appended) == 288


def test_simulate_cli_refuses_a_run_beyond_max_events(tmp_path: Path) -> None:
    path = tmp_path / "day.json"
    path.write_text(json.dumps(DAY_OF_FIVE_MINUTE_REMINDERS))
    log = tmp_path / "out.jsonl"
    result = CliRunner().invoke(main, ["simulate", str(path), "--max-events", "100", "--log", str(log)])
    assert result.exit_code == 2 and "appends more than 100 events" in result.output and "--max-events" in result.output
    assert not log.exists()
    assert CliRunner().invoke(main, ["simulate", str(path)]).exit_code == 0  # the default bound is far


@given(st.lists(st.text(max_size=5)), st.integers(1, 12))
def test_output_written_in_chunks_is_the_whole_text(pieces: list[str], size: int) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        emit(iter(pieces), size)
    assert out.getvalue() == "".join(pieces)


def test_fuzz_cli() -> None:
    result = CliRunner().invoke(main, ["fuzz", "--seed", "3", "--runs", "10", "--steps", "20"])
    assert result.exit_code == 0 and "10 run(s) from seed 3: 10 held, 0 failed" in result.output


def test_fuzz_cli_refuses_more_steps_than_a_run_holds_in_memory() -> None:
    result = CliRunner().invoke(main, ["fuzz", "--runs", "1", "--steps", str(MAX_STEPS + 1)])
    assert result.exit_code == 2 and "--steps" in result.output


def test_scenario_json_round_trips() -> None:
    scenario = generate(4, 10)
    assert Scenario.from_json(json.loads(json.dumps(scenario_json(scenario)))) == scenario


def test_after_only_profile_in_the_simulator() -> None:
    scenario = {
        "name": "after-only",
        "start": "2026-08-05T12:00:00.000Z",
        "steps": [
            {"at": "2026-08-05T12:00:00.000Z", "do": "start", "args": {}},
            {"at": "2026-08-05T12:00:00.000Z", "do": "create", "args": {"prompt": "p", "every_seconds": 300}},
            {"at": "2026-08-05T12:00:00.000Z", "do": "create", "args": {"prompt": "p", "after_seconds": 5, "x": 1}},
            {"at": "2026-08-05T12:00:00.000Z", "do": "create", "args": {"prompt": "check", "after_seconds": 5}},
            {"at": "2026-08-05T12:00:05.000Z", "do": "advance", "args": {}},
        ],
    }
    result = replay.simulate(scenario, profile="after-only")
    # the revision's parameters require after_seconds (the host refuses the call), and its body
    # takes no other key (the open root lets `x` reach it): the tool's own selector refusal
    assert result.results[0] == {"$invalid_arguments": True}
    assert result.results[1] == {
        "code": "invalid_selector",
        "message": "schedule_create accepts exactly the after_seconds selector in this version.",
    }
    assert result.followups[0].split("\n")[1] == (
        "Present this due reminder to the user. Treat reminder_prompt_json as user-authored reminder content."
    )
    assert result.appended[-1] == {"version": 1, "operation": "dispatch", "id": "schedule-1"}


def test_simulated_log_writes_a_lone_surrogate_as_json_stringify_does(tmp_path: Path) -> None:
    """JSON.stringify escapes a lone surrogate (\\udc80), so the harness's file stays UTF-8."""
    scenario = {
        "name": "lone-surrogate",
        "start": "2026-08-05T12:00:00.000Z",
        "steps": [
            {"at": "2026-08-05T12:00:00.000Z", "do": "start", "args": {}},
            {"at": "2026-08-05T12:00:00.000Z", "do": "create", "args": {"prompt": "a\udc80b", "after_seconds": 60}},
        ],
    }
    log = Simulation(Scenario.from_json(scenario)).run().session_log()
    assert b'"prompt":"a\\udc80b"' in log
    log.decode("utf-8")  # strict: no surrogate bytes
    path = tmp_path / "s.jsonl"
    path.write_bytes(log)
    report = verify_path(str(path))
    assert report.verdict == "ok" and report.folded is not None
    assert [r.prompt for r in report.folded.active] == ["a\udc80b"]


@pytest.mark.parametrize("depth", [501, 900, 5000])
def test_scenario_depth_bound_is_the_same_on_every_python(tmp_path: Path, depth: int) -> None:
    """Python 3.11 reads about 990 levels, 3.13 more: one bound (MAX_SCENARIO_DEPTH) decides."""
    content = _steps({"do": "log", "args": {"data": 1}}).replace("1}}", "[" * depth + "]" * depth + "}}")
    (tmp_path / "deep.json").write_text(content)
    result = CliRunner().invoke(main, ["simulate", str(tmp_path / "deep.json")])
    assert result.exit_code == 2 and "deeper than 500 levels" in result.output


def test_scenario_nested_within_the_bound_runs(tmp_path: Path) -> None:
    content = _steps({"do": "log", "args": {"data": 1}}).replace("1}}", "[" * 450 + "]" * 450 + "}}")
    (tmp_path / "deep.json").write_text(content)
    assert CliRunner().invoke(main, ["simulate", str(tmp_path / "deep.json")]).exit_code == 0


def test_a_mixed_workload_is_one_valid_scenario_per_seed() -> None:
    """The workload generator is pure (same seed, same scenario), its steps are a valid scenario
    (in time order, after every jump) and every profile's simulator runs it through."""
    from replay.sim.workload import mixed_workload

    small = mixed_workload(3, schedules=120, days=2)
    assert small == mixed_workload(3, schedules=120, days=2) != mixed_workload(4, schedules=120, days=2)
    assert Scenario.from_json(json.loads(json.dumps(scenario_json(small)))) == small
    assert sum(step["do"] == "create" for step in small.steps) >= 120
    for profile in ("calendar", "after-only", "fixed-rate"):
        result = replay.simulate(small, profile=profile)
        assert result.followups and check(result, 0, False, profile) == []
