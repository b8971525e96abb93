"""`schedlog fleet` on a local Dask cluster of 2 workers against `schedlog verify -j 2`, both
writing Parquet verdicts of the same corpus; wall clock, best of N alternating runs.

    python bench/fleet.py [--mb 200] [--sessions 50] [--runs 3]

Goal (issue 20): the engine's overhead within 1.5x: time(fleet) / time(verify -j 2) <= 1.5, on a
running cluster (a fleet's is long-lived); the time of a fleet that starts its own cluster is
printed beside it.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import build

SCHEDLOG = Path(sys.executable).with_name("schedlog")


def timed(args: list[str]) -> float:
    start = time.monotonic()
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args[:2])} failed ({done.returncode}): {done.stderr}")
    return time.monotonic() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if min(args.mb, args.sessions, args.runs) < 1:
        ap.error("every option takes a positive number")
    corpus = build(Path(__file__).resolve().parent / "out" / "corpus", args.mb, args.sessions)
    directory = str(corpus[0].parent)
    from distributed import LocalCluster

    verify = [str(SCHEDLOG), "verify", directory, "-j", "2", "--format", "parquet", "--output"]
    fleet = [str(SCHEDLOG), "fleet", directory, "--output"]
    verify_s = cold_s = warm_s = float("inf")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        running = ["--scheduler", cluster.scheduler_address]
        for _ in range(args.runs):
            out = Path(tempfile.mkdtemp())
            try:
                verify_s = min(verify_s, timed([*verify, str(out / "v")]))
                cold_s = min(cold_s, timed([*fleet, str(out / "c")]))
                warm_s = min(warm_s, timed([*fleet, str(out / "w"), *running]))
            finally:
                shutil.rmtree(out)
    size = sum(p.stat().st_size for p in corpus) / 1e6
    print(f"{len(corpus)} sessions, {size:.0f} MB; best of {args.runs}, wall clock of the whole command")
    print(f"  verify -j 2                      : {verify_s:6.2f} s  {size / verify_s:7.1f} MB/s")
    print(f"  fleet, a running 2-worker cluster: {warm_s:6.2f} s  {size / warm_s:7.1f} MB/s")
    print(f"  fleet, starting its own cluster  : {cold_s:6.2f} s  {size / cold_s:7.1f} MB/s")
    print(f"  ratio fleet/verify: {warm_s / verify_s:.2f}x on a running cluster (goal <= 1.5x), ", end="")
    print(f"{cold_s / verify_s:.2f}x starting one")


if __name__ == "__main__":
    main()
