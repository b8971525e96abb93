"""The lines of a log (the reader's second layer): a plain file split into blocks of complete
lines, a Zstandard file into frames of lines (session-log.md §9), with the torn tail each may
end in. Splitting only: what the lines hold is read by the layers above."""

from __future__ import annotations

import codecs
import io
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from itertools import accumulate, repeat

import zstandard

from replay.sources import zstdframes
from replay.sources.bytesource import READ_CHUNK, Data, slicer
from replay.sources.zstdframes import (
    MAGIC,
    Frame,
    FrameError,
    FrameTooLarge,
    decompress_frame,
    decompress_frames,
    decompress_torn,
    scan_frames,
)

ZSTD_MAGIC = MAGIC
"""The first bytes of a Zstandard file."""


def _block_end(raw: Data, pos: int, end: int) -> int:
    """The LF that ends the block of lines starting at `pos`: the last one within READ_CHUNK
    bytes, else the first after (one long line); -1 when there is none before `end`."""
    cut = raw.rfind(b"\n", pos, min(end, pos + READ_CHUNK))
    return cut if cut >= 0 else raw.find(b"\n", pos, end)


LONGEST_STRING = (1 << 29) - 24
"""V8's longest string, in UTF-16 code units (`String::kMaxLength` on 64-bit builds, Node 20 to
24): the harness writes an event as the string `JSON.stringify` makes, and reads a line as a
string for `JSON.parse`, so no record's line decodes to more."""
HOLD_BYTES = 64 << 20
"""A line cut between pieces is held up to this size while its pieces arrive; a longer one is
read again once its end is known, and only when it is no LongLine (a 2 GB line is never held)."""

Reread = Callable[[int, int], bytes]
"""The bytes from `start` to `end` of what the lines are split from (a file read again, a slice)."""


@dataclass(frozen=True)
class LongLine:
    """A line (its LF included, if any) that decodes to more than LONGEST_STRING UTF-16 code
    units: longer than any record can be, so it is no record, and it is never held."""

    size: int

    def __len__(self) -> int:
        return 1


@dataclass(frozen=True)
class Head:
    """The first line of a plain file (its LF dropped)."""

    line: bytes | LongLine


@dataclass(frozen=True)
class OnlyLine:
    """A plain file without any LF: its one unterminated line."""

    line: bytes | LongLine


@dataclass(frozen=True)
class BlankLines:
    """A run of consecutive blank lines (empty, or ASCII whitespace only: what `bytes.strip`
    empties), each ending in its LF, told by their count and never split into lines: a flood
    of them costs a scan, not an object a line. Asked for (`blanks_apart`, lenient mode, which
    skips them), every blank line comes so, and lists of lines hold none; else only a blank
    line joined from pieces does (strict mode finds blank lines as the records they are not)."""

    count: int

    def __len__(self) -> int:
        return self.count


Lines = list[bytes] | BlankLines | LongLine
"""Complete lines, each with its LF: non-blank ones listed, a run of blank ones counted, or one
longer than any record can be."""


@dataclass(frozen=True)
class Block:
    """Complete lines of a plain file, each with its LF, and the input bytes they took."""

    lines: Lines
    size: int
    spans: tuple[tuple[int, int], ...] = ()
    """A store's session read packed (`packed_blocks`): its lines that are packed rows (their
    indexes in `lines`) and the events each stands for, each a line of the session's logical
    log, which the lines after it are numbered by (`Records.run`)."""

    @property
    def stands_for(self) -> int:
        """The lines of the log the block's lines are: one each, a packed row its members."""
        return len(self.lines) + sum(members - 1 for _, members in self.spans)


