"""The session-log reader: committed-prefix scan, chunk rows, zstd frames, hostile input."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from invariant.detect import CLUE_TYPES, NEEDLES
from invariant.jsvalue import MAX_SAFE_INTEGER
from invariant.logshapes import EVENT_SHAPES
from invariant.shapes import object_problems
from invariant.tools.judge import result_call_id, schedule_call
from replay.judge.telling import TellingEvents
from replay.logs.logfile import SessionLog, plain_envelope
from replay.reading import Reading
from replay.sources import bytesource, zstdframes
from replay.sources.discover import discover

from .conftest import ROOT
from .sessionfiles import ev, header, line, session_bytes, text_row, zstd_session


def read(data: bytes, mode: str = "strict") -> tuple[SessionLog, list[int]]:
    log = SessionLog("mem.jsonl", Reading.of(mode=mode), data)
    seqs = [e["seq"] for entry in log.entries() for e in entry.events()]
    return log, seqs


def codes(log: SessionLog) -> list[tuple[str, str]]:
    return [(f.code, f.severity) for f in log.findings]


# session-log.md §7.2, the test-derived table (records after the header).
SCAN_TABLE = [
    ("gap-without-turn-end-is-crash-tail", [ev(0), ev(2, "step/start")], [0], False),
    ("gap-before-turn-end-rejects", [ev(0), ev(2, "step/start"), ev(3, "turn/end")], [0], True),
    ("unparsable-before-turn-end-rejects", [b"{not json\n", ev(1, "turn/end")], [], True),
    ("unparsable-tail-tolerated", [ev(0), b"{not json\n"], [0], False),
    ("late-gap-after-turn-end-tolerated", [ev(0), ev(1, "turn/end"), ev(9, "step/start")], [0, 1], False),
    ("row-expands-to-three", [ev(0), text_row(1, ["a", "b", "c"]), ev(4, "turn/end")], [0, 1, 2, 3, 4], False),
    (
        "malformed-row-before-turn-end",
        [{**text_row(0, ["a", "b"]), "data": {**text_row(0, ["a", "b"])["data"], "dt": []}}, ev(2, "turn/end")],
        [],
        True,
    ),
    ("row-with-gap-dropped-whole", [ev(0), text_row(2, ["a", "b", "c"])], [0], False),
]


def _bytes(records: list[object]) -> bytes:
    return line(header()) + b"".join(r if isinstance(r, bytes) else line(r) for r in records)


@pytest.mark.parametrize(("name", "records", "kept", "rejected"), SCAN_TABLE, ids=[t[0] for t in SCAN_TABLE])
def test_committed_prefix_scan(name: str, records: list[object], kept: list[int], rejected: bool) -> None:
    log, seqs = read(_bytes(records))
    assert seqs == kept
    assert log.rejected is rejected
    assert log.event_count == len(kept)


def test_torn_final_line_is_dropped_with_a_warning() -> None:
    log, seqs = read(session_bytes([ev(0)]) + b"ignored torn tail")
    assert seqs == [0]
    assert ("format.torn-tail", "warning") in codes(log)
    assert not log.rejected


def test_blank_line_is_a_defect_in_strict_and_skipped_in_lenient() -> None:
    data = session_bytes([ev(0)]) + b"\n" + line(ev(1, "turn/end"))
    strict, _ = read(data, "strict")
    lenient, seqs = read(data, "lenient")
    assert strict.rejected and ("format.blank-line", "error") in codes(strict)
    assert not lenient.rejected and seqs == [0, 1]


def test_header_without_delegation_depth_is_strict_error_lenient_warning() -> None:
    head = header()
    del head["delegationDepth"]
    strict, _ = read(session_bytes([ev(0)], head), "strict")
    lenient, _ = read(session_bytes([ev(0)], head), "lenient")
    assert ("format.header", "error") in codes(strict)
    assert ("format.header", "warning") in codes(lenient) and not lenient.rejected


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (b'{"type":"session","version":0,"id":"x","createdAt":-0,"delegationDepth":0}', "createdAt"),
        (b'{"type":"session","version":0,"id":"x","createdAt":0,"delegationDepth":-0.0}', "delegationDepth"),
        (b'{"type":"session","version":2.5,"id":"x","createdAt":0,"delegationDepth":0}', "version"),
        (b'{"type":"session","version":-0,"id":"x","createdAt":0,"delegationDepth":0}', "version"),
        (b'{"type":"session","version":2,"id":"x","createdAt":0,"delegationDepth":0}', "isSeeded"),
        (
            b'{"type":"session","version":4,"id":"x","createdAt":0,"isSeeded":false,"delegationDepth":0,"seedLength":0}',
            "seedLength",
        ),
        (b'{"type":"session","version":0,"id":"x","createdAt":0,"delegationDepth":0,"sandboxMode":"x"}', "retired"),
        (b'{"type":"session","version":0,"id":7,"createdAt":0,"delegationDepth":0}', "id"),
        (b'{"type":"session","version":0,"id":"x","createdAt":0,"delegationDepth":0,"origin":"user"}', "origin"),
    ],
)
def test_strict_header_rules(raw: bytes, problem: str) -> None:
    log, _ = read(raw + b"\n")
    assert log.rejected
    assert any(problem in f.message for f in log.findings)


def test_header_version_float_zero_is_accepted() -> None:
    log, _ = read(b'{"type":"session","version":0.0,"id":"x","createdAt":1.0,"delegationDepth":0}\n')
    assert not log.rejected


def test_headerless_file_of_bare_events() -> None:
    log, seqs = read(line(ev(0)) + line(ev(1)))
    assert seqs == [0, 1] and log.head.headerless and log.head.header is None
    assert ("format.headerless", "warning") in codes(log)


@pytest.mark.parametrize(
    ("data", "expect_unreadable"),
    [
        (b"", True),
        (b"\x00\xff\xfe garbage \x81\n", True),
        (b"not json at all\n", True),
        (b"[1,2,3]\n", True),
        (b"\xef\xbb\xbf" + line(header()), True),  # a BOM makes the header unparsable
    ],
)
def test_not_a_session_log_is_unreadable(data: bytes, expect_unreadable: bool) -> None:
    log, seqs = read(data)
    assert log.unreadable is expect_unreadable and seqs == []


def test_invalid_utf8_inside_a_string_is_replaced_not_fatal() -> None:
    data = line(header()) + b'{"type":"note","seq":0,"time":0,"data":"caf\xe9"}\n'
    log, seqs = read(data)
    assert seqs == [0] and not log.rejected


def test_nan_is_not_json() -> None:
    data = line(header()) + b'{"type":"x","seq":0,"time":0,"data":NaN}\n' + line(ev(1, "turn/end"))
    log, _ = read(data)
    assert log.rejected and ("format.unparsable", "error") in codes(log)


def test_lone_surrogate_escape_is_accepted() -> None:
    data = line(header()) + b'{"type":"x","seq":0,"time":0,"data":"\\ud800"}\n'
    log, seqs = read(data)
    assert seqs == [0] and not log.rejected


def test_five_megabyte_line() -> None:
    big = ev(0, "assistant/chunk", "x" * (5 << 20))
    log, seqs = read(session_bytes([big, ev(1, "turn/end")]))
    assert seqs == [0, 1] and not log.rejected


def test_deep_nesting_is_read_as_json_parse_reads_it() -> None:
    """JSON.parse has no nesting limit (Node 20 reads a million levels): a deep record is an
    event, not an unparsable line (it was one before `deepjson`: a false corrupt verdict)."""
    deep = b'{"type":"x","seq":0,"time":0,"data":' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"
    log, seqs = read(line(header()) + deep + line(ev(1, "turn/end")))
    assert seqs == [0, 1] and not log.rejected and not log.findings


@pytest.mark.parametrize("type_value", [[], {}, ["text-chunks"], None, 7])
def test_odd_type_values_are_findings_not_crashes(type_value: object) -> None:
    log, seqs = read(session_bytes([{"type": type_value, "seq": 0, "time": 0, "data": {}}, ev(1, "turn/end")]))
    assert seqs == [0, 1]
    assert ("format.envelope", "error") in codes(log)


def test_envelope_problems_are_reported() -> None:
    log, seqs = read(session_bytes([{"type": "x", "seq": 0, "time": "soon", "data": {}, "extra": 1}]))
    assert seqs == [0]
    assert ("format.envelope", "error") in codes(log)


def test_chunk_row_expansion_matches_the_spec_example() -> None:
    row = {
        "type": "text-chunks",
        "seq0": 0,
        "time0": 1783352138307,
        "data": {
            "turn": 2,
            "step": 1,
            "index": 1,
            "dt": [1790166963, 239266980, 117223942],
            "texts": ["M", "ARM", "AL", "ADE"],
        },
    }
    log = SessionLog("m", data=session_bytes([row]))
    events = [e for entry in log.entries() for e in entry.events()]
    assert [(e["seq"], e["time"], e["data"]["chunk"]["text"]) for e in events] == [  # type: ignore[index]
        (0, 1783352138307, "M"),
        (1, 1785142305270, "ARM"),
        (2, 1785381572250, "AL"),
        (3, 1785498796192, "ADE"),
    ]
    assert events[0]["data"] == {"turn": 2, "step": 1, "chunk": {"type": "text-delta", "index": 1, "text": "M"}}


def test_a_pipe_is_read_whole_not_taken_for_an_empty_file(tmp_path: Path) -> None:
    """`schedlog verify <(zstdcat log.zst)` hands over a pipe, whose size reads as 0."""
    import threading

    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    data = session_bytes([ev(0), ev(1, "turn/end")])

    def write() -> None:
        with open(fifo, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=write)
    writer.start()
    log = SessionLog(str(fifo))
    seqs = [e.event_index for e in log.entries()]
    writer.join()
    assert seqs == [0, 1] and not log.unreadable and log.findings == []


def _read_fifo(tmp_path: Path, data: bytes) -> SessionLog:
    import threading

    fifo = tmp_path / "big.fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with contextlib.suppress(BrokenPipeError), open(fifo, "wb") as f:  # the reader may stop early
            f.write(data)

    writer = threading.Thread(target=write)
    writer.start()
    log = SessionLog(str(fifo))
    list(log.entries())
    writer.join()
    return log


def test_a_stream_beyond_max_stream_is_unreadable_not_held(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A stream has no size: it is read in pieces and refused past MAX_STREAM (an endless one,
    `/dev/zero`, would otherwise exhaust memory)."""
    monkeypatch.setattr(bytesource, "MAX_STREAM", 1000)
    monkeypatch.setattr(bytesource, "READ_CHUNK", 256)
    log = _read_fifo(tmp_path, session_bytes([ev(n) for n in range(40)]))
    assert log.unreadable
    assert [f.message for f in log.findings] == [
        "cannot read: the stream holds more than 1,000 bytes (save it to a file)"
    ]


