"""Zstandard session artifacts (session-log.md §9): frame boundaries without decompressing.

A `.jsonl.zstd` log is a concatenation of independent frames: frame 1 holds the header line,
every later frame one append batch. The reference finds frame boundaries structurally; a
frame cut short by a crash is the torn final frame, whose start is the repair point.
"""

from __future__ import annotations

import mmap
from dataclasses import dataclass

import zstandard

Buffer = bytes | memoryview | mmap.mmap

MAGIC = b"\x28\xb5\x2f\xfd"
_FCS_BYTES = {0: 0, 1: 2, 2: 4, 3: 8}
_DICT_BYTES = {0: 0, 1: 1, 2: 2, 3: 4}


class FrameError(ValueError):
    """The container is corrupt where it is complete (bad magic, reserved bits, bad block)."""

    frames_before = 0
    """How many whole frames come before the corrupt one (0: not even the header's frame)."""
    first: Frame | None = None
    """The first frame, where it is whole (the header's, to be read before the container is judged)."""


@dataclass(frozen=True, slots=True)
class Frame:
    start: int
    end: int
    complete: bool
    size: int = -1
    """The plaintext size its header gives (the frame content size; zstd checks it on
    decompressing), -1 when it gives none."""


def scan_frames(data: Buffer) -> list[Frame]:
    """Split `data` into frames; the last one may be torn (incomplete). Raise FrameError."""
    frames: list[Frame] = []
    pos = 0
    size = len(data)
    while pos < size:
        start = pos
        try:
            found = _frame_end(data, pos, size)
        except FrameError as err:
            err.frames_before = len(frames)
            err.first = frames[0] if frames else None
            raise
        if found is None:
            frames.append(Frame(start, size, False))
            break
        pos, content = found
        frames.append(Frame(start, pos, True, content))
    return frames


def _frame_end(data: Buffer, pos: int, size: int) -> tuple[int, int] | None:
    """(where the frame at `pos` ends, its content size or -1), None when it is torn."""
    if size - pos < 4:
        return None
    if bytes(data[pos : pos + 4]) != MAGIC:
        raise FrameError(f"invalid frame magic at byte {pos}")
    pos += 4
    if pos >= size:
        return None
    descriptor = data[pos]
    pos += 1
    if descriptor & 0b0001_1000:
        raise FrameError(f"reserved frame-header bits set at byte {pos - 1}")
    fcs_flag = descriptor >> 6
    single_segment = (descriptor >> 5) & 1
    checksum = (descriptor >> 2) & 1
    dict_flag = descriptor & 0b11
    header = (0 if single_segment else 1) + _DICT_BYTES[dict_flag]
    fcs = (1 if single_segment else 0) if fcs_flag == 0 else _FCS_BYTES[fcs_flag]
    content = int.from_bytes(data[pos + header : pos + header + fcs], "little") + (256 if fcs == 2 else 0)
    pos += header + fcs
    while True:
        if pos + 3 > size:
            return None
        block = data[pos] | (data[pos + 1] << 8) | (data[pos + 2] << 16)
        pos += 3
        last = block & 1
        block_type = (block >> 1) & 0b11
        block_size = block >> 3
        if block_type == 3:
            raise FrameError(f"reserved block type at byte {pos - 3}")
        pos += 1 if block_type == 1 else block_size
        if pos > size:
            return None
        if last:
            break
    if checksum:
        pos += 4
        if pos > size:
            return None
    return pos, content if fcs else -1


MAX_FRAME_TEXT = 1 << 32
"""The most plaintext one frame may hold: the reference decompresses a frame into one Node
Buffer, which holds at most 4 GiB (`buffer.constants.MAX_LENGTH`, Node 20). A larger frame (a
crafted one expands without bound) is refused as one that does not decompress."""
_FEED = 4096
"""Compressed bytes fed at a time: one call can then yield at most ~128 MB, so memory stays
bounded by the limit whatever the frame expands to."""


class FrameTooLarge(zstandard.ZstdError):
    """The frame holds more plaintext than MAX_FRAME_TEXT."""


def _decompress(
    frame: Buffer, limit: int, context: zstandard.ZstdDecompressor | None, across: bool = False
) -> tuple[bytes, bool]:
    """(the plaintext, whether the frame ended); raise zstandard.ZstdError. With `across`, of
    consecutive frames (`eof` then tells nothing)."""
    # one frame unless `across`, said explicitly: zstandard means to read across frames by
    # default in a later release (its 0.22 notes), and a frame's end is told by `eof`
    obj = (context or zstandard.ZstdDecompressor()).decompressobj(read_across_frames=across)
    data = frame if type(frame) is bytes else bytes(frame)
    if len(data) <= _FEED:  # most frames: one call, as the first of the loop below
        text = obj.decompress(data)
        if len(text) > limit:
            raise _too_large(limit)
        return text, obj.eof
    pieces: list[bytes] = []
    total = 0
    for start in range(0, len(data), _FEED):
        piece = obj.decompress(data[start : start + _FEED])
        total += len(piece)
        if total > limit:
            raise _too_large(limit)
        pieces.append(piece)
    return b"".join(pieces), obj.eof


def _too_large(limit: int) -> FrameTooLarge:
    return FrameTooLarge(f"its plaintext exceeds {limit} bytes (the most the reference reads in a frame)")


def decompress_frame(
    frame: Buffer, limit: int = MAX_FRAME_TEXT, context: zstandard.ZstdDecompressor | None = None
) -> bytes:
    """Plaintext of one complete frame, checksum verified; raise zstandard.ZstdError
    (FrameTooLarge past `limit` bytes). A reader of many frames passes one `context` for them
    all (a decompressor is reset for each frame it starts): making one costs more than
    decompressing a frame of a few records."""
    text, ended = _decompress(frame, limit, context)
    if not ended:
        raise zstandard.ZstdError("frame ended early")
    return text


def decompress_frames(frames: Buffer, limit: int, context: zstandard.ZstdDecompressor) -> bytes:
    """Plaintext of consecutive complete frames, each checksum (and each size its header gives)
    verified by zstd; raise zstandard.ZstdError (FrameTooLarge past `limit` bytes, fed in
    pieces as one frame is, so memory stays bounded whatever they expand to)."""
    return _decompress(frames, limit, context, across=True)[0]


def decompress_torn(
    frame: Buffer, limit: int = MAX_FRAME_TEXT, context: zstandard.ZstdDecompressor | None = None
) -> bytes:
    """As much plaintext as a torn frame yields (no checksum); empty when none; FrameTooLarge
    past `limit` bytes."""
    try:
        return _decompress(frame, limit, context)[0]
    except FrameTooLarge:
        raise
    except zstandard.ZstdError:
        return b""
