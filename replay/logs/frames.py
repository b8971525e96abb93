"""The lines of a log (the reader's second layer): a plain file split into blocks of complete
lines, a Zstandard file into frames of lines (session-log.md §9), with the torn tail each may
end in. Splitting only: what the lines hold is read by the layers above."""

from __future__ import annotations

import mmap
from collections.abc import Iterator
from dataclasses import dataclass

import zstandard

from replay.logs.bytesource import CAN_RELEASE, READ_CHUNK, Data, release
from replay.logs.zstdframes import Frame, FrameError, decompress_frame, decompress_torn, scan_frames

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


@dataclass(frozen=True)
class Block:
    """Complete lines of a plain file (their LFs dropped), and the input bytes they took."""

    lines: list[bytes]
    size: int


@dataclass(frozen=True)
class Tail:
    """The bytes after the last LF of a plain file: a torn line, dropped."""

    size: int


def plain_blocks(raw: Data, start: int) -> Iterator[Block | Tail]:
    """The lines of `raw` from byte `start` (just past the header's LF) in blocks of about
    READ_CHUNK bytes, split in C, and then the torn tail, if any. A mapped file's pages are
    given back as each block is done with."""
    size = len(raw)
    pos = start
    released = 0
    while pos < size:
        end = raw.rfind(b"\n", pos, min(size, pos + READ_CHUNK))  # a block's unterminated tail starts the next
        if end < 0:
            end = raw.find(b"\n", pos)
            if end < 0:
                yield Tail(size - pos)
                return
        if pos == start and end == size - 1 and type(raw) is bytes:  # the whole file after the header
            lines = raw.split(b"\n")[1:-1]
        else:
            lines = raw[pos:end].split(b"\n")
        yield Block(lines, end + 1 - pos)
        pos = end + 1
        if isinstance(raw, mmap.mmap) and CAN_RELEASE:
            released = release(raw, released, pos)


@dataclass(frozen=True)
class ZstdProblem:
    """Why a Zstandard file yields no header: `unreadable` when nothing in it reads as a log."""

    message: str
    unreadable: bool


@dataclass(frozen=True)
class ZstdHead:
    """A Zstandard file's frames (the first holding the header) and the header line's bytes."""

    frames: list[Frame]
    header: bytes


def zstd_head(raw: Data) -> ZstdHead | ZstdProblem:
    """The frames of a Zstandard file and its header: the first frame, exactly one line."""
    try:
        frames = scan_frames(raw)
    except FrameError as err:
        if err.frames_before:
            return ZstdProblem(f"corrupt Zstandard container: {err}", False)
        # not even the header's frame: no header can be read, as from any other garbage
        return ZstdProblem(f"not a session log: corrupt Zstandard container ({err})", True)
    complete = [f for f in frames if f.complete]
    if not complete:
        return ZstdProblem("not a session log: an empty or header-less Zstandard file (no complete frame)", True)
    try:
        head = decompress_frame(raw[complete[0].start : complete[0].end])
    except zstandard.ZstdError as err:
        return ZstdProblem(f"not a session log: the first Zstandard frame does not decompress ({err})", True)
    if head.count(b"\n") != 1 or not head.endswith(b"\n"):
        return ZstdProblem("first frame is not exactly one header line", False)
    return ZstdHead(frames, head[:-1])


@dataclass(frozen=True)
class FrameText:
    """One append frame after the header's: its complete lines and what follows the last LF
    (`tail`), or why it does not decompress (`error`)."""

    frame: Frame
    lines: list[bytes]
    tail: bytes
    error: str | None = None


def frame_texts(raw: Data, frames: list[Frame]) -> Iterator[FrameText]:
    """The lines of each frame after the first; a torn final frame yields what it decompresses
    to, and a frame that does not decompress ends the file."""
    for frame in frames[1:]:
        chunk = raw[frame.start : frame.end]
        if frame.complete:
            try:
                text = decompress_frame(chunk)
            except zstandard.ZstdError as err:
                yield FrameText(frame, [], b"", str(err))
                return
        else:
            text = decompress_torn(chunk)
        lines = text.split(b"\n")
        tail = lines.pop()
        yield FrameText(frame, lines, tail)