def test_a_stream_memory_cannot_hold_is_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_memory(f: object) -> bytes:
        raise MemoryError

    monkeypatch.setattr(bytesource, "read_stream", no_memory)
    log = _read_fifo(tmp_path, b"")
    assert log.unreadable and log.findings[0].message == "cannot read: not enough memory to hold the stream"


# --- Zstandard ------------------------------------------------------------------------------


def test_zstd_frames_read_like_plain() -> None:
    data = zstd_session([[ev(0), text_row(1, ["a", "b"])], [ev(3, "turn/end")]])
    log, seqs = read(data)
    assert seqs == [0, 1, 2, 3] and not log.rejected and log.findings == []


def test_zstd_torn_final_frame_keeps_what_decompresses() -> None:
    data = zstd_session([[ev(0)], [ev(1), ev(2)]])
    log, seqs = read(data[:-2])  # cut inside the checksum of the last frame
    assert seqs == [0, 1, 2]
    assert ("format.torn-frame", "warning") in codes(log) and not log.rejected


def test_zstd_checksum_failure_in_a_complete_frame_rejects() -> None:
    data = bytearray(zstd_session([[ev(0)], [ev(1)]]))
    data[-1] ^= 0xFF
    log, _ = read(bytes(data))
    assert log.rejected and any(f.code == "format.zstd" for f in log.findings)