@dataclass(frozen=True)
class LineShifts:
    """How the numbers of a run's lines shift past the packed rows among them that stand for a
    line each of their members (`Block.spans`): line `before + k + 1` of the run is numbered
    that plus the members, less one, of each packed row before it."""

    before: int
    rows: list[int]
    """The packed rows' indexes in the run."""
    added: list[int]
    """The lines added before each next line: 0, then after each packed row."""

    @staticmethod
    def of(before: int, spans: tuple[tuple[int, int], ...]) -> LineShifts | None:
        if not spans:
            return None
        return LineShifts(before, [k for k, _ in spans], list(accumulate((m - 1 for _, m in spans), initial=0)))

    def at(self, line: int) -> int:
        return line + self.added[bisect_left(self.rows, line - self.before - 1)]


@dataclass(frozen=True)
class Tail:
    """The bytes after the last LF of a plain file: a torn line, dropped."""

    size: int


Parts = Iterator[Head | OnlyLine | Block | Tail]
"""A plain log's lines as the plain-lines stage takes them (`plain_lines`, `packed_blocks`)."""


def utf16_beyond(reread: Reread, start: int, end: int, bound: int) -> bool:
    """Whether the bytes `start` to `end`, decoded as the harness decodes them (UTF-8, each
    invalid sequence one U+FFFD), make more than `bound` UTF-16 code units: read READ_CHUNK at a
    time, never held whole, and not past the point where they do. A byte makes at most one
    unit, so a stretch of at most `bound` bytes never does."""
    if end - start <= bound:
        return False
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    units = 0
    for at in range(start, end, READ_CHUNK):
        text = decoder.decode(reread(at, min(end, at + READ_CHUNK)), at + READ_CHUNK >= end)
        units += len(text) if text.isascii() else len(text.encode("utf-16-le", "surrogatepass")) // 2
        if units > bound:
            return True
    return False


def _line(held: list[Data | memoryview], reread: Reread, start: int, end: int) -> bytes | LongLine:
    """The line from `start` to `end`: joined from the pieces `held` (all of it, when it is no
    longer than HOLD_BYTES), else read again, unless it is a LongLine."""
    if end - start <= HOLD_BYTES:
        return b"".join(held)
    return LongLine(end - start) if utf16_beyond(reread, start, end, LONGEST_STRING) else reread(start, end)


def plain_lines(pieces: Iterable[Data], reread: Reread, blanks_apart: bool = False, after: int | None = None) -> Parts:
    """The lines of a plain file given as consecutive pieces of its bytes (the whole file as one,
    or the reads of a FileSource), `reread` giving any stretch of them again: its first line,
    then the others in blocks of about READ_CHUNK bytes, split in C, then the torn tail, if any.
    A line cut between pieces is joined once its LF arrives (a long one from all its pieces at
    once, never piece by piece); past HOLD_BYTES its pieces are let go, and it is read again
    where it may be a record (a LongLine is not). With `after`, the pieces are the file's bytes
    from that offset on, a line's start past its first line (a read resumed there): no Head."""
    held: list[Data | memoryview] = []  # the bytes after the last LF seen, in pieces, while they are few
    start = offset = after or 0  # where that line starts; where the piece starts
    headed = after is not None
    for piece in pieces:
        first = piece.find(b"\n")
        if first < 0:
            offset += len(piece)
            if offset - start <= HOLD_BYTES:
                held.append(memoryview(piece))
            else:
                held.clear()  # read again once the line ends, if it may be a record
            continue
        line = _line([*held, memoryview(piece)[: first + 1]], reread, start, offset + first + 1)
        held.clear()
        if headed:
            yield Block(BlankLines(1) if isinstance(line, bytes) and not line.strip() else _listed(line), len(line))
        else:
            yield Head(line if isinstance(line, LongLine) else line[:-1])
            headed = True
        end = piece.rfind(b"\n") + 1
        yield from _blocks(piece, first + 1, end, blanks_apart)
        start = offset + end
        offset += len(piece)
        if end < len(piece) and offset - start <= HOLD_BYTES:
            held.append(memoryview(piece)[end:])
    if not headed:
        yield OnlyLine(_line(held, reread, start, offset))
    elif offset > start:
        yield Tail(offset - start)


