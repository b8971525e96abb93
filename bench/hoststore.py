"""A 10,000-task Host task store through `schedlog verify` (issue 22: under one second).

Run by hand: `python -m bench.hoststore`. Prints the CPU time of the in-process check and the
wall time of the command (with its interpreter start), best of five.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from invariant import format_instant
from replay.audit.verify import verify_path

KINDS = ("after", "at", "every", "daily", "weekly", "cron")


def _rule(kind: str, ms: int) -> dict[str, object]:
    """The kind's own fields, with `ms` an occurrence of the rule (a store as the Host keeps it)."""
    day = datetime.fromtimestamp(ms / 1000, UTC)
    wall = f"{day:%H:%M:%S}.000"
    return {
        "after": {"afterSeconds": 30},
        "at": {},
        "every": {"everySeconds": 3600},
        "daily": {"time": wall, "timeZone": "UTC"},
        "weekly": {"time": wall, "timeZone": "Etc/UTC", "weekdays": [day.isoweekday()]},
        "cron": {"expression": f"{day.minute} {day.hour} * * *", "timeZone": "UTC"},
    }[kind]


def store(tasks: int) -> dict[str, object]:
    rows: dict[str, object] = {}
    for n in range(tasks):
        kind = KINDS[n % len(KINDS)]
        task_id = f"schedule-{n:08x}-0000-4000-8000-000000000000"
        ms = 1_785_931_200_000 + n * 60_000
        at = format_instant(ms)
        record = {"id": task_id, "kind": kind, "title": f"task {n}", "prompt": "check the logs", "scheduledAt": at}
        receipts = [{"scheduledAt": at, "deliveredAt": at, "messageId": f"m-{n}-{k}"} for k in range(3)]
        rows[task_id] = {
            "sessionId": f"session-{n % 97}",
            "record": {**record, **_rule(kind, ms)},
            "status": "active",
            "lastDelivery": dict(receipts[-1]),
            "deliveryHistory": {"records": receipts, "earlierRecordsUnavailable": False},
        }
    return {"unit": {"name": "schedule", "version": 1}, "global": None, "tables": {"tasks": rows}}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "schedule.json"
        path.write_text(json.dumps(store(10_000)))
        cpu = []
        for _ in range(5):
            start = time.process_time()
            report = verify_path(str(path))
            cpu.append(time.process_time() - start)
        assert report.verdict == "ok" and not report.findings, report
        exe = str(Path(sys.executable).with_name("schedlog"))
        wall = []
        for _ in range(5):
            start = time.perf_counter()
            subprocess.run([exe, "verify", str(path)], check=True, capture_output=True)
            wall.append(time.perf_counter() - start)
        size = path.stat().st_size
    print(
        f"10,000 tasks ({size / 1e6:.1f} MB): checked in {min(cpu):.2f} s CPU; `schedlog verify` {min(wall):.2f} s wall"
    )


if __name__ == "__main__":
    main()
