"""`verify`: one verdict per session log, from the log format and the schedule fold.

A session is `unreadable` when nothing could be read as a session log, `corrupt` when its
schedule stream breaks the protocol or the reference's reader would refuse the file, and
`ok` otherwise. The fold runs over the committed events even when the header is faulty, so a
format problem never hides a schedule violation.
"""

from __future__ import annotations

import contextlib
import mmap
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from invariant import SCHEDULE_CHANGE, Folded, Step
from invariant.detect import MARKED_CLUE, Detection
from invariant.filenames import file_version
from invariant.findings import Finding, Severity, Violation
from invariant.ledger import LedgerRow
from invariant.readers import Refusals, read_by_profile, refusals
from replay.judge.judge import Judge
from replay.judge.report import ProfileChoice, SessionReport
from replay.judge.telling import TellingEvents
from replay.judge.verdicts import Verdict
from replay.lines.chunks import ChunkRow
from replay.lines.jsonline import BeyondBound, JsonLineError, located, parse_json_line
from replay.logs.logfile import UNFRAMED, Entry, SessionLog
from replay.logs.source import RecordSource
from replay.modes import Mode
from replay.reading import DEFAULT_READING, Reading
from replay.sources import inputs
from replay.sources.bytesource import Data
from replay.sources.discover import LOG_SUFFIXES, STORE_NAME
from replay.sources.sqlitenames import maybe_sqlite


class SessionSink(Protocol):
    """What `verify_log` tells about a session as it reads and judges it (the replay's stager is one).

    Every committed record reaches it once, in file order: a schedule change through
    `schedule_change`, any other record through `other_record`. Once the log is read (the fork
    cut and the profile are known only then), `judged` hands it the seedLength and each schedule
    change's fold step.
    """

    def other_record(
        self, line: int, index: int, event: dict[str, object] | None, row: ChunkRow | None, raw: bytes | None
    ) -> object:
        """A committed record that holds no schedule change (an `OtherRecords` of the reader)."""
        ...

    def schedule_change(self, entry: Entry) -> None:
        """A `schedule/change` event, in file order."""
        ...

    def judged(self, seed: object, judgement: Judgement) -> None:
        """The seedLength judged with, and the judgement: the step each schedule change caused
        (None for an inherited one and from the violation on) and the ledger's rows."""
        ...


@dataclass(frozen=True)
class Judgement:
    """The fold of a session's schedule changes under one profile."""

    folded: Folded | None
    violation: Violation | None
    steps: tuple[tuple[Entry, Step | None], ...]
    ledger: tuple[LedgerRow, ...]
    """One row per schedule change, aligned with `steps` (invariant.ledger): what every read
    model reads of a change."""
    state: Folded | None = None
    """The fold's state before the violating event (the fold checks before it changes anything),
    or at the end; None when the seedLength refused the fold."""

    @property
    def verdict(self) -> Verdict:
        return Verdict.CORRUPT if self.violation is not None else Verdict.OK


def verify_log(log: RecordSource, sink: SessionSink | None = None) -> SessionReport:
    """Read `log` to the end, then fold its schedule changes under its profile (the reading's,
    or the one its evidence shows); return the session's report."""
    return judge_log(log, sink)[0]