def packed_blocks(raw: bytes, spans: tuple[tuple[int, int], ...]) -> Parts:
    """The lines of a store's session read packed (replay.sources.sqlitestore: every line
    complete, none blank), as `plain_lines` gives a log's: its first line, then its blocks,
    each with the packed rows among its lines (`spans`: each one's line, 0 being the first, and
    its members), so that each line is numbered as in the session's logical log, where each
    member is a line of its own."""
    first = raw.find(b"\n")
    if first < 0:
        yield OnlyLine(raw)
        return
    yield Head(raw[:first])
    rows = iter(spans)
    row = next(rows, None)
    start = 1  # (the line the block starts at)
    for block in _blocks(raw, first + 1, len(raw), False):
        end, held = start + len(block.lines), []
        while row is not None and row[0] < end:
            held.append((row[0] - start, row[1]))
            row = next(rows, None)
        yield replace(block, spans=tuple(held)) if held else block
        start = end


def _listed(line: bytes | LongLine) -> Lines:
    return line if isinstance(line, LongLine) else [line]


def _blocks(raw: Data, start: int, end: int, blanks_apart: bool) -> Iterator[Block]:
    """The complete lines of `raw[start:end]` (`end` just past an LF) in blocks of about
    READ_CHUNK bytes (`_line_blocks`)."""
    pos = start
    for lines, cut in _line_blocks(raw, start, end, blanks_apart):
        yield Block(lines, cut - pos)
        pos = cut


_BLANK_START = re.compile(rb"\n[\n \t\r\x0b\x0c]")
"""A line's LF, then what a blank line starts with (a log's records start with `{`): found in
one scan at memchr's pace (the regex engine's search for its literal first byte)."""
_BLANK_FIRST = frozenset(b" \t\r\x0b\x0c\n")
"""What a blank line at a block's start starts with."""
_BLANK_RUN = re.compile(rb"^[ \t\r\x0b\x0c\n]*\n", re.MULTILINE)
"""A run of blank lines from a line's start, to the LF of its last (one repeat of a class, in C)."""


def _line_blocks(raw: Data, start: int, end: int, blanks_apart: bool = False) -> Iterator[tuple[Lines, int]]:
    """The complete lines of `raw[start:end]` (`end` just past an LF, `start` a line's start),
    each with its LF, in blocks of about READ_CHUNK bytes, each with where the next starts; with
    `blanks_apart`, a run of blank lines as BlankLines, between blocks of the others (found by
    one more scan, which lenient mode pays: 5-9% of its verify's instructions). The LFs
    are found by memchr (io.BytesIO reads lines so; `bytes.split` compares byte by byte, at a
    tenth of a verify's cost), and a bytes object is read in place, not copied block by block."""
    shared = io.BytesIO(raw) if type(raw) is bytes else None  # shares the bytes' buffer
    pos = start
    while pos < end:
        cut = _block_end(raw, pos, end) + 1
        if cut - pos > HOLD_BYTES:  # one line (a block ends at its last LF within READ_CHUNK): maybe a LongLine
            yield _listed(_line([], slicer(raw), pos, cut)), cut
        elif blanks_apart and (raw[pos] in _BLANK_FIRST or _BLANK_START.search(raw, pos, cut) is not None):
            for blank in _BLANK_RUN.finditer(raw, pos, cut):
                if blank.start() > pos:
                    yield _split(raw, shared, pos, blank.start()), blank.start()
                yield BlankLines(blank.group().count(b"\n")), blank.end()
                pos = blank.end()
            if pos < cut:
                yield _split(raw, shared, pos, cut), cut
        else:
            yield _split(raw, shared, pos, cut), cut
        pos = cut


def _split(raw: Data, shared: io.BytesIO | None, pos: int, cut: int) -> list[bytes]:
    """The lines of `raw[pos:cut]` (`cut` just past an LF)."""
    if shared is None:
        return io.BytesIO(raw[pos:cut]).readlines()
    shared.seek(pos)
    return shared.readlines(cut - pos)  # stops at the line that reaches `cut`


