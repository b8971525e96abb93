"""Staging for the DuckDB replay: one pass over a session log writes NDJSON files that DuckDB
loads in bulk.

Every committed record becomes one tab-separated line: session, seedLength, line, index, whether
it is a packed row, its type and time (see `_type_time`), a row's member times, and the record's
own bytes (passed through unchanged; JSON holds no raw newline, and a record with tab whitespace
is re-dumped compactly). The
`schedule/change` records are also written to a small file of their own, so that decoding them
never scans the large records table. The fold's steps become
the (small) `schedules` and `dispatches` rows (NDJSON); the session's report becomes its
`sessions` and `violations` rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import IO, Any

import orjson

from invariant import SCHEDULE_CHANGE, CreateChange, DeleteChange, DispatchChange, Step
from invariant.changes import ONE_SHOT_KINDS

from .logfile import Entry, SessionLog
from .verify import SessionReport, verify_log

WRITE_BUFFER = 1 << 20
"""Staging writes go to the kernel in 1 MB pieces (the default 8 KB costs a system call per few records)."""

TABLE_FILES = ("records", "changes", "sessions", "schedules", "dispatches", "violations")


def staged_name(table: str, key: int) -> str:
    """The staging file of one session's rows for `table` (records and changes are TSV, the rest NDJSON)."""
    return f"{table}-{key:08d}.{'tsv' if table in ('records', 'changes') else 'jsonl'}"


def _dumps(value: object) -> bytes:
    try:
        return orjson.dumps(value)
    except TypeError:  # lone surrogates, float subclasses: the standard library escapes them
        return json.dumps(value, separators=(",", ":")).encode()


_BIGINT_MIN, _BIGINT_MAX = -(1 << 63), (1 << 63) - 1


def _type_time(event: dict[str, object] | None) -> bytes:
    """The `type` and `time` staging fields of a verbatim event, or two empty fields (NULL) when
    they are not plain: an ASCII printable type (nothing a TSV field would need to escape) and
    an integer time DuckDB holds as BIGINT. DuckDB then takes them from the record itself.
    """
    tag = None if event is None else event.get("type")
    time = None if event is None else event.get("time")
    plain_tag = isinstance(tag, str) and tag.isascii() and tag.isprintable() and tag != ""
    if plain_tag and isinstance(tag, str) and type(time) is int and _BIGINT_MIN <= time <= _BIGINT_MAX:
        return b"%s\t%d" % (tag.encode(), time)
    return b"\t"


@dataclass
class _Schedule:
    row: dict[str, Any]
    ended: bool = False


