"""Zstandard frames read in batches (frames.FrameBatch) read as each frame read alone does: the
same entries, findings and report, whatever the framing (one record a frame as the harness often
writes, several, empty frames; sizes in the frame headers or not, so batches are decompressed in
one call or a frame at a time) and wherever a defect falls (a seq gap, a line that is no JSON, a
blank line, a frame whose record is torn, a frame whose checksum fails, a torn final frame), with
a turn/end after it in its own frame or a later one (only its own frame's may make the log
unloadable: session-log.md §9.3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from replay.judge.verify import verify_log
from replay.logs import frames, zstdlog
from replay.logs.logfile import SessionLog
from replay.reading import Mode, Reading

from .sessionfiles import ev, header, line, zstd_session

TYPES = ["turn/start", "step/start", "turn/end", "request/context"]


@st.composite
def framed_logs(draw: st.DrawFn) -> bytes:
    """A header frame, then the records' lines in frames of 0-4 lines, twisted."""
    count = draw(st.integers(1, 14))
    lines = [line(ev(seq, draw(st.sampled_from(TYPES)))) for seq in range(count)]
    for _ in range(draw(st.integers(0, 2))):
        at = draw(st.integers(0, count - 1))
        lines[at] = draw(st.sampled_from([b"{torn\n", b"\n", b"  \n", line(ev(at + 7)), line(ev(at, "turn/end"))]))
    texts: list[bytes] = []
    at = 0
    while at < len(lines):
        if draw(st.integers(0, 5)) == 5:  # now and then an empty frame
            texts.append(b"")
        size = draw(st.integers(1, 4))
        texts.append(b"".join(lines[at : at + size]))
        at += size
    if texts and draw(st.booleans()):  # a record torn inside a complete frame
        k = draw(st.integers(0, len(texts) - 1))
        texts[k] = texts[k][:-1]
    c = zstandard.ZstdCompressor(write_checksum=True)
    unsized = zstandard.ZstdCompressor(write_checksum=True, write_content_size=False)
    frames = [c.compress(t) if draw(st.integers(0, 3)) else unsized.compress(t) for t in texts]
    if frames and draw(st.integers(0, 4)) == 0:  # a frame whose checksum fails
        k = draw(st.integers(0, len(frames) - 1))
        frames[k] = frames[k][:-1] + bytes([frames[k][-1] ^ 1])
    data = c.compress(line(header())) + b"".join(frames)
    return data[: -draw(st.integers(1, 6))] if draw(st.booleans()) else data


def _read(data: bytes, mode: Mode, tmp: Path) -> tuple[object, list[tuple[int, int]]]:
    path = tmp / "session.jsonl.zstd"
    path.write_bytes(data)
    report = verify_log(SessionLog(str(path), Reading(mode=mode)))
    entries = [(e.line, e.event_index) for e in SessionLog(str(path), Reading(mode=mode)).entries()]
    return json.dumps(report.to_json(), sort_keys=True), entries


