"""Crafted Zstandard logs of at most 1 MB (issue 33): each is verified in a fresh process, strict
and lenient, and its CPU seconds and peak memory printed beside the goal (5 s; the plaintext
bound is max(64 MiB, 64x the file), frames.zstd_budget). Run by hand: `python -m bench.zstdbound`.

Each probe fills the plaintext bound with one shape a reader may find slow: blank or whitespace
lines, the smallest valid events, lines that spell `turn/end` past a defect, lines nested just
past the standard library's depth, one deep line, and long strings of escapes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import zstandard

HEADER = json.dumps({"type": "session", "version": 0, "id": "s", "createdAt": 1, "cwd": "/w", "delegationDepth": 0})
FILL = (64 << 20) - 4096
"""Just within the plaintext bound of a file under 1 MB."""
MAX_FILE = 1 << 20


def _repeat(line: bytes) -> bytes:
    return line * (FILL // len(line))


def probes() -> Iterator[tuple[str, bytes]]:
    """(name, plaintext after the header line) for each shape."""
    yield "newlines", b"\n" * FILL
    yield "spaces", _repeat(b" \n")
    yield "nbsp lines", _repeat("\u00a0\u2028 \n".encode())
    yield "tiny events", b"".join(b'{"type":"a","seq":%d,"time":0,"data":{}}\n' % i for i in range(FILL // 50))
    yield "turn/end past a defect", b"x\n" + _repeat(b'{"type":"turn/end","seq":1,"time":0,"data":{}}\n')
    yield "1,100-deep lines", _repeat(b'{"type":"n","seq":0,"time":0,"data":' + b"[" * 1100 + b"]" * 1100 + b"}\n")
    yield "one deep line", b'{"type":"n","seq":0,"time":0,"data":' + b"[" * (FILL // 2) + b"]" * (FILL // 2) + b"}\n"
    escaped = b'{"type":"n","seq":%d,"time":0,"data":"' + b"\\ud800" * 1000 + b'"}\n'
    yield "escapes", b"".join(escaped % i for i in range(FILL // 6040))
    yield "spelt turn/end", _repeat(b'{"type":"turn\\/end"}\n')
    yield "turn/end as text past a defect", b"x\n" + _repeat(b'{"type":"x","a":"turn/end"}\n')


def frames(text: bytes) -> bytes:
    """The header's frame, then frames of about 1 MiB of lines (as a writer appends them)."""
    compressor = zstandard.ZstdCompressor(level=19)
    out = [compressor.compress(HEADER.encode() + b"\n")]
    pos = 0
    while pos < len(text):
        cut = text.find(b"\n", pos + (1 << 20))
        end = len(text) if cut < 0 else cut + 1
        out.append(compressor.compress(text[pos:end]))
        pos = end
    return b"".join(out)


MEASURE = """
import resource, sys, time
from replay.judge.verify import verify_path
from replay.reading import Mode, Reading
reading = Reading(mode=Mode(sys.argv[2]))
report = verify_path(sys.argv[1], reading)
usage = resource.getrusage(resource.RUSAGE_SELF)
peak = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(report.verdict, usage.ru_utime + usage.ru_stime, peak // 1024, sep="\\t")
"""


def main() -> None:
    print(f"{'probe':26} {'file':>9} {'mode':8} {'verdict':11} {'CPU s':>6} {'peak MB':>8}")
    with tempfile.TemporaryDirectory() as folder:
        for name, text in probes():
            data = frames(text)
            path = Path(folder) / "probe.jsonl.zstd"
            path.write_bytes(data)
            size = f"{len(data) / 1024:.0f} KB" + ("" if len(data) <= MAX_FILE else " (>1 MB)")
            for mode in ("strict", "lenient"):
                out = subprocess.run(
                    [sys.executable, "-c", MEASURE, str(path), mode], capture_output=True, text=True, check=True
                ).stdout.split()
                verdict, cpu, peak = out[0], float(out[1]), int(out[2])
                flag = "" if cpu <= 5 else "  <- over 5 s"
                print(f"{name:26} {size:>9} {mode:8} {verdict:11} {cpu:6.2f} {peak:8}{flag}")


if __name__ == "__main__":
    main()