class SessionStager:
    """The verify sink that writes one session's staging rows."""

    def __init__(self, key: int, out: Path) -> None:
        self.key = key
        self.out = out
        self.stack = ExitStack()
        self.files: dict[str, IO[bytes]] = {  # closed by `finish` or `abort` through the stack
            name: self.stack.enter_context(open(out / staged_name(name, key), "wb", buffering=WRITE_BUFFER))  # noqa: SIM115
            for name in TABLE_FILES
        }
        self.records = self.files["records"]
        self.changes = self.files["changes"]
        self.head = b""
        self.schedules: dict[str, _Schedule] = {}
        self.batches: dict[str, int] = {}

    def seed(self, seed_length: object) -> None:
        """Known once the header is read: owned events are those at or after it."""
        seed = seed_length if type(seed_length) is int and seed_length >= 0 else None
        self.head = b"%d\t%s\t" % (self.key, b"" if seed is None else b"%d" % seed)

    def __call__(self, entry: Entry, step: Step | None) -> None:
        raw = entry.raw
        row = entry.row
        if raw is None or b"\t" in raw:  # not valid UTF-8 JSON as read, or JSON whitespace tabs: re-dump
            raw = _dumps(entry.event if row is None else row.to_json())
        if row is None:
            line = self.head + b"%d\t%d\t0\t%s\t\t%s\n" % (entry.line, entry.event_index, _type_time(entry.event), raw)
            self.records.write(line)
            if entry.event is not None and entry.event.get("type") == SCHEDULE_CHANGE:
                self.changes.write(line)
        else:
            times = _dumps(list(accumulate(row.dt, initial=row.time0)))
            self.records.write(
                self.head + b"%d\t%d\t1\t%s\t\t%s\t%s\n" % (entry.line, entry.event_index, row.tag.encode(), times, raw)
            )
        if step is not None:
            self._step(entry, step)

    def _step(self, entry: Entry, step: Step) -> None:
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
                    "created_time_ms": event.get("time"),
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
        batch = None
        if recurring and change.accepted_at is not None:
            batch = self.batches.setdefault(change.accepted_at, len(self.batches) + 1)
        self.files["dispatches"].write(
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
                    "time_ms": event.get("time"),
                }
            )
            + b"\n"
        )
        if step.after is None:
            self._end(schedule, step.index, "exhausted" if recurring else "dispatched")
        else:
            row["current_target"] = step.after.scheduled_at

    def _end(self, schedule: _Schedule, index: int, reason: str) -> None:
        schedule.ended = True
        schedule.row.update(ended_index=index, ended_seq=index, end_reason=reason)

    def finish(self, log: SessionLog, report: SessionReport, profile: str, mode: str) -> None:
        """Close the session: final schedule states, the session row and its violation."""
        active = set() if report.folded is None else {r.id for r in report.folded.active}
        for schedule in self.schedules.values():
            if not schedule.ended:
                if report.violation is not None:
                    reason = "unknown"  # the fold stopped: what happened next is not known
                else:
                    reason = "active" if schedule.row["id"] in active else "exhausted"
                schedule.row["end_reason"] = reason
            self.files["schedules"].write(_dumps(schedule.row) + b"\n")
        header = log.header or {}
        v = report.violation
        session = {
            "session_key": self.key,
            "path": report.path,
            "session_id": report.session,
            "header": log.header,
            "headerless": log.headerless,
            "created_at_ms": header.get("createdAt") if isinstance(header.get("createdAt"), int) else None,
            "cwd": header.get("cwd") if isinstance(header.get("cwd"), str) else None,
            "parent_session": header.get("parentSession") if isinstance(header.get("parentSession"), str) else None,
            "seed_length": report.seed_length if type(report.seed_length) is int else None,
            "origin": header.get("origin") if isinstance(header.get("origin"), str) else None,
            "delegation_depth": header.get("delegationDepth") if type(header.get("delegationDepth")) is int else None,
            "event_count": report.events,
            "schedule_event_count": report.schedule_events,
            "verdict": report.verdict,
            "format_findings": [f.to_json() for f in report.findings],
            "violation_rule": None if v is None else v.rule,
            "violation_index": None if v is None else v.index,
            "violation_line": None if v is None else v.line,
            "violation_message": None if v is None else v.message,
            "profile": profile,
            "mode": mode,
        }
        self.files["sessions"].write(_dumps(session) + b"\n")
        if v is not None:
            violation = {"session_key": self.key, **v.to_json()}
            self.files["violations"].write(_dumps(violation) + b"\n")
        self.stack.close()

    def abort(self) -> None:
        self.stack.close()


def stage_session(
    path: str,
    key: int,
    out: Path,
    profile: str = "calendar",
    mode: str = "strict",
    seed_length: int | None = None,
    data: bytes | None = None,
    progress: Callable[[int], None] | None = None,
) -> SessionReport:
    """Verify one session while writing its staging files into `out`."""
    log = SessionLog(path, mode, data, progress)
    stager = SessionStager(key, out)
    try:
        report = verify_log(log, profile, seed_length, stager)
    except BaseException:
        stager.abort()
        raise
    stager.finish(log, report, profile, mode)
    return report
