"""Staging for the DuckDB replay: one pass over a session log writes the files DuckDB loads in bulk.

Every committed record is described by one line of fields separated by US (0x1F, a control
character no JSON text holds raw, so no field needs escaping): session, line, index, whether
it is a packed row, its type and time (when plain, see `_plain_type`; a row's `time0`), a row's
member times less its `time0` (offsets: short numbers, cheaper to write and to store than the
times). The session's seedLength is not among them: the reader hands records over as it reads
them, before `seed` is called, and the loader adds it per session. Then either
- **direct**: the record's length in bytes (`lines` file), and DuckDB reads the record itself
  from the log file, line by line beside these descriptions. Taken for a plain log file whose
  every line is the header or a committed record and which DuckDB's line reader splits as the
  reference's reader does (no CR, no byte-order mark, a final LF); or
- **copied**: the record's own bytes (`records` file), for every other log (zstd, stdin, a
  torn tail, refused or re-encoded records); or
- **inline**: copied, but into memory and returned with the session, for a log smaller than
  INLINE_BYTES (most real sessions): the loader writes a batch's inline records to one file.
The `schedule/change` records are also copied to a small table of their own, so that decoding
them never scans the large records table. The fold's steps become the (small) `schedules` and
`dispatches` rows (NDJSON); the session's report becomes its `sessions` and `violations` rows.
The small tables' rows are returned with the session rather than written to files of its own:
creating a file costs more than writing its few rows (up to 0.5 ms, measured), and the replay
gathers every session's rows into one file per table anyway.
"""

from __future__ import annotations

import io
import mmap
import os
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import IO, Any, NamedTuple

import msgspec

from invariant import CreateChange, DeleteChange, DispatchChange, Step
from invariant.changes import ONE_SHOT_KINDS
from invariant.jsvalue import safe_integer
from invariant.ledger import LedgerRow, owned_from
from replay.audit.fanout import file_size
from replay.cache.cached import beside
from replay.judge.report import SessionReport
from replay.judge.verify import Judgement, verify_log
from replay.lines import deepjson
from replay.lines.chunks import ChunkRow
from replay.logs.logfile import Entry, SessionLog
from replay.reading import DEFAULT_READING, Reading
from replay.sources.bytesource import Data, framed
from replay.sources.inputs import UNSIZED, Found, identity, word_for
from replay.sources.inputs import digest as content_digest
from replay.sources.sqlitenames import maybe_sqlite

WRITE_BUFFER = 1 << 20
"""Staging writes go to the kernel in 1 MB pieces (the default 8 KB costs a system call per few records)."""

FIELD_FILES = ("records", "lines", "changes", "inline", "chunk_events")
SEP = b"\x1f"
_SKIP = SEP * 7 + b"\n"
"""The `lines` row of a header line: no session key, so the loader skips it."""
_BOM = b"\xef\xbb\xbf"


def staged_name(table: str, key: int) -> str:
    """The staging file of one session's rows for `table` (US-separated fields or NDJSON)."""
    return f"{table}-{key:08d}.{'us' if table in FIELD_FILES else 'jsonl'}"


class NotDirect(Exception):
    """Raised by a direct stager (see the module docstring) when the log turns out not to be one
    DuckDB may read line by line; `stage_session` then stages it again by copying."""


SMALL_TABLES = ("sessions", "schedules", "dispatches", "violations", "violation_related", "changes", "chunk_events")


def _ledger_fields(row: LedgerRow) -> bytes:
    """A change's ledger columns as staged: owned (empty: unknown) and status."""
    owned = b"" if row.owned is None else b"true" if row.owned else b"false"
    return b"%s\x1f%s\x1f" % (owned, row.status.value.encode())


