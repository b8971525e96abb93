"""The reference tier, live side: `simulate --profile fixed-rate` against the published live owner.

docs/reference-adapter/owner-driver.mjs runs `@deepseek-ai/dsh-schedule@0.1.0-rc.8`'s own plugin
(its ScheduleRuntime and its three tools) on a scenario with a virtual clock and an in-memory
session; the simulator runs the same scenario. Every observable must be equal, the trace
included (owner.md §0.2's strict level): appended payloads, followup texts, tool results (error
messages masked, as the contract has it) and effects.

The published owner refolds its whole log on every wake, so a long run costs Node seconds; each
run's answer is kept beside the installed packages, keyed by the digest of the driver, the lock
file and the input, so the suite's second Python reads it instead of running Node again.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from collections import Counter
from functools import cache
from typing import Any

import pytest

from invariant import parse_instant
from replay.sim.fuzz import generate, scenario_json
from replay.sim.scenarios import _masked
from replay.sim.simulator import simulate
from replay.sim.workload import mixed_workload

from .conftest import ROOT
from .reference import ADAPTER, engine, reference_dir

SCENARIOS = [json.loads(line) for line in (ROOT / "fixtures/conformance/owner-scenarios.jsonl").open()]
OBSERVABLES = ("appended", "followups", "results", "trace")


def published(scenarios: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The published owner's observables for each scenario (cached by input digest)."""
    folder = reference_dir()
    text = "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in scenarios)
    digest = hashlib.sha256()
    for part in (ADAPTER / "owner-driver.mjs", ADAPTER / "package-lock.json"):
        digest.update(hashlib.sha256(part.read_bytes()).digest())
    digest.update(hashlib.sha256(text.encode()).digest())
    kept = folder / "owner-runs" / f"{digest.hexdigest()[:32]}.jsonl"
    if not kept.is_file():
        done = subprocess.run(
            [engine(), "owner-driver.mjs"], cwd=folder, input=text, capture_output=True, text=True, timeout=900
        )
        if done.returncode != 0:
            pytest.fail(f"the owner driver failed:\n{done.stderr[-2000:]}")
        kept.parent.mkdir(exist_ok=True)
        partial = kept.with_name(f"{kept.name}.{os.getpid()}.part")
        partial.write_text(done.stdout, encoding="utf-8")
        partial.replace(kept)
    answers = [json.loads(line) for line in kept.read_text(encoding="utf-8").splitlines()]
    assert len(answers) == len(scenarios)
    for scenario, answer in zip(scenarios, answers, strict=True):
        assert "error" not in answer, f"{scenario.get('name')}: {answer['error'][:1500]}"
    return answers


def observed(scenario: dict[str, Any], profile: str) -> dict[str, Any]:
    result = simulate(scenario, profile, max_events=10**7)
    return {**result.expectations(), "results": _masked(result.results)}


def differences(ours: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    """Each observable that differs, with the first differing entry of both sides."""
    theirs = {**theirs, "results": _masked(theirs["results"])}
    out = []
    for key in OBSERVABLES:
        mine, other = ours[key], theirs[key]
        if mine != other:
            pairs = enumerate(zip(mine, other, strict=False))
            n = next((i for i, (a, b) in pairs if a != b), min(len(mine), len(other)))
            out.append(
                f"{key} [{n}] of {len(mine)} / {len(other)}: simulator "
                f"{json.dumps(mine[n : n + 2])[:600]}; published {json.dumps(other[n : n + 2])[:600]}"
            )
    return out


@cache
def _scenario_answers() -> tuple[dict[str, Any], ...]:
    return tuple(published(SCENARIOS))


@pytest.mark.parametrize("profile", ["fixed-rate", "fixed-rate-exact"])
@pytest.mark.parametrize("index", range(len(SCENARIOS)), ids=[s["name"] for s in SCENARIOS])
def test_each_owner_scenario_runs_as_the_published_owner_runs_it(index: int, profile: str) -> None:
    """Acceptance 2: every scenario of owner-scenarios.jsonl, all of which the fixed-rate
    vocabulary can run (a cron create is refused, a logged cron record makes the fold corrupt,
    `calendar_fails` has no calendar to fail), gives the published owner's observables."""
    assert differences(observed(SCENARIOS[index], profile), _scenario_answers()[index]) == []


def test_the_differential_can_tell_the_owners_apart() -> None:
    """The calendar owner (shared gate, calendar framing, cron) differs from the published one on
    the scenarios that exercise those rules: the comparison is not blind."""
    answers = zip(SCENARIOS, _scenario_answers(), strict=True)
    apart = {s["name"] for s, theirs in answers if differences(observed(s, "calendar"), theirs)}
    assert len(apart) >= 12, apart
    assert {"one-shot-bypasses-gate", "gate-spacing-consecutive-batches", "mixed-every-cron-batch"} <= apart


def test_a_week_of_a_thousand_reminders_runs_as_the_published_owner_runs_it() -> None:
    """Acceptance 2: a seeded mixed workload, over 1,000 reminders over seven virtual days."""
    scenario = scenario_json(mixed_workload(0))
    ours = observed(scenario, "fixed-rate")
    creates = [p for p in ours["appended"] if p["operation"] == "create"]
    batches = Counter(p["acceptedAt"] for p in ours["appended"] if p["operation"] == "dispatch" and "acceptedAt" in p)
    kinds = Counter(p["schedule"]["kind"] for p in creates)
    span = parse_instant(scenario["steps"][-1]["at"]) - parse_instant(scenario["start"])  # type: ignore[operator]
    assert len(creates) >= 1_000 and span >= 7 * 86_400_000
    assert min(kinds.values()) >= 50 and sum(1 for n in batches.values() if n > 1) >= 50, (kinds, batches)
    assert {"claim", "followup_rejected", "append_rejected", "wait_idle"} <= {t["effect"] for t in ours["trace"]}
    assert differences(ours, published([scenario])[0]) == []


def test_fuzzed_scenarios_run_as_the_published_owner_runs_them() -> None:
    """Short random scenarios with every verb and fault (fuzz's generator), both owners."""
    scenarios = [scenario_json(generate(seed, 60, faults=seed % 2 == 1)) for seed in range(40)]
    for scenario, theirs in zip(scenarios, published(scenarios), strict=True):
        assert differences(observed(scenario, "fixed-rate"), theirs) == [], scenario["name"]