ZSTD_RATIO = 64
ZSTD_FLOOR = 64 << 20
"""schedlog reads at most max(ZSTD_FLOOR, ZSTD_RATIO x the file's size) bytes of plaintext from a
Zstandard log: JSONL logs compress about 5-15x, so a real log stays far below, and a crafted
one (a few hundred bytes can expand to gigabytes) is refused at the bound, its memory and CPU
with it. The reference reads up to 4 GiB a frame; a log past the bound is not judged."""


def zstd_budget(size: int) -> int:
    """The most plaintext read from a Zstandard file of `size` bytes (ZSTD_RATIO, ZSTD_FLOOR)."""
    return max(ZSTD_FLOOR, ZSTD_RATIO * size)


def _bound_message(budget: int, size: int) -> str:
    return (
        f"its plaintext exceeds {budget:,} bytes, schedlog's bound for a {size:,}-byte Zstandard file "
        f"(max({ZSTD_FLOOR >> 20} MiB, {ZSTD_RATIO}x the file)): not read further"
    )


@dataclass(frozen=True)
class ZstdProblem:
    """Why a Zstandard file yields no header: `unreadable` when nothing in it reads as a log;
    `unframed` when its first frame is not exactly the header line (read it as one plaintext:
    `whole_text`)."""

    message: str
    unreadable: bool
    unframed: bool = False


@dataclass(frozen=True)
class ZstdHead:
    """A Zstandard file's frames (the first holding the header) and the header line's bytes."""

    frames: list[Frame]
    header: bytes
    budget: int
    """The plaintext left to read (`zstd_budget` less the header's)."""


def zstd_head(raw: Data) -> ZstdHead | ZstdProblem:
    """The frames of a Zstandard file and its header: the first frame, exactly one line."""
    try:
        frames = scan_frames(raw)
    except FrameError as err:
        unread = "" if err.first is None else _no_header(raw, err.first)
        if unread is None:
            return ZstdProblem(f"corrupt Zstandard container: {err}", False)
        # not even the header's frame (or one that holds no header): no header can be read, as from any other garbage
        return ZstdProblem(f"not a session log: corrupt Zstandard container ({err}{unread})", True)
    complete = [f for f in frames if f.complete]
    if not complete:
        return ZstdProblem("not a session log: an empty or header-less Zstandard file (no complete frame)", True)
    budget = zstd_budget(len(raw))
    try:
        head = decompress_frame(raw[complete[0].start : complete[0].end], budget)
    except FrameTooLarge:
        return ZstdProblem(f"not a session log: the first Zstandard frame {_bound_message(budget, len(raw))}", True)
    except zstandard.ZstdError as err:
        return ZstdProblem(f"not a session log: the first Zstandard frame does not decompress ({err})", True)
    if head.count(b"\n") != 1 or not head.endswith(b"\n"):
        return ZstdProblem("first frame is not exactly one header line", False, unframed=True)
    return ZstdHead(frames, head[:-1], budget - len(head))


def _no_header(raw: Data, first: Frame) -> str | None:
    """Why the whole first frame of a container corrupt past it holds no header line (None: it
    does, and the file is a session log whose container is corrupt)."""
    try:
        head = decompress_frame(raw[first.start : first.end], zstd_budget(len(raw)))
    except (FrameTooLarge, zstandard.ZstdError) as err:
        return f"; its first frame does not decompress: {err}"
    if head.count(b"\n") != 1 or not head.endswith(b"\n"):
        return "; its first frame is not a header line"
    return None


def frames_after(raw: Data, offset: int, plaintext: int) -> ZstdHead | None:
    """The frames of a Zstandard log from `offset` on (where a read it resumes stopped, after a
    complete frame), as `zstd_head` gives a whole file's, `plaintext` bytes of it read before
    (the plaintext bound is the whole file's); None where they do not scan (a cold read says
    why)."""
    try:
        frames = scan_frames(memoryview(raw)[offset:])
    except FrameError:
        return None
    shifted = [Frame(offset + f.start, offset + f.end, f.complete, f.size) for f in frames]
    return ZstdHead([Frame(0, offset, True), *shifted], b"", zstd_budget(len(raw)) - plaintext)