class StagedSession(NamedTuple):
    report: SessionReport
    source: str | None
    """The log file DuckDB reads the records from (direct staging), or None (copied)."""
    owned_from: int | None
    """The session's seedLength, when valid (see `owned_from`)."""
    small: dict[str, bytes]
    """The session's rows of each of the SMALL_TABLES it has rows in, as they are staged in files."""
    records: bytes | None = None
    """The session's records staged inline (as a `records` file holds them), else None."""
    longest: int = 0
    """The longest line DuckDB reads for the session (a staged line, a small table's row, or a
    line of the log)."""
    chunk_events: str | None = None
    """The file of its chunk events, when it is staged (not inline) and holds packed rows; else
    they are among its small rows."""
    source_row: tuple[int | None, str | None, str] = (None, None, "")
    """What the database records of the file read (`sources`): its size and the digest of those
    bytes (None for a stream: never found unchanged), and the generations beside it."""


INLINE_BYTES = 1 << 20
"""A log smaller than this is staged inline. For a small log, creating its staging file (up to
0.5 ms here) and DuckDB opening two files for it cost more than copying its records: 3,000
sessions of 9 KB (the size of the harness's real logs) replay in 1.5-1.6 s inline, 3.1-3.8 s
staged in files (verify: 0.6 s)."""


def _may_read_directly(path: str) -> bool:
    """A plain (not zstd) log file that can be opened, under a name DuckDB can be given (UTF-8:
    a name with undecodable bytes has none); the pass then checks each line."""
    try:
        os.path.abspath(path).encode("utf-8")
        return not framed(path)
    except (OSError, UnicodeEncodeError):
        return False


def _split_like_duckdb(path: str, log: SessionLog, records_to: int) -> bool:
    """DuckDB's line reader sees the lines the reader split, every one after the first a record
    up to line `records_to`: the file ends with LF (no torn tail) and holds no CR (DuckDB ends a
    line there) and no byte-order mark (DuckDB drops it)."""
    if log.lines != records_to or records_to == 0:
        return False
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return data[:3] != _BOM and data[-1:] == b"\n" and data.find(b"\r") < 0


def _dumps(value: object) -> bytes:
    """Compact JSON for DuckDB to read, of a row derived from a log (safe integers only).

    Where msgspec cannot write the value (a lone surrogate, -0 as a float subclass, nesting
    deeper than it goes), `deepjson.dumps` writes it as JavaScript holds it.
    """
    try:
        return _encode(value)
    except (TypeError, UnicodeEncodeError, RecursionError):
        return deepjson.dumps(value).encode("utf-8")


_encode = msgspec.json.Encoder().encode


_BIGINT_MIN, _BIGINT_MAX = -(1 << 63), (1 << 63) - 1


_PLAIN_TYPES: dict[str, bytes] = {}
"""Event types seen, encoded when plain (else b""): a log repeats a few dozen types."""
_PLAIN_TYPES_KEPT = 4096


def _plain_type(tag: object) -> bytes:
    """An event type as its staging field, or b"" when it is not plain: an ASCII printable
    string (nothing a field would need to escape). DuckDB takes a non-plain type (and then
    the time) from the record itself."""
    if type(tag) is not str:
        return b""
    encoded = _PLAIN_TYPES.get(tag)
    if encoded is None:
        encoded = tag.encode() if tag.isascii() and tag.isprintable() and tag else b""
        if len(_PLAIN_TYPES) < _PLAIN_TYPES_KEPT:
            _PLAIN_TYPES[tag] = encoded
    return encoded


@dataclass
class _Schedule:
    row: dict[str, Any]
    ended: bool = False


