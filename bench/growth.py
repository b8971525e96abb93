"""One large log as it grows (issue 64): what a cached re-audit and `watch` cost once it was read.

Builds one session log from the real logs' bodies (`--mb`, 64 MB by default, at a `--share` of
schedule traffic, 2%, written as the live owner writes it: every dispatch's reminder queued and
delivered, bench/realcorpus.py), then measures whole `schedlog` processes as a user runs them
(CPU seconds, user + system, best of `--runs`; bytecode written as an installed schedlog writes
it):

- cold: `verify --no-cache` (text, then `--format json`);
- the first cached run (its entry written), an unchanged run, and a run after the log grew by
  its last 1% of lines (the cache's entry made of the log without them): each against cold;
- the cache entry's size, and the peak memory of a cold and of a resumed run;
- `watch` of the log while a writer appends `--lines` lines every `--every` seconds, `--appends`
  times: its CPU per append after its first read, and its memory after the first read and at
  the end.

The goals it prints (issue 64): grown <= 5% of cold, an entry <= 1 MB, a resumed run's peak
memory <= a cold run's, watch <= 20 ms of CPU an append and flat memory.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.realcorpus import T0, bodies, session

SCHEDLOG = str(Path(sys.executable).with_name("schedlog"))
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "SCHEDLOG_CACHE_DIR")}
PEAK = "import resource, subprocess, sys; subprocess.run(sys.argv[1:], capture_output=True); " \
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"  # fmt: skip
"""A process that runs one command and prints its peak resident memory (KiB)."""


def build(out: Path, mb: int, share: float, seed: int = 0) -> Path:
    """One session log of about `mb` MB made of the real logs' bodies, schedule traffic spliced in."""
    rng = random.Random(seed)
    sources = bodies()
    parts: list[list[bytes]] = []
    size = 0
    while size < mb * 1_000_000:
        part = rng.choice(sources)
        parts.append(part)
        size += sum(len(line) + 1 for line in part)
    lines, _ = session(rng, parts, share)
    header = {"type": "session", "version": 0, "id": "growth", "createdAt": T0, "cwd": "/srv/app"}
    header["delegationDepth"] = 0
    out.write_bytes(json.dumps(header, separators=(",", ":")).encode() + b"\n" + b"\n".join(lines) + b"\n")
    return out