@dataclass(frozen=True)
class WholeText:
    """A Zstandard file read as one plaintext, its frames' in order as far as they decompress
    (a torn final one as far as it does), and why it ends early: `error`, a frame that does not
    decompress; `bound`, schedlog's plaintext bound reached."""

    text: bytes
    error: str | None = None
    bound: bool = False


def whole_text(raw: Data) -> WholeText:
    """The plaintext of a Zstandard file whose frames `zstd_head` found but which is not framed
    as the harness frames a log (one written whole by a general tool), within `zstd_budget`."""
    budget = zstd_budget(len(raw))
    context = zstandard.ZstdDecompressor()
    parts: list[bytes] = []
    for frame in scan_frames(raw):
        chunk = raw[frame.start : frame.end]
        try:
            text = (
                decompress_frame(chunk, budget, context) if frame.complete else decompress_torn(chunk, budget, context)
            )
        except FrameTooLarge:
            return WholeText(b"".join(parts), _bound_message(zstd_budget(len(raw)), len(raw)), bound=True)
        except zstandard.ZstdError as err:
            return WholeText(b"".join(parts), f"frame at byte {frame.start} does not decompress: {err}")
        budget -= len(text)
        parts.append(text)
    return WholeText(b"".join(parts))


@dataclass(frozen=True)
class FrameText:
    """One append frame after the header's: its plaintext, or why it has none (`error`;
    `bound`: schedlog's plaintext bound was reached)."""

    frame: Frame
    text: bytes
    error: str | None = None
    bound: bool = False

    @property
    def tail(self) -> bytes:
        """What follows the last LF: a torn line."""
        return self.text[self.text.rfind(b"\n") + 1 :]

    def blocks(self, blanks_apart: bool = False) -> Iterator[Lines]:
        """The complete lines, each with its LF, in blocks of about READ_CHUNK bytes
        (`_line_blocks`), so that a frame of many short lines is never held as one list."""
        for lines, _ in _line_blocks(self.text, 0, self.text.rfind(b"\n") + 1, blanks_apart):
            yield lines


BATCH_BYTES = 1 << 20
"""The plaintext a batch of frames holds at most (but for one frame larger alone): runs of the
fast path cost little set-up at that size, and a batch, its pieces and its lines stay small
beside the compressed file the reader holds."""


@dataclass(frozen=True)
class FrameBatch:
    """Consecutive complete frames whose plaintexts each end a record (or are empty), read as
    one text: the harness writes a frame an append, often of one record, and a run of the fast
    path a frame cost its set-up a record. Where each frame's plaintext ends is kept (`ends`),
    so a defect is still the defect of its own frame (`line_ends`)."""

    frames: list[Frame]
    text: bytes
    ends: list[int]
    """The offset in `text` where each frame's plaintext ends."""

    def blocks(self, blanks_apart: bool = False) -> Iterator[Lines]:
        """The complete lines of all the frames, in blocks of about READ_CHUNK bytes (one, as a
        batch holds at most BATCH_BYTES, but for runs of blank lines)."""
        for lines, _ in _line_blocks(self.text, 0, len(self.text), blanks_apart):
            yield lines

    def line_ends(self, before: int) -> list[int]:
        """The number of each frame's last line, the first frame's first being `before + 1`."""
        counts = map(self.text.count, repeat(b"\n"), [0, *self.ends[:-1]], self.ends)
        return list(accumulate(counts, initial=before))[1:]


def _joined(texts: list[FrameText]) -> FrameBatch:
    """Frames decompressed one at a time, as a batch."""
    plain = [t.text for t in texts]
    return FrameBatch([t.frame for t in texts], b"".join(plain), list(accumulate(map(len, plain))))