def test_zstd_frame_beyond_the_reference_s_buffer_is_refused_not_held(monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame holding more than a Node Buffer (4 GiB; here a smaller bound) is refused as one
    that does not decompress, without holding its plaintext: a crafted frame expands without bound."""
    import zstandard

    monkeypatch.setattr(zstdframes, "MAX_FRAME_TEXT", 1 << 20)
    c = zstandard.ZstdCompressor(write_checksum=True)
    padding = {"type": "x", "seq": 1, "time": 0, "data": {"pad": "0" * (64 << 20)}}  # 64 MB, 6 KB compressed
    data = c.compress(line(header())) + c.compress(line(ev(0))) + c.compress(line(padding))
    assert len(data) < 100_000
    log, seqs = read(data)
    assert seqs == [0] and log.rejected
    assert any(f.code == "format.zstd" and "exceeds 1048576 bytes" in f.message for f in log.findings)
    log, seqs = read(data[:-2])  # torn: what decompresses within the bound, here nothing
    assert seqs == [0] and ("format.torn-frame", "warning") in codes(log)


def test_zstd_first_frame_must_be_exactly_the_header() -> None:
    import zstandard

    c = zstandard.ZstdCompressor(write_checksum=True)
    log, _ = read(c.compress(line(header()) + line(ev(0))))
    assert log.rejected


def test_zstd_defect_inside_a_complete_frame_is_fatal() -> None:
    import zstandard

    c = zstandard.ZstdCompressor(write_checksum=True)
    data = c.compress(line(header())) + c.compress(line(ev(0)) + b"{torn")
    log, _ = read(data)
    assert log.rejected


def test_inputs_are_opened_read_only(tmp_path: Path) -> None:
    path = tmp_path / "ro.jsonl"
    path.write_bytes(session_bytes([ev(0)]))
    path.chmod(0o444)
    log = SessionLog(str(path))
    assert [e.event_index for e in log.entries()] == [0]
    assert path.read_bytes() == session_bytes([ev(0)])


@pytest.mark.parametrize(
    "path",
    sorted(p for p in (Path(__file__).resolve().parent.parent / "fixtures" / "sessions").rglob("*.jsonl*")),
    ids=lambda p: p.name,
)
def test_schedule_only_reading_sees_the_same_log(path: Path) -> None:
    full = SessionLog(str(path))
    every = list(full.entries())
    lean = SessionLog(str(path))
    schedule = list(lean.entries(schedule_only=True, select=TellingEvents()))

    headers = [e.event for e in every if e.event is not None and e.event.get("type") == "request/header"]

    calls = {call[0] for e in every if e.event is not None and (call := schedule_call(e.event)) is not None}

    def kept(event: dict[str, object]) -> bool:  # schedule changes, the events bearing profile clues, schedule tools
        raw = json.dumps(event).encode()
        if event.get("type") == "request/header" and event is not headers[0]:
            return False  # the first tool descriptions are read, not every request's
        return (
            event.get("type") == "schedule/change"
            or (event.get("type") in CLUE_TYPES and any(needle in raw for needle in NEEDLES))
            or schedule_call(event) is not None
            or result_call_id(event) in calls
        )

    expected = [e for e in every if e.event is not None and kept(e.event)]
    assert schedule == expected

    assert (lean.event_count, lean.findings, lean.rejected) == (full.event_count, full.findings, full.rejected)


PROGRESS_FILES = sorted(p for p in (ROOT / "fixtures" / "sessions").rglob("*.jsonl*"))


@pytest.mark.parametrize("path", PROGRESS_FILES, ids=lambda p: p.name)
@pytest.mark.parametrize("schedule_only", [False, True])
def test_progress_adds_up_to_the_file_size(path: Path, schedule_only: bool) -> None:
    """A progress bar's total is the file size, so a whole read must report exactly that:
    header frames, torn tails and refused records included."""
    heard: list[int] = []
    log = SessionLog(str(path), progress=heard.append)
    for _ in log.entries(schedule_only):
        pass
    assert all(n > 0 for n in heard)
    assert sum(heard) == path.stat().st_size


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\x00\xff garbage",
        b'{"type":"session"',
        session_bytes([ev(0, "turn/start", {})])[:-3],
        zstd_session([[ev(0, "turn/start", {})], [ev(1, "turn/end", {})]])[:-5],
    ],
    ids=["empty", "garbage", "no-lf", "torn-tail", "torn-frame"],
)
def test_progress_adds_up_on_bad_input(data: bytes) -> None:
    heard: list[int] = []
    for _ in SessionLog("<stdin>", data=data, progress=heard.append).entries():
        pass
    assert sum(heard) == len(data)


def test_a_directory_walk_skips_named_pipes(tmp_path: Path) -> None:
    """A pipe named like a log inside a walked directory would block the run waiting for a writer;
    the walk skips what exists but is not a regular file."""
    (tmp_path / "a.jsonl").write_bytes(session_bytes([ev(0)]))
    os.mkfifo(tmp_path / "b.jsonl")
    (tmp_path / "c.jsonl").symlink_to(tmp_path / "elsewhere.log")
    (tmp_path / "elsewhere.log").write_bytes(session_bytes([ev(0)]))
    heard: list[tuple[str, str]] = []
    found = list(discover([str(tmp_path)], skipped=lambda path, why: heard.append((path, why))))
    assert found == [str(tmp_path / "a.jsonl"), str(tmp_path / "c.jsonl")]
    assert heard == [(str(tmp_path / "b.jsonl"), "a named pipe, not a regular file: a walk opens only files")]
    assert list(discover([str(tmp_path / "b.jsonl")])) == [str(tmp_path / "b.jsonl")]  # named: read as asked


def test_a_walk_says_what_it_skipped(tmp_path: Path) -> None:
    """verify, replay, report and explain name each file a walk skipped on standard error."""
    from click.testing import CliRunner

    from replay.cli import main

    (tmp_path / "a.jsonl").write_bytes(session_bytes([ev(0)]))
    os.mkfifo(tmp_path / "b.jsonl")
    for args in (["verify"], ["replay", "--db", str(tmp_path / "x.duckdb")], ["explain"],
                 ["report", "-o", str(tmp_path / "r.html")]):  # fmt: skip
        result = CliRunner().invoke(main, [*args, str(tmp_path)])
        assert result.exit_code == 0, (args, result.output)
        assert f"schedlog: skipped {tmp_path / 'b.jsonl'}: a named pipe, not a regular file" in result.output, args


def test_a_file_reached_twice_is_one_input(tmp_path: Path) -> None:
    """Named twice, inside two walked folders, or through a link or a hard link: one session,
    where first reached (a fleet's totals must not count a log twice)."""
    (tmp_path / "sub").mkdir()
    a, b = tmp_path / "sub" / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(session_bytes([ev(0)]))
    b.write_bytes(session_bytes([ev(0)]))  # equal contents, another file: kept
    (tmp_path / "link.jsonl").symlink_to(a)
    os.link(a, tmp_path / "hard.jsonl")
    dangling = tmp_path / "gone.jsonl"
    dangling.symlink_to(tmp_path / "missing")
    named = [str(a), str(tmp_path), str(tmp_path / "sub"), str(a), "-", "-", str(dangling)]
    assert list(discover(named)) == [str(a), str(b), str(dangling), "-"]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "link", "hard", "rel", "gone"]), min_size=1, max_size=8))
