"""Long mixed workloads for the simulator: many reminders over days of virtual time, from one seed.

`fuzz` draws short scenarios that probe the owner's corners; a workload is one long scenario with
the load a busy session carries: a thousand or more reminders of every kind (one-shots, absolute
and local targets, fixed-rate intervals whose targets coincide so batches form), deletes, lists,
busy turns, parallel calls, clock jumps, restarts and injected faults, spread over `days`. The
generator is pure: the same seed gives the same scenario.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from invariant import format_instant
from replay.sim.fuzz import START
from replay.sim.simulator import Scenario

DAY = 86_400_000
HOUR = 3_600_000
MINUTE = 60_000
RESUME_EVERY = 6 * HOUR
"""How often the workload's session is resumed (a restart): a dispatch append or idle-phase
claim that fails stops the owner until the next resume, as in the harness."""
ZONES = ("UTC", "America/New_York", "Europe/Berlin", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham")
OFFSETS = ("Z", "+00:00", "+05:30", "-08:00", "+13:45", "-00:30")
PROMPTS = (
    "check the deploy",
    "  stand-up notes  ",
    'quote "x"\nline two',
    "naïve café ☕",
    "\u3000wide space\u3000",
    "tab\tand\\backslash",
    "x" * 300,
)
INTERVALS = (3_600, 5_400, 10_800, 21_600, 43_200, 86_400, 86_400, 172_800)
"""Fixed-rate intervals of an hour or more: the published owner refolds its whole log on every
wake, so a differential run's cost grows with the square of its dispatches."""
INVALID = (
    {"prompt": "no selector"},
    {"prompt": "two", "after_seconds": 5, "every_seconds": 300},
    {"prompt": "   ", "after_seconds": 5},
    {"prompt": "zero", "after_seconds": 0},
    {"prompt": "fraction", "after_seconds": 1.5},
    {"prompt": "negative zero", "after_seconds": -0.0},
    {"prompt": "too often", "every_seconds": 299},
    {"prompt": "cron", "cron": "0 9 * * *", "time_zone": "UTC"},
    {"prompt": "extra", "after_seconds": 5, "title": "t"},
    {"prompt": "zone", "at": {"date": "2026-08-07", "time": "09:00:00", "time_zone": "Mars/Olympus"}},
    {"prompt": "past", "at": "2020-01-01T00:00:00Z"},
    {"prompt": "no zone", "at": {"date": "2026-08-07", "time": "09:00:00"}},
    {"prompt": 7, "after_seconds": 5},
)


def _local(target: int, zone: str) -> dict[str, str]:
    """`at` as a local date and time in `zone` naming the instant `target` (or a wall time near
    it: a time in a transition gap or fold is the resolver's business, as it is the model's)."""
    local = datetime.fromtimestamp(target / 1000, UTC).astimezone(ZoneInfo(zone))
    time = local.strftime("%H:%M:%S")
    if local.microsecond:
        time += f".{local.microsecond // 1000:03d}"
    return {"date": local.strftime("%Y-%m-%d"), "time": time, "time_zone": zone}


def _offset_text(target: int, offset: str) -> str:
    """`target` as RFC 3339 text with `offset` (the same instant; seconds or milliseconds)."""
    if offset == "Z":
        return format_instant(target).replace(".000Z", "Z")
    sign = 1 if offset[0] == "+" else -1
    shift = sign * (int(offset[1:3]) * HOUR + int(offset[4:6]) * MINUTE)
    text = format_instant(target + shift)[:-1]
    return (text[:-4] if text.endswith(".000") else text) + offset


