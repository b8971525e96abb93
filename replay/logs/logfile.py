"""Streaming reader for real harness session logs (session-log.md §3-§9).

`SessionLog.entries()` yields the committed records of one log in order: verbatim events,
and packed chunk rows kept packed (an `Entry` knows how many events it stands for, so
`seedLength` and `seq` count events, not lines). Everything wrong with the file itself is a
`Finding`; nothing here raises for bad input. Files are only ever opened for reading.

Modes: `strict` applies the persistence reader's rules (header shape, version, blank lines
are defects); `lenient` applies the fixture reader's (header fields only read; blank lines
skipped) and still checks seq contiguity.
"""

from __future__ import annotations

import errno
import mmap
import os
import re
import stat
import tempfile
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import accumulate, compress, repeat
from operator import attrgetter, is_not, ne
from typing import BinaryIO, NamedTuple, Protocol

import msgspec
import zstandard
from msgspec import UNSET

from invariant import SCHEDULE_CHANGE
from invariant.detect import CLUE_TYPES, NEEDLES, REQUEST_HEADER
from invariant.jsvalue import MAX_SAFE_INTEGER, shown
from invariant.logshapes import (
    CURRENT_FORMAT_VERSION,
    END_SEED,
    EVENT_SHAPES,
    MARKER_CUT_FROM,
    citation_problems,
    file_version,
    format_version,
    header_problems,
)
from invariant.sessionload import CHECKED_TYPES, LoadChecks
from invariant.shapes import object_problems
from invariant.transcripts import TOOL_CALL, TOOL_TYPES, result_call_id, schedule_call
from replay.logs.chunks import ROW_TAGS, ChunkRow, RowError, decode_row
from replay.logs.discover import generations_beside
from replay.logs.envelope import (
    APPEND,
    GAP_BOUND,
    REGISTRY,
    ROW_CLASSES,
    Event,
    Record,
    TextRow,
    ToolRow,
    decode_line,
    decode_lines,
)
from replay.logs.jsonline import JsonLineError, decode_json, parse_header_line, parse_json_line
from replay.logs.loadfast import surely_loads
from replay.logs.zstdframes import MAX_FRAME_TEXT, FrameError, decompress_frame, decompress_torn, scan_frames
from replay.reading import DEFAULT_READING, Mode, Reading

READ_CHUNK = 8 << 20
MAX_STREAM = MAX_FRAME_TEXT
"""The most bytes read from a stream that has no size to map (a pipe, stdin, a device; past
SPOOL_BYTES it is spooled to a temporary file): the reference reads a log into one Node Buffer,
whose bound a frame's text has too."""
TURN_END = "turn/end"
_PLAIN_KEYS = frozenset({"type", "seq", "time", "data"})
_APPEND_KEYS = _PLAIN_KEYS | {"surfaceOp"}
_PLACEHOLDER = re.compile(r"\{\{[^{}]*\}\}")
_FINDINGS_PER_CODE = 20


class Severity(StrEnum):
    ERROR = "error"
    """The reference's reader (in the chosen mode) would refuse the log."""
    WARNING = "warning"
    """The reference tolerates it (a dropped crash tail, a placeholder cwd, ...)."""
    INFO = "info"
    """Worth knowing, no defect (other generations beside the file, reminders the Host delivered)."""


@dataclass(frozen=True)
class Finding:
    """A problem with the log file itself (not the schedule protocol).

    `severity` is `error` when the reference's reader in the chosen mode would refuse the log,
    `warning` when it tolerates it (a dropped crash tail, a placeholder cwd, ...), `info` for
    what is no defect.
    """

    code: str
    severity: Severity
    message: str
    line: int | None = None

    def to_json(self) -> dict[str, object]:
        return {"code": self.code, "severity": self.severity, "line": self.line, "message": self.message}


Data = bytes | mmap.mmap
"""A log's bytes held for reading: in memory, or a mapped (spooled) file."""
SPOOL_BYTES = 64 << 20
"""A stream longer than this is spooled to an anonymous temporary file and mapped, not held."""


def read_stream(f: BinaryIO) -> Data:
    """All of `f`, read in pieces: up to SPOOL_BYTES in memory, beyond that spooled to a
    temporary file (unlinked at once) and mapped, so memory stays bounded. Past MAX_STREAM bytes
    it raises OSError (EFBIG) at once, so an endless stream (`/dev/zero`, say) ends in a verdict
    without ever being held."""
    pieces: list[bytes] = []
    held = 0
    while piece := f.read(READ_CHUNK):
        held = _bounded(held + len(piece))
        pieces.append(piece)
        if held > SPOOL_BYTES:
            with tempfile.TemporaryFile() as spool:
                spool.writelines(pieces)
                pieces.clear()
                while piece := f.read(READ_CHUNK):
                    held = _bounded(held + len(piece))
                    spool.write(piece)
                spool.flush()
                return mmap.mmap(spool.fileno(), 0, access=mmap.ACCESS_READ)  # the mapping outlives the file
    return b"".join(pieces)


