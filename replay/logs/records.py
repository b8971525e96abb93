"""The records stage: a log's lines after the header, read the exact way, into committed events.

Each line is decoded as `JSON.parse` reads it (jsonline.py), the committed-record scan
(committed.py) says whether it is committed and which event(s) it stands for (chunk rows, seq
contiguity, the defect ending the committed prefix, §7.2), and a committed event is judged: its
envelope, its step of the conversation surface, the session layer's load checks (§11.2), and the
fork cut of a v2+ log. What the caller asked for is yielded as an `Entry`. The fast path
(fastpath.py) reads runs of lines behind the same interface and comes here for what it
cannot vouch for. The stage's whole state is a value at any committed line (`saved`).
"""

from __future__ import annotations

import copy
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import NamedTuple, Protocol, TypeVar

import msgspec

from invariant import SCHEDULE_CHANGE
from invariant.findings import Severity
from invariant.jsvalue import MAX_SAFE_INTEGER
from invariant.logshapes import END_SEED, EVENT_SHAPES, SURFACE_TYPES, surface_problems
from invariant.readers import NOTHING_SEEN, TypesSeen, guarded
from invariant.sessionload import CHECKED_TYPES, LoadChecks
from invariant.shapes import located_problems
from invariant.surface import Surface
from replay.lines.chunks import ChunkRow
from replay.lines.jsonline import (
    BeyondBound,
    DeepBudget,
    JsonLineError,
    data_of_line,
    decode_json,
    located,
    parse_json_line,
)
from replay.logs.committed import TURN_END, CommittedScan
from replay.logs.frames import BlankLines, FrameBatch, Lines, LineShifts, LongLine
from replay.logs.header import Header, too_long
from replay.logs.notes import Notes

_T = TypeVar("_T")
_PLAIN_KEYS = frozenset({"type", "seq", "time", "data"})
_APPEND_KEYS = _PLAIN_KEYS | {"surfaceOp"}
_SCANNED_TOGETHER = 1 << 16
_SPELLS_TURN_END = (b"turn/end", b"turn\\/end", b"\\u")
"""What a line whose value is a `turn/end` event holds: a JSON string spells a letter as itself
or by a `\\u` escape, and `/` as itself, `\\/` or a `\\u` escape."""


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


@dataclass(frozen=True)
class RecordsState:
    """The records stage saved at a committed line (readstate.py)."""

    scan: CommittedScan
    load_checks: LoadChecks
    surface: Surface
    select: Selector | None
    """The selector remembers what it saw (the calls awaiting their results)."""
    marker_cut: int | None
    deep_left: int
    seen: TypesSeen = NOTHING_SEEN


