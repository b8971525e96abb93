"""Blank lines (empty, or ASCII whitespace only) are given apart by the lines layer in lenient
mode, as counted runs (frames.BlankLines), never split into a line object each: a 3.5 KB
Zstandard log of blank lines once cost 4 s in lenient mode. Read so, a log gives the report the
definition gives (each line looked at alone: lenient mode skips a blank line, strict mode's
first is the defect), plain and Zstandard, fast and exact, whatever the runs and where they
fall (issue 49, item 3)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from replay.judge.verify import verify_log
from replay.logs import frames
from replay.logs.logfile import SessionLog
from replay.reading import Mode, Reading
from replay.sources.bytesource import Data

from .sessionfiles import ev, header, line

BLANKS = [b"\n", b" \n", b"\t\n", b"\r\n", b" \r \n", b"\x0b\x0c\n", b"  \n"]
TYPES = ["turn/start", "step/start", "turn/end", "request/context"]


def _each_alone(raw: Data, start: int, end: int, blanks_apart: bool = False) -> Iterator[tuple[frames.Lines, int]]:
    """The definition: every line looked at alone (a blank one, asked apart, as a run of one)."""
    pos = start
    while pos < end:
        cut = raw.find(b"\n", pos, end) + 1
        text = bytes(raw[pos:cut])
        yield (frames.BlankLines(1) if blanks_apart and not text.strip() else [text]), cut
        pos = cut


@st.composite
def logs_with_blanks(draw: st.DrawFn) -> list[bytes]:
    count = draw(st.integers(0, 12))
    lines = [line(ev(seq, draw(st.sampled_from(TYPES)))) for seq in range(count)]
    for _ in range(draw(st.integers(0, 4))):
        run = draw(st.lists(st.sampled_from(BLANKS), min_size=1, max_size=5))
        at = draw(st.integers(0, len(lines)))
        lines[at:at] = run
    if lines and draw(st.booleans()):  # a line that starts with white space but is no blank one
        k = draw(st.integers(0, len(lines) - 1))
        lines[k] = b"  " + lines[k]
    return [line(header()), *lines]


def _reports(data: bytes, name: str, tmp: Path) -> list[str]:
    path = tmp / name
    path.write_bytes(data)
    return [
        json.dumps(verify_log(SessionLog(str(path), Reading(mode=mode), fast=fast)).to_json(), sort_keys=True)
        for mode in (Mode.STRICT, Mode.LENIENT)
        for fast in (True, False)
    ]


@given(lines=logs_with_blanks(), framing=st.sampled_from(["plain", "one-frame", "frames"]))
def test_runs_of_blank_lines_read_as_each_line_alone(
    lines: list[bytes], framing: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp = tmp_path_factory.mktemp("blank")
    c = zstandard.ZstdCompressor(write_checksum=True)
    if framing == "plain":
        data, name = b"".join(lines), "session.jsonl"
    elif framing == "one-frame":
        data, name = c.compress(lines[0]) + c.compress(b"".join(lines[1:])), "session.jsonl.zstd"
    else:
        data, name = c.compress(lines[0]) + b"".join(c.compress(x) for x in lines[1:]), "session.jsonl.zstd"
    runs = _reports(data, name, tmp)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(frames, "_line_blocks", _each_alone)
        alone = _reports(data, name, tmp)
    assert runs == alone


@pytest.mark.parametrize("blank", [b"\n", b" \n"])
def test_a_flood_of_blank_lines_costs_a_scan_not_a_line_each(blank: bytes, tmp_path: Path) -> None:
    """A few KB of Zstandard that expand to 48 MB of blank lines: read without a line object
    each (CPU is the benchmarks' business: here the runs are counted, whatever they cost)."""
    count = (48 << 20) // len(blank)  # within the 64 MiB a small Zstandard file may expand to
    c = zstandard.ZstdCompressor(write_checksum=True)
    data = c.compress(line(header())) + c.compress(blank * count) + c.compress(line(ev(0)))
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(data)
    assert len(data) < 8_000
    started = time.process_time()
    lenient = verify_log(SessionLog(str(path), Reading(mode=Mode.LENIENT)))
    spent = time.process_time() - started
    strict = verify_log(SessionLog(str(path), Reading(mode=Mode.STRICT)))
    assert lenient.verdict == "ok" and lenient.events == 1
    assert strict.verdict == "corrupt" and any(f.code == "format.blank-line" and f.line == 2 for f in strict.findings)
    blocks = list(frames._line_blocks(blank * count, 0, len(blank) * count, blanks_apart=True))
    assert all(type(part) is frames.BlankLines for part, _ in blocks) and sum(len(p) for p, _ in blocks) == count
    print(f"{count:,} blank lines read in {spent:.2f} s of CPU, lenient")