def judge_log(
    log: RecordSource, sink: SessionSink | None = None, keep: bool = False
) -> tuple[SessionReport, Judgement]:
    """`verify_log`, and (with `keep`, or a `sink`) the judgement behind the report: each schedule
    change with the fold step it made (for the stories and pictures told of a session). The
    records are judged as they are read (replay.judge.judge), the judge's state saved with the
    reading's and taken up again where the reading resumes: a judgement is kept only by a read
    from the log's start."""
    keep = keep or sink is not None
    holder = _Holder(Judge(log.reading.profile, log.reading.seed_length, log.reading.tool_surface, keep))
    log.keeper = holder
    hears = None if sink is None else sink.other_record
    entries = log.entries(schedule_only=True, others=hears, select=TellingEvents())
    deep = log.charge_deep
    for entry in entries:
        judge = holder.judge
        if not judge.begun:
            judge.begin(log.head.header, log.head.marks_cut, log.head.version)
        try:
            judge.feed(entry, deep)
        except BeyondBound as bound:  # the log's budget for deep values is spent: it is read no further
            with contextlib.suppress(StopIteration):
                entries.throw(located(bound, entry.line))
            break
        if sink is not None:
            if entry.event is not None and entry.event.get("type") == SCHEDULE_CHANGE:
                sink.schedule_change(entry)
            else:
                sink.other_record(entry.line, entry.event_index, entry.event, entry.row, entry.raw)
    judge = holder.judge
    if keep and judge is not holder.first:
        raise ValueError("a judgement is kept only by a read from the log's start")
    judge.begin(log.head.header, log.head.marks_cut, log.head.version)
    seen, version = log.types_seen, log.head.version
    marked = (MARKED_CLUE,) if seen.marked is not None and read_by_profile(version) else ()
    judged = judge.judged(log.event_count, version, log.unreadable, marked)
    track, seed = judged.track, judged.seed
    refused = (
        Refusals()
        if _refused_before_guard(log.findings)
        else _reader_refusals(log, judged.profile.name, judged.detection)
    )
    judgement = Judgement(
        judged.folded,
        track.violation,
        tuple(track.steps or ()),
        judge.ledger(track) if keep else (),
        track.stopped if track.violation is not None else judged.folded,
    )
    if sink is not None:
        sink.judged(seed, judgement)
    folded = None if log.unreadable else judged.folded
    if log.unreadable:
        verdict = Verdict.UNREADABLE
    elif log.head.unsupported or refused.unsupported:
        verdict = Verdict.UNSUPPORTED
    elif track.violation is not None or log.rejected or refused.corrupt:
        verdict = Verdict.CORRUPT
    else:
        verdict = Verdict.OK
    findings = log.reading.selection.kept(
        (
            *log.findings,
            *refused.findings,
            *judge.host_era(folded),
            *track.delivered(),
            *judge.transcript.findings(logged_changes=bool(judge.changes)),
        )
    )
    report = SessionReport(
        path=log.path,
        session=log.head.session_id,
        seed_length=seed,
        events=log.event_count,
        schedule_events=judge.changes,
        verdict=verdict,
        violation=track.violation,
        findings=_with_content_verdict(findings, track.violation is not None) if log.unframed else findings,
        folded=folded,
        format_version=log.head.version,
        profile=ProfileChoice.of(judged.profile, judged.detection, judged.others),
        generation=file_version(os.path.basename(log.path)),
        host_messages=tuple(judge.host_messages),
        host_message_texts=tuple(judge.host_texts),
    )
    return report, judgement


def _reader_refusals(log: RecordSource, profile: str, detection: Detection | None) -> Refusals:
    """What the reader of the log's profile (or, undecided, each candidate's) refuses of its
    event types and markers (invariant.readers). Asked only of a log not refused before the
    guard looks (_refused_before_guard): a reader that refused it earlier says nothing more."""
    profiles = (profile,) if detection is None or detection.decided else detection.candidates
    return refusals(log.types_seen, profiles, log.head.version, log.reading.mode is Mode.STRICT)


SESSION_LAYER = frozenset({"format.envelope", "format.surface", "format.is-seeded"})
"""The refusals the session layer makes once the reader's guard has let the events through
(their envelopes, the surface they build): the guard's refusal comes first. (The load checks'
refusals, `format.session`, count as made before it: the obsolete and legacy shapes are, at
import; a message's identity, which is checked after, is taken with them.)"""


def _refused_before_guard(findings: Sequence[Finding]) -> bool:
    """Whether the log is refused before the reader's guard looks at its types: its header, its
    lines and rows, its committed prefix, the load checks (an error of another kind than the
    session layer's)."""
    return any(f.severity is Severity.ERROR and f.code not in SESSION_LAYER for f in findings)