def _bounded(held: int) -> int:
    if held > MAX_STREAM:
        raise OSError(errno.EFBIG, f"the stream holds more than {MAX_STREAM:,} bytes (save it to a file)")
    return held


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


_CAN_RELEASE = hasattr(mmap, "MADV_DONTNEED")  # not on Windows
# `SessionLog._bears_clues` scans for `schedule`/`SCHEDULE` before the needles themselves
assert all(b"schedule" in needle or b"SCHEDULE" in needle for needle in NEEDLES)
_TELLING_TYPES = CLUE_TYPES | TOOL_TYPES | {END_SEED}
"""The event types that may be yielded beside the schedule changes (`SessionLog._telling`)."""
_PLAIN_ID = re.compile(r"[A-Za-z0-9_.:-]+")
"""A call id every JSON writer spells as itself."""


def _release(mapped: mmap.mmap, start: int, upto: int) -> int:
    """Drop the mapped pages from `start` (page-aligned: what the last call returned) to before
    `upto` from this process's resident set, and return where the next call starts: a block
    once read is not read again, and a 1 GB log would otherwise count 1 GB resident (`time -v`)
    by its end. The pages stay in the page cache; the mapping stays valid."""
    whole = upto // mmap.PAGESIZE * mmap.PAGESIZE
    if whole > start:
        mapped.madvise(mmap.MADV_DONTNEED, start, whole - start)
    return max(start, whole)


def _listing_error(path: str) -> str:
    """Why a directory cannot be listed (what listing it raises now)."""
    try:
        os.listdir(path)
    except OSError as err:
        return str(err.strerror or err)
    return "it was not listed when walked"


_ROW_CLASSES = frozenset(ROW_CLASSES)
_SEQ = attrgetter("seq")
_SURFACE_OP = attrgetter("surfaceOp")
_CITED = attrgetter("sourceEventSeqs")
_TIME = attrgetter("time")
_DATA = attrgetter("data")
_MEMBERS = attrgetter("members")
_DT = attrgetter("dt")


_DECODED_TOGETHER = 256
"""Lines decoded in one pass: a refused line costs its part a second pass, line by line."""


def _decoded(line: bytes) -> Record | None:
    """The record of one line, or None where the fast decoder refuses it."""
    try:
        return decode_line(line)
    except (msgspec.MsgspecError, RecursionError):
        return None


class _Kinds(NamedTuple):
    """The record classes the fast path sorts a run by, for the registry's classes so far."""

    size: int
    checked: frozenset[type]
    """The types the session layer's load checks read (sessionload.CHECKED_TYPES)."""
    tag_of: dict[type, str]
    change: type | None
    marker: type | None
    tools: frozenset[type | None]
    wanted: frozenset[type | None]
    """What `_telling_records` looks at: schedule changes, clue types and tool events..."""
    wanted_cut: frozenset[type | None]
    """...and, from v2 on, the fork markers."""


_KINDS: list[_Kinds] = []


def _known_kinds() -> _Kinds:
    """The sorting classes, made again only when the registry has met a new type (per run they
    were made anew: a set per run, and a run per short session)."""
    classes = REGISTRY.classes
    if _KINDS and _KINDS[0].size == len(classes):
        return _KINDS[0]
    checked = frozenset(classes[tag] for tag in CHECKED_TYPES if tag in classes)
    tools = frozenset(classes.get(tag) for tag in TOOL_TYPES)
    change, marker = classes.get(SCHEDULE_CHANGE), classes.get(END_SEED)
    wanted = frozenset({classes.get(tag) for tag in CLUE_TYPES} | tools | {change})
    tag_of = {kind: tag for tag, kind in classes.items()}
    _KINDS[:] = [_Kinds(len(classes), checked, tag_of, change, marker, tools, wanted, wanted | {marker})]
    return _KINDS[0]


def _utf8(line: bytes) -> bytes | None:
    """`line` when it is valid UTF-8 (an Entry's `raw`), else None."""
    if line.isascii():
        return line
    try:
        line.decode()
    except UnicodeDecodeError:
        return None
    return line


