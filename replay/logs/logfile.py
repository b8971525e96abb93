"""Streaming reader for real harness session logs (session-log.md §3-§9).

`SessionLog.entries()` yields the committed records of one log in order: verbatim events,
and packed chunk rows kept packed (an `Entry` knows how many events it stands for, so
`seedLength` and `seq` count events, not lines). Everything wrong with the file itself is a
`Finding`; nothing here raises for bad input. Files are only ever opened for reading.

The reader is built in layers, each its own module: the bytes (bytesource.py), the lines of
plain and Zstandard files (frames.py), the committed-record scan (committed.py), and the fast
decoder of runs of lines (fastruns.py), which only vouches that records are in line. This
module reads the header, runs the scan over the lines, and judges what a record holds: its
envelope, the session layer's load checks, the fork cut, and what the caller selected.

Modes: `strict` applies the persistence reader's rules (header shape, version, blank lines
are defects); `lenient` applies the fixture reader's (header fields only read; blank lines
skipped) and still checks seq contiguity.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_left
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import compress
from typing import NamedTuple, Protocol

import msgspec

from invariant import SCHEDULE_CHANGE
from invariant.findings import Finding, Severity, more_findings
from invariant.jsvalue import MAX_SAFE_INTEGER
from invariant.logshapes import (
    CURRENT_FORMAT_VERSION,
    END_SEED,
    EVENT_SHAPES,
    MARKER_CUT_FROM,
    SURFACE_TYPES,
    file_version,
    format_version,
    header_problems,
    surface_problems,
)
from invariant.sessionload import CHECKED_TYPES, LoadChecks
from invariant.shapes import located_problems, pointer_to
from invariant.surface import Surface
from replay.logs import bytesource
from replay.logs.bytesource import Data, FileSource, in_pieces, slicer
from replay.logs.chunks import ChunkRow
from replay.logs.committed import TURN_END, CommittedScan
from replay.logs.discover import generations_beside
from replay.logs.envelope import Record
from replay.logs.fastruns import decode_run, event_of, in_line, kinds_for, learn
from replay.logs.frames import (
    LONGEST_STRING,
    ZSTD_MAGIC,
    BlankLines,
    Block,
    FrameBatch,
    Head,
    Lines,
    LongLine,
    Reread,
    Tail,
    ZstdProblem,
    frame_batches,
    frames_after,
    plain_lines,
    whole_text,
    zstd_head,
)
from replay.logs.jsonline import BeyondBound, Deep, JsonLineError, decode_json, parse_header_line, parse_json_line
from replay.logs.readstate import ReadState, restore, take
from replay.reading import DEFAULT_READING, Mode, Reading

__all__ = ["Data", "Entry", "Finding", "OtherRecords", "Selector", "SessionLog", "Severity"]

_PLAIN_KEYS = frozenset({"type", "seq", "time", "data"})
_APPEND_KEYS = _PLAIN_KEYS | {"surfaceOp"}
_PLACEHOLDER = re.compile(r"\{\{[^{}]*\}\}")
_FINDINGS_PER_CODE = 20
_FAST_SLICE = 8192
"""Lines decoded ahead of the scan: past a defect nothing more is decoded (a crafted tail of
refused lines would cost a decode and a refusal each)."""
_SCANNED_TOGETHER = 1 << 16
_SPELLS_TURN_END = (b"turn/end", b"turn\\/end", b"\\u")
"""What a line whose value is a `turn/end` event holds: a JSON string spells a letter as itself
or by a `\\u` escape, and `/` as itself, `\\/` or a `\\u` escape."""
_NOTHING: frozenset[str] = frozenset()


class Entry(NamedTuple):
    """One committed storage record: a verbatim event or a packed row, at event `index`."""

    line: int
    event_index: int
    """Index (= seq) of the first event this record stands for."""
    event: dict[str, object] | None
    row: ChunkRow | None
    raw: bytes | None = None
    """The record's bytes when they are exactly one valid UTF-8 JSON value (else None)."""

    @property
    def size(self) -> int:
        """How many events this record stands for."""
        return 1 if self.row is None else len(self.row)

    def events(self) -> Iterator[dict[str, object]]:
        """The event(s) this record stands for (rows expanded)."""
        if self.row is None:
            assert self.event is not None
            yield self.event
        else:
            yield from self.row.events()


class OtherRecords(Protocol):
    """Hears each committed record that `entries(schedule_only=True)` does not yield, in order
    with the yielded ones, with an Entry's fields passed one by one: no Entry is made for them
    (most records of a log are no schedule change, and this runs for each)."""

    def __call__(
        self, line: int, index: int, event: dict[str, object] | None, row: ChunkRow | None, raw: bytes | None
    ) -> object: ...