def cpu(args: list[str]) -> float:
    """CPU seconds of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, capture_output=True, check=False, env=ENV)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def peak(args: list[str]) -> int:
    """Peak resident memory of one process (MiB)."""
    done = subprocess.run([sys.executable, "-c", PEAK, *args], capture_output=True, text=True, env=ENV)
    return int(done.stdout.strip() or 0) // 1024


def entry_bytes(cache: Path) -> int:
    db = sqlite3.connect(cache / "verdicts.sqlite")
    try:
        return int(db.execute("SELECT COALESCE(SUM(LENGTH(head) + LENGTH(rest)), 0) FROM entries").fetchone()[0])
    finally:
        db.close()


def verify_figures(log: Path, runs: int, tmp: Path) -> dict[str, float]:
    whole = log.read_bytes()
    lines = whole.splitlines(keepends=True)
    shorter = b"".join(lines[: len(lines) - len(lines) // 100])
    out: dict[str, float] = {}
    out["cold"] = min(cpu([SCHEDLOG, "verify", "--no-cache", str(log)]) for _ in range(runs))
    out["cold json"] = min(cpu([SCHEDLOG, "verify", "--no-cache", "--format", "json", str(log)]) for _ in range(runs))
    firsts, unchanged, grown, grown_json = [], [], [], []
    for k in range(runs):
        cache = tmp / f"cache-{k}"
        firsts.append(cpu([SCHEDLOG, "verify", "--cache-dir", str(cache), str(log)]))
        unchanged.append(cpu([SCHEDLOG, "verify", "--cache-dir", str(cache), str(log)]))
        for fmt, into in (("text", grown), ("json", grown_json)):
            log.write_bytes(shorter)
            cpu([SCHEDLOG, "verify", "--cache-dir", str(cache), "--format", fmt, str(log)])
            log.write_bytes(whole)
            into.append(cpu([SCHEDLOG, "verify", "--cache-dir", str(cache), "--format", fmt, str(log)]))
    out["first cached"], out["unchanged"], out["grown"], out["grown json"] = map(
        min, (firsts, unchanged, grown, grown_json)
    )
    cache = tmp / "cache-size"
    log.write_bytes(shorter)
    cpu([SCHEDLOG, "verify", "--cache-dir", str(cache), str(log)])
    out["entry MB"] = entry_bytes(cache) / 1e6
    log.write_bytes(whole)
    out["peak cold MiB"] = peak([SCHEDLOG, "verify", "--no-cache", str(log)])
    out["peak resumed MiB"] = peak([SCHEDLOG, "verify", "--cache-dir", str(cache), str(log)])
    return out


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def watch_figures(log: Path, appends: int, lines_each: int, every: float) -> dict[str, float]:
    """`watch` of the log, its last `appends * lines_each` lines appended by a writer."""
    whole = log.read_bytes().splitlines(keepends=True)
    cut = len(whole) - appends * lines_each
    log.write_bytes(b"".join(whole[:cut]))
    proc = subprocess.Popen([SCHEDLOG, "watch", "--format", "json", str(log)], stdout=subprocess.DEVNULL, env=ENV)
    try:
        time.sleep(2.0)
        settled = _proc_cpu(proc.pid)
        while True:  # the first read done: its CPU stops growing
            time.sleep(1.0)
            now = _proc_cpu(proc.pid)
            if now == settled:
                break
            settled = now
        first_rss = _rss_mib(proc.pid)
        for n in range(appends):
            with open(log, "ab") as f:
                f.write(b"".join(whole[cut + n * lines_each : cut + (n + 1) * lines_each]))
            time.sleep(every)
        time.sleep(max(2.0, every * 2))
        spent = _proc_cpu(proc.pid) - settled
        return {
            "first read CPU s": settled,
            "per append ms": 1000 * spent / appends,
            "RSS after first read MiB": first_rss,
            "RSS at the end MiB": _rss_mib(proc.pid),
        }
    finally:
        proc.terminate()
        proc.wait()
        log.write_bytes(b"".join(whole))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=64)
    parser.add_argument("--share", type=float, default=0.02)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--appends", type=int, default=30)
    parser.add_argument("--lines", type=int, default=10)
    parser.add_argument("--every", type=float, default=0.5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as place:
        tmp = Path(place)
        log = build(tmp / "growth.session.jsonl", args.mb, args.share)
        data = log.read_bytes()
        lines, changes = data.count(b"\n"), data.count(b'"type":"schedule/change"')
        print(f"one log: {len(data) / 1e6:.1f} MB, {lines:,} lines, {changes:,} schedule events", flush=True)
        figures = verify_figures(log, args.runs, tmp)
        cold = figures["cold"]
        for name, value in figures.items():
            ratio = f"  ({value / cold:.2f}x of cold)" if name in ("first cached", "unchanged", "grown") else ""
            print(f"{name:>18}: {value:8.2f}{ratio}", flush=True)
        print(f"{'grown json':>18}: {figures['grown json'] / figures['cold json']:.2f}x of cold json")
        grown, entry = figures["grown"] / cold, figures["entry MB"]
        resumed, cold_peak = figures["peak resumed MiB"], figures["peak cold MiB"]
        print(f"goal: grown <= 0.05x of cold: {grown:.2f}x; entry <= 1 MB: {entry:.1f} MB", flush=True)
        print(f"goal: resumed peak <= cold peak: {resumed:.0f} / {cold_peak:.0f} MiB", flush=True)
        watched = watch_figures(log, args.appends, args.lines, args.every)
        for name, value in watched.items():
            print(f"{'watch ' + name:>30}: {value:8.1f}", flush=True)
        print(f"goal: watch <= 20 ms of CPU an append: {watched['per append ms']:.0f} ms")


if __name__ == "__main__":
    main()
