"""`verify`: one verdict per session log, from the log format and the schedule fold.

A session is `unreadable` when nothing could be read as a session log, `corrupt` when its
schedule stream breaks the protocol or the reference's reader would refuse the file, and
`ok` otherwise. The fold runs over the committed events even when the header is faulty, so a
format problem never hides a schedule violation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields
from enum import StrEnum
from itertools import chain
from typing import Any, Protocol

from invariant import SCHEDULE_CHANGE, Folded, Folder, ScheduleLogError, Step
from replay.audit.fanout import Group, group_bytes, grouped, in_processes
from replay.logs import deepjson
from replay.logs.chunks import ChunkRow
from replay.logs.logfile import Entry, Finding, SessionLog
from replay.reading import DEFAULT_READING, Reading


class Verdict(StrEnum):
    """A session's verdict (the exit status follows the worst: 0 ok, 1 corrupt, 2 unreadable)."""

    OK = "ok"
    CORRUPT = "corrupt"
    UNREADABLE = "unreadable"
    UNSUPPORTED = "unsupported"
    """A log of a format newer than schedlog reads (above v4): it cannot be judged (exit 3)."""


@dataclass(frozen=True)
class Violation:
    """The first schedule-protocol violation of a session, located in the file."""

    code: str
    rule: str
    index: int | None
    seq: int | None
    line: int | None
    pointer: str
    message: str

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "rule": self.rule,
            "index": self.index,
            "seq": self.seq,
            "line": self.line,
            "pointer": self.pointer,
            "message": self.message,
        }