def mixed_workload(seed: int, schedules: int = 1_000, days: int = 7) -> Scenario:
    """One scenario with at least `schedules` valid creates over `days` virtual days."""
    rng = random.Random(seed)
    end = START + days * DAY
    planned: list[tuple[int, int, dict[str, Any]]] = []  # (at, order, step) before clamping

    def plan(at: int, do: str, args: dict[str, Any] | None = None, **extra: Any) -> None:
        planned.append((min(at, end), len(planned), {"do": do, "args": args or {}, **extra}))

    plan(START, "start")
    created = 0
    for _ in range(schedules):
        at = START + rng.randrange(0, (days - 1) * DAY // 1000) * 1000
        prompt = rng.choice(PROMPTS)
        draw = rng.random()
        if draw < 0.50:
            seconds = rng.choice((1, 30, 60, 300, 900, 3_600, 4 * 3_600, 86_400)) if rng.random() < 0.5 else None
            args = {"prompt": prompt, "after_seconds": seconds or rng.randint(1, 3 * 86_400)}
        elif draw < 0.70:
            target = at + rng.randint(1, 3 * 86_400) * 1000 + rng.choice((0, 0, 250))
            args = {"prompt": prompt, "at": _offset_text(target, rng.choice(OFFSETS))}
        elif draw < 0.94:
            target = at + rng.randint(60, 3 * 86_400) * 1000
            args = {"prompt": prompt, "at": _local(target, rng.choice(ZONES))}
        else:
            at -= at % HOUR if rng.random() < 0.6 else 0  # aligned targets batch together
            args = {"prompt": prompt, "every_seconds": rng.choice(INTERVALS)}
            if rng.random() < 0.5:  # its predicted id (a create that failed shifts it: another's)
                plan(at + rng.randint(20, 24 * 60) * MINUTE, "delete", {"id": f"schedule-{created + 1}"})
        created += 1
        plan(at, "create", args)
        if rng.random() < 0.08:
            plan(at + rng.randint(1, 600) * 1000, "create", dict(rng.choice(INVALID)))
    for _ in range(schedules // 10):
        plan(START + rng.randrange(days * DAY), "delete", {"id": f"schedule-{rng.randint(1, created + 5)}"})
    for _ in range(schedules // 10):
        plan(START + rng.randrange(days * DAY), "list")
    for _ in range(schedules // 15):
        at = START + rng.randrange(days * DAY)
        plan(at, "busy")
        plan(at + rng.randint(1, 120) * MINUTE, "idle")
    for _ in range(schedules // 40):
        at = START + rng.randrange(days * DAY)
        calls = [{"do": "create", "args": {"prompt": "parallel", "after_seconds": rng.randint(1, 7_200)}}]
        calls += [{"do": "list", "args": {}}, {"do": "delete", "args": {"id": f"schedule-{rng.randint(1, 50)}"}}]
        plan(at, "parallel", {"calls": calls[: rng.randint(1, 3)]}, cancelled=False)
    for _ in range(schedules // 50):
        at = START + rng.randrange(days * DAY)
        plan(at, "drive")
        plan(at, "log", {"type": "user/message", "data": {"note": "history the fold skips"}})
        plan(at, "create", {"prompt": "cancelled", "after_seconds": 60}, cancelled=True)
        plan(at, "create", dict(rng.choice(INVALID)), cancelled=True)
        plan(at, "delete", {"id": rng.choice(("schedule-1", " schedule-1", ""))}, cancelled=True)
    for _ in range(max(1, schedules // 200)):
        at = START + rng.randrange(days * DAY)
        plan(at, "flush_outcomes", {"outcomes": [rng.choice(("reject", "none", "ok")) for _ in range(3)]})
        plan(START + rng.randrange(days * DAY), "fail_followup", {"times": 1})
        plan(START + rng.randrange(days * DAY), "fail_framing", {"times": 1})
        plan(START + rng.randrange(days * DAY), "jump", {"to": None, "by": rng.choice((-HOUR, -MINUTE, 30 * MINUTE))})
        plan(START + rng.randrange(days * DAY), rng.choice(("fail_maintenance", "fail_append")), {"times": 1})
    for at in range(START + RESUME_EVERY, end, RESUME_EVERY):  # a fault stops the owner until one
        plan(at + rng.randrange(HOUR), "restart", {"lose_unflushed": rng.random() < 0.3})
    plan(end, "idle")
    plan(end, "drive")
    return Scenario(f"workload-{seed}", START, _clamped(planned))


def _clamped(planned: list[tuple[int, int, dict[str, Any]]]) -> tuple[dict[str, Any], ...]:
    """The planned steps in time order, each no earlier than the wall clock (a forward jump moves
    it), with the jump targets filled in and the steps' fault arguments made valid."""
    steps = []
    wall = START
    for at, _, step in sorted(planned, key=lambda p: (p[0], p[1])):
        at = max(at, wall)
        step = {"at": format_instant(at), **step}
        wall = at
        if step["do"] == "jump":
            wall = at + step["args"].pop("by")
            step["args"]["to"] = format_instant(wall)
        if step["do"] == "fail_append":
            step["args"]["operation"] = "dispatch"
        steps.append(step)
    return tuple(steps)
