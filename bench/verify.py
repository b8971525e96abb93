"""Verify throughput against a json.loads-every-line baseline, both measured in this run.

    python bench/verify.py [--mb 200] [--sessions 50]

Goal (issue 2): verify >= 1.0x the baseline while checking every line.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import build
from replay.audit.verify import verify_path


def baseline(paths: list[Path]) -> tuple[float, int]:
    start = time.process_time()
    lines = 0
    for path in paths:
        with open(path, "rb") as f:
            for line in f:
                json.loads(line)
                lines += 1
    return time.process_time() - start, lines


def verify(paths: list[Path]) -> tuple[float, int, int]:
    start = time.process_time()
    events = schedule = 0
    for path in paths:
        r = verify_path(str(path))
        assert r.verdict == "ok", (path, r.violation, r.findings)
        events += r.events
        schedule += r.schedule_events
    return time.process_time() - start, events, schedule


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3, help="best of N runs for each side")
    args = ap.parse_args()
    if min(args.mb, args.sessions, args.runs) < 1:
        ap.error("every option takes a positive number")
    out = Path(__file__).resolve().parent / "out"
    print(f"best of {args.runs} runs each, CPU seconds")
    measure("real-shaped", build(out / "corpus", args.mb, args.sessions), args.runs, goal=True)
    heavy = build(out / "heavy", max(1, args.mb // 4), max(1, args.sessions // 4), schedule_share=0.5)
    measure("schedule-heavy (for information)", heavy, args.runs, goal=False)


def measure(name: str, paths: list[Path], runs: int, goal: bool) -> None:
    size = sum(p.stat().st_size for p in paths) / 1e6
    base_s, lines = min(baseline(paths) for _ in range(runs))
    ver_s, events, schedule = min(verify(paths) for _ in range(runs))
    share = schedule / lines * 100
    print(f"\n{name}: {len(paths)} sessions, {size:.0f} MB, {lines} lines, {events} events after expansion,")
    print(f"  {schedule} schedule events ({share:.1f}% of lines)")
    print(f"  baseline json.loads : {size / base_s:8.1f} MB/s  {lines / base_s:10.0f} lines/s   ({base_s:.2f} s)")
    print(f"  schedlog verify     : {size / ver_s:8.1f} MB/s  {events / ver_s:10.0f} events/s  ({ver_s:.2f} s)")
    print(f"  ratio verify/baseline: {base_s / ver_s:.2f}x" + (" (goal >= 1.0x)" if goal else ""))


if __name__ == "__main__":
    main()
