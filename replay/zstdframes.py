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


@dataclass(frozen=True, slots=True)
class Frame:
    start: int
    end: int
    complete: bool


def scan_frames(data: Buffer) -> list[Frame]:
    """Split `data` into frames; the last one may be torn (incomplete). Raise FrameError."""
    frames: list[Frame] = []
    pos = 0
    size = len(data)
    while pos < size:
        start = pos
        end = _frame_end(data, pos, size)
        if end is None:
            frames.append(Frame(start, size, False))
            break
        frames.append(Frame(start, end, True))
        pos = end
    return frames


def _frame_end(data: Buffer, pos: int, size: int) -> int | None:
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
    header += (1 if single_segment else 0) if fcs_flag == 0 else _FCS_BYTES[fcs_flag]
    pos += header
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
    return pos


def decompress_frame(frame: Buffer) -> bytes:
    """Plaintext of one complete frame, checksum verified; raise zstandard.ZstdError."""
    obj = zstandard.ZstdDecompressor().decompressobj()
    out = obj.decompress(bytes(frame))
    if not obj.eof:
        raise zstandard.ZstdError("frame ended early")
    return out


def decompress_torn(frame: Buffer) -> bytes:
    """As much plaintext as a torn frame yields (no checksum); empty when none."""
    try:
        return zstandard.ZstdDecompressor().decompressobj().decompress(bytes(frame))
    except zstandard.ZstdError:
        return b""