@dataclass
class Records:
    """The lines of one log after its header, read into committed records, one by one."""

    notes: Notes
    budget: DeepBudget
    schedule_only: bool = False
    """Yield only the schedule changes, the cutting markers and what `select` wants."""
    others: OtherRecords | None = None
    select: Selector | None = None
    version: int | None = None
    marks_cut: bool = False
    scan: CommittedScan = field(default_factory=CommittedScan)
    load_checks: LoadChecks = field(default_factory=LoadChecks)
    """The session layer's load checks, fed every committed event of CHECKED_TYPES in order."""
    surface: Surface = field(default_factory=lambda: Surface(parse=data_of_line))
    """The conversation surface the committed events build (session-log.md §5.1)."""
    marker_cut: int | None = None
    """v2+: the index of the last committed `session/end-seed` marker with `inherited: true`."""
    seen: TypesSeen = NOTHING_SEEN
    """The first committed event of a type the 611615650f reader's guard refuses, and the first
    marked `ignorable: true` (invariant.readers: whether they matter is the log's reader's to say)."""
    batch: tuple[FrameBatch, int] | None = None
    """While a batch of Zstandard frames is read, it and the number of the line before it."""
    shifted: LineShifts | None = None
    """While a run holding packed rows that stand for a line each of their members is read (a
    store's session read packed: `frames.Block.spans`), how its lines' numbers shift."""

    def after(self, head: Header) -> None:
        """Read the lines after this header by its version's rules."""
        assert head.header is not None
        named = head.header.get("id")
        self.surface.session_id = named if type(named) is str else ""  # names legacy tool results' ids
        self.version, self.marks_cut = head.version, head.marks_cut
        self.scan = CommittedScan(rows_allowed=not head.marks_cut, version=head.version)

    def run(self, lines: Lines, before: int, spans: tuple[tuple[int, int], ...] = ()) -> Iterator[Entry]:
        """The entries of complete `lines` (each with its LF), the first being line `before + 1`
        (and each after a packed row of `spans`, the lines of its members later: `at`).
        Blank lines (empty, or ASCII whitespace only) come apart as runs (frames.BlankLines) in
        lenient mode, which skips them, here and only here; a run in strict mode (a blank line
        joined from pieces) is a defect at its first (a blank line is no record), and the rest
        cannot matter past it (none spells a `turn/end`). Lists of lines go on to `lines`."""
        self.shifted = LineShifts.of(before, spans)
        if type(lines) is LongLine:  # no record: a defect, in either mode
            if self.scan.defect is None:
                self.scan.unparsable(before + 1, False, too_long(lines.size - 1))
        elif type(lines) is not BlankLines:
            yield from self.lines(lines, before)  # type: ignore[arg-type]
        elif self.notes.strict and self.scan.defect is None:
            self.scan.unparsable(before + 1, True, "")

    def at(self, line: int) -> int:
        """The number of the line read as line `line` of the run being read (`LineShifts`)."""
        return line if self.shifted is None else self.shifted.at(line)

    def lines(self, lines: list[bytes], before: int) -> Iterator[Entry]:
        """The entries of `lines` (each with its LF), each read exactly (`record`); past a
        defect, only what may still matter (`past_defect`)."""
        k = 0
        try:
            for k, line in enumerate(lines):
                if self.scan.defect is not None:
                    self.past_defect(lines[k:], before + k)
                    return
                entry = self.record(self.at(before + k + 1), line[:-1])
                if entry is not None:
                    yield entry
        except BeyondBound as bound:  # (located at its record's line: a block's first is no record's)
            raise located(bound, self.at(before + k + 1)) from None

    def past_defect(self, lines: list[bytes], before: int) -> None:
        """Past the defect no record is committed or checked: only a `turn/end` still matters (it
        makes the log unloadable, committed.py). Its line spells `turn/end` (_SPELLS_TURN_END):
        only such lines are read, found by a scan in C (a crafted tail of millions of lines
        costs that scan, not a decode each). In a batch of Zstandard frames, only the lines of
        the defect's own frame are scanned."""
        if self.batch is not None:
            assert self.scan.defect is not None
            _, last_line = frame_of(*self.batch, self.scan.defect.line)
            lines = lines[: max(0, last_line - before)]
        for k in range(0, len(lines), _SCANNED_TOGETHER):
            if self.scan.fatal:
                return
            text = b"".join(lines[k : k + _SCANNED_TOGETHER])  # in parts: a join holds a buffer per line
            for needle in _SPELLS_TURN_END:
                at = text.find(needle)
                while at >= 0:
                    start = text.rfind(b"\n", 0, at) + 1
                    end = text.find(b"\n", at)
                    end = len(text) if end < 0 else end
                    try:
                        ends = self._ends_turn(text[start:end])
                    except BeyondBound as bound:
                        raise located(bound, self.at(before + k + text.count(b"\n", 0, start) + 1)) from None
                    if ends:
                        self.scan.fatal = True
                        return
                    at = text.find(needle, end)

    def _ends_turn(self, line: bytes) -> bool:
        """Whether a line's JSON value is a `turn/end` event (what still matters past the defect)."""
        try:
            value = parse_json_line(line, self.budget)  # (msgspec first, as every line)
        except JsonLineError:
            return False
        return type(value) is dict and value.get("type") == TURN_END

    def value_of(self, raw: bytes) -> tuple[object, bytes | None]:
        """A line's JSON value as the reference reads it, and its bytes where they are kept (msgspec
        read them; a line read another way, JSON.parse's fallback, keeps none: a hearer writes its
        value instead). Raises JsonLineError."""
        try:
            return decode_json(raw), raw
        except (msgspec.MsgspecError, RecursionError):
            return parse_json_line(raw, self.budget), None

    def record(self, line_no: int, raw: bytes) -> Entry | None:
        """One line decoded into JSON values, the scan's verdict on it, and the judgement of a
        committed event (envelope, load checks), as the reference reads it."""
        try:
            value, line = self.value_of(raw)
        except JsonLineError as err:
            self.scan.unparsable(line_no, not raw.strip(), str(err))
            return None
        taken = self.scan.take(line_no, value)
        if taken is None:
            return None
        index, event, row = taken
        tag = None
        if event is not None:
            self._saw(event, index, line_no)
            if plain_envelope(event) or self._check_envelope(event, index, line_no):
                self._fold_surface(event, index, line_no)
            tag = event.get("type")
            if type(tag) is str and tag in CHECKED_TYPES:
                self.check_load(event, line_no)
        # the committed record: yielded, or kept back by `schedule_only` (then `others` hears it)
        if not self.schedule_only:
            if tag == END_SEED:
                self.cuts(event, index)  # type: ignore[arg-type]
            return Entry(line_no, index, event, row, line)
        if tag == SCHEDULE_CHANGE or (type(tag) is str and self._telling(tag, event, index, raw)):  # type: ignore[arg-type]
            return Entry(line_no, index, event, row, line)
        if self.others is not None:
            self.others(line_no, index, event, row, line)
        return None

    def _saw(self, event: dict[str, object], index: int, line_no: int) -> None:
        """Keep the event in `seen` where it is the first of its kind there."""
        seen, marked = self.seen, event.get("ignorable") is True
        if marked and seen.marked is None:
            self.seen = replace(seen, marked=(index, line_no))
        elif guarded(tag := event.get("type"), marked):
            self.unknown_at(index, line_no, tag)

    def unknown_at(self, index: int, line_no: int, tag: object) -> None:
        """An unmarked event of a type the guard refuses, kept where it is the first (the fast
        path tells the first of a run)."""
        if self.seen.unknown is None:
            self.seen = replace(self.seen, unknown=(index, line_no, tag))

    def _telling(self, tag: str, event: dict[str, object], index: int, raw: bytes) -> bool:
        """Whether an event that is no schedule change is yielded all the same: a marker that cuts
        the fork (v2+; its cut is noted either way), or an event the selector wants."""
        if tag == END_SEED:
            return self.cuts(event, index)
        select = self.select
        return select is not None and tag in select.types and select.by_bytes(tag, raw) and select.by_event(tag, event)

    def _check_envelope(self, event: dict[str, object], index: int, line_no: int) -> bool:
        """The envelope of the log's version (formats.md §4; a headerless log reads as v0);
        whether it holds."""
        located = located_problems(event, EVENT_SHAPES[self.version or 0]) or surface_problems(event, index)
        if located:
            message = f"event envelope at line {line_no}: {'; '.join(m for _, m in located)}"
            self.notes.strict_problem("format.envelope", message, line_no, located[0][0], index)
        return not located

    def _fold_surface(self, event: dict[str, object], index: int, line_no: int) -> None:
        """The event's step of the conversation surface (invariant.surface), its envelope being
        sound; an event it refuses leaves the surface as it was."""
        problems = self.surface.step(event, index, self.version or 0)
        if problems:
            pointer, message = problems[0]
            self.notes.strict_problem(
                "format.surface", f"surface at line {line_no}: {message}", line_no, pointer, index
            )

    def check_load(self, event: dict[str, object], line_no: int) -> None:
        """The session layer's load checks (invariant.sessionload, session-log.md §11.2): the
        harness refuses a log holding an event they refuse (in lenient mode, a warning)."""
        problem = self.load_checks.refusal(event)
        if problem is not None:
            seq = event.get("seq")
            index = seq if type(seq) is int else None
            message = f"event {seq} at line {line_no}: {problem}"
            self.notes.strict_problem("format.session", message, line_no, "/data", index)

    def cuts(self, event: dict[str, object], index: int) -> bool:
        """Whether a committed `session/end-seed` event cuts the fork here (v2+, `inherited: true`;
        formats.md §5); the last one that does is the cut."""
        data = event.get("data")
        if self.marks_cut and type(data) is dict and data.get("inherited") is True:
            self.marker_cut = index
            return True
        return False

    def close(self, header: dict[str, object] | None) -> None:
        """The findings only the end of the committed prefix tells: the defect that ended it
        (fatal before a committed turn/end), and a fork cut the header's isSeeded denies."""
        self._check_seeded(header)
        d = self.scan.defect
        if d is not None:
            if self.scan.fatal:
                message = f"{d.message} before a committed turn/end: the log cannot be loaded"
                self.notes.find(d.code, Severity.ERROR, message, d.line, d.pointer)
            else:
                message = f"{d.message}; the records from there on are a dropped crash tail"
                self.notes.find(d.code, Severity.WARNING, message, d.line, d.pointer)

    def _check_seeded(self, header: dict[str, object] | None) -> None:
        """v2+: `isSeeded` true needs an inherited marker, false forbids one (formats.md §5):
        either mismatch refuses the log in every mode, the fork cut being undecidable (lenient
        mode eases header fields, not the cut)."""
        seeded = None if header is None else header.get("isSeeded")
        if not self.marks_cut or type(seeded) is not bool or seeded == (self.marker_cut is not None):
            return
        if seeded:
            message = "the header says isSeeded, but no session/end-seed marker with inherited: true is committed"
        else:
            message = f"the header says not isSeeded, but the session/end-seed at event {self.marker_cut} is inherited"
        self.notes.find("format.is-seeded", Severity.ERROR, message, 1, "/isSeeded")  # refused in every mode

    def saved(self, more: bool) -> RecordsState:
        """The stage now: where it reads more records past this line (`more`), a copy as deep
        as it changes them; else its values as they are (a read's end changes none of them)."""
        keep = _fresh if more else _same
        s = self
        return RecordsState(
            keep(s.scan), keep(s.load_checks), keep(s.surface), keep(s.select), s.marker_cut, s.budget.left, s.seen
        )

    def resume(self, state: RecordsState, head: Header) -> None:
        """Go on from `state`, saved after `head` (copied: a state can be resumed from more than once)."""
        self.version, self.marks_cut = head.version, head.marks_cut
        self.scan, self.load_checks, self.surface = _fresh(state.scan), _fresh(state.load_checks), _fresh(state.surface)
        self.select, self.marker_cut, self.budget.left = _fresh(state.select), state.marker_cut, state.deep_left
        self.seen = state.seen


def frame_of(batch: FrameBatch, before: int, line: int) -> tuple[int, int]:
    """(which frame of `batch`, its first line being `before + 1`, holds line `line`, the number
    of that frame's last line); a line before the batch is its first frame's."""
    ends = batch.line_ends(before)
    k = bisect_left(ends, line)
    return k, ends[k]


def _same(value: _T) -> _T:
    return value


def _fresh(value: _T) -> _T:
    """A copy of a value as deep as a reader changes it: an object (the committed scan, the
    surface, the load checks, the selector) copied with each list and dict it holds. What they
    hold deeper (events, findings, defects) no reader changes. (No deep copy: a value may nest
    past any recursion limit.)"""
    if not hasattr(value, "__dict__"):
        return value  # None, a frozen value
    fresh = copy.copy(value)
    for name, held in vars(value).items():
        if type(held) is list or type(held) is dict:
            object.__setattr__(fresh, name, held.copy())  # (past a frozen dataclass's guard too)
    return fresh
