"""The committed-record scan (session-log.md §7.2), written once: which records of a log are
committed, at which event index, and where the committed prefix ends.

The reference reads records in order, each event's `seq` (a packed row's `seq0`) being the
next event index; the first record out of line (unparsable, a seq gap, a malformed row, a row
in a v2+ log) ends the committed prefix, and everything after it is a dropped crash tail,
unless a `turn/end` follows it, which makes the log unloadable (a committed turn ended after
the defect). Both of the reader's paths feed this scan: the exact path record by record
(`take`), the fast decoder a whole run it found in line (`advance`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from invariant.jsvalue import shown
from invariant.logshapes import ROW_TAGS
from replay.lines.chunks import ChunkRow, RowError, decode_row

TURN_END = "turn/end"


@dataclass(frozen=True)
class Defect:
    """The record that ended the committed prefix: a finding's code, its message, line and,
    where the record has one, the key it is about (a JSON pointer)."""

    code: str
    message: str
    line: int
    pointer: str | None = None


class Committed(NamedTuple):
    """A committed record: the index of its first event, and the event or the packed row."""

    event_index: int
    event: dict[str, object] | None
    row: ChunkRow | None


@dataclass
class CommittedScan:
    """The scan's state over one log: the events committed so far and the first defect."""

    rows_allowed: bool = True
    """Packed rows exist in v0 and v1 only (formats.md §3); in a v2+ log one is a defect."""
    version: int | None = None
    """The format version named in a defect's message."""
    event_count: int = 0
    defect: Defect | None = None
    fatal: bool = False
    """A `turn/end` came after the defect: the log cannot be loaded."""

    def take(self, line: int, value: object) -> Committed | None:
        """The committed record `value` (line `line`'s JSON value) makes, or None when it is not
        one: out of line (the first such is the defect) or past the defect."""
        tag = value.get("type") if type(value) is dict else None  # JSON objects decode to plain dicts
        row = None
        if tag in ROW_TAGS:  # a tuple of strings: compared, never hashed
            assert isinstance(value, dict)
            if not self.rows_allowed:
                self.note(
                    "format.malformed-row",
                    f"packed chunk row at line {line} in a v{self.version} log (rows exist in v0 and v1 only)",
                    line,
                )
                return None
            try:
                row = decode_row(value, tag)
            except RowError as err:
                self.note("format.malformed-row", f"malformed chunk row at line {line}: {err}", line)
                return None
        if self.defect is not None:
            self.fatal = self.fatal or tag == TURN_END
            return None
        index = self.event_count
        if row is not None:
            if row.seq0 != index:
                self.note("format.seq-gap", f"seq gap at line {line} (expected {index}, got {row.seq0})", line, "/seq0")
                return None
            self.event_count += len(row)
            return Committed(index, None, row)
        seq = value.get("seq") if type(value) is dict else None
        if seq != index or type(seq) not in (int, float):  # True == 1, but is no seq
            got = "no seq" if seq is None else shown(seq)
            self.note("format.seq-gap", f"seq gap at line {line} (expected {index}, got {got})", line, "/seq")
            self.fatal = self.fatal or tag == TURN_END
            return None
        assert isinstance(value, dict)
        self.event_count += 1
        return Committed(index, value, None)

    def unparsable(self, line: int, blank: bool, why: str) -> None:
        """Line `line` holds no JSON value (blank, or not JSON): out of line."""
        text = "blank line" if blank else f"unparsable record ({why})"
        self.note("format.blank-line" if blank else "format.unparsable", f"{text} at line {line}", line)

    def advance(self, event_count: int) -> None:
        """A run of records the fast decoder found in line, up to `event_count` events."""
        assert self.defect is None and event_count >= self.event_count
        self.event_count = event_count

    def note(self, code: str, message: str, line: int, pointer: str | None = None) -> None:
        """A record out of line: the first is the defect."""
        if self.defect is None:
            self.defect = Defect(code, message, line, pointer)