def test_discover_yields_the_first_name_of_each_file(picks: list[str]) -> None:
    """Against pairwise `os.path.samefile`: a name is kept unless an earlier kept one is the same
    file; names of no file (a dangling link) are kept once per absolute name."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "a").write_bytes(b"{}")
        (root / "b").write_bytes(b"{}")
        (root / "link").symlink_to(root / "a")
        os.link(root / "a", root / "hard")
        (root / "gone").symlink_to(root / "missing")
        names = [str(root / "rel" / ".." / "b") if p == "rel" else str(root / p) for p in picks]
        (root / "rel").mkdir()
        kept: list[str] = []
        for name in names:
            if not any(_same(name, k) for k in kept):
                kept.append(name)
        assert list(discover(names)) == kept


def _same(x: str, y: str) -> bool:
    try:
        return os.path.samefile(x, y)
    except OSError:
        return os.path.abspath(x) == os.path.abspath(y)


# --- the exact path's plain-envelope shortcut ------------------------------------------------------

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=3))
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner, max_size=2),
    max_leaves=4,
)
_TIMES = st.one_of(st.integers(-(2**53), 2**53), st.sampled_from([2**53 - 1, -(2**53 - 1), 2**53, 1.5, 3.0]))


@settings(max_examples=400, deadline=None)
@given(
    event=st.fixed_dictionaries(
        {},
        optional={
            "type": st.one_of(st.text(max_size=3), _SCALARS),
            "seq": st.one_of(st.integers(-2, 2**54), _SCALARS),
            "time": st.one_of(_TIMES, _SCALARS),
            "data": _VALUES,
            "surfaceOp": st.one_of(st.just("append"), _VALUES),
            "sourceEventSeqs": _VALUES,
            "ignorable": _VALUES,
            "other": _VALUES,
        },
    )
)
def test_a_plain_envelope_passes_every_versions_shape(event: dict[str, object]) -> None:
    """The exact path skips the envelope's shape check for a plain envelope (most lines): that
    is sound only if every version's shape takes it, for the seq the scan committed it at."""
    seq = event.get("seq")
    if plain_envelope(event) and type(seq) is int and 0 <= seq <= MAX_SAFE_INTEGER:  # an event index
        for version, shape in EVENT_SHAPES.items():
            assert object_problems(event, shape) == [], version


