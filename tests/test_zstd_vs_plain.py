"""One log, plain and as Zstandard frames (issue 49, item 4): where the two renderings are read
alike and where they part, each case against session-log.md §9.3 (complete frames), §9.4 (the
torn final frame) and §11.2 (what refuses a log).

They part in three cases only, and both readings are right there: the harness writes a frame
an append, whole records each, so a defect inside complete frames is corruption of committed
data (fatal, §9.3 step 4), where the same bytes plain are a crash tail (§7.2); a complete frame
ending in a partial record is one such defect; and a file whose header frame is torn has no
complete frame (§9.3 step 1), where the same header line plain is a header-only log. Everywhere
else, a torn final frame included (whatever byte it is torn at), the verdict and the refusals
are the same (the property test below)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from replay.judge.verify import verify_bytes
from replay.reading import Mode, Reading
from replay.sources.zstdframes import decompress_frame, decompress_torn, scan_frames

from .conftest import ROOT

LOGS = [p.read_bytes() for p in sorted((ROOT / "fixtures" / "sessions").rglob("*.session.jsonl"))]
DEFECTS = {"format.seq-gap", "format.unparsable", "format.blank-line", "format.malformed-row"}
C = zstandard.ZstdCompressor(write_checksum=True)


def _framed(lines: list[bytes], sizes: list[int]) -> bytes:
    """The header's frame, then frames of `sizes` lines (cycled), as the harness writes them."""
    frames, at, k = [lines[0]], 1, 0
    while at < len(lines):
        frames.append(b"".join(lines[at : at + sizes[k % len(sizes)]]))
        at += sizes[k % len(sizes)]
        k += 1
    return b"".join(C.compress(f) for f in frames)


def _errors(report: object) -> tuple[str, list[str]]:
    return report.verdict.value, [f.code for f in report.findings if f.severity.value == "error"]  # type: ignore[attr-defined]


def _plaintexts(data: bytes) -> tuple[bytes, bytes, bool]:
    """(the header frame's text, the complete frames' text after it, whether the last is torn)."""
    found = scan_frames(data)
    texts = [
        decompress_frame(data[f.start : f.end]) if f.complete else decompress_torn(data[f.start : f.end]) for f in found
    ]
    complete = b"".join(t for t, f in zip(texts[1:], found[1:], strict=True) if f.complete)
    return texts[0], complete, b"".join(texts[1:])


@given(
    log=st.sampled_from(LOGS),
    sizes=st.lists(st.integers(1, 5), min_size=1, max_size=4),
    defect=st.sampled_from([None, b"\n", b"{x\n", b"  \n", b"[]\n"]),
    at=st.integers(0, 10_000),
    cut=st.one_of(st.none(), st.integers(0, 100_000)),
    mode=st.sampled_from(list(Mode)),
)
def test_a_log_reads_alike_plain_and_framed_where_its_complete_frames_hold_whole_records(
    log: bytes, sizes: list[int], defect: bytes | None, at: int, cut: int | None, mode: Mode
) -> None:
    lines = log.splitlines(keepends=True)
    if defect is not None and len(lines) > 2:
        lines[1 + at % (len(lines) - 1)] = defect
    data = _framed(lines, sizes)
    head_end = len(C.compress(lines[0]))
    if cut is not None:
        data = data[: head_end + cut % (len(data) - head_end + 1)]
    head, complete, everything = _plaintexts(data)
    reading = Reading(mode=mode)
    inside = verify_bytes("s.jsonl", head + complete, reading)
    if any(f.code in DEFECTS for f in inside.findings):
        return  # a defect inside complete frames: the first case of the docstring, below
    assert _errors(verify_bytes("s.jsonl.zstd", data, reading)) == _errors(
        verify_bytes("s.jsonl", head + everything, reading)
    )


def _lines(name: str) -> list[bytes]:
    return (ROOT / "fixtures" / "sessions" / "valid" / name).read_bytes().splitlines(keepends=True)


def test_a_defect_inside_complete_frames_is_fatal_where_plain_it_is_a_crash_tail() -> None:
    """§9.3 step 4: the harness writes whole records a frame, so a defect inside complete frames
    is committed data corrupted; plain, with no turn/end after it, the reference drops it (§7.2)."""
    lines = [*_lines("reminders.session.jsonl")[:12], b"{not json\n"]
    plain = verify_bytes("s.jsonl", b"".join(lines))
    framed = verify_bytes("s.jsonl.zstd", _framed(lines, [3]))
    assert _errors(plain) == ("ok", []) and any(f.code == "format.unparsable" for f in plain.findings)
    assert _errors(framed)[0] == "corrupt" and "format.zstd" in _errors(framed)[1]


def test_a_partial_record_ending_a_complete_frame_is_fatal_where_plain_it_is_a_torn_tail() -> None:
    """The same bytes torn without their LF: plain, a torn tail dropped (§7.2); in a complete
    frame, "a trailing partial record" (§9.3 step 4). A crash tears the frame, not the record."""
    lines = _lines("reminders.session.jsonl")[:12]
    lines[-1] = lines[-1][:-20]
    plain = verify_bytes("s.jsonl", b"".join(lines))
    framed = verify_bytes("s.jsonl.zstd", _framed(lines, [2]))
    assert _errors(plain) == ("ok", []) and any(f.code == "format.torn-tail" for f in plain.findings)
    assert _errors(framed) == ("corrupt", ["format.zstd"])
    torn = _framed(lines[:-1], [2]) + C.compress(lines[-1])[:-9]  # the last frame torn instead: a crash tail
    assert _errors(verify_bytes("s.jsonl.zstd", torn)) == ("ok", [])


def test_a_torn_header_frame_is_no_log_where_plain_the_header_line_is_one() -> None:
    """§9.3 step 1: no complete frame at all refuses the file; plain, a header line with its LF
    is a header-only log (zero events)."""
    head = _lines("reminders.session.jsonl")[0]
    assert _errors(verify_bytes("s.jsonl", head)) == ("ok", [])
    framed = verify_bytes("s.jsonl.zstd", C.compress(head)[:-2])
    assert framed.verdict == "unreadable" and "no complete frame" in framed.findings[0].message


@pytest.mark.parametrize("seed", range(20))
def test_a_torn_final_frame_reads_as_the_plaintext_it_yields(seed: int) -> None:
    """§9.4: a final frame torn at any byte yields what it decompresses to, its partial record
    dropped: read as the plain bytes of that much, whatever the cut."""
    rng = random.Random(seed)
    lines = _lines("reminders.session.jsonl")
    data = _framed(lines, [rng.randint(1, 8)])
    last = scan_frames(data)[-1]
    torn = data[: rng.randint(last.start, last.end - 1)]
    head, _, everything = _plaintexts(torn)
    assert _errors(verify_bytes("s.jsonl.zstd", torn)) == _errors(verify_bytes("s.jsonl", head + everything))


def test_the_module_names_a_test_for_each_case() -> None:
    text = Path(__file__).read_text()
    assert text.count("def test_a_") >= 4