class SessionStager:
    """The verify_log sink (a SessionSink) that writes one session's staging rows."""

    def __init__(self, key: int, out: Path, source: str | None = None, inline: bool = False) -> None:
        self.key = key
        self.out = out
        self.source = source
        """The log file, when staging directly (see the module docstring)."""
        self.next_line = 1
        self.stack = ExitStack()
        """Closes the files opened so far (by `finish` or `abort`)."""
        self.written: list[Path] = []
        self.inline = io.BytesIO() if inline else None
        big = "records" if source is None else "lines"  # the one large file: the other is not written
        self.described = self.inline if self.inline is not None else self._open(big, WRITE_BUFFER)
        """`lines` (direct: one description per line) or `records` (copied or inline: descriptions
        and records)."""
        self.longest = 0
        """The longest line staged or read directly so far (bytes, description fields included),
        a small table's row included."""
        self.small: dict[str, list[bytes]] = {}
        self.chunk_events: Path | None = None
        """The file of a staged (not inline) session's chunk events, once it has one: they are as
        large as its packed rows, which a gigabyte log holds most of, so they are not held."""
        self._chunks: IO[bytes] | None = None
        self.head = b"%d\x1f" % key
        """The fields every description starts with (the session)."""
        self.owned_from: int | None = None
        self.changes: list[tuple[bytes, bytes]] = []
        """The `schedule/change` records: their description fields and bytes as staged."""
        self.schedules: dict[str, _Schedule] = {}
        self.ledger: tuple[LedgerRow, ...] = ()

    def _open(self, table: str, buffering: int = -1) -> IO[bytes]:
        path = self.out / staged_name(table, self.key)
        self.written.append(path)
        return self.stack.enter_context(open(path, "wb", buffering=buffering))

    def _write(self, table: str, data: bytes) -> None:
        """Append a row (one line) to one of the small tables' rows."""
        rows = self.small.get(table)
        if rows is None:
            rows = self.small[table] = []
        rows.append(data)
        self.longest = max(self.longest, len(data))

    def _chunk_events(self, row: bytes) -> None:
        """A packed row's events: among the small rows of an inline session, else in its file."""
        if self.inline is not None:
            self._write("chunk_events", row)
            return
        if self._chunks is None:
            self._chunks = self._open("chunk_events", WRITE_BUFFER)
            self.chunk_events = self.written[-1]
        self._chunks.write(row)
        self.longest = max(self.longest, len(row))

    def small_rows(self) -> dict[str, bytes]:
        """Each small table's rows, joined (the longest of them counted in `longest`)."""
        rows = {table: b"".join(rows) for table, rows in self.small.items()}
        if self.changes:  # each with its ledger row's owned and status (invariant.ledger)
            head = b"%d\x1f" % self.key
            lines = [
                b"%s%s%s\x1f%s\n" % (head, _ledger_fields(row), fields, raw)
                for (fields, raw), row in zip(self.changes, self.ledger, strict=True)
            ]
            self.longest = max(self.longest, *map(len, lines))
            rows["changes"] = b"".join(lines)
        return rows

    def schedule_change(self, entry: Entry) -> None:
        """A `schedule/change` event: described, and copied to the changes."""
        self.changes.append(self.other_record(entry.line, entry.event_index, entry.event, entry.row, entry.raw))

    def judged(self, seed: object, judgement: Judgement) -> None:
        """Owned events are those at or after `seed`; each applied change followed into the
        schedules and dispatches, as its ledger row says. (Records are described without the
        seed: the loader adds it per session.)"""
        self.owned_from = owned_from(seed)
        self.ledger = judgement.ledger
        for (entry, _), row in zip(judgement.steps, judgement.ledger, strict=True):
            if row.step is not None:
                self._step(entry, row.step, row.batch)

    def other_record(
        self, line: int, index: int, event: dict[str, object] | None, row: ChunkRow | None, raw: bytes | None
    ) -> tuple[bytes, bytes]:
        """Describe one record; return its fields and its bytes as staged."""
        if row is None:
            assert event is not None
            # type and time, when plain: a type `_plain_type` keeps and an integer time DuckDB
            # holds as BIGINT; else two empty fields (NULL), and DuckDB reads both from the record
            time = event.get("time")
            if type(time) is int and _BIGINT_MIN <= time <= _BIGINT_MAX and (tag := _plain_type(event.get("type"))):
                fields = b"%d\x1f%d\x1f0\x1f%s\x1f%d\x1f" % (line, index, tag, time)
            else:
                fields = b"%d\x1f%d\x1f0\x1f\x1f\x1f" % (line, index)
        else:
            offsets = _encode(list(accumulate(row.dt, initial=0)))  # safe integers only
            fields = b"%d\x1f%d\x1f1\x1f%s\x1f%d\x1f%s" % (line, index, row.tag.encode(), row.time0, offsets)
            # its events as the reader expands them (chunks.py), never again in SQL: one line a row
            events = list(row.events())
            kind = str(events[0]["type"]).encode()  # (one type for the events of a row)
            times, datas = _encode([e["time"] for e in events]), _dumps([e["data"] for e in events])
            self._chunk_events(b"%s%d\x1f%d\x1f%s\x1f%s\x1f%s\n" % (self.head, line, index, kind, times, datas))
        if self.source is not None:
            if line != self.next_line:
                if self.next_line != 1 or line != 2:
                    raise NotDirect  # a line that is no record
                self.described.write(_SKIP)  # line 1 is the header
            if raw is None:  # not valid UTF-8 JSON as read: DuckDB would take it otherwise
                raise NotDirect
            self.next_line = line + 1
            self.described.write(b"%s%s\x1f%d\n" % (self.head, fields, len(raw)))
            self.longest = max(self.longest, len(raw), len(fields) + 64)
        else:
            if raw is None:  # not valid UTF-8 JSON as read
                raw = deepjson.dumps(event if row is None else row.to_json()).encode("utf-8")  # as JavaScript holds it
            elif b"\r" in raw:  # DuckDB splits lines at CR; in valid JSON it is whitespace between tokens
                raw = raw.replace(b"\r", b"")
            self.described.write(b"%s%s\x1f%s\n" % (self.head, fields, raw))
            self.longest = max(self.longest, len(fields) + len(raw) + 64)
        return fields, raw

    def _step(self, entry: Entry, step: Step, batch: int | None) -> None:
        change = step.change
        event = entry.event or {}
        if isinstance(change, CreateChange):
            record = change.record.to_json()
            self.schedules[change.record.id] = _Schedule(
                {
                    "session_key": self.key,
                    "id": change.record.id,
                    "kind": change.record.kind,
                    "prompt": change.record.prompt,
                    "after_seconds": record.get("afterSeconds"),
                    "every_seconds": record.get("everySeconds"),
                    "cron": record.get("cron"),
                    "time_zone": record.get("timeZone"),
                    "created_index": step.index,
                    "created_seq": step.index,
                    "created_line": entry.line,
                    "created_time_ms": safe_integer(event.get("time")),
                    "first_target": change.record.scheduled_at,
                    "current_target": change.record.scheduled_at,
                    "ended_index": None,
                    "ended_seq": None,
                    "end_reason": None,
                    "dispatch_count": 0,
                }
            )
            return
        schedule = self.schedules[change.id]
        row = schedule.row
        if isinstance(change, DeleteChange):
            self._end(schedule, step.index, "deleted")
            return
        assert isinstance(change, DispatchChange) and step.before is not None
        row["dispatch_count"] += 1
        recurring = step.before.kind not in ONE_SHOT_KINDS
        self._write(
            "dispatches",
            _dumps(
                {
                    "session_key": self.key,
                    "idx": step.index,
                    "seq": step.index,
                    "line": entry.line,
                    "id": change.id,
                    "kind": step.before.kind,
                    "shape": change.shape,
                    "target": step.before.scheduled_at,
                    "occurrence_at": step.occurrence_at,
                    "accepted_at": change.accepted_at,
                    "next_target": None if step.after is None else step.after.scheduled_at,
                    "batch": batch,
                    "time_ms": safe_integer(event.get("time")),
                }
            )
            + b"\n",
        )
        if step.after is None:
            self._end(schedule, step.index, "exhausted" if recurring else "dispatched")
        else:
            row["current_target"] = step.after.scheduled_at

    def _end(self, schedule: _Schedule, index: int, reason: str) -> None:
        schedule.ended = True
        schedule.row.update(ended_index=index, ended_seq=index, end_reason=reason)

    def finish(self, log: SessionLog, report: SessionReport) -> None:
        """Close the session: final schedule states, the session row and its violation."""
        if self.source is not None and not _split_like_duckdb(self.source, log, self.next_line - 1):
            raise NotDirect
        active = set() if report.folded is None else {r.id for r in report.folded.active}
        for schedule in self.schedules.values():
            if not schedule.ended:
                if report.violation is not None:
                    reason = "unknown"  # the fold stopped: what happened next is not known
                else:
                    reason = "active" if schedule.row["id"] in active else "exhausted"
                schedule.row["end_reason"] = reason
            self._write("schedules", _dumps(schedule.row) + b"\n")
        header = log.head.header or {}
        verdict = report.row()  # the verdict record a fleet gets, column for column
        session = {
            "session_key": self.key,
            **verdict,
            "header": log.head.header,
            "headerless": log.head.headerless,
            "created_at_ms": safe_integer(header.get("createdAt")),
            "cwd": header.get("cwd") if isinstance(header.get("cwd"), str) else None,
            "parent_session": header.get("parentSession") if isinstance(header.get("parentSession"), str) else None,
            "origin": header.get("origin") if isinstance(header.get("origin"), str) else None,
            "delegation_depth": safe_integer(header.get("delegationDepth")),
            "mode": log.reading.mode.value,
            "profile_disagreement": {} if report.profile is None else dict(report.profile.disagreement),
        }
        self._write("sessions", _dumps(session) + b"\n")
        if report.violation is not None:
            violation = {"session_key": self.key, **report.violation.to_json()}
            del violation["related"]  # rows of their own
            self._write("violations", _dumps(violation) + b"\n")
            for r in report.violation.related:
                self._write("violation_related", _dumps({"session_key": self.key, **r.to_json()}) + b"\n")
        self.stack.close()

    def abort(self) -> None:
        """Close and remove what was written: a second attempt (copied after direct) starts clean."""
        self.stack.close()
        for path in self.written:
            path.unlink(missing_ok=True)


