"""Simulator speed: one virtual year of mixed schedules, appended events per CPU second.

    python bench/simulate.py [--schedules 1000] [--floor]

Goal (issue 6): >= 100,000 appended events per CPU second, cost growing linearly with the number
of events (three sizes in one run). The simulator jumps from wake to wake; it never steps
through idle time.

`--floor` first times the least any appended dispatch costs in this design: building the objects
one needs (payload, log envelope, trace entry, change, moved record, fold step, agenda entry)
with no resolution, checking, framing or scheduling at all.
"""

from __future__ import annotations

import argparse
import heapq
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from invariant import CronRecord, DispatchChange, Step, format_instant
from replay.sim.simulator import Scenario, Simulation

START = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z
YEAR_MS = 365 * 86_400_000
ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Calcutta", "Australia/Sydney"]


def year_scenario(schedules: int, seed: int = 1) -> Scenario:
    """Creates at the start (one-shots spread over the year; hourly and daily every/cron rules)."""
    rng = random.Random(seed)
    at = format_instant(START)
    steps: list[dict[str, Any]] = [{"at": at, "do": "start", "args": {}}]
    for n in range(schedules):
        kind = n % 10
        if kind < 4:
            args: dict[str, Any] = {"prompt": f"one-shot {n}", "after_seconds": rng.randint(60, YEAR_MS // 1000)}
        elif kind < 6:
            args = {"prompt": f"every {n}", "every_seconds": rng.choice([3600, 86400])}
        else:
            rule = rng.choice([f"{rng.randint(0, 59)} * * * *", f"{rng.randint(0, 59)} {rng.randint(0, 23)} * * *"])
            args = {"prompt": f"cron {n}", "cron": rule, "time_zone": rng.choice(ZONES)}
        steps.append({"at": at, "do": "create", "args": args})
    steps.append({"at": format_instant(START + YEAR_MS), "do": "advance", "args": {}})
    return Scenario(f"year-{schedules}", START, tuple(steps))


def measure(schedules: int) -> tuple[int, int, float]:
    """(appended events, reminder messages, CPU seconds) of one simulated year."""
    scenario = year_scenario(schedules)
    start = time.process_time()
    result = Simulation(scenario).run()
    return len(result.appended), len(result.followups), max(time.process_time() - start, 1e-9)


def floor(events: int = 200_000) -> float:
    """CPU seconds per event of building only what each appended dispatch holds or leaves behind."""
    records = [CronRecord(f"schedule-{n}", "p", "5 * * * *", "UTC", format_instant(START)) for n in range(1000)]
    occurrence, accepted, following = (format_instant(START + d) for d in (0, 60_000, 3_600_000))
    log: list[dict[str, Any]] = []
    trace: list[dict[str, Any]] = []
    active: dict[str, CronRecord] = {}
    agenda: list[tuple[int, int, str]] = []
    start = time.process_time()
    for seq in range(events):
        record = records[seq % 1000]
        change = DispatchChange(record.id, occurrence, accepted, following)
        payload = change.to_json()
        log.append({"type": "schedule/change", "seq": seq, "time": START, "data": payload})
        trace.append({"at": accepted, "effect": "append", "index": seq})
        moved = CronRecord(record.id, record.prompt, record.cron, record.time_zone, following)
        active[record.id] = moved
        Step(seq, change, record, moved, occurrence)
        heapq.heappush(agenda, (START + 3_600_000, seq, record.id))
    return (time.process_time() - start) / events


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--schedules", type=int, default=1000)
    ap.add_argument("--floor", action="store_true", help="first time the bare per-event object work")
    args = ap.parse_args()
    if args.schedules < 4:
        ap.error("--schedules must be at least 4 (the three sizes are N/4, N/2 and N)")
    if args.floor:
        per_event = floor()
        print(f"floor: {per_event * 1e6:.1f} us/event = {1 / per_event:,.0f} events/s before any rule runs")
    sizes = [args.schedules // 4, args.schedules // 2, args.schedules]
    print("one virtual year, mixed schedules (40% one-shot, 20% every, 40% cron; hourly and daily)")
    rows = [(n, *measure(n)) for n in sizes]
    for n, events, messages, cpu in rows:
        print(
            f"{n:6d} schedules: {events:9d} appended events ({messages:6d} reminder messages) in {cpu:6.2f} s CPU"
            f" = {events / cpu:10,.0f} events/s, {cpu / events * 1e6:5.1f} us/event"
        )
    (_, e0, _, c0), (_, e2, _, c2) = rows[0], rows[-1]
    print(
        f"events x{e2 / e0:.2f}, CPU x{c2 / c0:.2f}: linear when CPU grows no faster than events (a batch's"
        " own work is shared by more members at larger sizes); goal >= 100,000 events/s"
    )


if __name__ == "__main__":
    main()
