"""Replay throughput next to verify and json.loads throughput (same corpus, same run), and the
database size.

    python bench/replay.py [--mb 200] [--sessions N] [--jobs 1]

The corpus is built from the real logs' bodies (bench/realcorpus.py), or, with --synthetic, the
real-shaped synthetic one (bench/corpus.py), or N sessions of equal size. Goals: issue 5,
replay >= 0.5x verify and the database no larger than the input logs; issue 17, replay >= 1.3x
the json.loads-every-line baseline; issue 30, replay CPU <= 1.5x the CPU of DuckDB's own
`read_json` loading the same files into one table. Wall-clock time for the first three (DuckDB
works on several threads; the baseline is one thread), CPU seconds for the last.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import build
from bench.realcorpus import build_from_real_logs
from replay.duck.build import replay
from replay.judge.verify import verify_path


def _cpu() -> float:
    """CPU seconds of this process and its finished children (the staging workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--sessions", type=int, default=None, help="N sessions of equal size, not the real-shaped corpus")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--runs", type=int, default=5, help="best of N runs for each side (alternating)")
    ap.add_argument("--synthetic", action="store_true", help="the synthetic real-shaped corpus")
    args = ap.parse_args()
    if min(args.mb, args.sessions or 1, args.jobs, args.runs) < 1:
        ap.error("every option takes a positive number")
    out = Path(__file__).resolve().parent / "out"
    if args.sessions:
        paths = build(out / "corpus", args.mb, args.sessions)
    elif args.synthetic:
        paths = build(out / "real", args.mb)
    else:
        paths = build_from_real_logs(out / "real-bodies", args.mb)
    size = sum(p.stat().st_size for p in paths)
    events = 0
    verify_s = replay_s = replay_cpu = base_s = duck_cpu = objects_cpu = float("inf")
    db_size = 0
    for _ in range(args.runs):
        start = time.perf_counter()
        for path in paths:
            with open(path, "rb") as f:
                for line in f:
                    json.loads(line)
        base_s = min(base_s, time.perf_counter() - start)
        start = time.perf_counter()
        events = sum(verify_path(str(p)).events for p in paths)
        verify_s = min(verify_s, time.perf_counter() - start)
        with tempfile.TemporaryDirectory(dir=Path(__file__).resolve().parent / "out") as tmp:
            db = Path(tmp) / "bench.duckdb"
            cpu = _cpu()
            start = time.perf_counter()
            replay([str(p) for p in paths], db, jobs=args.jobs)
            wall = time.perf_counter() - start
            if wall < replay_s:
                replay_s, replay_cpu = wall, _cpu() - cpu
            db_size = db.stat().st_size
            duck_cpu = min(duck_cpu, read_json_cpu([str(p) for p in paths], Path(tmp) / "plain.duckdb"))
            objects_cpu = min(
                objects_cpu, read_json_cpu([str(p) for p in paths], Path(tmp) / "o.duckdb", READ_JSON_OBJECTS)
            )
    mb = size / 1e6
    print(f"corpus: {len(paths)} sessions, {mb:.0f} MB, {events} events; best of {args.runs}, wall clock")
    print(f"verify : {mb / verify_s:7.1f} MB/s  {events / verify_s:10.0f} events/s  ({verify_s:.2f} s)")
    rate = f"{mb / replay_s:7.1f} MB/s  {events / replay_s:10.0f} events/s"
    print(f"replay : {rate}  ({replay_s:.2f} s, --jobs {args.jobs})")
    print(f"ratio replay/verify: {verify_s / replay_s:.2f}x (goal >= 0.5x)")
    print(f"ratio replay/json.loads: {base_s / replay_s:.2f}x (goal >= 1.3x; json.loads took {base_s:.2f} s)")
    print(
        f"replay CPU: {replay_cpu:.2f} s over {replay_s:.2f} s = {replay_cpu / replay_s:.1f} cores busy "
        f"(the replay needs two free cores; on a busy machine the ratio falls)"
    )
    print(f"database: {db_size / 1e6:.0f} MB = {db_size / size:.2f}x the input (goal <= 1.0x)")
    print(
        f"replay CPU / DuckDB read_json CPU: {replay_cpu / duck_cpu:.2f} (issue 30: <= 1.5; "
        f"read_json of the same files into one table took {duck_cpu:.2f} s of CPU)"
    )
    print(f"replay CPU / DuckDB read_json_objects CPU: {replay_cpu / objects_cpu:.2f} ({objects_cpu:.2f} s of CPU)")


READ_JSON = (
    "CREATE TABLE lines AS SELECT * FROM read_json(?, format = 'newline_delimited', union_by_name = true, "
    "ignore_errors = true, maximum_object_size = 1073741824)"
)
"""DuckDB's own load: every line a row of one table, the columns and their types detected. A line
DuckDB refuses (a lone surrogate escape, which JSON.parse reads and the synthetic corpus holds)
is skipped, not a failure of the benchmark: the baseline is then, if anything, cheaper."""
READ_JSON_OBJECTS = (
    "CREATE TABLE lines AS SELECT * FROM read_json_objects(?, format = 'newline_delimited', "
    "ignore_errors = true, maximum_object_size = 1073741824)"
)
"""Its cheapest: every line one JSON value, nothing detected or typed (refused lines skipped)."""


def read_json_cpu(paths: list[str], db: Path, query: str = READ_JSON) -> float:
    """CPU seconds of DuckDB loading `paths` (newline-delimited JSON) with `query` into a fresh
    database file."""
    import duckdb

    db.unlink(missing_ok=True)
    cpu = _cpu()
    con = duckdb.connect(str(db))
    con.execute(query, [paths])
    con.close()
    return _cpu() - cpu


if __name__ == "__main__":
    main()
