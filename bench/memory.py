"""Peak anonymous memory of `schedlog replay` and `verify` on one large log, read from /proc.

    python bench/memory.py [--mb 1000]

Goals (issues 17 and 21): verify of a 1 GB log under 300 MB, replay under 400 MB; verify of the
same log as Zstandard (the harness's default encoding) is measured beside them. Anonymous memory
(RssAnon of the command and its worker processes, summed, sampled every 50 ms) is what a log can
grow; the mapped log itself is file-backed and not counted (a large Zstandard file, a mapped copy).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import as_zstd, build

SCHEDLOG = Path(sys.executable).with_name("schedlog")


def tree(pid: int) -> list[int]:
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return [pid]
    return [pid, *(p for child in children for p in tree(int(child)))]


def status_kb(pid: int, field: str = "RssAnon") -> int:
    """A process's `field` of /proc/PID/status, in kB (0 once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def peak_anon(args: list[str]) -> tuple[float, float]:
    """(peak summed RssAnon in MB, wall seconds) of a command and its descendants."""
    start = time.monotonic()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        peak = max(peak, sum(status_kb(p) for p in tree(proc.pid)))
        time.sleep(0.05)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{args[1]} failed with exit status {proc.returncode}")
    return peak / 1024, time.monotonic() - start


def packed(log: Path) -> Path:
    """`log` as Zstandard (bench.corpus.as_zstd), built again when the log was."""
    target = log.with_name(log.name + ".zstd")
    if target.exists() and target.stat().st_mtime >= log.stat().st_mtime:
        return target
    return as_zstd(log, target, 0)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=1000)
    args = ap.parse_args()
    if args.mb < 1:
        ap.error("--mb takes a positive number")
    (log,) = build(Path(__file__).resolve().parent / "out" / "big", args.mb, 1)
    print(f"one log of {log.stat().st_size / 1e6:.0f} MB")
    verify_mb, verify_s = peak_anon([str(SCHEDLOG), "verify", str(log)])
    print(f"  verify: peak anonymous memory {verify_mb:6.0f} MB in {verify_s:.1f} s (goal < 300 MB at 1 GB)")
    zstd = packed(log)
    zstd_mb, zstd_s = peak_anon([str(SCHEDLOG), "verify", str(zstd)])
    print(f"  verify of the same log as Zstandard ({zstd.stat().st_size / 1e6:.0f} MB):")
    print(f"  peak anonymous memory {zstd_mb:6.0f} MB in {zstd_s:.1f} s")
    with tempfile.TemporaryDirectory() as out:
        replay_mb, replay_s = peak_anon([str(SCHEDLOG), "replay", str(log), "--db", f"{out}/big.duckdb"])
    print(f"  replay: peak anonymous memory {replay_mb:6.0f} MB in {replay_s:.1f} s (goal < 400 MB at 1 GB)")


if __name__ == "__main__":
    main()