def frame_batches(raw: Data, head: ZstdHead) -> Iterator[FrameText | FrameBatch]:
    """`frame_texts`, with consecutive complete frames that end a record (no torn line, no
    error) in batches of about BATCH_BYTES of plaintext, decompressed together where
    their headers give their sizes; any other frame alone."""
    batch: list[FrameText] = []
    size = 0
    for text in frame_texts(raw, head, together=True):
        if isinstance(text, FrameBatch) or not (
            text.frame.complete and text.error is None and (not text.text or text.text.endswith(b"\n"))
        ):
            if batch:
                yield _joined(batch)
                batch, size = [], 0
            yield text
            continue
        batch.append(text)
        size += len(text.text)
        if size >= BATCH_BYTES:
            yield _joined(batch)
            batch, size = [], 0
    if batch:
        yield _joined(batch)


def _sized_run(frames: list[Frame], start: int, room: int) -> tuple[int, int]:
    """(where the run of complete frames from `start` whose headers give their sizes ends, the
    sum of those sizes), the sum within `room`."""
    end, total = start, 0
    while end < len(frames) and frames[end].complete and 0 <= frames[end].size <= room - total:
        total += frames[end].size
        end += 1
    return end, total


def _together(raw: Data, frames: list[Frame], total: int, context: zstandard.ZstdDecompressor) -> FrameBatch | None:
    """Complete frames decompressed in one call (each checksum, and each size its header gives,
    checked by zstd) when each plaintext ends a record (or is empty); None for anything else,
    which is then read a frame at a time and told frame by frame. Given up past `total` bytes
    (`decompress_frames`): memory stays bounded whatever they expand to."""
    try:
        text = decompress_frames(raw[frames[0].start : frames[-1].end], total, context)
    except zstandard.ZstdError:  # FrameTooLarge too: more than their sizes sum to
        return None
    ends = list(accumulate(f.size for f in frames))
    if len(text) != total or any(text[end - 1] != _LF for end, f in zip(ends, frames, strict=True) if f.size):
        return None
    return FrameBatch(frames, text, ends)


_LF = ord("\n")


def frame_texts(raw: Data, head: ZstdHead, together: bool = False) -> Iterator[FrameText | FrameBatch]:
    """The plaintext of each frame after the header's; a torn final frame yields what it
    decompresses to; a frame that does not decompress, or one past the plaintext bound, ends
    the file. With `together`, runs of frames that `_together` takes come as one FrameBatch
    (a run it refuses is read a frame at a time)."""
    budget = head.budget
    context = zstandard.ZstdDecompressor()
    frames = head.frames[1:]
    alone_until = at = 0  # a run `_together` refused is read a frame at a time, not tried again
    while at < len(frames):
        if together and at >= alone_until:
            end, total = _sized_run(frames, at, min(budget, BATCH_BYTES))
            if end - at > 1:
                batch = _together(raw, frames[at:end], total, context)
                if batch is not None:
                    budget -= total
                    at = end
                    yield batch
                    continue
                alone_until = end
        frame = frames[at]
        at += 1
        chunk = raw[frame.start : frame.end]
        reference = zstdframes.MAX_FRAME_TEXT  # a frame past it the reference refuses: a defect
        limit = min(budget, reference)
        try:
            text = decompress_frame(chunk, limit, context) if frame.complete else decompress_torn(chunk, limit, context)
        except FrameTooLarge as err:
            if limit == reference and not frame.complete:  # a torn frame: what it yields within the bound
                yield FrameText(frame, b"")
            elif limit == reference:
                yield FrameText(frame, b"", str(err))
            else:  # only schedlog's bound was reached
                yield FrameText(frame, b"", _bound_message(zstd_budget(len(raw)), len(raw)), bound=True)
            return
        except zstandard.ZstdError as err:
            yield FrameText(frame, b"", str(err))
            return
        budget -= len(text)
        yield FrameText(frame, text)
