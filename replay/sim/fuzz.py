"""`fuzz`: random scenarios for the simulator, checked against the owner's invariants.

A scenario is generated from one integer seed alone (tool calls with valid and invalid arguments,
clock moves including rollbacks and large jumps, busy/idle, injected persistence and delivery
faults, restarts). A failing scenario is shrunk by removing steps while it still fails, so the
report is a small scenario that reproduces the failure.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from itertools import pairwise
from typing import Any

from invariant import (
    GATE_MS,
    MAX_MS,
    ScheduleLogError,
    decode_change,
    fold,
    format_instant,
    parse_instant,
)
from invariant.changes import CreateChange, DispatchChange
from invariant.profiles import Profile, get_profile
from replay.sim.simulator import Scenario, Simulation, SimulationResult

START = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z
ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "US/Eastern", "Australia/Lord_Howe", "CST"]
CRONS = ["0 9 * * *", "*/15 * * * *", "30 2 * * *", "0 */6 * * 1-5", "*/4 * * * *", "0 0 31 2 *", "5 4 * * 0"]
MAX_RECURRING = 24
"""The most every/cron creates one scenario makes (later draws of those kinds create one-shots).
A recurring record fires at every step that passes its interval until something deletes it, so
without a bound records piled up and a run's events grew with the square of its steps (20,000
steps took 17 GB); with it, a step adds at most MAX_RECURRING dispatches per batch it spans."""
FAULTS = ("flush_outcomes", "fail_followup", "fail_framing", "fail_append", "fail_maintenance", "calendar_fails")


def _create_args(rng: random.Random, now: int, recurring: bool = True) -> dict[str, Any]:
    """One create's arguments; `recurring=False` turns a drawn every/cron kind into `after`."""
    prompt = rng.choice(["check logs", "  padded  ", "stand-up", " ", 'quote "x"\nline two'])
    kind = rng.choices(["after", "at", "every", "cron", "bad"], weights=[5, 2, 3, 3, 1])[0]
    if kind in ("every", "cron") and not recurring:
        kind = "after"
    if kind == "after":
        return {"prompt": prompt, "after_seconds": rng.choice([1, 5, 30, 600, 3600, 86400, 0, 1.5, 10**16])}
    if kind == "at":
        target = now + rng.choice([-60_000, 0, 1_000, 90_000, 3_600_000, 86_400_000])
        text = format_instant(target).replace(".000Z", "Z")
        if rng.random() < 0.4:
            return {"prompt": prompt, "at": {"date": text[:10], "time": text[11:19], "time_zone": rng.choice(ZONES)}}
        return {"prompt": prompt, "at": text}
    if kind == "every":
        return {"prompt": prompt, "every_seconds": rng.choice([300, 600, 900, 3600, 86400, 299])}
    if kind == "cron":
        return {"prompt": prompt, "cron": rng.choice(CRONS), "time_zone": rng.choice(ZONES)}
    return rng.choice([{"prompt": prompt}, {"prompt": prompt, "after_seconds": 5, "every_seconds": 300}, {"x": 1}])


def _is_recurring(args: dict[str, Any]) -> bool:
    """An every or cron create (the malformed mix with after_seconds creates nothing)."""
    return ("every_seconds" in args or "cron" in args) and "after_seconds" not in args


def generate(seed: int, steps: int = 40, faults: bool = True) -> Scenario:
    """A random scenario determined by `seed` alone."""
    rng = random.Random(seed)
    now = START
    out: list[dict[str, Any]] = [{"at": format_instant(now), "do": "start", "args": {}}]
    created = 0
    recurring = 0
    verbs = ["create", "create", "create", "list", "delete", "advance", "advance", "jump", "busy", "idle", "drive"]
    verbs += ["restart", "parallel"] + (list(FAULTS) if faults else [])
    for _ in range(steps):
        verb = rng.choice(verbs)
        args: dict[str, Any] = {}
        if verb in ("advance", "busy", "idle", "drive", "list") or rng.random() < 0.3:
            now += rng.choice([0, 1_000, 60_000, 300_000, 3_600_000, 6 * 3_600_000])
        if verb in ("create", "parallel"):
            args = _create_args(rng, now, recurring < MAX_RECURRING)
            recurring += _is_recurring(args)
        if verb == "create":
            created += 1
        elif verb == "delete":
            args = {"id": rng.choice([f"schedule-{rng.randint(1, max(created, 1))}", "missing", " schedule-1"])}
        elif verb == "jump":
            args = {"to": format_instant(now + rng.choice([-3_600_000, -60_000, 60_000, 86_400_000, 40 * 86_400_000]))}
        elif verb == "parallel":
            args = {"calls": [{"do": "create", "args": args}, {"do": "list", "args": {}}]}
        elif verb == "restart":
            args = {"lose_unflushed": faults and rng.random() < 0.3}
        elif verb == "flush_outcomes":
            args = {"outcomes": [rng.choice(["ok", "reject", "none"]) for _ in range(rng.randint(1, 3))]}
        elif verb in ("fail_followup", "fail_framing", "fail_maintenance"):
            args = {"times": 1}
        elif verb == "fail_append":
            args = {"operation": rng.choice(["create", "delete", "dispatch"])}
        elif verb == "calendar_fails":
            args = {"enabled": rng.random() < 0.5}
        out.append({"at": format_instant(now), "do": verb, "args": args})
        if verb == "jump":
            now = parse_instant(args["to"]) or now
    return Scenario(f"fuzz-{seed}", START, tuple(out))


@dataclass(frozen=True)
class Violation:
    invariant: str
    detail: str