class Selector(Protocol):
    """The events beside the schedule changes a caller of `entries(schedule_only=True)` wants
    yielded, asked in log order: first by an event's line, then, where its bytes may tell, by
    the decoded event. The reader decodes no event of another type, and none its bytes rule out."""

    @property
    def types(self) -> frozenset[str]:
        """The event types worth asking about."""
        ...

    def by_bytes(self, tag: str, line: bytes) -> bool:
        """Whether an event of `types` whose line is `line` (its bytes as read, its LF perhaps
        kept, not always UTF-8) may be wanted. Bytes are looked for as ASCII: decoding keeps
        ASCII bytes as written (an invalid sequence becomes U+FFFD, never swallowing one), so a
        line holds an ASCII needle exactly when its text does, and no line needs decoding to be
        asked about."""
        ...

    def by_event(self, tag: str, event: dict[str, object]) -> bool:
        """Whether the event (its bytes may be wanted) is wanted."""
        ...

    def screen(self, tags: list[str], lines: list[bytes]) -> list[bool]:
        """For events of `types` in log order (their tags and lines), False where `by_bytes`
        would say False, and change nothing, whatever is asked between: the fast path asks
        `by_bytes` only about the others, so a run's lines are screened at once."""
        ...


def _utf8(line: bytes) -> bytes | None:
    """`line` when it is valid UTF-8 (an Entry's `raw`), else None."""
    if line.isascii():
        return line
    try:
        line.decode()
    except UnicodeDecodeError:
        return None
    return line


def _ends_turn(line: bytes, deep: Deep) -> bool:
    """Whether a line's JSON value is a `turn/end` event (what still matters past the defect)."""
    try:
        value = parse_json_line(line, deep)  # (msgspec first, as every line)
    except JsonLineError:
        return False
    return type(value) is dict and value.get("type") == TURN_END


def plain_envelope(event: dict[str, object]) -> bool:
    """Whether an event's envelope is the plain one every version takes (type, a safe integer
    seq and time, data, and on a surface type `surfaceOp: "append"`, which it must carry): it
    then needs no shape check."""
    time = event.get("time")
    return (
        type(event.get("seq")) is int
        and type(time) is int
        and -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER
        and type(event.get("type")) is str
        and "data" in event
        and (
            event.keys() <= _PLAIN_KEYS
            if event["type"] not in SURFACE_TYPES
            else event.get("surfaceOp") == "append" and event.keys() <= _APPEND_KEYS
        )
    )


UNFRAMED = "format.zstd.framing"
_UNFRAMED_MESSAGE = (
    "the first Zstandard frame holds more than the header line: the file was compressed whole by a general "
    "tool (`zstd log.jsonl`, say), not framed as the harness frames a log (the header line alone in the first "
    "frame, then a frame per append), and the harness refuses to load it; its content is judged as plain JSONL "
    "(as `zstdcat FILE | schedlog verify -` judges it)"
)
DEEP_BUDGET = 1 << 20
"""The most characters of values nested deeper than the standard library reads (about 1,000
levels; `JSON.parse` has no limit) that one log's reading parses, at a hundred times the cost
of the others: harness logs hold none, and a crafted one (64 MiB of brackets in a 1 MB zstd
file) would cost minutes and gigabytes. Past it: `format.depth.bound`, the log not read on."""
_DEPTH_BOUND_MESSAGE = (
    f"schedlog reads at most {DEEP_BUDGET:,} characters of values nested deeper than about 1,000 levels "
    "in one log (its bound, not a defect of the log): not read further"
)