def _row_sizes(records: list[Record], rows: list[int], sizes: list[int]) -> None:
    """Set the member counts of the rows at `rows` in `sizes`: checked for all at once in C
    (each dt one gap shorter, every running time surely safe), else row by row (`_row_size`),
    where a row out of line gets -1 and stops the fast path at it."""
    found = [records[i] for i in rows]
    data = list(map(_DATA, found))
    members = list(map(len, map(_MEMBERS, data)))
    in_line = list(map(len, map(_DT, data))) == [n - 1 for n in members]
    if not in_line or max(map(abs, map(_TIME, found))) + max(members) * GAP_BOUND > MAX_SAFE_INTEGER:
        members = [_row_size(row) for row in found]  # type: ignore[arg-type]
    for i, n in zip(rows, members, strict=True):
        sizes[i] = n


def _row_size(row: TextRow | ToolRow) -> int:
    """A row's member count, or -1 (read exactly) when its dt or running times are out of line."""
    members, dt = len(row.data.members), len(row.data.dt)
    return members if dt == members - 1 and abs(row.time) + members * GAP_BOUND <= MAX_SAFE_INTEGER else -1


class OtherRecords(Protocol):
    """Hears each committed record that `entries(schedule_only=True)` does not yield, in order
    with the yielded ones, with an Entry's fields passed one by one: no Entry is made for them
    (most records of a log are no schedule change, and this runs for each)."""

    def __call__(
        self, line: int, index: int, event: dict[str, object] | None, row: ChunkRow | None, raw: bytes | None
    ) -> object: ...


@dataclass
class _Defect:
    code: str
    message: str
    line: int


