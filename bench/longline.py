"""Every command on a log holding a 2 GB line (issue 49, item 7): peak memory, read from /proc.

    python -m bench.longline [--gb 2] [--dir DIR]

Three files of about `--gb` GB are written (and kept in DIR for a second run): one with no line
feed at all (a header that never ends), a log whose last line is a torn 2 GB tail, and a log
with a complete 2 GB line in its middle. Each command reads each, and its peak memory is printed:
summed RssAnon of the command and its descendants (what the reader grows; bench/memory.py's
measure), and its peak RSS (mapped pages too: a scan of a mapped spool counts there). Goal:
under 300 MB for every command (a 2 GB line once peaked at 6.3 GB, 3x the file, in verify).
No timing is asserted anywhere: the figures are printed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.memory import status_kb, tree

ROOT = Path(__file__).resolve().parent.parent
SCHEDLOG = Path(sys.executable).with_name("schedlog")
LOG = ROOT / "fixtures" / "sessions" / "valid" / "reminders.session.jsonl"
MB = 1 << 20


def build(folder: Path, gb: float) -> dict[str, Path]:
    """The three files (written once; a file of the right size is kept)."""
    size = int(gb * 1024) * MB
    head, *lines = LOG.read_bytes().split(b"\n")
    shapes = {
        "no-lf": (b'{"type":"session","version":0,"id":"x","createdAt":0,"cwd":"/p","delegationDepth":0,"pad":"', b""),
        "torn-tail": (LOG.read_bytes() + b'{"type":"turn/start","seq":61,"time":0,"data":"', b""),
        "middle": (
            b"\n".join([head, *lines[:29]]) + b'\n{"type":"turn/start","seq":28,"time":0,"data":"',
            b'"}\n' + b"\n".join(lines[29:]),
        ),
    }
    out = {}
    chunk = b"a" * MB
    for name, (before, after) in shapes.items():
        path = folder / f"{name}.session.jsonl"
        out[name] = path
        if path.is_file() and path.stat().st_size == len(before) + size + len(after):
            continue
        with path.open("wb") as f:
            f.write(before)
            for _ in range(size // MB):
                f.write(chunk)
            f.write(after)
    return out


def measure(command: str) -> tuple[float, float, float, int]:
    """(peak summed RssAnon MB, peak RSS MB of the largest process, wall seconds, exit status),
    sampled every 20 ms."""
    start = time.monotonic()
    proc = subprocess.Popen(["bash", "-c", command], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    anon = rss = 0
    while proc.poll() is None:
        pids = tree(proc.pid)
        anon = max(anon, sum(status_kb(p) for p in pids))
        rss = max(rss, *(status_kb(p, "VmHWM") for p in pids))  # peak RSS: mapped pages too
        time.sleep(0.02)
    return anon / 1024, rss / 1024, time.monotonic() - start, proc.returncode


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=2.0)
    ap.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "schedlog-longline")
    args = ap.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    files = build(args.dir, args.gb)
    work = Path(tempfile.mkdtemp(prefix="longline-"))
    candidate = work / "candidate.json"
    candidate.write_text('{"type":"turn/start","seq":99,"time":0,"data":{"turn":9}}')
    s = str(SCHEDLOG)
    commands = {
        "verify": f"{s} verify {{f}}",
        "verify - <": f"{s} verify - < {{f}}",
        "cat | verify -": f"cat {{f}} | {s} verify -",
        "verify <(cat)": f"{s} verify <(cat {{f}})",
        "explain": f"{s} explain {{f}}",
        "report": f"{s} report {{f}} -o {work}/r.html",
        "replay": f"rm -f {work}/r.duckdb; {s} replay {{f}} --db {work}/r.duckdb",
        "shrink": f"{s} shrink {{f}} -o {work}/s.jsonl",
        "check": f"{s} check {{f}} {candidate}",
    }
    try:
        import distributed  # noqa: F401

        commands["fleet"] = f"rm -rf {work}/fleet; {s} fleet {{f}} --output {work}/fleet --workers 1"
    except ImportError:
        print("fleet: not measured (schedlog[dask] is not installed)")
    print(f"peak memory in MB, {args.gb:g} GB lines (summed RssAnon of the command's processes / peak RSS of one)")
    worst = 0.0
    for name, path in files.items():
        print(f"\n{name} ({path.stat().st_size / 1e9:.2f} GB):")
        for label, command in commands.items():
            anon, rss, wall, status = measure(command.format(f=path))
            worst = max(worst, anon, rss)
            print(f"  {label:16} {anon:7.0f} / {rss:7.0f}   {wall:6.1f} s   exit {status}")
    print(f"\nworst: {worst:.0f} MB (goal < 300 MB)")
    subprocess.run(["rm", "-rf", str(work)], check=False)
    if os.environ.get("SCHEDLOG_LONGLINE_KEEP") is None:
        print(f"(the files stay in {args.dir} for the next run; remove them when done)")


if __name__ == "__main__":
    main()
