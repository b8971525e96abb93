"""A line longer than any record can be (issue 49, item 7: a 2 GB file without a line feed
peaked at 6.3 GB, 3x the file, before its verdict). The harness writes an event as the string
`JSON.stringify` makes and reads a line as a string for `JSON.parse`, so no record's line decodes
to more than V8's longest string (frames.LONGEST_STRING, 536,870,888 UTF-16 code units): a
longer line is no record (frames.LongLine) and is judged without being held; a line cut between
pieces is held only up to frames.HOLD_BYTES, then read again, and only where it may be a record.

The bounds are made small here (the same code at a thousandth of the size): 2 GB files are the
benchmark's (`python -m bench.longline`), not the suite's."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay.judge.verify import verify_log
from replay.logs import frames
from replay.logs.logfile import SessionLog
from replay.reading import Mode, Reading
from replay.sources import bytesource
from replay.sources.bytesource import read_stream

from .sessionfiles import ev, header, line

KB = 1 << 10
PIECE, HOLD, LONGEST = 64 * KB, 256 * KB, 1 << 20
"""READ_CHUNK, HOLD_BYTES and LONGEST_STRING as the tests make them."""


@pytest.fixture(autouse=True)
def small_bounds(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for module in (bytesource, frames):
        monkeypatch.setattr(module, "READ_CHUNK", PIECE)
    monkeypatch.setattr(bytesource, "SPOOL_BYTES", 4 * PIECE)
    monkeypatch.setattr(frames, "HOLD_BYTES", HOLD)
    monkeypatch.setattr(frames, "LONGEST_STRING", LONGEST)
    yield


def _event_of(size: int, seq: int, char: str = "a") -> bytes:
    """An event line whose data is a string of `size` UTF-8 bytes of `char`."""
    count = size // len(char.encode())
    return json.dumps({"type": "turn/start", "seq": seq, "time": 0, "data": char * count}, ensure_ascii=False).encode()


def _head() -> bytes:
    return line(header())


def _read(how: str, data: bytes, tmp_path: Path, mode: Mode = Mode.STRICT) -> tuple[dict[str, object], int]:
    """(the report as JSON, the peak of Python's allocations while judging), read from a file
    (in pieces), from a spooled stream (mapped), or from bytes."""
    path = tmp_path / "session.jsonl"
    path.write_bytes(data)
    tracemalloc.start()
    try:
        if how == "file":
            log = SessionLog(str(path), Reading(mode=mode))
        else:
            with path.open("rb") as f:
                held = read_stream(f)
            log = SessionLog(str(path), Reading(mode=mode), held)
        report = verify_log(log).to_json()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return report, peak


HOWS = ["file", "stream"]


@pytest.mark.parametrize("how", HOWS)
def test_a_file_without_any_lf_past_the_bound_is_no_log_and_never_held(how: str, tmp_path: Path) -> None:
    data = b'{"type":"session","version":0,"id":"x","createdAt":0,"delegationDepth":0,"pad":"' + b"a" * (20 * LONGEST)
    report, peak = _read(how, data, tmp_path)
    assert report["verdict"] == "unreadable"
    assert "longer than any record can be" in report["formatFindings"][0]["message"]  # type: ignore[index]
    assert peak < 2 * HOLD + 4 * PIECE, peak


@pytest.mark.parametrize("how", HOWS)
def test_a_long_torn_tail_is_dropped_by_its_size(how: str, tmp_path: Path) -> None:
    data = _head() + line(ev(0)) + b'{"type":"turn/start","seq":1,"time":0,"data":"' + b"a" * (20 * LONGEST)
    report, peak = _read(how, data, tmp_path)
    assert report["verdict"] == "ok" and report["events"] == 1
    assert [f["code"] for f in report["formatFindings"]] == ["format.torn-tail"]  # type: ignore[index]
    assert peak < 2 * HOLD + 4 * PIECE, peak


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("turn_end_after", [False, True])
def test_a_long_complete_line_is_an_unparsable_record(how: str, turn_end_after: bool, tmp_path: Path) -> None:
    """No record: the first defect of the committed prefix, so a crash tail, or, a `turn/end`
    after it, a log the harness cannot load (session-log.md §7.2)."""
    after = line(ev(2, "turn/end")) if turn_end_after else b""
    data = _head() + line(ev(0)) + _event_of(20 * LONGEST, 1) + b"\n" + after
    report, peak = _read(how, data, tmp_path)
    finding = report["formatFindings"][0]  # type: ignore[index]
    assert (
        finding["code"] == "format.unparsable"
        and finding["line"] == 3
        and "longer than any record" in finding["message"]
    )
    assert report["verdict"] == ("corrupt" if turn_end_after else "ok") and report["events"] == 1
    assert peak < 2 * HOLD + 4 * PIECE, peak


@pytest.mark.parametrize("how", HOWS)
def test_a_long_header_line_is_no_log(how: str, tmp_path: Path) -> None:
    data = b'{"type":"session","pad":"' + b"a" * (3 * LONGEST) + b'"}\n' + line(ev(0))
    report, _ = _read(how, data, tmp_path)
    assert report["verdict"] == "unreadable"


@pytest.mark.parametrize("how", HOWS)
@pytest.mark.parametrize("char", ["a", "é", "€", "😀"])
def test_a_line_past_the_hold_but_within_the_longest_string_is_a_record(how: str, char: str, tmp_path: Path) -> None:
    """Read again once its end is known, judged as any record: in UTF-16 code units (a
    three-byte character is one, a four-byte one two), not in bytes."""
    size = {"a": LONGEST // 2, "é": LONGEST, "€": int(2.5 * LONGEST), "😀": int(1.8 * LONGEST)}[char]
    data = _head() + line(ev(0)) + _event_of(size, 1, char) + b"\n" + line(ev(2, "turn/end"))
    report, _ = _read(how, data, tmp_path)
    assert report["verdict"] == "ok" and report["events"] == 3, report["formatFindings"]
    assert report["formatFindings"] == []


@pytest.mark.parametrize("char", ["a", "€", "😀"])
def test_the_same_characters_past_the_longest_string_are_no_record(char: str, tmp_path: Path) -> None:
    units_per_byte = {"a": 1, "€": 1 / 3, "😀": 1 / 2}[char]
    size = int((LONGEST + 4096) / units_per_byte)
    data = _head() + line(ev(0)) + _event_of(size, 1, char) + b"\n"
    report, _ = _read("file", data, tmp_path)
    assert report["formatFindings"][0]["code"] == "format.unparsable"  # type: ignore[index]


@given(
    text=st.binary(max_size=300),
    bound=st.integers(0, 400),
    chunk=st.integers(1, 50),
)
def test_utf16_units_are_counted_as_javascript_decodes_them(text: bytes, bound: int, chunk: int) -> None:
    """Read in pieces of any size, the count is the decoded string's length in JavaScript
    (UTF-8, each invalid sequence one U+FFFD; an astral character two units)."""
    units = len(text.decode("utf-8", "replace").encode("utf-16-le", "surrogatepass")) // 2
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(frames, "READ_CHUNK", chunk)
        beyond = frames.utf16_beyond(lambda a, b: text[a:b], 0, len(text), bound)
    assert beyond == (units > bound)


def _definition(data: bytes, bound: int) -> list[object]:
    """The lines layer's answer from the whole bytes: the first line (or the only one), every
    complete line after it (a LongLine past the bound, a blank one as a run of one), the torn
    tail's size."""
    units = lambda text: len(text.decode("utf-8", "replace").encode("utf-16-le", "surrogatepass")) // 2  # noqa: E731
    first = data.find(b"\n")
    if first < 0:
        return [("only", "long" if units(data) > bound else data)]
    head = data[:first]
    out: list[object] = [("head", "long" if units(data[: first + 1]) > bound else head)]
    pos = first + 1
    while (cut := data.find(b"\n", pos)) >= 0:
        text = data[pos : cut + 1]
        out.append("long" if units(text) > bound else "blank" if not text.strip() else text)
        pos = cut + 1
    if pos < len(data):
        out.append(("tail", len(data) - pos))
    return out


def _split_by_layer(data: bytes, piece: int) -> list[object]:
    pieces = [data[k : k + piece] for k in range(0, len(data), piece)] or [b""]
    out: list[object] = []
    for part in frames.plain_lines(pieces, lambda a, b: data[a:b]):
        if isinstance(part, frames.Head):
            out.append(("head", "long" if isinstance(part.line, frames.LongLine) else part.line))
        elif isinstance(part, frames.OnlyLine):
            out.append(("only", "long" if isinstance(part.line, frames.LongLine) else part.line))
        elif isinstance(part, frames.Tail):
            out.append(("tail", part.size))
        elif isinstance(part.lines, frames.LongLine):
            out.append("long")
        elif isinstance(part.lines, frames.BlankLines):
            out += ["blank"] * len(part.lines)
        else:
            out += ["blank" if not line.strip() else line for line in part.lines]
    return out


@given(
    lines=st.lists(
        st.one_of(
            st.sampled_from([b"", b" ", b"{}", b'{"a":1}', "é€😀".encode()]),
            st.integers(1, 12).map(lambda n: b"x" * n * 1000),
            st.integers(1, 6).map(lambda n: "€".encode() * n * 1000),
        ),
        max_size=8,
    ),
    torn=st.booleans(),
    piece=st.integers(1, 9000),
)
def test_the_lines_layer_gives_what_the_whole_bytes_give_whatever_the_pieces(
    lines: list[bytes], torn: bool, piece: int
) -> None:
    """Held, let go past the hold, read again or found too long: split from pieces of any size,
    the lines are the whole bytes' lines (at bounds of 4,000 bytes held and 9,000 units)."""
    data = b"\n".join(lines) + (b"" if torn else b"\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(frames, "HOLD_BYTES", 4000)
        patch.setattr(frames, "LONGEST_STRING", 9000)
        patch.setattr(frames, "READ_CHUNK", 3000)
        assert _split_by_layer(data, piece) == _definition(data, 9000)