def stage_session(
    path: str,
    key: int,
    out: Path,
    reading: Reading = DEFAULT_READING,
    data: Data | OSError | None = None,
    progress: Callable[[int], None] | None = None,
) -> StagedSession:
    """Verify one session while staging its records (see the module docstring): inline for a
    small log; else directly when the log allows it, and by copying when it does not, or when
    the direct pass finds it does not after all (NotDirect). `data`: the bytes of a stream read
    once (stdin, a pipe), or the error reading them gave."""
    if isinstance(data, OSError) or (len(data) if data is not None else file_size(path)) < INLINE_BYTES:
        return _stage(path, key, out, reading, data, progress, None, inline=True)
    if data is None and progress is None and _may_read_directly(path):
        try:
            return _stage(path, key, out, reading, None, None, os.path.abspath(path))
        except NotDirect:
            pass
    return _stage(path, key, out, reading, data, progress, None)


def _stage(
    path: str,
    key: int,
    out: Path,
    reading: Reading,
    data: Data | OSError | None,
    progress: Callable[[int], None] | None,
    source: str | None,
    inline: bool = False,
) -> StagedSession:
    found = identity(path) if data is None and maybe_sqlite(path) else None  # (a store's session: its state, before)
    log = SessionLog(path, reading, data, progress)
    stager = SessionStager(key, out, source, inline)
    try:
        report = verify_log(log, stager)
        stager.finish(log, report)
    except BaseException:
        stager.abort()
        raise
    records = None if stager.inline is None else stager.inline.getvalue()
    small = stager.small_rows()
    longest = max(stager.longest, log.head.size if source is not None else 0)
    chunks = None if stager.chunk_events is None else str(stager.chunk_events)
    return StagedSession(
        report, source, stager.owned_from, small, records, longest, chunks, _source_row(path, log, data, found)
    )


def _source_row(
    path: str, log: SessionLog, data: Data | OSError | None, found: Found | None
) -> tuple[int | None, str | None, str]:
    """The `sources` row of a log just read: a regular file's size as read and the digest of
    those bytes (taken after the read: a file edited between the two is found changed next
    time), and the names of the generations beside it (they decide a finding); a store's
    session's state as `found` before the read (a write meanwhile moves the state it has next
    time: the session is then read again), its size UNSIZED."""
    if data is not None or log.notes.unreadable:
        return None, None, ""
    if found is not None and found.size == UNSIZED:
        return UNSIZED, word_for(found), neighbours(path)
    return log.size, content_digest(path, log.size), neighbours(path)


def neighbours(path: str) -> str:
    """The generations beside a log (`cached.beside`) as the `sources` table holds them."""
    return "\0".join(beside(path))