@dataclass(frozen=True)
class SessionReport:
    path: str
    session: str | None
    seed_length: object
    """The seedLength the session was judged with, as written (a header may hold any JSON value)."""
    events: int
    schedule_events: int
    verdict: Verdict
    violation: Violation | None
    findings: tuple[Finding, ...]
    folded: Folded | None
    format_version: int | None = None
    """The header's format version (None: headerless, or no readable version)."""

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "session": self.session,
            "seedLength": self.seed_length,
            "events": self.events,
            "scheduleEvents": self.schedule_events,
            "verdict": self.verdict,
            "violation": None if self.violation is None else self.violation.to_json(),
            "formatFindings": [f.to_json() for f in self.findings],
            "active": [] if self.folded is None else [r.to_json() for r in self.folded.active],
            "lastRecurringAcceptedAt": None if self.folded is None else self.folded.last_recurring_accepted_at,
            "formatVersion": self.format_version,
        }

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled (for a worker's result) with a written seedLength that is an object or array
        as its JSON text: pickle recurses into nested values, and a header's value may nest
        10,000 levels deep."""
        values = [getattr(self, f.name) for f in fields(self)]
        if isinstance(self.seed_length, dict | list):
            return _with_seed_text, (*values[:2], deepjson.dumps(self.seed_length, exact=True), *values[3:])
        return SessionReport, tuple(values)


def _with_seed_text(path: str, session: str | None, seed_text: str, *rest: Any) -> SessionReport:
    """A SessionReport pickled by `__reduce__` with its seedLength as JSON text."""
    return SessionReport(path, session, deepjson.parse(seed_text), *rest)


def _violation(err: ScheduleLogError, line: int | None) -> Violation:
    return Violation(err.code, err.rule, err.index, err.index, line, err.pointer, err.message)


class SessionSink(Protocol):
    """What `verify_log` tells about a session as it reads it (the replay's stager is one).

    Every committed record reaches it once, in file order: a schedule change through
    `schedule_change`, any other record through `other_record`. `seed` is called once, after the
    header is read and before the first schedule change (other records may come before it).
    """

    def other_record(
        self, line: int, index: int, event: dict[str, object] | None, row: ChunkRow | None, raw: bytes | None
    ) -> object:
        """A committed record that holds no schedule change (an `OtherRecords` of the reader)."""
        ...

    def seed(self, seed: object) -> None:
        """The seedLength the session is judged with, once its header is read."""
        ...

    def schedule_change(self, entry: Entry, step: Step | None) -> None:
        """A `schedule/change` event, with the fold step it caused (None once the fold stopped)."""
        ...


def _fold_from(seed: object, log: SessionLog, sink: SessionSink | None) -> tuple[Folder | None, Violation | None]:
    """A fold of the events from `seed` on, or the violation of a seedLength it cannot take;
    the sink hears the seed."""
    if sink is not None:
        sink.seed(seed)
    try:
        return Folder(seed, log.reading.profile), None
    except ScheduleLogError as err:
        return None, _violation(err, 1 if log.header is not None else None)


def verify_log(log: SessionLog, sink: SessionSink | None = None) -> SessionReport:
    """Read `log` to the end, folding its schedule events as its reading says; return the
    session's report."""
    entries = log.entries(schedule_only=True, others=None if sink is None else sink.other_record)
    first = next(entries, None)  # the header (if any) has been read once this returns
    seed = log.reading.seed_for(log.seed_length)
    folder, violation = _fold_from(seed, log, sink)
    schedule_events = 0
    for entry in chain([first] if first is not None else [], entries):
        event = entry.event
        assert event is not None  # the rows and the other events went to the sink
        if event.get("type") != SCHEDULE_CHANGE:  # a marker that cuts the fork here (v2+, formats.md §5)
            if sink is not None:
                sink.other_record(entry.line, entry.event_index, event, entry.row, entry.raw)
            if log.reading.seed_length is None:  # what came before is inherited: the fold starts again
                seed = entry.event_index
                folder, violation = _fold_from(seed, log, sink)
            continue
        schedule_events += 1
        step = None
        if folder is not None:
            folder.skip(entry.event_index - folder.count)  # the events in between hold no schedule change
            try:
                step = folder.feed(event)
            except ScheduleLogError as err:
                violation = _violation(err, entry.line)
                folder = None
        if sink is not None:
            sink.schedule_change(entry, step)
    folded = None
    if folder is not None and not log.unreadable:
        folder.skip(log.event_count - folder.count)
        try:
            folded = folder.finish()
        except ScheduleLogError as err:
            violation = _violation(err, 1 if log.header is not None else None)
    if log.unreadable:
        verdict = Verdict.UNREADABLE
    elif log.unsupported:
        verdict = Verdict.UNSUPPORTED
    elif violation is not None or log.rejected:
        verdict = Verdict.CORRUPT
    else:
        verdict = Verdict.OK
    return SessionReport(
        path=log.path,
        session=log.session_id,
        seed_length=seed,
        events=log.event_count,
        schedule_events=schedule_events,
        verdict=verdict,
        violation=violation,
        findings=tuple(log.findings),
        folded=folded,
        format_version=log.version,
    )


def verify_path(
    path: str,
    reading: Reading = DEFAULT_READING,
    data: bytes | None = None,
    progress: Callable[[int], None] | None = None,
) -> SessionReport:
    """Verify one file (or `data` read from stdin, reported under `path`)."""
    return verify_log(SessionLog(path, reading, data, progress))


VerifyTask = tuple[Group, Reading]
"""Consecutive files verified by one worker call, and how to read them."""


def _verify_group(task: VerifyTask) -> list[SessionReport]:
    group, reading = task
    return [verify_path(path, reading) for path, _ in group]


def _verify_size(task: VerifyTask) -> int:
    return group_bytes(task[0])


def verify_paths(
    paths: Sequence[str],
    reading: Reading = DEFAULT_READING,
    jobs: int = 1,
    stdin: bytes | None = None,
    progress: Callable[[int], None] | None = None,
) -> Iterator[SessionReport]:
    """One report per file of `paths` (and first, for `stdin` when given, one reported as
    `<stdin>`), in input order; with `jobs` > 1, consecutive files are verified in groups by
    that many worker processes. `progress` hears of every byte read (per group with jobs)."""
    if stdin is not None:
        yield verify_path("<stdin>", reading, data=stdin)
    if jobs > 1:  # grouped only then: grouping reads every file's size
        tasks = [(group, reading) for group in grouped(paths)]
        if len(tasks) > 1:
            with in_processes(_verify_group, tasks, jobs, progress, size=_verify_size) as results:
                for _, reports in results:
                    yield from reports
            return
    for path in paths:
        yield verify_path(path, reading, progress=progress)
