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
from pathlib import Path

from fixtures.host.stores import large_store
from replay.judge.verify import verify_path


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "schedule.json"
        path.write_text(json.dumps(large_store(10_000)))
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
