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

from invariant import SCHEDULE_CHANGE, Folded, Folder, ScheduleLogError, Step
from invariant.changes import DispatchChange
from invariant.detect import (
    Clue,
    accepted_at,
    batch_clues,
    change_clues,
    choose,
    era_clue,
    folds_may_differ,
    host_message_id,
    host_message_text,
    message_evidence,
)
from invariant.filenames import file_version
from invariant.findings import Finding, RelatedLocation, Severity, Violation
from invariant.ledger import LedgerRow, ledger, owned_from
from invariant.profiles import Profile, get_profile
from invariant.reminders import ReminderMessage, delivery_findings, reminder_messages
from invariant.tools.judge import TOOL_TYPES
from replay.audit.fastchanges import decode_change_fast
from replay.audit.report import ProfileChoice, SessionReport
from replay.audit.telling import TellingEvents
from replay.audit.transcript import Transcript
from replay.audit.verdicts import Verdict
from replay.logs import inputs
from replay.logs.bytesource import Data
from replay.logs.chunks import ChunkRow
from replay.logs.discover import LOG_SUFFIXES, STORE_NAME, is_url
from replay.logs.jsonline import BeyondBound, JsonLineError, located, parse_json_line
from replay.logs.logfile import UNFRAMED, Entry, SessionLog
from replay.reading import DEFAULT_READING, Reading


def _violation(
    err: ScheduleLogError, line: int | None, changes: Sequence[Entry] = (), header_line: int | None = None
) -> Violation:
    """The violation located: its line, and each related event's (an event's seq is its index).
    A seedLength out of bounds also points at the header that holds it."""
    lines = {e.event_index: e.line for e in changes} if err.related else {}
    related = [RelatedLocation(r.role, r.index, r.index, lines.get(r.index), r.pointer) for r in err.related]
    if err.rule == "fold.seed.bounds" and header_line is not None:
        related.insert(0, RelatedLocation("header", None, None, header_line, "/seedLength"))
    return Violation(
        code=err.code,
        rule=err.rule,
        index=err.index,
        seq=err.index,
        line=line,
        pointer=err.pointer,
        message=err.message,
        related=tuple(related),
    )


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


def judge(
    changes: Sequence[Entry], event_count: int, seed: object, profile: Profile, header_line: int | None
) -> Judgement:
    """Fold the schedule changes (each at its event index) of a log of `event_count` events."""
    try:
        folder = Folder(seed, profile, decode_change_fast)
    except ScheduleLogError as err:
        return _judged(None, _violation(err, header_line, changes, header_line), [(e, None) for e in changes], seed)
    steps: list[tuple[Entry, Step | None]] = []
    violation = None
    for entry in changes:
        if violation is not None:
            steps.append((entry, None))
            continue
        folder.skip(entry.event_index - folder.count)  # the events in between hold no schedule change
        try:
            steps.append((entry, folder.feed(entry.event)))
        except ScheduleLogError as err:
            violation = _violation(err, entry.line, changes)
            steps.append((entry, None))
    if violation is not None:
        return _judged(None, violation, steps, seed, folder.snapshot())
    folder.skip(event_count - folder.count)
    try:
        folded = folder.finish()
    except ScheduleLogError as err:
        return _judged(None, _violation(err, header_line, changes, header_line), steps, seed, folder.snapshot())
    return _judged(folded, None, steps, seed, folded)


def _judged(
    folded: Folded | None,
    violation: Violation | None,
    steps: list[tuple[Entry, Step | None]],
    seed: object,
    state: Folded | None = None,
) -> Judgement:
    stop = None if violation is None else violation.index
    rows = ledger(((e.event_index, e.line, s) for e, s in steps), owned_from(seed), stop)
    return Judgement(folded, violation, tuple(steps), rows, state)


def _deliveries(judgement: Judgement, seed: object, profile: Profile, messages: list[ReminderMessage]) -> list[Finding]:
    """Whether each owned dispatch's reminder reached the conversation (invariant.reminders):
    warnings, located at the dispatch's line."""
    if not judgement.steps:  # most sessions hold no schedule change
        return []
    owned = owned_from(seed) or 0
    applied = [(e, row.step) for (e, _), row in zip(judgement.steps, judgement.ledger, strict=True) if row.step]
    if not any(isinstance(s.change, DispatchChange) for _, s in applied):
        return []
    times = {e.event_index: (e.event or {}).get("time") for e, _ in applied}
    lines = {e.event_index: e.line for e, _ in applied}
    mine = [m for m in messages if not m.queued or m.index >= owned]
    found = delivery_findings([s for _, s in applied], times, mine, profile)
    return [f.at_line(lines.get(f.index)) if f.index is not None else f for f in found]