# --- findings: located, and counted past the cap --------------------------------------------------


def test_thirty_defects_of_one_code_report_twenty_and_ten_more() -> None:
    """Past 20 findings of one code the rest are counted in one more finding, never dropped unsaid."""
    events = [{**ev(n), "extra": n} for n in range(30)]
    log = SessionLog("m.jsonl", data=session_bytes(events))
    list(log.entries())
    envelope = [f for f in log.findings if f.code == "format.envelope"]
    assert len(envelope) == 21
    assert [f.index for f in envelope[:20]] == list(range(20))
    assert {f.pointer for f in envelope[:20]} == {"/extra"}
    assert envelope[20].message == "10 more findings of this code" and envelope[20].severity == "error"


def test_findings_point_where_the_spec_locates_them() -> None:
    """An envelope finding points at its key in the event, a header finding at the header's."""
    log = SessionLog("m.jsonl", data=session_bytes([{**ev(0), "time": 1.5}], header(cwd="relative/path")))
    list(log.entries())
    located = {f.code: (f.index, f.pointer) for f in log.findings}
    assert located["format.envelope"] == (0, "/time")
    assert located["format.header.cwd"] == (None, "/cwd")


def test_a_walk_reads_zst_and_names_other_compressions(tmp_path: Path) -> None:
    """`.jsonl.zst` (the zstd tool's suffix) is read as `.jsonl.zstd` is; `.jsonl.gz` and the
    like are named as skipped, with how to read them (they were skipped silently)."""
    import gzip

    import zstandard

    data = session_bytes([ev(0)])
    (tmp_path / "a.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(data))
    (tmp_path / "b.jsonl.gz").write_bytes(gzip.compress(data))
    (tmp_path / "c.txt.gz").write_bytes(gzip.compress(b"x"))
    heard: list[tuple[str, str]] = []
    found = list(discover([str(tmp_path)], skipped=lambda path, why: heard.append((path, why))))
    assert found == [str(tmp_path / "a.jsonl.zst")]
    assert heard == [(str(tmp_path / "b.jsonl.gz"), "compressed with gzip, which schedlog does not read "
                      "(pipe it: zcat FILE | schedlog verify -)")]  # fmt: skip