class _Holder:
    """The judge a reading feeds, its state saved and restored with the reading's (a StateKeeper)."""

    def __init__(self, judge: Judge) -> None:
        self.judge = self.first = judge

    def save(self) -> bytes | None:
        return self.judge.saved()

    def restore(self, state: bytes) -> None:
        self.judge = Judge.resumed(state)


def _with_content_verdict(findings: tuple[Finding, ...], violated: bool) -> tuple[Finding, ...]:
    """The findings of a Zstandard file a general tool compressed, its refusal (strict mode)
    saying what its content alone would be judged: corrupt where another error or a violation
    says so, else ok."""
    others = violated or any(f.severity is Severity.ERROR and f.code != UNFRAMED for f in findings)
    return tuple(
        replace(f, message=f"{f.message}; its content alone is {'corrupt (below)' if others else 'ok'}")
        if f.code == UNFRAMED and f.severity is Severity.ERROR
        else f
        for f in findings
    )


# --- Host task stores --------------------------------------------------------------------------

CORRUPT_TASK_STORE = "corrupt_task_store"
"""The code of a store the Host refuses to open."""
SNIFF_BYTES = 4096
MAX_STORE_BYTES = 1 << 30


def _store_file(path: str, held: Data | OSError | None = None) -> tuple[object, str | None] | None:
    """What a file holds as a Host task store, read as the Host's JSON backend reads it:
    `(value, None)`; `(None, why)` for a file named `schedule.json` that is no JSON (the Host
    refuses it: a malformed medium); None when it is no store (read it as a session log). A
    file of another name is a store when its content says so (its unit names `schedule`).
    `held`: the bytes of a stream already read (`inputs.once`), sniffed instead of the file."""
    if path.endswith(LOG_SUFFIXES) or path == "<stdin>" or isinstance(held, OSError):
        return None
    named = os.path.basename(path) == STORE_NAME
    if held is None and inputs.replaced_whole(path):  # an object not read yet: a store by its name (no sniff)
        held = inputs.once(path) if named else None
        if not isinstance(held, (bytes, mmap.mmap)):
            return None
    data: bytes | None
    try:
        if held is not None:
            head = bytes(held[:SNIFF_BYTES])
            data = bytes(held[: MAX_STORE_BYTES + SNIFF_BYTES]) if named or _may_be_store(head) else None
        else:
            with open(path, "rb") as f:
                head = f.read(SNIFF_BYTES)
                data = head + f.read(MAX_STORE_BYTES) if named or _may_be_store(head) else None
    except OSError:
        return None
    if data is None:
        return None
    try:
        value = parse_json_line(data)
    except JsonLineError as err:
        return (None, f"{STORE_NAME} is not JSON: {err}") if named else None
    from invariant.hoststore import is_store  # (the Host's rules load for a file that may be a store)

    return (value, None) if named or is_store(value) else None


def _may_be_store(head: bytes) -> bool:
    """Whether a file's first bytes may open a Host store: a JSON object naming a `unit`."""
    return head.lstrip().startswith(b"{") and b'"unit"' in head


