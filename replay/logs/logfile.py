"""Streaming reader for real harness session logs (session-log.md §3-§9): the driver of the
reader's stages.

`SessionLog.entries()` yields the committed records of one log in order: verbatim events,
and packed chunk rows kept packed (an `Entry` knows how many events it stands for, so
`seedLength` and `seq` count events, not lines). Everything wrong with the file itself is a
`Finding`; nothing here raises for bad input. Files are only ever opened for reading.

The stages, each its own module and its own state: the bytes (inputs.py: bytesource.py, objects.py); the lines of a
plain file (frames.py) or of Zstandard frames (zstdlog.py); the first line, the header
(header.py); the records after it, read exactly (records.py) or fast (fastpath.py) into
committed events (committed.py), each judged (envelope, surface, the session layer's load
checks, the fork cut); the findings (notes.py). This module hands one stage's output to the
next, and saves the stages' states at the last committed line (readstate.py), or resumes
from one.

Modes: `strict` applies the persistence reader's rules (header shape, version, blank lines
are defects); `lenient` applies the fixture reader's (header fields only read; blank lines
skipped) and still checks seq contiguity.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field, replace

from invariant.findings import Finding, Severity
from invariant.readers import TypesSeen
from replay.lines.jsonline import DEEP_BUDGET, DEPTH_BOUND_MESSAGE, BeyondBound, DeepBudget
from replay.logs.fastpath import FastRecords
from replay.logs.frames import (
    ZSTD_MAGIC,
    Head,
    LongLine,
    OnlyLine,
    Parts,
    Reread,
    ZstdHead,
    frames_after,
    packed_blocks,
    plain_lines,
    whole_text,
    zstd_head,
)
from replay.logs.header import Header, first_line, only_line, too_long
from replay.logs.notes import Notes
from replay.logs.plainlog import PlainLines
from replay.logs.readstate import ReadState
from replay.logs.records import Entry, OtherRecords, Records, Selector, plain_envelope
from replay.logs.source import StateKeeper
from replay.logs.zstdlog import ZstdFrames
from replay.reading import DEFAULT_READING, Mode, Reading
from replay.sources import inputs
from replay.sources.bytesource import Data, FileSource, HeldTail, in_pieces, slicer
from replay.sources.discover import is_url
from replay.sources.hashed import Hashing
from replay.sources.sqlitenames import maybe_sqlite

__all__ = [
    "DEEP_BUDGET",
    "UNFRAMED",
    "Data",
    "Entry",
    "Finding",
    "OtherRecords",
    "Selector",
    "SessionLog",
    "Severity",
    "plain_envelope",
]

UNFRAMED = "format.zstd.framing"
_UNFRAMED_MESSAGE = (
    "the first Zstandard frame holds more than the header line: the file was compressed whole by a general "
    "tool (`zstd log.jsonl`, say), not framed as the harness frames a log (the header line alone in the first "
    "frame, then a frame per append), and the harness refuses to load it; its content is judged as plain JSONL "
    "(as `zstdcat FILE | schedlog verify -` judges it)"
)


@dataclass
class SessionLog:
    """One session log being read. Iterate `entries()` once; then read the summary fields."""

    path: str
    reading: Reading = DEFAULT_READING
    """How to read it: the mode (the reading's other options concern the judging of it)."""
    data: Data | OSError | None = None
    """Bytes to read instead of opening `path` (stdin, a pipe read once, a small object: `inputs.once`), or
    the error reading them gave."""
    progress: Callable[[int], None] | None = None
    """Called with the number of input bytes consumed, block by block."""
    fast: bool = True
    """Decode runs of records fast where they allow it (fastpath.py); False: every line exactly."""
    resume: ReadState | None = None
    """Go on from this state, saved by a read of the same file when it was shorter (its bytes
    before the state's offset checked to be the same, by the caller): only those after are read."""
    hashing: Hashing | None = None
    """Hash the bytes the read takes (hashed.py: its state stands for those before `resume`'s offset)."""
    saving: bool = False
    """Save the reading's state, and the keeper's, at its last committed line (`saved`): asked
    by whoever resumes it later (the verdict cache, watch); a read nobody resumes skips it."""
    keeper: StateKeeper | None = None
    """Whoever judges the records yielded: its state is saved with the reading's, and taken up
    again where the reading resumes (the reader holds it as bytes, never looks inside)."""

    saved: ReadState | None = None
    """Once `entries(schedule_only=True)` is read with `saving`: the state at its last committed
    line (None where there is none: the read ended early, at a bound, or on an unframed file)."""
    size: int = 0
    unframed: bool = False
    """A Zstandard file not framed as the harness frames a log, its content read as one plaintext."""
    head: Header = field(default_factory=Header)
    """What the first line says: the header, its version (header.py)."""
    notes: Notes = field(init=False)
    records: Records = field(init=False)
    _lines: PlainLines | None = None
    _consumed: int = 0
    _stored: tuple[Finding, ...] = ()
    """What only a store can have wrong in the session read (`_log_bytes`), noted once the
    reading's own notes stand (at once, or restored where the reading goes on)."""

    def __post_init__(self) -> None:
        self.notes = Notes(self.reading.mode is Mode.STRICT)
        self.records = Records(self.notes, DeepBudget())

    # --- what was read ----------------------------------------------------------------------

    @property
    def findings(self) -> list[Finding]:
        return self.notes.findings

    @property
    def rejected(self) -> bool:
        return self.notes.rejected

    @property
    def unreadable(self) -> bool:
        return self.notes.unreadable

    @property
    def types_seen(self) -> TypesSeen:
        return self.records.seen

    @property
    def event_count(self) -> int:
        """Events committed so far (rows counted by their members)."""
        return self.records.scan.event_count

    @property
    def lines(self) -> int:
        """LF-terminated lines of a plain file read so far (a torn tail is not one)."""
        return 0 if self._lines is None else self._lines.lines

    @property
    def seed_length(self) -> object:
        """The inherited prefix's length: in v0/v1 the header's seedLength as written (absent
        means 0; the fold checks its bounds); in v2+ the last inherited marker's index as read
        so far (0 when none), final once the entries are read."""
        if self.head.marks_cut:
            return self.records.marker_cut or 0
        return 0 if self.head.header is None else self.head.header.get("seedLength", 0)

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
        stage = FastRecords if self.fast and schedule_only else Records
        if schedule_only:
            self.records = stage(self.notes, self.records.budget, True, others, select)
        packed = schedule_only and others is None  # (no one hears a packed row's members: a store's stays one line)
        raw, self._stored, going_on, spans = _log_bytes(self.path, self.data, self.resume, packed)
        if not going_on:
            self.resume = None  # (a store's rows that do not go on from the reading saved: read whole)
        if self.resume is None:
            self._note_stored()  # (else once the reading's own notes are restored: `_resumed`)
        if isinstance(raw, str):
            self.notes.cannot_read(raw)
            return
        try:
            if isinstance(raw, (FileSource, HeldTail)):
                with raw:
                    yield from self._large(raw)
            else:
                self.size = len(raw)
                if not raw:
                    self.notes.cannot_read("empty file: no session header and no events")
                    return
                if raw[:4] == ZSTD_MAGIC:
                    yield from _zstd(self, raw)
                else:
                    parts = packed_blocks(raw, spans) if spans and isinstance(raw, bytes) else None
                    yield from self._plain(in_pieces(raw, self._start), slicer(raw), parts=parts)
        except BeyondBound as bound:  # from the reader, or from the caller's own reading (`charge_deep`)
            self.saved = None
            line = bound.line if bound.line is not None else self.lines or None
            self.notes.find("format.depth.bound", Severity.ERROR, DEPTH_BOUND_MESSAGE, line)
        if self.hashing is not None and not isinstance(raw, (FileSource, HeldTail)):
            self.hashing.held(raw, self._start, self._committed_end)
        self.records.close(self.head.header)
        self.notes.close()
        self._advance(self.size - self._consumed)  # the bytes no block reported: header frame, torn or refused tail

    def charge_deep(self, length: int) -> None:
        """Hear a value of `length` characters about to be read without recursion (jsonline.Deep):
        past DEEP_BUDGET of them in this log, BeyondBound. The caller reading this log's values
        (a judge parsing tool arguments) may charge them too, and throw BeyondBound into
        `entries()`: the log is then not read on."""
        self.records.budget(length)

    def _large(self, source: FileSource | HeldTail) -> Iterator[Entry]:
        """A file read in pieces: a plain one line block by line block, a Zstandard one whole
        (its frames are found across it; a large one from a mapped copy, `FileSource.spooled`).
        A file that shrank under the reader is not judged. (A held tail: its plain lines from
        where the reading goes on, its bytes standing by its store's state, unhashed.)"""
        self.size = source.size
        if isinstance(source, HeldTail):
            yield from self._plain(source.pieces(self._start), source.read_at)
            return
        hashing = self.hashing
        if source.head(4) == ZSTD_MAGIC:
            raw = source.spooled()
            if not source.shrunk:
                yield from _zstd(self, raw)
                if hashing is not None:
                    hashing.held(raw, self._start, self._committed_end)
        else:
            yield from self._plain(
                source.pieces(self._start) if hashing is None else hashing.pieces(source), source.read_at
            )
            if hashing is not None:
                hashing.finish(self.path, source, self._committed_end)
        if source.shrunk:
            self.saved = None
            self.notes.cannot_read(source.shrink_message())
            if hashing is not None:
                hashing.lost()

    @property
    def _committed_end(self) -> int:
        return self.size if self.saved is None else self.saved.offset

    @property
    def _start(self) -> int:
        """The byte a read starts at: a resumed state's offset, else the file's start."""
        return 0 if self.resume is None else self.resume.offset

    def _plain(
        self, pieces: Iterable[Data], reread: Reread, saving: bool = True, parts: Parts | None = None
    ) -> Iterator[Entry]:
        """The entries of a plain file's lines (`pieces`, from the resumed state's offset on when
        resuming; or its `parts`, a store's session read packed, from its start): its first line
        here, the others in the plain-lines stage (plainlog.py)."""
        resume = self.resume if saving else None
        after = None if resume is None else resume.offset
        if parts is None:
            parts = plain_lines(pieces, reread, not self.notes.strict, after)
        stage = self._lines = PlainLines(self.records, self.notes, self._advance, self._save if saving else None)
        if resume is not None:
            self._resumed(resume)
            stage.lines, at = resume.line, resume.offset
        else:
            first = next(parts)
            if isinstance(first, OnlyLine):
                stage.lines = 0
                self.head = only_line(first.line, self.records.budget, self.notes)
                return
            assert isinstance(first, Head)
            if isinstance(first.line, LongLine):
                self.notes.cannot_read(f"not a session log: the first line is {too_long(first.line.size - 1)}", 1)
                return
            entry = self._first_line(first.line, len(first.line))
            at = len(first.line) + 1
            self._advance(at)
            if entry is not None:
                yield entry
            if self.head.unsupported:
                return
        yield from stage.entries(parts, at)

    def _first_line(self, raw: bytes, size: int) -> Entry | None:
        """The header line (`size`: its bytes in a plain file), or a headerless file's first event."""
        named = self.data is None or is_url(self.path)  # (a file's or an object's: its generations beside it)
        self.head = replace(first_line(raw, self.path, named, self.records.budget, self.notes), size=size)
        if self.head.header is not None:
            self.records.after(self.head)
        # the header parser kept -0 apart; bare events use JavaScript's view of it
        return self.records.record(1, raw) if self.head.headerless else None

    def _resumed(self, state: ReadState) -> None:
        """Restore each stage's saved state, and the judge's."""
        self.head = state.head
        self.notes.resume(state.notes)
        self._note_stored()
        self.records.resume(state.records, state.head)
        if self.keeper is not None and state.judge is not None:
            self.keeper.restore(state.judge)
        self._advance(state.offset)

    def _note_stored(self) -> None:
        for found in self._stored:
            self.notes.find(found.code, found.severity, found.message, None, None, found.index)

    def _save(self, offset: int, line: int, plaintext: int, more: bool) -> None:
        """Save the reading at a committed line (readstate.py), `more` records to be read past it
        (a torn final frame's), with the judge's state there: where only schedule changes and
        the records beside them were asked for (the judge's reading)."""
        if self.records.schedule_only and self.saving and not self._stored:  # (a store's findings: noted first)
            judge = None if self.keeper is None else self.keeper.save()
            if self.keeper is not None and judge is None:
                self.saved = None
                return
            records = self.records.saved(more)
            self.saved = ReadState(offset, line, plaintext, self.head, self.notes.saved(), records, judge)

    def _advance(self, nbytes: int) -> None:
        """Tell `progress` that `nbytes` more input bytes were read; a whole read reports the file size."""
        self._consumed += nbytes
        if self.progress is not None and nbytes:
            self.progress(nbytes)


def _zstd(log: SessionLog, raw: Data) -> Iterator[Entry]:
    """A Zstandard log: its header frame, then its frames (zstdlog.py), or its content as one
    plaintext where it is not framed as the harness frames a log (a stage of SessionLog's,
    outside it for its length)."""
    resume = log.resume
    head = zstd_head(raw) if resume is None else frames_after(raw, resume.offset, resume.plaintext)
    if head is None:  # the frames appended to a resumed log do not scan: a cold read says what they hold
        log.resume = resume = None
        head = zstd_head(raw)
    if not isinstance(head, ZstdHead):
        if head.unframed:
            yield from _unframed(log, raw)
        elif head.unreadable:
            log.notes.cannot_read(head.message)
        else:
            log.notes.find("format.zstd", Severity.ERROR, head.message)
        return
    if resume is not None:
        log._resumed(resume)
        start = resume.line, resume.offset, resume.plaintext
    else:
        entry = log._first_line(head.header, 0)
        if entry is not None:
            yield entry
        if log.head.unsupported:
            return
        start = 1, head.frames[0].end, len(head.header) + 1
    yield from ZstdFrames(log.records, log.notes, log._save, log._advance).entries(raw, head, *start)


def _unframed(log: SessionLog, raw: Data) -> Iterator[Entry]:
    """A Zstandard file whose first frame is not exactly the header line: written whole by a
    general tool (`zstd log.jsonl`), not framed as the harness frames a log (a stage of
    SessionLog's, outside it for its length). The harness refuses it (session-log.md §9.3:
    strict mode says so, an error; lenient mode warns), and its content is read as the plain
    log it holds (`zstdcat FILE | schedlog verify -`)."""
    log.unframed = True
    log.notes.strict_problem(UNFRAMED, _UNFRAMED_MESSAGE, 1)
    whole = whole_text(raw)
    consumed, progress = log._consumed, log.progress
    log.progress = None  # the plaintext's bytes are not the file's: the file is told whole, after
    try:
        yield from log._plain((whole.text,), slicer(whole.text), saving=False)
    finally:
        log._consumed, log.progress = consumed, progress
    if whole.error is not None:
        log.notes.find("format.zstd.bound" if whole.bound else "format.zstd", Severity.ERROR, whole.error)


def _log_bytes(
    path: str, data: Data | OSError | None, resume: ReadState | None, packed: bool = False
) -> tuple[Data | FileSource | HeldTail | str, tuple[Finding, ...], bool, tuple[tuple[int, int], ...]]:
    """A log's bytes (`data` when given, or the file's: `inputs.opened`), or why they cannot be
    read; what only a store can have wrong in it; and whether the reading saved (`resume`)
    goes on. A SQLite store's session (`STORE#ID`) is read as the harness reads it from the
    store's rows, as its JSONL log (replay.sources.sqlitestore): where a reading saved goes on,
    only the rows after it (`HeldTail`; read whole, not going on, where the store's rows do not
    go on from there). Its findings (a row that does not decode or breaks the seqs, committed
    or in a removable tail) are noted before the lines are read. With `packed` (nobody hears
    the records but the judge), a store's session read whole keeps its packed rows one line
    each, as a log file holds them: the packed rows' spans (`SessionRows.spans`) say where."""
    if data is None and maybe_sqlite(path):
        from replay.sources.sqlitestore import stored_session

        stored = stored_session(path, 0 if resume is None else resume.line - 1, packed and resume is None)
        if isinstance(stored, str):
            return stored, (), True, ()
        if stored is not None:
            if stored.first and resume is not None:
                return HeldTail(resume.offset, stored.log), stored.findings, True, ()
            return stored.log, stored.findings, False, stored.spans
    return inputs.opened(path, data), (), True, ()