def check(
    result: SimulationResult, seed: int = 0, faults_free: bool = False, profile: str | Profile = "calendar"
) -> list[Violation]:
    """The owner's invariants over one finished run (whose log's seedLength is `seed`) under `profile`."""
    found: list[Violation] = []
    try:
        folded = fold(result.events, seed, profile)
    except ScheduleLogError as err:
        return [Violation("log folds", f"{err.rule} at event {err.index}: {err.message}")]
    listed = [r for r in result.results if isinstance(r, list)]
    if listed and any(not isinstance(v, dict) for v in listed[-1]):
        found.append(Violation("list values", "a list result holds a non-object"))
    batches: list[int] = []
    active_targets: dict[str, int] = {}
    for event in result.events[seed:]:
        if event["type"] != "schedule/change":
            continue
        change = decode_change(event["data"])
        if isinstance(change, CreateChange):
            active_targets[change.record.id] = parse_instant(change.record.scheduled_at) or 0
        elif isinstance(change, DispatchChange):
            target = active_targets.get(change.id)
            when = change.accepted_at or format_instant(event["time"])
            if target is not None and (parse_instant(when) or 0) < target:
                found.append(Violation("never early", f"{change.id} dispatched at {when} before its target"))
            if change.accepted_at is not None:
                accepted = parse_instant(change.accepted_at) or 0
                if not batches or batches[-1] != accepted:
                    batches.append(accepted)
                if change.next_scheduled_at is not None:
                    active_targets[change.id] = parse_instant(change.next_scheduled_at) or 0
    gated = get_profile(profile).recurring_gate  # the fixed-rate owner has no shared gate
    for a, b in pairwise(batches if gated else ()):
        if b - a < GATE_MS:
            found.append(Violation("gate spacing", f"batches at {format_instant(a)} and {format_instant(b)}"))
    if faults_free:
        dispatched: dict[str, int] = {}
        for payload in result.appended:
            if payload["operation"] == "dispatch" and set(payload) == {"version", "operation", "id"}:
                dispatched[payload["id"]] = dispatched.get(payload["id"], 0) + 1
        for schedule_id, count in dispatched.items():
            if count > 1:
                found.append(Violation("exactly once", f"{schedule_id} dispatched {count} times"))
        for record in folded.active:
            if record.kind in ("after", "at") and (parse_instant(record.scheduled_at) or MAX_MS) < MAX_MS - 1:
                found.append(Violation("every due one-shot delivered", f"{record.id} still active at the end"))
    return found


def settle(scenario: Scenario) -> Scenario:
    """Append an ending that lets every due one-shot fire: idle agent, a long advance, a drive."""
    wall = scenario.start
    for step in scenario.steps:
        wall = max(wall, parse_instant(step["at"]) or wall)
        if step["do"] == "jump":
            wall = parse_instant(step["args"]["to"]) or wall
    end = format_instant(wall + 2 * 86_400_000)  # one-shots are created at most a day ahead
    tail = ({"at": end, "do": "idle", "args": {}}, {"at": end, "do": "drive", "args": {}})
    return Scenario(scenario.name, scenario.start, scenario.steps + tail, scenario.time_zone)


def run_checked(
    scenario: Scenario, faults_free: bool, profile: str | Profile = "calendar"
) -> tuple[SimulationResult | None, list[Violation]]:
    sim = Simulation(settle(scenario) if faults_free else scenario, profile)
    try:
        result = sim.run()
    except Exception as err:  # a crash of the simulator is itself a finding
        return None, [Violation("no crash", f"{type(err).__name__}: {err}")]
    return result, check(result, sim.host.seed_length, faults_free, profile)


def _fails(scenario: Scenario, strict: bool, profile: str | Profile) -> bool:
    return bool(run_checked(scenario, strict, profile)[1])


def shrink(scenario: Scenario, fails: Callable[[Scenario], bool]) -> Scenario:
    """Delta debugging over steps (the first `start` is kept): remove chunks while it still fails."""
    steps = list(scenario.steps)
    chunk = max(1, len(steps) // 2)
    while chunk >= 1:
        n = 1
        changed = False
        while n < len(steps):
            candidate = steps[:n] + steps[n + chunk :]
            trial = Scenario(scenario.name, scenario.start, tuple(candidate), scenario.time_zone)
            if fails(trial):
                steps = candidate
                changed = True
            else:
                n += chunk
        if not changed:
            chunk //= 2
    return Scenario(scenario.name, scenario.start, tuple(steps), scenario.time_zone)


@dataclass(frozen=True)
class FuzzFailure:
    seed: int
    violations: tuple[Violation, ...]
    scenario: Scenario


def fuzz(seed: int, runs: int, steps: int, profile: str | Profile = "calendar") -> tuple[int, list[FuzzFailure]]:
    """Run `runs` scenarios from consecutive seeds; half without faults (stricter invariants).

    Under `after-only` the same scenarios run: the kinds that revision lacks are refused calls.
    """
    failures = []
    for run in range(runs):
        s = seed + run
        faults_free = s % 2 == 0
        scenario = generate(s, steps, faults=not faults_free)
        _, violations = run_checked(scenario, faults_free, profile)
        if violations:
            small = shrink(scenario, partial(_fails, strict=faults_free, profile=profile))
            failures.append(FuzzFailure(s, tuple(violations), small))
    return runs, failures


def scenario_json(scenario: Scenario) -> dict[str, Any]:
    out: dict[str, Any] = {"name": scenario.name, "start": format_instant(scenario.start)}
    if scenario.time_zone is not None:
        out["session"] = {"timeZone": scenario.time_zone}
    out["steps"] = list(scenario.steps)
    return out