@pytest.mark.parametrize("chunk", [frames.BATCH_BYTES, 40])
@pytest.mark.parametrize("mode", [Mode.STRICT, Mode.LENIENT])
@given(data=framed_logs())
def test_frames_read_together_read_as_each_frame_alone(
    data: bytes, mode: Mode, chunk: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    tmp = tmp_path_factory.mktemp("z")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(frames, "BATCH_BYTES", chunk)  # small: batches end by size too
        together = _read(data, mode, tmp)
        patch.setattr(zstdlog, "frame_batches", frames.frame_texts)  # each frame alone
        alone = _read(data, mode, tmp)
    assert together == alone


def test_a_turn_end_after_a_defect_counts_only_in_the_defect_s_own_frame(tmp_path: Path) -> None:
    """The defect (a seq gap) shares a batch with the frames after it: a turn/end in a later
    frame of the batch leaves the log loadable up to the defect, one in its own frame does not."""
    gap, end = ev(5), ev(6, "turn/end")
    later = zstd_session([[ev(0)], [gap], [end]])
    own = zstd_session([[ev(0)], [gap, end]])
    messages = []
    for data, last_line in ((later, 3), (own, 4)):  # the defect's frame's last line
        report, _ = _read(data, Mode.LENIENT, tmp_path)
        found = json.loads(str(report))["formatFindings"]
        assert any(f["code"] == "format.zstd" and f["line"] == last_line for f in found)
        messages.append(" ".join(f["message"] for f in found))
    assert "cannot be loaded" not in messages[0] and "cannot be loaded" in messages[1]


@given(
    st.integers(0, 70_000),
    st.booleans(),
    st.booleans(),
    st.sampled_from([1, 3, 19]),
    st.binary(min_size=1, max_size=64),
)
def test_a_frame_s_size_is_read_from_its_header_as_zstd_reads_it(
    size: int, sized: bool, one_shot: bool, level: int, seed: bytes
) -> None:
    """scan_frames reads the content size each header gives (1, 2 + 256, 4 or 8 bytes, or none)
    as zstandard.frame_content_size does: -1 where it gives none (a streamed frame)."""
    from replay.sources.zstdframes import scan_frames

    text = (seed * (size // len(seed) + 1))[:size]
    c = zstandard.ZstdCompressor(write_checksum=True, write_content_size=sized, level=level)
    if one_shot:
        frame = c.compress(text)
    else:
        stream = c.compressobj()
        frame = stream.compress(text) + stream.flush()
    (found,) = scan_frames(frame)
    assert found.complete and found.end == len(frame)
    assert found.size == zstandard.frame_content_size(frame)


def _log(tmp: Path, events: int = 60) -> tuple[Path, bytes]:
    records = [ev(seq, TYPES[seq % len(TYPES)]) for seq in range(events)]
    data = zstd_session([records[k : k + 3] for k in range(0, events, 3)])
    path = tmp / "session.jsonl.zstd"
    path.write_bytes(data)
    return path, data


@pytest.mark.parametrize("disk_full", [False, True])
def test_a_large_zstd_log_is_read_from_a_mapped_copy_as_from_memory(
    disk_full: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past SPOOL_BYTES a Zstandard log is copied to a temporary file and mapped (its pages are
    file cache, not the reader's memory); where no copy can be made it is read into memory. The
    report is the one of the same bytes read from memory."""
    import mmap
    import tempfile

    from replay.judge.verify import verify_bytes, verify_path
    from replay.sources import bytesource

    path, data = _log(tmp_path)
    monkeypatch.setattr(bytesource, "READ_CHUNK", 64)
    monkeypatch.setattr(bytesource, "SPOOL_BYTES", 256)
    if disk_full:

        def full(*args: object, **kwargs: object) -> object:
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(tempfile, "TemporaryFile", full)  # (bytesource imports it when it spools)
    source = bytesource.load(str(path))
    assert isinstance(source, bytesource.FileSource)
    with source:
        held = source.spooled()
        assert isinstance(held, bytes if disk_full else mmap.mmap) and held[:] == data
    assert verify_path(str(path)).to_json() == verify_bytes(str(path), data).to_json()
    assert verify_path(str(path)).verdict == "ok"


def test_a_zstd_log_cut_short_while_it_is_copied_is_not_judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.judge.verify import verify_path
    from replay.sources import bytesource

    path, data = _log(tmp_path)
    monkeypatch.setattr(bytesource, "READ_CHUNK", 64)
    monkeypatch.setattr(bytesource, "SPOOL_BYTES", 256)
    from .test_hostile_logs import _shrinking

    opened = len(data) + 100  # the size it had when opened: it has fewer bytes now
    monkeypatch.setattr(bytesource, "load", lambda _path: _shrinking(str(path), opened))
    report = verify_path(str(path))
    assert report.verdict == "unreadable"
    assert "shrank" in report.to_json()["formatFindings"][0]["message"]