def store_report(
    path: str, reading: Reading = DEFAULT_READING, held: Data | OSError | None = None
) -> SessionReport | None:
    """A Host task store's report, or None when the file is not one: a file named
    `schedule.json`, or one whose content is a store (a JSON object whose `unit` names
    `schedule`), wherever it is. It is corrupt exactly when the Host would refuse to open it
    (host.md §1-§4): the first finding is its violation, every other one a finding, each
    located by JSON pointer and task id; what the Host reads past is information."""
    stored = _store_file(path, held)
    if stored is None:
        return None
    value, unreadable = stored
    from invariant.hoststore import host_finding, ignored_parts, soft_findings, store_findings, tasks_of

    found = store_findings(value) if unreadable is None else [host_finding("host.store.json", "", None, unreadable)]
    soft = [] if found else soft_findings(value, reading.now, reading.retention)
    tasks = tasks_of(value)
    count = len(tasks)
    violation = None
    if found:
        first = found[0]
        violation = Violation(
            code=CORRUPT_TASK_STORE, rule=first.code, pointer=first.pointer or "", message=first.message
        )
    findings = reading.selection.kept((*found[1:], *soft, *ignored_parts(value)))
    return SessionReport(
        path=path,
        session=None,
        seed_length=None,
        events=count,
        schedule_events=count,
        verdict=Verdict.CORRUPT if found else Verdict.OK,
        violation=violation,
        findings=findings,
        folded=None,
        store=True,
        store_tasks=tasks,
    )


def verify_path(
    path: str,
    reading: Reading = DEFAULT_READING,
    data: Data | None = None,
    progress: Callable[[int], None] | None = None,
) -> SessionReport:
    """Verify one file (or `data` read from stdin, reported under `path`): a session log, or a
    Host task store (recognised by its content). A pipe or device is read once, here
    (`inputs.once`), and its bytes both sniffed and judged."""
    held: Data | OSError | None = data
    if data is None:
        if maybe_sqlite(path):  # a SQLite store's session: the reader reads it from the store
            return verify_log(SessionLog(path, reading, progress=progress))
        held = inputs.once(path)
        report = store_report(path, reading, held)
        if report is not None:
            return report
    return verify_log(SessionLog(path, reading, held, progress))


def verify_bytes(name: str, data: bytes, reading: Reading = DEFAULT_READING) -> SessionReport:
    """Verify one log given as bytes (plain or zstd), reported under `name`: no file system
    access, for engines that read their inputs themselves (object storage, an archive). The
    report is the one `verify_path` gives for the same bytes in a file of that name;
    `report.row()` is its flat verdict record."""
    return verify_log(SessionLog(name, reading, data))


def verify_bytes_with_changes(
    name: str, data: bytes, reading: Reading = DEFAULT_READING
) -> tuple[SessionReport, list[dict[str, object]]]:
    """`verify_bytes`, and the session's `schedule_changes` rows as the replay database holds
    them: index, seq, line, owned, status (applied, violation, unchecked after it, inherited),
    operation, id and the payload."""
    changes = _ChangeRows()
    report = verify_log(SessionLog(name, reading, data), changes)
    return report, changes.rows()


class _ChangeRows:
    """A SessionSink that keeps the ledger's rows (other records pass)."""

    def __init__(self) -> None:
        self.steps: Sequence[tuple[Entry, Step | None]] = ()
        self.ledger: Sequence[LedgerRow] = ()

    def other_record(
        self, line: int, index: int, event: dict[str, object] | None, row: ChunkRow | None, raw: bytes | None
    ) -> object:
        return None

    def schedule_change(self, entry: Entry) -> None:
        pass

    def judged(self, seed: object, judgement: Judgement) -> None:
        self.steps, self.ledger = judgement.steps, judgement.ledger

    def rows(self) -> list[dict[str, object]]:
        out = []
        for (entry, _), row in zip(self.steps, self.ledger, strict=True):
            data = (entry.event or {}).get("data")
            payload = data if isinstance(data, dict) else {}
            schedule = payload.get("schedule")
            record_id = schedule.get("id") if isinstance(schedule, dict) else payload.get("id")
            out.append(
                {
                    "idx": row.index,
                    "seq": row.index,
                    "line": row.line,
                    "owned": row.owned,
                    "status": row.status.value,
                    "operation": payload.get("operation"),
                    "id": record_id,
                    "data": data,
                }
            )
        return out


VERIFY_BUDGET = 32 << 20
"""Input bytes of the groups in flight beyond one per worker: a report is small, so more groups
queued keep both workers busy behind a large log the results wait for (in input order)."""