@dataclass
class SessionLog:
    """One session log being read. Iterate `entries()` once; then read the summary fields."""

    path: str
    reading: Reading = DEFAULT_READING
    """How to read it: the mode (the reading's other options concern the judging of it)."""
    data: Data | None = None
    """Bytes to read instead of opening `path` (stdin)."""
    progress: Callable[[int], None] | None = None
    """Called with the number of input bytes consumed, block by block."""
    fast: bool = True
    """Decode runs of records fast where the entries allow it (envelope.py); False reads every
    line the exact way (the fast path's tests compare the two)."""

    header: dict[str, object] | None = None
    headerless: bool = False
    findings: list[Finding] = field(default_factory=list)
    event_count: int = 0
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

    _defect: _Defect | None = None
    _schedule_only: bool = False
    _others: OtherRecords | None = None
    _fatal: bool = False
    _tools_read: bool = False
    _schedule_calls: dict[str, bytes] = field(default_factory=dict)
    """The `schedule_*` calls yielded and not yet answered, each with the bytes its result's
    line must hold (empty: an id whose escaping may vary, so every result is read)."""
    _counts: dict[str, int] = field(default_factory=dict)
    _consumed: int = 0
    _load_checks: LoadChecks = field(default_factory=LoadChecks)
    """The session layer's load checks, fed every committed event of CHECKED_TYPES in order."""

    # --- findings -------------------------------------------------------------------------

    def _find(self, code: str, severity: Severity, message: str, line: int | None = None) -> None:
        n = self._counts.get(code, 0) + 1
        self._counts[code] = n
        if n <= _FINDINGS_PER_CODE:
            self.findings.append(Finding(code, severity, message, line))
        if severity is Severity.ERROR:
            self.rejected = True

    def _strict_problem(self, code: str, message: str, line: int) -> None:
        """A rule the strict reader refuses a log for and the lenient one tolerates."""
        self._find(code, Severity.ERROR if self.reading.mode is Mode.STRICT else Severity.WARNING, message, line)

    def _header_problem(self, message: str, line: int = 1, code: str = "format.header") -> None:
        self._strict_problem(code, message, line)

    def _unreadable(self, message: str, line: int | None = None) -> None:
        self.unreadable = True
        self._find("format.unreadable", Severity.ERROR, message, line)

    # --- public summary -------------------------------------------------------------------

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

    def entries(self, schedule_only: bool = False, others: OtherRecords | None = None) -> Iterator[Entry]:
        """Yield the committed records; findings are final once the iterator is exhausted.

        With `schedule_only`, every record is still read, checked and counted, but only the
        `schedule/change` events are yielded (what a verifier needs, at less cost), and in a v2+
        log the `session/end-seed` markers that cut the fork (`inherited: true`); `others`, when
        given, hears each of the other records as it is read (in order with the yielded ones),
        with the fields of its Entry, without an Entry being made.
        """
        self._schedule_only = schedule_only
        self._others = others if schedule_only else None
        try:
            raw = self._load()
        except IsADirectoryError:  # a directory a walk could not list (discover names it)
            self._unreadable(f"cannot list the directory: {_listing_error(self.path)}")
            return
        except OSError as err:
            self._unreadable(f"cannot read: {err.strerror or err}")
            return
        except MemoryError:
            self._unreadable("cannot read: not enough memory to hold the stream")
            return
        self.size = len(raw)
        if not raw:
            self._unreadable("empty file: no session header and no events")
            return
        if raw[:4] == b"\x28\xb5\x2f\xfd":
            yield from self._zstd(raw)
        else:
            yield from self._plain(raw)
        self._close_scan()
        self._advance(self.size - self._consumed)  # the bytes no block reported: header frame, torn or refused tail

    def _load(self) -> bytes | mmap.mmap:
        if self.data is not None:
            return self.data
        with open(self.path, "rb") as f:
            status = os.fstat(f.fileno())
            if not stat.S_ISREG(status.st_mode):  # a pipe (`verify <(zstdcat ...)`) has no size to map
                return read_stream(f)
            if status.st_size <= READ_CHUNK:  # one block: read whole, split without a copy
                return f.read()
            return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)

    def _plain(self, raw: bytes | mmap.mmap) -> Iterator[Entry]:
        first = raw.find(b"\n")
        if first < 0:
            self._first_line_without_lf(bytes(raw))
            return
        self.header_size = first
        line_no = self.lines = 1
        entry = self._first_line(bytes(raw[:first]))
        self._advance(first + 1)
        if entry is not None:
            yield entry
        if self.unsupported:
            return
        pos = first + 1
        size = len(raw)
        released = 0
        while pos < size:
            # split a large block in C; the block's unterminated tail starts the next block
            block_end = raw.rfind(b"\n", pos, min(size, pos + READ_CHUNK))
            if block_end < 0:
                block_end = raw.find(b"\n", pos)
                if block_end < 0:
                    self._torn(line_no + 1, size - pos)
                    break
            if pos == first + 1 and block_end == size - 1 and type(raw) is bytes:  # the whole file
                lines = raw.split(b"\n")[1:-1]
            else:
                lines = raw[pos:block_end].split(b"\n")
            yield from self._run(lines, line_no)
            line_no += len(lines)
            self.lines = line_no
            self._advance(block_end + 1 - pos)
            pos = block_end + 1
            if isinstance(raw, mmap.mmap) and _CAN_RELEASE:
                released = _release(raw, released, pos)

    def _zstd(self, raw: bytes | mmap.mmap) -> Iterator[Entry]:
        try:
            frames = scan_frames(raw)
        except FrameError as err:
            if err.frames_before:
                self._find("format.zstd", Severity.ERROR, f"corrupt Zstandard container: {err}")
            else:  # not even the header's frame: no header can be read, as from any other garbage
                self._unreadable(f"not a session log: corrupt Zstandard container ({err})")
            return
        complete = [f for f in frames if f.complete]
        if not complete:
            self._unreadable("not a session log: an empty or header-less Zstandard file (no complete frame)")
            return
        try:
            head = decompress_frame(raw[complete[0].start : complete[0].end])
        except zstandard.ZstdError as err:
            self._unreadable(f"not a session log: the first Zstandard frame does not decompress ({err})")
            return
        if head.count(b"\n") != 1 or not head.endswith(b"\n"):
            self._find("format.zstd", Severity.ERROR, "first frame is not exactly one header line")
            return
        entry = self._first_line(head[:-1])
        if entry is not None:
            yield entry
        if self.unsupported:
            return
        line_no = 1
        for frame in frames[1:]:
            self._advance(frame.end - frame.start)
            chunk = raw[frame.start : frame.end]
            if frame.complete:
                try:
                    text = decompress_frame(chunk)
                except zstandard.ZstdError as err:
                    self._find("format.zstd", Severity.ERROR, f"frame at byte {frame.start} does not decompress: {err}")
                    return
            else:
                text = decompress_torn(chunk)
                self._find(
                    "format.torn-frame", Severity.WARNING, f"torn final frame at byte {frame.start} (crash tail)"
                )
            lines = text.split(b"\n")
            tail = lines.pop()
            if lines:
                yield from self._run(lines, line_no)
                line_no += len(lines)
            if frame.complete and (tail or self._defect is not None):
                self._find(
                    "format.zstd",
                    Severity.ERROR,
                    f"complete frame at byte {frame.start} contains a torn or invalid JSONL record",
                    line_no + (1 if tail else 0),
                )
                return
            if tail:
                self._torn(line_no + 1, len(tail))

    def _advance(self, nbytes: int) -> None:
        """Tell `progress` that `nbytes` more input bytes were read; a whole read reports the file size."""
        self._consumed += nbytes
        if self.progress is not None and nbytes:
            self.progress(nbytes)

    # --- header -----------------------------------------------------------------------------

    def _first_line_without_lf(self, raw: bytes) -> None:
        try:
            value = parse_json_line(raw)
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
        try:
            value = parse_header_line(raw)
        except JsonLineError as err:
            if self.reading.mode is Mode.LENIENT and not raw.strip():
                self._unreadable("not a session log: the first line is blank", 1)
            else:
                self._unreadable(f"not a session log: the first line is not JSON ({err})", 1)
            return None
        if isinstance(value, dict) and value.get("type") == "session":
            self.header = value
            self._check_header(value)
            return None
        if isinstance(value, dict) and isinstance(value.get("type"), str):
            self.headerless = True
            self._find("format.headerless", Severity.WARNING, "no session header: the file holds bare events", 1)
            # the header parser kept -0 apart; bare events use JavaScript's view of it
            return self._record(1, raw)
        self._unreadable("not a session log: the first line is neither a session header nor an event", 1)
        return None

    def _check_header(self, h: dict[str, object]) -> None:
        """Version, header shape and retired fields, in the reference's order (formats.md §1, §3;
        session-log.md §4.2), and the version the file's name identifies (formats.md §2)."""
        shape, retired, unsupported = header_problems(h)
        self.version = format_version(h)
        if unsupported:
            self.unsupported = True
            self._find("format.version.newer", Severity.WARNING, f"{unsupported}: the log cannot be judged", 1)
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
            self._header_problem("not a session header: " + "; ".join(shape))
        if retired:
            self._header_problem(f"session header uses retired policy baseline fields: {', '.join(retired)}")
        cwd = h.get("cwd")
        if isinstance(cwd, str):
            if _PLACEHOLDER.search(cwd):
                self._find("format.header.placeholder", Severity.WARNING, f"cwd {cwd!r} holds a fixture placeholder", 1)
            elif not (cwd.startswith("/") or re.match(r"[A-Za-z]:[\\/]", cwd) or cwd.startswith("\\\\")):
                if self.version == CURRENT_FORMAT_VERSION:  # v4's own rule: an absolute cwd when present
                    self._header_problem(f"cwd {cwd!r} is not an absolute path (v4 headers require one)")
                else:
                    self._find("format.header.cwd", Severity.WARNING, f"cwd {cwd!r} is not an absolute path", 1)

    # --- the committed-prefix scan (§7.2) -------------------------------------------------------

    def _record(self, line_no: int, raw: bytes) -> Entry | None:
        try:
            value = decode_json(raw)
        except (msgspec.MsgspecError, RecursionError):
            return self._record_slow(line_no, raw)
        # fast paths: a well-formed row or event in the committed region
        if type(value) is dict and self._defect is None:
            index = self.event_count
            tag = value.get("type")
            if type(tag) is str and tag in ROW_TAGS and not self.marks_cut:
                try:
                    row = decode_row(value, tag)
                except RowError as err:
                    self._note_defect("format.malformed-row", f"malformed chunk row at line {line_no}: {err}", line_no)
                    return None
                if row.seq0 == index:  # here and below, `_committed` written out: this runs per record
                    self.event_count = index + len(row.members)
                    if self._schedule_only:
                        if self._others is not None:
                            self._others(line_no, index, None, row, raw)
                        return None
                    return Entry(line_no, index, None, row, raw)
                return self._record_value(line_no, raw, value)
            seq = value.get("seq")
            time = value.get("time")
            if (
                type(seq) is int
                and seq == index
                and type(time) is int
                and -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER
                and type(tag) is str
                and "data" in value
                and (
                    value.keys() <= _PLAIN_KEYS or (value.get("surfaceOp") == "append" and value.keys() <= _APPEND_KEYS)
                )
            ):
                self.event_count = index + 1
                if tag in CHECKED_TYPES:
                    self._check_load(value, line_no)
                telling = tag in _TELLING_TYPES and self._telling(tag, value, index, raw)
                if self._schedule_only and tag != SCHEDULE_CHANGE and not telling:
                    if self._others is not None:
                        self._others(line_no, index, value, None, raw)
                    return None
                return Entry(line_no, index, value, None, raw)
        return self._record_value(line_no, raw, value)

    # --- runs of complete lines ------------------------------------------------------------------

    def _run(self, lines: list[bytes], before: int) -> Iterator[Entry]:
        """The entries of complete `lines`, the first being line `before + 1`. Where only
        schedule changes are asked for and nobody hears the other records, the lines are
        decoded fast (envelope.py), and what the fast decoder refuses is read exactly; else
        line by line."""
        if self.fast and self._schedule_only and self._others is None:
            yield from self._fast(lines, before)
        else:
            yield from self._exact(lines, before)

    def _exact(self, lines: list[bytes], before: int) -> Iterator[Entry]:
        """The entries of `lines`, each read exactly (`_record`)."""
        for line in lines:
            before += 1
            entry = self._record(before, line)
            if entry is not None:
                yield entry

    def _fast(self, lines: list[bytes], before: int) -> Iterator[Entry]:
        """The entries of `lines`, decoded fast (a part of lines in one pass where the decoder
        takes them all, else line by line); each line it refuses, or whose record is out of line, is
        read exactly, and the records between go on fast. Past a defect every line goes the
        exact way."""
        records: list[Record | None] = []
        for k in range(0, len(lines), _DECODED_TOGETHER):
            part = lines[k : k + _DECODED_TOGETHER]
            try:
                records += decode_lines(part)
            except (msgspec.MsgspecError, RecursionError):
                records += map(_decoded, part)
        at, count = 0, len(records)
        while at < count:
            if self._defect is not None:
                yield from self._exact(lines[at:], before + at)
                return
            try:
                end = records.index(None, at)
            except ValueError:
                end = count
            stop = yield from self._window(records[at:end], lines[at:end], before + at)  # type: ignore[arg-type]
            at += stop
            if at < count:
                if records[at] is None:
                    self._learn(lines[at])
                yield from self._exact(lines[at : at + 1], before + at)
                at += 1

    @staticmethod
    def _learn(line: bytes) -> None:
        """Make the event class of the type of `line` when the decoder does not know it yet
        (most refusals are no unknown type: a new type is met once per process)."""
        try:
            value = parse_json_line(line)
        except JsonLineError:
            return
        tag = value.get("type") if isinstance(value, dict) else None
        if type(tag) is str:
            REGISTRY.event_class(tag)

    def _window(self, records: list[Record], lines: list[bytes], before: int) -> Generator[Entry, None, int]:
        """The entries of decoded `records` (line `before + 1` on), seq contiguity and row sizes
        checked for all at once, up to the first record out of line; returns how many were
        taken (the next is read exactly)."""
        kinds = list(map(type, records))
        sizes = [1] * len(records)
        rows = list(compress(range(len(kinds)), map(_ROW_CLASSES.__contains__, kinds)))
        if rows:
            _row_sizes(records, rows, sizes)
        starts = list(accumulate(sizes, initial=self.event_count))
        stop = len(records)
        if list(map(_SEQ, records)) != starts[:-1] or (sizes and min(sizes) < 0):
            out_of_line = zip(map(_SEQ, records), starts, sizes, strict=False)
            stop = next(i for i, (seq, at, n) in enumerate(out_of_line) if seq != at or n < 0)
        if self.marks_cut and rows:  # no rows in a v2+ log: the exact path makes the first one a defect
            stop = min(stop, rows[0])
        stop = self._surface_in_line(records, stop)
        known = _known_kinds()
        tag_of, message_ids = known.tag_of, self._load_checks.message_ids
        for i in compress(range(stop), map(known.checked.__contains__, kinds)):
            record = records[i]
            surely = surely_loads(tag_of[kinds[i]], record.data)  # type: ignore[attr-defined]
            if surely is None:
                self._check_load(self._event(record), before + i + 1)
            elif surely[1] is not None:
                message_ids[record.seq] = surely[1]
        for i, event in self._telling_records(records, kinds, starts, stop, lines).items():
            self.event_count = starts[i] + 1
            yield Entry(before + i + 1, starts[i], event or self._event(records[i]), None, _utf8(lines[i]))
        self.event_count = starts[stop]
        return stop

    def _telling_records(
        self, records: list[Record], kinds: list[type], starts: list[int], stop: int, lines: list[bytes]
    ) -> dict[int, dict[str, object] | None]:
        """Which of `records[:stop]` the reader yields, each with its event where deciding
        needed it decoded (else None): the schedule changes, and those the exact path finds
        telling (`_telling`): a v2+ marker that cuts the fork, an event of CLUE_TYPES whose line
        holds a needle (of the request headers only the log's first), a `schedule_*` tool event."""
        known = _known_kinds()
        change, marker, tools = known.change, known.marker, known.tools
        wanted = known.wanted_cut if self.marks_cut else known.wanted
        found: dict[int, dict[str, object] | None] = {}
        for i in compress(range(stop), map(wanted.__contains__, kinds)):
            kind = kinds[i]
            if kind is change:
                found[i] = None
            elif kind is marker:
                if self._cuts(event := self._event(records[i]), starts[i]):
                    found[i] = event
            elif kind in tools:
                tag = known.tag_of[kind]
                if self._tool_may_tell(tag, _utf8(lines[i])) and self._tool_telling(
                    tag, event := self._event(records[i])
                ):
                    found[i] = event
            elif self._bears_clues(known.tag_of[kind], _utf8(lines[i])):
                found[i] = None
        return found

    def _surface_in_line(self, records: list[Record], stop: int) -> int:
        """The first of `records[:stop]` whose surface metadata the exact path would judge (a
        replace spelt for another format version, a v2+ citation of a later or repeated seq),
        else `stop`: that record is read exactly. A plain `append` and v0/v1 citations (typed
        by the decoder) need no more. Found with attribute getters over the run (rows answer
        UNSET), so only the records that carry metadata are looked at one by one."""
        run = records[:stop]
        ops = list(map(_SURFACE_OP, run))
        carried = list(compress(range(stop), map(is_not, ops, repeat(UNSET))))
        odd = compress(carried, map(ne, map(ops.__getitem__, carried), repeat(APPEND)))
        shape = EVENT_SHAPES[self.version or 0]
        first = next((i for i in odd if object_problems(self._event(run[i]), shape)), stop)
        if self.marks_cut:
            cited = list(map(_CITED, run))
            for i in compress(range(first), map(is_not, cited, repeat(UNSET))):
                seqs = cited[i]
                if seqs and (max(seqs) >= run[i].seq or len(set(seqs)) < len(seqs)):
                    return i
        return first

    @staticmethod
    def _event(record: Record) -> dict[str, object]:
        """The event of a fast-decoded record, its data (and a replace surfaceOp) decoded exactly."""
        assert isinstance(record, Event)
        tag = record.__struct_config__.tag
        event = {"type": tag, "seq": record.seq, "time": record.time, "data": parse_json_line(bytes(record.data))}
        if record.sourceEventSeqs is not UNSET:
            event["sourceEventSeqs"] = list(record.sourceEventSeqs)
        if record.surfaceOp is not UNSET:
            op = record.surfaceOp
            event["surfaceOp"] = "append" if op == APPEND else parse_json_line(bytes(op))
        return event

    def _telling(self, tag: str, event: dict[str, object], index: int, raw: bytes | None) -> bool:
        """Whether an event that is no schedule change is yielded all the same: a marker that cuts
        the fork (v2+), or an event that may bear profile clues. (Its cut is noted either way.)"""
        if tag in TOOL_TYPES:
            return self._tool_may_tell(tag, raw) and self._tool_telling(tag, event)
        return (tag == END_SEED and self._cuts(event, index)) or (tag in CLUE_TYPES and self._bears_clues(tag, raw))

    def _tool_may_tell(self, tag: str, raw: bytes | None) -> bool:
        """Whether a tool event's bytes may make it telling (`_tool_telling`): a call's line holds
        `schedule_`, a result's the id of a call yielded and not yet answered. Most tool events
        are of other tools, and their data is never decoded."""
        if raw is None:  # re-encoded: its bytes are not kept
            return tag == TOOL_CALL or bool(self._schedule_calls)
        if tag == TOOL_CALL:
            return b"schedule_" in raw
        return any(needle in raw for needle in self._schedule_calls.values())

    def _tool_telling(self, tag: str, event: dict[str, object]) -> bool:
        """Whether a tool event is a `schedule_*` call, or the result of one yielded (its
        transcript is checked, invariant.transcripts)."""
        if tag == TOOL_CALL:
            call = schedule_call(event)
            if call is None:
                return False
            plain = _PLAIN_ID.fullmatch(call[0]) is not None
            self._schedule_calls[call[0]] = b'"' + call[0].encode() + b'"' if plain else b""
            return True
        answered = result_call_id(event)
        return answered is not None and self._schedule_calls.pop(answered, None) is not None

    def _bears_clues(self, tag: str, raw: bytes | None) -> bool:
        """Whether an event of CLUE_TYPES may bear profile clues (invariant.detect): its bytes hold
        a needle, or it was re-encoded (its bytes are not kept; its event is read for clues). Of
        the tool descriptions (`request/header`, one per model request), the first is read: the
        tools of a session are registered once."""
        if tag == REQUEST_HEADER:
            if self._tools_read:
                return False
            self._tools_read = True
        if raw is None:
            return True
        # each needle holds `schedule` or `SCHEDULE`, which most messages lack: two scans, not four
        return (b"schedule" in raw or b"SCHEDULE" in raw) and any(needle in raw for needle in NEEDLES)

    def _cuts(self, event: dict[str, object], index: int) -> bool:
        """Whether a committed `session/end-seed` event cuts the fork here (v2+, `inherited: true`;
        formats.md §5); the last one that does is the cut."""
        data = event.get("data")
        if self.marks_cut and type(data) is dict and data.get("inherited") is True:
            self.marker_cut = index
            return True
        return False

    def _record_slow(self, line_no: int, raw: bytes) -> Entry | None:
        if self.reading.mode is Mode.LENIENT and (not raw or raw.isspace()):
            return None
        try:
            value = parse_json_line(raw)
        except JsonLineError as err:
            code = "format.blank-line" if not raw.strip() else "format.unparsable"
            text = "blank line" if not raw.strip() else f"unparsable record ({err})"
            self._note_defect(code, f"{text} at line {line_no}", line_no)
            return None
        return self._record_value(line_no, None, value)

    def _record_value(self, line_no: int, raw: bytes | None, value: object) -> Entry | None:
        row = None
        tag = value.get("type") if isinstance(value, dict) else None
        if type(tag) is str and tag in ROW_TAGS:
            assert isinstance(value, dict)
            if self.marks_cut:
                message = f"packed chunk row at line {line_no} in a v{self.version} log (rows exist in v0 and v1 only)"
                self._note_defect("format.malformed-row", message, line_no)
                return None
            try:
                row = decode_row(value, tag)
            except RowError as err:
                self._note_defect("format.malformed-row", f"malformed chunk row at line {line_no}: {err}", line_no)
                return None
        if self._defect is not None:
            if tag == TURN_END:
                self._fatal = True
            return None
        index = self.event_count
        if row is not None:
            if row.seq0 != index:
                self._note_defect(
                    "format.seq-gap", f"seq gap at line {line_no} (expected {index}, got {row.seq0})", line_no
                )
                return None
            self.event_count += len(row)
            return self._committed(line_no, index, None, row, raw)
        seq = value.get("seq") if isinstance(value, dict) else None
        if type(seq) not in (int, float) or seq != index:
            got = "no seq" if seq is None else shown(seq)
            self._note_defect("format.seq-gap", f"seq gap at line {line_no} (expected {index}, got {got})", line_no)
            if tag == TURN_END:
                self._fatal = True
            return None
        assert isinstance(value, dict)
        self._check_envelope(value, line_no)
        if type(tag) is str and tag in CHECKED_TYPES:
            self._check_load(value, line_no)
        self.event_count += 1
        return self._committed(line_no, index, value, None, raw)

    def _committed(
        self, line_no: int, index: int, event: dict[str, object] | None, row: ChunkRow | None, raw: bytes | None
    ) -> Entry | None:
        """A committed record as the Entry to yield, or None when `schedule_only` keeps it back
        (a row, or an event that is no `schedule/change` nor a cutting marker): then `others`
        hears it."""
        tag = None if event is None else event.get("type")
        telling = type(tag) is str and event is not None and self._telling(tag, event, index, raw)
        if self._schedule_only and tag != SCHEDULE_CHANGE and not telling:
            if self._others is not None:
                self._others(line_no, index, event, row, raw)
            return None
        return Entry(line_no, index, event, row, raw)

    def _check_envelope(self, event: dict[str, object], line_no: int) -> None:
        """The envelope of the log's version (formats.md §4; a headerless log reads as v0)."""
        problems = object_problems(event, EVENT_SHAPES[self.version or 0])
        if self.marks_cut and not problems:
            problems = citation_problems(event, self.event_count)
        if problems:
            self._strict_problem("format.envelope", f"event envelope at line {line_no}: {'; '.join(problems)}", line_no)

    def _check_load(self, event: dict[str, object], line_no: int) -> None:
        """The session layer's load checks (invariant.sessionload, session-log.md §11.2): the
        harness refuses a log holding an event they refuse (in lenient mode, a warning)."""
        problem = self._load_checks.refusal(event)
        if problem is not None:
            self._strict_problem("format.session", f"event {event.get('seq')} at line {line_no}: {problem}", line_no)

    def _note_defect(self, code: str, message: str, line_no: int) -> None:
        if self._defect is None:
            self._defect = _Defect(code, message, line_no)

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
        self._find("format.is-seeded", Severity.ERROR, message, 1)  # refused in every mode (formats.md §5)

    def _torn(self, line_no: int, size: int) -> None:
        self._find(
            "format.torn-tail",
            Severity.WARNING,
            f"line {line_no} has no terminating LF; its {size} bytes are dropped",
            line_no,
        )

    def _close_scan(self) -> None:
        self._check_seeded()
        d = self._defect
        if d is None:
            return
        if self._fatal:
            self._find(
                d.code, Severity.ERROR, f"{d.message} before a committed turn/end: the log cannot be loaded", d.line
            )
        else:
            self._find(
                d.code, Severity.WARNING, f"{d.message}; the records from there on are a dropped crash tail", d.line
            )
