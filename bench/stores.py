"""verify of a SQLite session store against verify of the same sessions as JSONL files (issue 66).

    python -m bench.stores [--mb 100] [--share 0.02] [--runs 3] [--layout 17]

The corpus is the real logs' bodies (bench/realcorpus.py, schedule traffic as the owner writes
it); the same sessions are written into one store (fixtures/storewriter.py, the layout's packing,
compression and varints). Whole `schedlog verify --no-cache -j 1` processes, CPU (user +
system), best of `--runs`, alternating, text and JSON output. Goal: a store <= 1.2x its files.
Then the floor of any reading of the store: stepping through every session's rows into Python
values, as the reader queries them and nothing else (in-process), against the files' verify.
"""

from __future__ import annotations

import argparse
import math
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.realcorpus import build_from_real_logs
from bench.verify import SCHEDLOG, _process_cpu
from fixtures.storewriter import write_store
from replay.sources.storerows import TEXT, rows_query


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=100)
    ap.add_argument("--share", type=float, default=0.02)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--layout", type=int, choices=(14, 17), default=17)
    args = ap.parse_args()
    out = Path(__file__).resolve().parent / "out"
    folder = out / f"judge-{args.mb}-{args.share}"
    paths = build_from_real_logs(folder, args.mb, 1, args.share)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store.db"
        write_store(store, args.layout, (p.read_bytes() for p in paths), journal="delete")
        print(f"{len(paths)} sessions, {sum(p.stat().st_size for p in paths) / 1e6:.0f} MB of JSONL; "
              f"the layout-{args.layout} store {store.stat().st_size / 1e6:.0f} MB")  # fmt: skip
        for fmt in ("text", "json"):
            verify = [SCHEDLOG, "verify", "--no-cache", "-j", "1", "--format", fmt]
            files = _process_cpu([*verify, str(folder)], args.runs)
            stored = _process_cpu([*verify, str(store)], args.runs)
            print(f"  {fmt}: files {files:.2f} s, store {stored:.2f} s: {stored / files:.2f}x (goal <= 1.2)")
        floor = _stepping(store, args.layout, args.runs)
        print(f"  stepping through the rows alone: {floor:.2f} s, {floor / files:.0%} of the files' verify")


def _stepping(store: Path, layout: int, runs: int) -> float:
    """The least CPU seconds of `runs` passes stepping through every session's rows as the reader
    queries them (text as `TEXT`, in batches), nothing checked or written: what SQLite and
    Python's sqlite3 cost before any line is made."""
    db = sqlite3.connect(f"{store.as_uri()}?mode=ro", uri=True)
    sessions = [row[0] for row in db.execute("SELECT id FROM sessions")]
    db.text_factory = TEXT
    rows = 0
    best = math.inf
    for _ in range(runs):
        start = time.process_time()
        for session in sessions:
            cursor = db.execute(rows_query(layout), (session, -(1 << 63)))
            while batch := cursor.fetchmany(4096):
                rows += len(batch)
        best = min(best, time.process_time() - start)
    db.close()
    assert rows, "no rows stepped through"
    return best


if __name__ == "__main__":
    main()
