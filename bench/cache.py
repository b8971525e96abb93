"""What a re-audit costs with the verdict cache (issue 50), as CPU seconds of the whole process.

    python -m bench.cache [--mb 100] [--shares 0.02,0.11] [--runs 3]

On a corpus built from the real logs' bodies (bench/realcorpus.py) at each schedule share, each
case runs `schedlog verify` as a user would (a new process, text output, its user + system CPU
from the kernel), best of `--runs`, then again with `--format json` for the comparison:

- cold: `--no-cache` (what every run cost before the cache);
- first: an empty cache (the cold read, and its entries written);
- unchanged: the same folder again (every report from the cache);
- grown: 20% of the logs grew by 10% of their lines since the cache was written (resumed).

It prints each case's seconds and its ratio to cold, and checks that every cached run's output
equals the cold run's byte for byte. Goals (issue 50): unchanged <= 0.10 of cold, grown <= 0.20.
Beside them, the floor of any re-audit that checks every byte: a Python process that imports
click and SQLite and hashes each log whole (xxh3-128), judging and printing nothing.

The processes run with bytecode written and read (PYTHONDONTWRITEBYTECODE dropped), as an
installed schedlog runs: compiling the sources again at each start would be most of a cache
hit's cost (best of `--runs`; the first run writes the bytecode).

Then the same for `schedlog replay` into one database (`replay/duck/increment.py`): built anew
(`--rebuild --no-cache`), again over the unchanged folder, and after the same growth; each
run's verdict summary compared with the fresh build's.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.realcorpus import build_from_real_logs

SCHEDLOG = str(Path(sys.executable).with_name("schedlog"))
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "SCHEDLOG_CACHE_DIR")}
FLOOR = """
import os, sys, click, sqlite3, xxhash
for root, _, names in os.walk(sys.argv[1]):
    for name in sorted(names):
        path = os.path.join(root, name)
        fd = os.open(path, os.O_RDONLY)
        try:
            xxhash.xxh3_128_digest(os.pread(fd, os.fstat(fd).st_size, 0))
        finally:
            os.close(fd)
"""
"""A process that checks every byte and does nothing else: what no cache hit can go below."""


def _cpu(args: list[str]) -> tuple[float, bytes]:
    """CPU seconds (user + system) of one process, and its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(args, capture_output=True, check=False, env=ENV)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


def _run(folder: Path, *more: str) -> tuple[float, bytes]:
    """CPU seconds (user + system) of one `schedlog verify` process (text output, the default),
    and its JSON output from a second run of the same case (compared, not timed)."""
    cpu, _ = _cpu([SCHEDLOG, "verify", *more, str(folder)])
    done = subprocess.run([SCHEDLOG, "verify", "--format", "json", *more, str(folder)], capture_output=True, env=ENV)
    return cpu, done.stdout


def _cut(paths: list[Path], rng: random.Random) -> dict[Path, bytes]:
    """Cut 20% of the logs by 10% of their lines; their whole bytes, to grow them back."""
    chosen = rng.sample(paths, max(1, len(paths) // 5))
    whole = {}
    for path in chosen:
        data = path.read_bytes()
        lines = data.splitlines(keepends=True)
        keep = max(1, len(lines) - max(1, len(lines) // 10))
        whole[path] = data
        path.write_bytes(b"".join(lines[:keep]))
    return whole


def _corpus(tmp: Path, mb: int, share: float) -> tuple[Path, list[Path]]:
    """A folder of `mb` MB of the real logs' bodies at a schedule `share` in `tmp`, and its logs."""
    folder = tmp / "logs"
    shutil.copytree(build_from_real_logs(tmp / "corpus", mb, 1, share)[0].parent, folder)
    for stamp in folder.glob(".built-*"):
        stamp.unlink()
    return folder, sorted(folder.glob("*.jsonl"))


def case(mb: int, share: float, runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder, paths = _corpus(Path(tmp), mb, share)
        cache = ["--cache-dir", str(Path(tmp) / "cache")]
        cold, expected = min(_run(folder, "--no-cache") for _ in range(runs))
        firsts = []
        for _ in range(runs):
            shutil.rmtree(Path(tmp) / "cache", ignore_errors=True)
            firsts.append(_run(folder, *cache))
        unchanged = [_run(folder, *cache) for _ in range(runs)]
        grown = []
        for k in range(runs):
            whole = _cut(paths, random.Random(k))
            _run(folder, *cache)  # the cache holds them shorter
            for path, data in whole.items():
                path.write_bytes(data)
            grown.append(_run(folder, *cache))
        for name, results in (("first", firsts), ("unchanged", unchanged), ("grown", grown)):
            if any(out != expected for _, out in results):
                raise SystemExit(f"{name}: the cached output differs from the cold one")
        return {
            "cold": cold,
            "floor": min(_cpu([sys.executable, "-c", FLOOR, str(folder)])[0] for _ in range(runs)),
            "first": min(c for c, _ in firsts),
            "unchanged": min(c for c, _ in unchanged),
            "grown": min(c for c, _ in grown),
        }


def _replay(folder: Path, db: Path, *more: str) -> tuple[float, str]:
    """CPU seconds of one `schedlog replay` process into `db`, and its verdict summary (the
    summary line up to the database's name)."""
    cpu, out = _cpu([SCHEDLOG, "replay", str(folder), "--db", str(db), *more])
    return cpu, out.decode().split("; ")[0]


def replay_case(mb: int, share: float, runs: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        folder, paths = _corpus(Path(tmp), mb, share)
        db, cache = Path(tmp) / "r.duckdb", ["--cache-dir", str(Path(tmp) / "cache")]
        fresh, expected = min(_replay(folder, db, "--rebuild", "--no-cache") for _ in range(runs))
        _replay(folder, db, *cache)  # the cache learns the logs the database keeps
        unchanged = [_replay(folder, db, *cache) for _ in range(runs)]
        grown = []
        for k in range(runs):
            whole = _cut(paths, random.Random(k))
            _replay(folder, db, *cache)
            for path, data in whole.items():
                path.write_bytes(data)
            grown.append(_replay(folder, db, *cache))
        if any(summary != expected for _, summary in unchanged + grown):
            raise SystemExit("replay: a summary differs from the fresh build's")
        return {"fresh": fresh, "unchanged": min(c for c, _ in unchanged), "grown": min(c for c, _ in grown)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=100)
    parser.add_argument("--shares", default="0.02,0.11")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    for share in (float(s) for s in args.shares.split(",")):
        got = case(args.mb, share, args.runs)
        told = ", ".join(f"{k} {v:.2f} s ({v / got['cold']:.2f}x)" for k, v in got.items())
        print(f"{args.mb} MB, schedule share {share:.0%}: {told}; outputs equal")
        got = replay_case(args.mb, share, args.runs)
        told = ", ".join(f"{k} {v:.2f} s ({v / got['fresh']:.2f}x)" for k, v in got.items())
        print(f"  replay into one database: {told}; verdicts equal")


if __name__ == "__main__":
    main()