@dataclass
class SessionLog:
    """One session log being read. Iterate `entries()` once; then read the summary fields."""

    path: str
    reading: Reading = DEFAULT_READING
    """How to read it: the mode (the reading's other options concern the judging of it)."""
    data: Data | OSError | None = None
    """Bytes to read instead of opening `path` (stdin, a pipe read once: `bytesource.once`), or
    the error reading them gave."""
    progress: Callable[[int], None] | None = None
    """Called with the number of input bytes consumed, block by block."""
    fast: bool = True
    """Decode runs of records fast where the entries allow it (fastruns.py); False reads every
    line the exact way, record by record (the fast path's tests compare the two)."""

    header: dict[str, object] | None = None
    headerless: bool = False
    findings: list[Finding] = field(default_factory=list)
    rejected: bool = False
    """The reference's reader (in this mode) would refuse to load this log."""
    unreadable: bool = False
    """Nothing could be read as a session log (I/O error, empty file, not JSONL)."""
    size: int = 0
    lines: int = 0
    """LF-terminated lines of a plain file read so far (a torn tail is not one)."""
    version: int | None = None
    """The format version the header gives (None: no header, or no readable version)."""
    unsupported: bool = False
    """The header names a format newer than this toolkit reads: the log cannot be judged."""
    header_size: int = 0
    """Bytes of a plain file's first line (its LF not counted)."""
    marker_cut: int | None = None
    """v2+: the index of the last committed `session/end-seed` marker with `inherited: true`."""
    unframed: bool = False
    """A Zstandard file not framed as the harness frames a log, its content read as one plaintext."""
    resume: ReadState | None = None
    """Go on from this state, saved by a read of the same file when it was shorter (its bytes
    before the state's offset checked to be the same, by the caller): the saved records are
    yielded again, and only the bytes from the offset on are read."""
    saved: ReadState | None = None
    """Once `entries(schedule_only=True)` is read: the state at its last committed line, to
    resume from once the log has grown (None where it cannot be: the read ended early, at a
    bound, or on a Zstandard file not framed as logs are)."""

    _scan: CommittedScan = field(default_factory=CommittedScan)
    _schedule_only: bool = False
    _others: OtherRecords | None = None
    _select: Selector | None = None
    _counts: dict[str, int] = field(default_factory=dict)
    _consumed: int = 0
    _load_checks: LoadChecks = field(default_factory=LoadChecks)
    """The session layer's load checks, fed every committed event of CHECKED_TYPES in order."""
    _surface: Surface = field(default_factory=Surface)
    """The conversation surface the committed events build (session-log.md §5.1)."""
    _deep_left: int = 0
    _batch: tuple[FrameBatch, int] | None = None
    """While a batch of Zstandard frames is read, it and the number of the line before it."""
    _yielded: list[Entry] | None = None
    """The records yielded so far, while a state may be saved (schedule-only reads: few)."""
    _replaying: bool = False
    """While a resumed read yields its saved records: the deep values they hold were charged."""

    # --- findings -------------------------------------------------------------------------

    def _find(
        self,
        code: str,
        severity: Severity,
        message: str,
        line: int | None = None,
        pointer: str | None = None,
        index: int | None = None,
    ) -> None:
        """Note a finding: past _FINDINGS_PER_CODE of one code they are counted, and the count is
        reported once the log is read (`findings.more_findings`)."""
        n = self._counts.get(code, 0) + 1
        self._counts[code] = n
        if n <= _FINDINGS_PER_CODE:
            self.findings.append(Finding(code, severity, message, line, pointer, index))
        if severity is Severity.ERROR:
            self.rejected = True

    def _strict_problem(
        self, code: str, message: str, line: int, pointer: str | None = None, index: int | None = None
    ) -> None:
        """A rule the strict reader refuses a log for and the lenient one tolerates."""
        severity = Severity.ERROR if self.reading.mode is Mode.STRICT else Severity.WARNING
        self._find(code, severity, message, line, pointer, index)

    def _unreadable(self, message: str, line: int | None = None) -> None:
        self.unreadable = True
        self._find("format.unreadable", Severity.ERROR, message, line)

    def _torn(self, line_no: int, size: int) -> None:
        message = f"line {line_no} has no terminating LF; its {size} bytes are dropped"
        self._find("format.torn-tail", Severity.WARNING, message, line_no)

    # --- public summary -------------------------------------------------------------------

    @property
    def event_count(self) -> int:
        """Events committed so far (rows counted by their members)."""
        return self._scan.event_count

    @property
    def session_id(self) -> str | None:
        value = self.header.get("id") if self.header else None
        return value if isinstance(value, str) else None

    @property
    def marks_cut(self) -> bool:
        """The fork cut is the last inherited marker (v2+), not a header seedLength (formats.md §5)."""
        return self.version is not None and MARKER_CUT_FROM <= self.version <= CURRENT_FORMAT_VERSION

    @property
    def seed_length(self) -> object:
        """The inherited prefix's length: in v0/v1 the header's seedLength as written (absent
        means 0; the fold checks its bounds); in v2+ the last inherited marker's index as read
        so far (0 when none), final once the entries are read."""
        if self.marks_cut:
            return self.marker_cut or 0
        return 0 if self.header is None else self.header.get("seedLength", 0)

    # --- reading --------------------------------------------------------------------------

    def entries(
        self, schedule_only: bool = False, others: OtherRecords | None = None, select: Selector | None = None
    ) -> Generator[Entry, None, None]:
        """Yield the committed records; findings are final once the iterator is exhausted.

        With `schedule_only`, every record is still read, checked and counted, but only the
        `schedule/change` events are yielded (what a verifier needs, at less cost), the events
        `select` wants, and in a v2+ log the `session/end-seed` markers that cut the fork
        (`inherited: true`); `others`, when given, hears each of the other records as it is
        read (in order with the yielded ones), with the fields of its Entry, without an Entry
        being made.
        """
        self._deep_left = DEEP_BUDGET
        self._yielded = [] if schedule_only else None
        self._schedule_only = schedule_only
        self._others = others if schedule_only else None
        self._select = select if schedule_only else None
        try:
            raw = bytesource.load(self.path) if self.data is None else self.data
            if isinstance(raw, OSError):
                raise raw
        except IsADirectoryError:  # a directory a walk could not list (discover names it)
            self._unreadable(f"cannot list the directory: {bytesource.listing_error(self.path)}")
            return
        except OSError as err:
            self._unreadable(f"cannot read: {err.strerror or err}")
            return
        except MemoryError:
            self._unreadable("cannot read: not enough memory to hold the stream")
            return
        try:
            if isinstance(raw, FileSource):
                with raw:
                    yield from self._large(raw)
            else:
                self.size = len(raw)
                if not raw:
                    self._unreadable("empty file: no session header and no events")
                    return
                if raw[:4] == ZSTD_MAGIC:
                    yield from self._zstd(raw)
                else:
                    yield from self._plain(self._pieces_after(raw), slicer(raw))
        except BeyondBound:  # from the reader, or from the caller's own reading (`charge_deep`)
            self.saved = None
            self._find("format.depth.bound", Severity.ERROR, _DEPTH_BOUND_MESSAGE, self.lines or None)
        self._close_scan()
        self._advance(self.size - self._consumed)  # the bytes no block reported: header frame, torn or refused tail

    def charge_deep(self, length: int) -> None:
        """Hear a value of `length` characters about to be read without recursion (jsonline.Deep):
        past DEEP_BUDGET of them in this log, BeyondBound. The caller reading this log's values
        (a judge parsing tool arguments) may charge them too, and throw BeyondBound into
        `entries()`: the log is then not read on. The saved records a resumed read yields again
        were charged when first read (the saved budget holds it)."""
        if self._replaying:
            return
        self._deep_left -= length
        if self._deep_left < 0:
            raise BeyondBound

    def _large(self, source: FileSource) -> Iterator[Entry]:
        """A file read in pieces: a plain one line block by line block, a Zstandard one whole
        (its frames are found across it; a large one from a mapped copy, `FileSource.spooled`).
        A file that shrank under the reader is not judged."""
        self.size = source.size
        if source.head(4) == ZSTD_MAGIC:
            raw = source.spooled()
            if not source.shrunk:
                yield from self._zstd(raw)
        else:
            yield from self._plain(source.pieces(self._resume_at), source.read_at)
        if source.shrunk:
            self.saved = None
            self._unreadable(source.shrink_message())

    def _pieces_after(self, raw: Data) -> Iterable[Data]:
        """The pieces of a plain file held whole, from where a resumed read goes on."""
        return in_pieces(raw, self._resume_at)

    @property
    def _resume_at(self) -> int:
        """The byte a read starts at: a resumed state's offset, else the file's start."""
        return 0 if self.resume is None else self.resume.offset

    def _plain(self, pieces: Iterable[Data], reread: Reread, saving: bool = True) -> Iterator[Entry]:
        """The entries of a plain file's lines (`pieces`, from the resumed state's offset on when
        resuming); the state is saved at the last committed line (before a torn tail)."""
        line_no = self.lines = 1
        after = None
        if self.resume is not None and saving:
            yield from self._resumed(self.resume)
            line_no, after = self.lines, self.resume.offset
        at = after or 0
        for part in plain_lines(pieces, reread, self._blanks_apart, after):
            if isinstance(part, Block):
                yield from self._run(part.lines, line_no)
                line_no += len(part.lines)
                self.lines = line_no
                self._advance(part.size)
                at += part.size
            elif isinstance(part, Head):
                if isinstance(part.line, LongLine):
                    self._unreadable(f"not a session log: the first line is {_too_long(part.line.size - 1)}", 1)
                    return
                self.header_size = len(part.line)
                entry = self._first_line(part.line)
                self._advance(len(part.line) + 1)
                at = len(part.line) + 1
                if entry is not None:
                    yield entry
                if self.unsupported:
                    return
            elif isinstance(part, Tail):
                if saving:
                    self._save(at, line_no)
                self._torn(line_no + 1, part.size)
                return
            else:
                self.lines = 0
                self._first_line_without_lf(part.line)
                return
        if saving:
            self._save(at, line_no)

    def _zstd(self, raw: Data) -> Iterator[Entry]:
        head = zstd_head(raw) if self.resume is None else frames_after(raw, self.resume.offset, self.resume.plaintext)
        if head is None:  # the frames appended to a resumed log do not scan: a cold read says what they hold
            self.resume = None
            head = zstd_head(raw)
        if isinstance(head, ZstdProblem):
            if head.unframed:
                yield from self._unframed(raw)
            elif head.unreadable:
                self._unreadable(head.message)
            else:
                self._find("format.zstd", Severity.ERROR, head.message)
            return
        line_no, at, plaintext = 1, head.frames[0].end, len(head.header) + 1
        if self.resume is not None:
            yield from self._resumed(self.resume)
            line_no, at, plaintext = self.resume.line, self.resume.offset, self.resume.plaintext
        else:
            entry = self._first_line(head.header)
            if entry is not None:
                yield entry
            if self.unsupported:
                return
        for text in frame_batches(raw, head):
            if isinstance(text, FrameBatch):
                ended = yield from self._frames_together(text, line_no)
                if ended is None:
                    return
                line_no, at, plaintext = ended, text.frames[-1].end, plaintext + len(text.text)
                continue
            frame = text.frame
            if not frame.complete:  # the torn final frame: the state is saved before it
                self._save(at, line_no, plaintext, more=True)
            self._advance(frame.end - frame.start)
            if text.bound:  # schedlog's limit, not a defect of the log: the log is not judged past it
                self._find("format.zstd.bound", Severity.ERROR, f"frame at byte {frame.start}: {text.error}")
                return
            if text.error is not None:
                message = f"frame at byte {frame.start} does not decompress: {text.error}"
                self._find("format.zstd", Severity.ERROR, message)
                return
            if not frame.complete:
                message = f"torn final frame at byte {frame.start} (crash tail)"
                self._find("format.torn-frame", Severity.WARNING, message)
            for lines in text.blocks(self._blanks_apart):
                yield from self._run(lines, line_no)
                line_no += len(lines)
            tail = text.tail
            if frame.complete and (tail or self._scan.defect is not None):
                self._torn_frame(frame.start, line_no + (1 if tail else 0))
                return
            if tail:
                self._torn(line_no + 1, len(tail))
            if frame.complete:
                at, plaintext = frame.end, plaintext + len(text.text)
        if self.saved is None:
            self._save(at, line_no, plaintext)

    def _unframed(self, raw: Data) -> Iterator[Entry]:
        """A Zstandard file whose first frame is not exactly the header line: written whole by a
        general tool (`zstd log.jsonl`), not framed as the harness frames a log. The harness
        refuses it (session-log.md §9.3: strict mode says so, an error; lenient mode warns),
        and its content is read as the plain log it holds (`zstdcat FILE | schedlog verify -`)."""
        self.unframed = True
        self._strict_problem(UNFRAMED, _UNFRAMED_MESSAGE, 1)
        whole = whole_text(raw)
        consumed, progress = self._consumed, self.progress
        self.progress = None  # the plaintext's bytes are not the file's: the file is told whole, after
        try:
            yield from self._plain((whole.text,), slicer(whole.text), saving=False)
        finally:
            self._consumed, self.progress = consumed, progress
        if whole.error is not None:
            self._find("format.zstd.bound" if whole.bound else "format.zstd", Severity.ERROR, whole.error)

    def _frames_together(self, batch: FrameBatch, before: int) -> Generator[Entry, None, int | None]:
        """The entries of complete frames that each end a record (`frames.FrameBatch`), line
        `before + 1` on; the number of their last line, or None where a defect in one of them
        ended the log: a defect inside a complete frame is fatal (session-log.md §9.3), and as
        when each frame is read alone, past it only its own frame's lines are scanned
        (`_past_defect`) and the frames after it are not read."""
        self._batch = (batch, before)
        line_no = before
        try:
            for lines in batch.blocks(self._blanks_apart):
                yield from self._run(lines, line_no)
                line_no += len(lines)
        finally:
            self._batch = None
        first, defect = batch.frames[0], self._scan.defect
        if defect is None:
            self._advance(batch.frames[-1].end - first.start)
            return line_no
        k, last_line = _frame_of(batch, before, defect.line)
        self._advance(batch.frames[k].end - first.start)
        self._torn_frame(batch.frames[k].start, last_line)
        return None

    def _resumed(self, state: ReadState) -> Iterator[Entry]:
        """Restore the saved reading and yield its records again (their deep values charged once)."""
        restore(self, state)
        self._advance(state.offset)
        self._replaying = True
        try:
            for entry in state.entries:
                assert isinstance(entry, Entry)
                yield self._kept(entry)
        finally:
            self._replaying = False

    def _kept(self, entry: Entry) -> Entry:
        """`entry`, about to be yielded, kept for the state while one may be saved."""
        if self._yielded is not None:
            self._yielded.append(entry)
        return entry

    def _save(self, offset: int, line: int, plaintext: int = 0, more: bool = False) -> None:
        """Save the reading at a committed line (readstate.py), `more` records to be read past it
        (a torn final frame's): where only schedule changes and the records beside them were
        asked for (few, so they are kept)."""
        if self._yielded is not None:
            self.saved = take(self, offset, line, plaintext, self._yielded, more)  # type: ignore[arg-type]

    def _torn_frame(self, start: int, line: int) -> None:
        """A complete frame holding a torn or invalid record: fatal (session-log.md §9.3)."""
        message = f"complete frame at byte {start} contains a torn or invalid JSONL record"
        self._find("format.zstd", Severity.ERROR, message, line)

    def _advance(self, nbytes: int) -> None:
        """Tell `progress` that `nbytes` more input bytes were read; a whole read reports the file size."""
        self._consumed += nbytes
        if self.progress is not None and nbytes:
            self.progress(nbytes)

    # --- header -----------------------------------------------------------------------------

    def _first_line_without_lf(self, raw: bytes | LongLine) -> None:
        if isinstance(raw, LongLine):
            self._unreadable(f"not a session log: the only line (no LF) is {_too_long(raw.size)}")
            return
        try:
            value = parse_json_line(raw, self.charge_deep)
        except JsonLineError:
            self._unreadable("not a session log: the only line is not JSON")
            return
        if isinstance(value, dict) and value.get("type") == "session":
            self.header = value
            self._find(
                "format.header", Severity.ERROR, "the header line has no terminating LF (empty or header-less log)", 1
            )
        elif isinstance(value, dict) and "type" in value:
            self.headerless = True
            self._torn(1, len(raw))
        else:
            self._unreadable("not a session log: the only line is neither a header nor an event")

    def _first_line(self, raw: bytes) -> Entry | None:
        value, refusal = _first_value(raw, self.reading, self.charge_deep)
        if refusal is not None:
            self._unreadable(refusal, 1)
            return None
        if isinstance(value, dict) and value.get("type") == "session":
            self.header = value
            named = value.get("id")
            self._surface.session_id = named if type(named) is str else ""  # names legacy tool results' ids
            self._check_header(value)
            self._scan = CommittedScan(rows_allowed=not self.marks_cut, version=self.version)
            return None
        self.headerless = True
        self._find("format.headerless", Severity.WARNING, "no session header: the file holds bare events", 1)
        # the header parser kept -0 apart; bare events use JavaScript's view of it
        return self._record(1, raw)

    def _check_header(self, h: dict[str, object]) -> None:
        """Version, header shape and retired fields, in the reference's order (formats.md §1, §3;
        session-log.md §4.2), and the version the file's name identifies (formats.md §2)."""
        shape, retired, unsupported = header_problems(h)
        self.version = format_version(h)
        if unsupported:
            self.unsupported = True
            message = f"{unsupported}: the log cannot be judged"
            self._find("format.version.newer", Severity.WARNING, message, 1, "/version")
            return
        named = file_version(os.path.basename(self.path))
        if named is not None and self.data is None:
            self._note_generations(named)
        if named is not None and self.version is not None and named != self.version:
            self._find(
                "format.name-version",
                Severity.ERROR,
                f"the file name identifies v{named}, but its header identifies v{self.version}",
                1,
            )
        if shape:
            message = "not a session header: " + "; ".join(problem for _, problem in shape)
            self._strict_problem("format.header", message, 1, shape[0][0])
        if retired:
            self._strict_problem(
                "format.header",
                f"session header uses retired policy baseline fields: {', '.join(retired)}",
                1,
                pointer_to(retired[0]),
            )
        cwd = h.get("cwd")
        if isinstance(cwd, str):
            if _PLACEHOLDER.search(cwd):
                message = f"cwd {cwd!r} holds a fixture placeholder"
                self._find("format.header.placeholder", Severity.WARNING, message, 1, "/cwd")
            elif not (cwd.startswith("/") or re.match(r"[A-Za-z]:[\\/]", cwd) or cwd.startswith("\\\\")):
                if self.version == CURRENT_FORMAT_VERSION:  # v4's own rule: an absolute cwd when present
                    message = f"cwd {cwd!r} is not an absolute path (v4 headers require one)"
                    self._strict_problem("format.header", message, 1, "/cwd")
                else:
                    message = f"cwd {cwd!r} is not an absolute path"
                    self._find("format.header.cwd", Severity.WARNING, message, 1, "/cwd")

    def _note_generations(self, named: int) -> None:
        """Other generations of the session beside the file (formats.md §2): the runtime loads
        the highest; migration leaves the older ones in place."""
        beside = generations_beside(self.path)
        if not beside:
            return
        newer = [n for n in beside if (file_version(n) or 0) > named]
        if newer:
            message = f"a newer generation is beside it ({newer[0]}): the runtime loads that one"
        else:
            message = f"older generations beside it: {', '.join(beside)}"
        self._find("format.generations", Severity.INFO, message, None)

    # --- the lines after the header: the exact path and the fast one ----------------------------

    @property
    def _blanks_apart(self) -> bool:
        """Whether the lines layer gives every blank line apart (frames.BlankLines): lenient mode
        skips them, so a flood of them costs a scan, not a line object each."""
        return self.reading.mode is Mode.LENIENT

    def _run(self, lines: Lines, before: int) -> Iterator[Entry]:
        """The entries of complete `lines` (each with its LF), the first being line `before + 1`.
        Blank lines (empty, or ASCII whitespace only) come apart as runs (frames.BlankLines) in
        lenient mode, which skips them, here and only here; a run in strict mode (a blank line
        joined from pieces) is a defect at its first (a blank line is no record), and the rest
        cannot matter past it (none spells a `turn/end`). Lists of lines go on to `_lines`."""
        if type(lines) is LongLine:  # no record: a defect, in either mode
            if self._scan.defect is None:
                self._scan.unparsable(before + 1, False, _too_long(lines.size - 1))
        elif type(lines) is not BlankLines:
            yield from self._lines(lines, before)  # type: ignore[arg-type]
        elif self.reading.mode is Mode.STRICT and self._scan.defect is None:
            self._scan.unparsable(before + 1, True, "")

    def _lines(self, lines: list[bytes], before: int) -> Iterator[Entry]:
        """The entries of lines (none blank in lenient mode). Where only schedule changes are
        asked for and nobody hears the other records, the lines are decoded fast (fastruns.py),
        and what the fast decoder refuses is read exactly; else line by line."""
        if self.fast and self._schedule_only and self._others is None:
            yield from self._fast(lines, before)
        else:
            yield from self._exact(lines, before)

    def _exact(self, lines: list[bytes], before: int) -> Iterator[Entry]:
        """The entries of `lines` (each with its LF), each read exactly (`_record`); past a
        defect, only what may still matter (`_past_defect`)."""
        for k, line in enumerate(lines):
            if self._scan.defect is not None:
                self._past_defect(lines[k:], before + k)
                return
            entry = self._record(before + k + 1, line[:-1])
            if entry is not None:
                yield entry

    def _past_defect(self, lines: list[bytes], before: int) -> None:
        """Past the defect no record is committed or checked: only a `turn/end` still matters (it
        makes the log unloadable, committed.py). Its line spells `turn/end` (_SPELLS_TURN_END):
        only such lines are read, found by a scan in C (a crafted tail of millions of lines
        costs that scan, not a decode each). In a batch of Zstandard frames, only the lines of
        the defect's own frame are scanned (`_frames_together`)."""
        if self._batch is not None:
            assert self._scan.defect is not None
            _, last_line = _frame_of(*self._batch, self._scan.defect.line)
            lines = lines[: max(0, last_line - before)]
        for k in range(0, len(lines), _SCANNED_TOGETHER):
            if self._scan.fatal:
                return
            text = b"".join(lines[k : k + _SCANNED_TOGETHER])  # in parts: a join holds a buffer per line
            for needle in _SPELLS_TURN_END:
                at = text.find(needle)
                while at >= 0:
                    start = text.rfind(b"\n", 0, at) + 1
                    end = text.find(b"\n", at)
                    end = len(text) if end < 0 else end
                    if _ends_turn(text[start:end], self.charge_deep):
                        self._scan.fatal = True
                        return
                    at = text.find(needle, end)

    def _record(self, line_no: int, raw: bytes) -> Entry | None:
        """The exact path: one line decoded into JSON values, the scan's verdict on it, and the
        judgement of a committed event (envelope, load checks), as the reference reads it."""
        line: bytes | None = raw
        try:
            value = decode_json(raw)
        except (msgspec.MsgspecError, RecursionError):
            try:
                value = parse_json_line(raw, self.charge_deep)
            except JsonLineError as err:
                self._scan.unparsable(line_no, not raw.strip(), str(err))
                return None
            line = None  # decoded another way: its bytes are not kept
        taken = self._scan.take(line_no, value)
        if taken is None:
            return None
        index, event, row = taken
        tag = None
        if event is not None:
            if plain_envelope(event) or self._check_envelope(event, index, line_no):
                self._fold_surface(event, index, line_no)
            tag = event.get("type")
            if type(tag) is str and tag in CHECKED_TYPES:
                self._check_load(event, line_no)
        # the committed record: yielded, or kept back by `schedule_only` (then `others` hears it)
        if not self._schedule_only:
            if tag == END_SEED:
                self._cuts(event, index)  # type: ignore[arg-type]
            return Entry(line_no, index, event, row, line)
        if tag == SCHEDULE_CHANGE or (type(tag) is str and self._telling(tag, event, index, raw)):  # type: ignore[arg-type]
            return self._kept(Entry(line_no, index, event, row, line))
        if self._others is not None:
            self._others(line_no, index, event, row, line)
        return None

    def _telling(self, tag: str, event: dict[str, object], index: int, raw: bytes) -> bool:
        """Whether an event that is no schedule change is yielded all the same: a marker that cuts
        the fork (v2+; its cut is noted either way), or an event the selector wants."""
        if tag == END_SEED:
            return self._cuts(event, index)
        select = self._select
        return select is not None and tag in select.types and select.by_bytes(tag, raw) and select.by_event(tag, event)

    def _fast(self, lines: list[bytes], before: int) -> Iterator[Entry]:
        """The entries of `lines`, decoded fast (fastruns.decode_run) a slice at a time; each
        line the decoder refuses, or whose record is out of line, is read exactly, and the
        records between go on fast. Past a defect no more is decoded (`_past_defect`)."""
        for start in range(0, len(lines), _FAST_SLICE):
            if self._scan.defect is not None:
                self._past_defect(lines[start:], before + start)
                return
            yield from self._fast_slice(lines[start : start + _FAST_SLICE], before + start)

    def _fast_slice(self, lines: list[bytes], before: int) -> Iterator[Entry]:
        records, refused = decode_run(lines)
        at, count = 0, len(records)
        while at < count:
            if self._scan.defect is not None:
                self._past_defect(lines[at:], before + at)
                return
            if records[at] is None:  # refused by the decoder: read exactly
                learn(lines[at])
                yield from self._exact(lines[at : at + 1], before + at)
                at += 1
                continue
            k = bisect_left(refused, at)
            end = refused[k] if k < len(refused) else count
            at += yield from self._window(records[at:end], lines[at:end], before + at)  # type: ignore[arg-type]
            if at < end:  # a record out of line: read exactly
                yield from self._exact(lines[at : at + 1], before + at)
                at += 1

    def _window(self, records: list[Record], lines: list[bytes], before: int) -> Generator[Entry, None, int]:
        """The entries of decoded `records` (line `before + 1` on) up to the first the fast
        decoder cannot vouch for (`fastruns.in_line`); returns how many were taken. Of those,
        the load checks read the checked types (fast where `loadfast` is sure), and the
        schedule changes, cutting markers and selected events are yielded (the selector screens
        the lines of its types for the whole window first, and is asked about those it keeps)."""
        select = self._select
        known = kinds_for(_NOTHING if select is None else select.types)
        roles = known.roles_cut if self.marks_cut else known.roles
        count, surface, version = self._scan.event_count, self._surface, self.version or 0
        kinds, starts, stop, checked, wanted, selected = in_line(
            records, lines, count, not self.marks_cut, roles, surface, version
        )
        tag_of, message_ids = known.tag_of, self._load_checks.message_ids
        verdicts = known.verdicts
        for i in checked:
            record = records[i]
            verdict = verdicts.get(kinds[i])
            found = None if verdict is None else verdict(record.data)  # type: ignore[attr-defined]
            if found is None:
                self._check_load(event_of(record, lines[i], self.charge_deep), before + i + 1)
            elif found:
                message_ids[record.seq] = found
        if selected:
            assert select is not None
            tags = list(map(tag_of.__getitem__, map(kinds.__getitem__, selected)))
            selected = list(compress(selected, select.screen(tags, list(map(lines.__getitem__, selected)))))
            if selected:
                wanted = sorted(wanted + selected)
        for i in wanted:
            kind = kinds[i]
            if kind is known.change:
                event = event_of(records[i], lines[i], self.charge_deep)
            elif kind is known.marker:
                if not self._cuts(event := event_of(records[i], lines[i], self.charge_deep), starts[i]):
                    continue
            else:
                assert select is not None
                tag = tag_of[kind]
                if not (
                    select.by_bytes(tag, lines[i])
                    and select.by_event(tag, event := event_of(records[i], lines[i], self.charge_deep))
                ):
                    continue
            self._scan.advance(starts[i] + 1)
            yield self._kept(Entry(before + i + 1, starts[i], event, None, _utf8(lines[i][:-1])))
        self._scan.advance(starts[stop])
        return stop

    # --- what a committed record holds --------------------------------------------------------

    def _check_envelope(self, event: dict[str, object], index: int, line_no: int) -> bool:
        """The envelope of the log's version (formats.md §4; a headerless log reads as v0);
        whether it holds."""
        located = located_problems(event, EVENT_SHAPES[self.version or 0]) or surface_problems(event, index)
        if located:
            message = f"event envelope at line {line_no}: {'; '.join(m for _, m in located)}"
            self._strict_problem("format.envelope", message, line_no, located[0][0], index)
        return not located

    def _fold_surface(self, event: dict[str, object], index: int, line_no: int) -> None:
        """The event's step of the conversation surface (invariant.surface), its envelope being
        sound; an event it refuses leaves the surface as it was."""
        problems = self._surface.step(event, index, self.version or 0)
        if problems:
            pointer, message = problems[0]
            self._strict_problem("format.surface", f"surface at line {line_no}: {message}", line_no, pointer, index)

    def _check_load(self, event: dict[str, object], line_no: int) -> None:
        """The session layer's load checks (invariant.sessionload, session-log.md §11.2): the
        harness refuses a log holding an event they refuse (in lenient mode, a warning)."""
        problem = self._load_checks.refusal(event)
        if problem is not None:
            seq = event.get("seq")
            index = seq if type(seq) is int else None
            message = f"event {seq} at line {line_no}: {problem}"
            self._strict_problem("format.session", message, line_no, "/data", index)

    def _cuts(self, event: dict[str, object], index: int) -> bool:
        """Whether a committed `session/end-seed` event cuts the fork here (v2+, `inherited: true`;
        formats.md §5); the last one that does is the cut."""
        data = event.get("data")
        if self.marks_cut and type(data) is dict and data.get("inherited") is True:
            self.marker_cut = index
            return True
        return False

    # --- the end ------------------------------------------------------------------------------

    def _close_scan(self) -> None:
        self._check_seeded()
        d = self._scan.defect
        if d is not None:
            if self._scan.fatal:
                message = f"{d.message} before a committed turn/end: the log cannot be loaded"
                self._find(d.code, Severity.ERROR, message, d.line, d.pointer)
            else:
                message = f"{d.message}; the records from there on are a dropped crash tail"
                self._find(d.code, Severity.WARNING, message, d.line, d.pointer)
        for code, n in self._counts.items():
            if n > _FINDINGS_PER_CODE:
                severity = next(f.severity for f in self.findings if f.code == code)
                self.findings.append(more_findings(code, severity, n - _FINDINGS_PER_CODE))

    def _check_seeded(self) -> None:
        """v2+: `isSeeded` true needs an inherited marker, false forbids one (formats.md §5):
        either mismatch refuses the log in every mode, the fork cut being undecidable (lenient
        mode eases header fields, not the cut)."""
        seeded = None if self.header is None else self.header.get("isSeeded")
        if not self.marks_cut or type(seeded) is not bool or seeded == (self.marker_cut is not None):
            return
        if seeded:
            message = "the header says isSeeded, but no session/end-seed marker with inherited: true is committed"
        else:
            message = f"the header says not isSeeded, but the session/end-seed at event {self.marker_cut} is inherited"
        self._find("format.is-seeded", Severity.ERROR, message, 1, "/isSeeded")  # refused in every mode (formats.md §5)


def _too_long(size: int) -> str:
    """Why a line of `size` bytes (its LF not counted) is no record: a LongLine."""
    return (
        f"{size:,} bytes long: longer than any record can be (it decodes to more than {LONGEST_STRING:,} UTF-16 "
        "code units, V8's longest string: JSON.stringify cannot write it, nor JSON.parse be given it); not read"
    )


def _first_value(first: bytes, reading: Reading, deep: Deep) -> tuple[object, str | None]:
    """The first line's value, and why a file starting with it holds no session log (it is
    unreadable), or None when that line is a session header or an event (a headerless file)."""
    try:
        value = parse_header_line(first, deep)
    except JsonLineError as err:
        if reading.mode is Mode.LENIENT and not first.strip():
            return None, "not a session log: the first line is blank"
        return None, f"not a session log: the first line is not JSON ({err})"
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return value, None
    return value, "not a session log: the first line is neither a session header nor an event"


def _frame_of(batch: FrameBatch, before: int, line: int) -> tuple[int, int]:
    """(which frame of `batch`, its first line being `before + 1`, holds line `line`, the number
    of that frame's last line); a line before the batch is its first frame's."""
    ends = batch.line_ends(before)
    k = bisect_left(ends, line)
    return k, ends[k]
