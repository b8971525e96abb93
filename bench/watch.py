"""How fast `schedlog watch` tells what a write changed, and whether it keeps up (issue 51).

    python -m bench.watch [--trials 40] [--rate 1000] [--seconds 20] [--shares 0.02,0.11]

- latency: `schedlog watch DIR --format json` over a folder of logs, each a valid prefix of a
  log whose next lines reuse an id; one trial appends those lines to one log, at a random moment,
  and times the write to the finding's line on the watch's output (file events; then polling
  every 0.2 s). Prints the median and the worst.
- rate: a writer appends a session built from the real logs' own bodies (bench/realcorpus.py,
  at each schedule share) to one log at `--rate` lines a second for `--seconds`, while watch
  follows it with `--until-idle 1`; prints the lines written, how long after the last write the
  watch had seen everything (its exit, less the second of idleness), its CPU per second of
  writing, and whether its last verdict equals `verify`'s.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.realcorpus import T0, bodies, session

ROOT = Path(__file__).resolve().parent.parent
SCHEDLOG = str(Path(sys.executable).with_name("schedlog"))
CORRUPT = ROOT / "fixtures" / "sessions" / "corrupt" / "reused-id.session.jsonl"
CUT = 24
"""The corrupt fixture's lines before the one that reuses an id."""
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _reader(proc: subprocess.Popen[str], lines: queue.Queue[tuple[float, str]]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.put((time.monotonic(), line))


def latency(trials: int, *more: str) -> list[float]:
    """Seconds from each appending write to the finding it causes on watch's output."""
    head = CORRUPT.read_bytes().splitlines(keepends=True)
    prefix, rest = b"".join(head[:CUT]), b"".join(head[CUT:])
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for k in range(trials):
            (folder / f"{k:03d}.jsonl").write_bytes(prefix)
        proc = subprocess.Popen(
            [SCHEDLOG, "watch", str(folder), "--format", "json", *more],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            bufsize=1,
            env=ENV,
        )
        lines: queue.Queue[tuple[float, str]] = queue.Queue()
        threading.Thread(target=_reader, args=(proc, lines), daemon=True).start()
        _wait_for(lines, lambda line: json.loads(line).get("event") == "verdict", trials)
        rng, took = random.Random(0), []
        for k in range(trials):
            time.sleep(rng.uniform(0.05, 0.5))
            written = time.monotonic()
            with open(folder / f"{k:03d}.jsonl", "ab") as f:
                f.write(rest)
            seen = _wait_for(lines, lambda line: '"fold.create.reuse"' in line, 1)
            took.append(seen - written)
        proc.terminate()
        proc.wait(timeout=30)
    return took


def _wait_for(lines: queue.Queue[tuple[float, str]], wanted: object, count: int, limit: float = 60) -> float:
    """When the `count`-th line `wanted` holds came (each line read once)."""
    deadline = time.monotonic() + limit
    while count:
        at, line = lines.get(timeout=max(0.01, deadline - time.monotonic()))
        if wanted(line):  # type: ignore[operator]
            count -= 1
    return at


def rate(per_second: int, seconds: float, share: float) -> dict[str, object]:
    """A writer at `per_second` lines for `seconds`, followed by watch (see the module)."""
    rng = random.Random(1)
    sources = bodies()
    wanted, parts = int(per_second * seconds), []
    while sum(len(p) for p in parts) < wanted:  # one session: its seqs run on across the bodies
        parts.append(rng.choice(sources))
    lines = session(rng, parts, share)[0][:wanted]
    header = {"type": "session", "version": 0, "id": "live", "createdAt": T0, "cwd": "/srv/app", "delegationDepth": 0}
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "live.jsonl"
        log.write_bytes(json.dumps(header, separators=(",", ":")).encode() + b"\n")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        proc = subprocess.Popen(
            [SCHEDLOG, "watch", tmp, "--format", "json", "--until-idle", "1"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=ENV,
        )
        time.sleep(1.0)
        start = time.monotonic()
        with open(log, "ab", buffering=0) as f:
            for n, line in enumerate(lines):
                f.write(line + b"\n")
                if n % 10 == 9:  # ten lines at a time, on the writer's schedule
                    time.sleep(max(0.0, start + (n + 1) / per_second - time.monotonic()))
        ended = time.monotonic()
        out, _ = proc.communicate(timeout=600)
        done = time.monotonic()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        verdicts = [e["verdict"] for e in map(json.loads, out.splitlines()) if e.get("event") == "verdict"]
        cold = subprocess.run([SCHEDLOG, "verify", "--no-cache", "--format", "json", str(log)], capture_output=True)
        expected = json.loads(cold.stdout)[0]["verdict"]
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "lines": len(lines),
        "writing_s": ended - start,
        "behind_s": max(0.0, done - ended - 1.0),
        "cpu_per_s": cpu / (ended - start),
        "verdict_equal": bool(verdicts) and verdicts[-1] == expected,
        "schedule": sum(1 for line in lines if b'"schedule/change"' in line[:40]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--rate", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--shares", default="0.02,0.11")
    args = parser.parse_args()
    for name, more in (("file events", ()), ("polling 0.2 s", ("--poll", "0.2"))):
        took = sorted(latency(args.trials, *more))
        print(
            f"latency, {name}: median {statistics.median(took) * 1000:.0f} ms, "
            f"worst {took[-1] * 1000:.0f} ms over {len(took)} appends"
        )
    for share in (float(s) for s in args.shares.split(",")):
        got = rate(args.rate, args.seconds, share)
        print(
            f"{args.rate} lines/s for {got['writing_s']:.1f} s, schedule share {share:.0%} "
            f"({got['lines']} lines, {got['schedule']} schedule events): caught up {got['behind_s']:.2f} s "
            f"after the last write, {got['cpu_per_s']:.2f} s CPU per second of writing, "
            f"last verdict {'equals' if got['verdict_equal'] else 'DIFFERS from'} verify's"
        )


if __name__ == "__main__":
    main()