def _host_era(delivered: int, changes: int, folded: Folded | None) -> list[Finding]:
    """The reminders the Host delivered, as information (a Host-era log has no schedule stream:
    an empty fold, valid); legacy schedule/change reminders beside them are worth a warning,
    and those still active (the Host never fires them) say which."""
    if not delivered:
        return []
    found = [Finding("host.reminders", Severity.INFO, f"{delivered} reminder message(s) delivered by the Host")]
    if changes:
        message = f"{changes} legacy schedule/change event(s) in a log the Host schedule service delivered to"
        active = [] if folded is None else [r.id for r in folded.active]
        if active:
            message += f"; still active, never to fire: {', '.join(map(repr, active))}"
        found.append(Finding("host.legacy-reminders", Severity.WARNING, message))
    return found


def verify_log(log: SessionLog, sink: SessionSink | None = None) -> SessionReport:
    """Read `log` to the end, then fold its schedule changes under its profile (the reading's,
    or the one its evidence shows); return the session's report."""
    return judge_log(log, sink)[0]


def judge_log(log: SessionLog, sink: SessionSink | None = None) -> tuple[SessionReport, Judgement]:
    """`verify_log`, and the judgement behind the report: each schedule change with the fold
    step it made (for the stories and pictures told of a session)."""
    changes: list[Entry] = []
    clues: list[Clue] = []
    accepted: list[str] = []
    messages: list[str] = []
    texts: list[str] = []
    reminders: list[ReminderMessage] = []
    delivered = 0
    transcript = Transcript(log.charge_deep)
    hears = None if sink is None else sink.other_record
    entries = log.entries(schedule_only=True, others=hears, select=TellingEvents())
    for entry in entries:
        event = entry.event
        assert event is not None  # the rows and the other events went to the sink
        if event.get("type") == SCHEDULE_CHANGE:
            clues.extend(change_clues(event.get("data")))
            changes.append(entry)
            transcript.change(event.get("data"), entry.event_index)
            if sink is not None:
                sink.schedule_change(entry)
            if (at := accepted_at(event.get("data"))) is not None:
                accepted.append(at)
        elif event.get("type") in TOOL_TYPES:  # a schedule_* call or its result
            try:
                transcript.add(event, entry.line, entry.event_index)
            except BeyondBound as bound:  # the log's budget for deep values is spent: it is read no further
                with contextlib.suppress(StopIteration):
                    entries.throw(located(bound, entry.line))
                break
            if sink is not None:
                sink.other_record(entry.line, entry.event_index, event, entry.row, entry.raw)
        else:  # a marker that cuts the fork (v2+), or a record that bears clues
            found, host = message_evidence(event)
            clues.extend(found)
            reminders.extend(reminder_messages(event, entry.event_index))
            delivered += host
            if host and (message := host_message_id(event)) is not None:
                messages.append(message)
                texts.append(host_message_text(event))
            if sink is not None:
                sink.other_record(entry.line, entry.event_index, event, entry.row, entry.raw)
    seed = log.reading.seed_for(log.seed_length)
    header_line = 1 if log.head.header is not None else None
    detection = None
    if log.reading.profile is None:
        detection = choose([*clues, *era_clue(log.head.version), *batch_clues(accepted)])
        profile = detection.profile
    else:
        profile = log.reading.profile
    judgement = judge(changes, log.event_count, seed, profile, header_line)
    others: dict[str, Verdict] = {}
    if detection is not None and not detection.decided and folds_may_differ(accepted) and not log.unreadable:
        for name in detection.candidates[1:]:  # would another possible profile answer differently?
            verdict = judge(changes, log.event_count, seed, get_profile(name), header_line).verdict
            if verdict is not judgement.verdict:
                others[name] = verdict
    if sink is not None:
        sink.judged(seed, judgement)
    folded = None if log.unreadable else judgement.folded
    if log.unreadable:
        verdict = Verdict.UNREADABLE
    elif log.head.unsupported:
        verdict = Verdict.UNSUPPORTED
    elif judgement.violation is not None or log.rejected:
        verdict = Verdict.CORRUPT
    else:
        verdict = Verdict.OK
    findings = log.reading.selection.kept(
        (
            *log.findings,
            *_host_era(delivered, len(changes), folded),
            *_deliveries(judgement, seed, profile, reminders),
            *transcript.findings(seed, log.reading.tool_surface, logged_changes=bool(changes)),
        )
    )
    report = SessionReport(
        path=log.path,
        session=log.head.session_id,
        seed_length=seed,
        events=log.event_count,
        schedule_events=len(changes),
        verdict=verdict,
        violation=judgement.violation,
        findings=_with_content_verdict(findings, judgement.violation is not None) if log.unframed else findings,
        folded=folded,
        format_version=log.head.version,
        profile=ProfileChoice.of(profile, detection, others),
        generation=file_version(os.path.basename(log.path)),
        host_messages=tuple(messages),
        host_message_texts=tuple(texts),
    )
    return report, judgement


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
    if held is None and is_url(path):  # an object not read yet is a store by its name (a sniff would read each)
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
