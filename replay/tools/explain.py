"""`schedlog explain`: a session's schedule story in plain text.

For a corrupt session: the broken rule in one sentence, the history of the schedules involved
(creates, dispatches with their instants, the recurring batches and the gate window each
opens, a recurring record's next intended occurrences), the offending event, its related
events, and what would have been valid instead. For a valid session: each schedule's life in
a line. Built in one reading of the log (`judge_log`: the report and the judgement behind it),
from the fold's own steps (the ledger) and its state before the violating event: nothing is
folded again, so the story states exactly what the fold knew there.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from invariant.changes import (
    Change,
    CreateChange,
    CronRecord,
    DeleteChange,
    DispatchChange,
    EveryRecord,
    Record,
    decode_change,
)
from invariant.cron import parse_cron
from invariant.errors import ScheduleLogError
from invariant.findings import Violation
from invariant.folding import SHAPES_FOR_KIND, Folded
from invariant.ids import allocate_id
from invariant.instant import GATE_MS, MAX_MS, format_instant, parse_instant
from invariant.jsvalue import echoed, js_compact_json
from invariant.ledger import LedgerRow, batches
from invariant.occurrences import next_occurrence
from invariant.profiles import Profile, get_profile
from invariant.zones import load_zone
from replay.audit.auditrun import lenient_report
from replay.cache.cached import judged
from replay.judge.report import SessionReport
from replay.judge.rules import describe
from replay.judge.verdicts import Verdict
from replay.judge.verify import Judgement
from replay.logs.logfile import Entry
from replay.reading import DEFAULT_READING, Mode, Reading

INTENDED = 3
"""How many next intended occurrences of a recurring record the story shows."""


@dataclass
class Life:
    """One schedule id's history, as the fold applied it."""

    record: Record
    created: Entry
    created_target: str
    events: list[tuple[Entry, Change]] = field(default_factory=list)
    end: str | None = None


@dataclass
class Replayed:
    """The owned schedule changes folded up to (not including) the violation."""

    lives: dict[str, Life] = field(default_factory=dict)
    batches: list[tuple[str, int | None, list[str]]] = field(default_factory=list)
    """The recurring batches before the stop (invariant.ledger): acceptedAt, first line, ids."""
    state: Folded | None = None
    """The fold's state before the violating event (judge's `Judgement.state`)."""
    offending: tuple[Entry, Change | None] | None = None


def _ms_text(ms: int) -> str:
    return f"{ms:,}".replace(",", " ")


def _replay(
    changes: Sequence[Entry], rows: Sequence[LedgerRow], state: Folded | None, profile: Profile, stop: int | None
) -> Replayed:
    """Each id's history from the fold's steps before event `stop` (all when None), and the
    recurring batches, both as the ledger's `rows` hold them: nothing is folded again."""
    out = Replayed(state=state)
    for _, accepted, members in batches(rows):
        if stop is None or members[0].index < stop:
            ids = [
                m.step.change.id for m in members if m.step is not None and isinstance(m.step.change, DispatchChange)
            ]
            out.batches.append((accepted, members[0].line, ids))
    for entry, row in zip(changes, rows, strict=True):
        if stop is not None and entry.event_index >= stop:
            if entry.event_index == stop:
                assert entry.event is not None
                try:
                    out.offending = (entry, decode_change(entry.event.get("data"), profile))
                except ScheduleLogError:
                    out.offending = (entry, None)
            break
        step = row.step
        if step is None:  # the inherited prefix
            continue
        change = step.change
        if isinstance(change, CreateChange):
            out.lives[change.record.id] = Life(change.record, entry, change.record.scheduled_at)
            continue
        life = out.lives[change.id]
        life.events.append((entry, change))
        if isinstance(change, DeleteChange):
            life.end = f"deleted at line {entry.line}"
        elif step.after is None:
            one_shot = step.before is not None and step.before.kind in ("after", "at")
            life.end = f"dispatched at line {entry.line}" if one_shot else f"finished at line {entry.line} (no target)"
        else:
            life.record = step.after
    return out


def record_text(record: Record) -> str:
    if isinstance(record, EveryRecord):
        rule = f"every {record.every_seconds} s"
    elif isinstance(record, CronRecord):
        rule = f"cron {record.cron!r} in {record.time_zone}"
    else:
        rule = record.kind
    return f"{record.id!r} ({rule}, prompt {js_compact_json(record.prompt)})"


def _change_text(change: Change) -> str:
    if isinstance(change, CreateChange):
        return f"create, target {change.record.scheduled_at}"
    if isinstance(change, DeleteChange):
        return "delete"
    parts = [f"dispatch ({change.shape})"]
    parts += [f"{name} {value}" for name, value in (
        ("occurrence", change.occurrence_at), ("accepted", change.accepted_at), ("next", change.next_scheduled_at)
    ) if value is not None]  # fmt: skip
    return ", ".join(parts)


def intended(record: Record, count: int = INTENDED) -> list[str]:
    """The record's next intended occurrences from its current target (recurring records)."""
    target = parse_instant(record.scheduled_at)
    if target is None:
        return []
    if isinstance(record, EveryRecord):
        step = record.every_seconds * 1000
        return [format_instant(t) for t in range(target, target + step * count, step) if t <= MAX_MS]
    if isinstance(record, CronRecord):
        zone = load_zone(record.time_zone)
        if zone is None:
            return []
        try:
            rule = parse_cron(record.cron)
        except ValueError:
            return []
        found, cursor = [record.scheduled_at], target
        while len(found) < count:
            nxt = next_occurrence(rule, zone, cursor)
            if nxt is None:
                break
            found.append(format_instant(nxt))
            cursor = nxt
        return found
    return []


def _history(life: Life) -> Iterator[str]:
    yield f"  schedule {record_text(life.record)}"
    yield f"    line {life.created.line:<6} event {life.created.event_index:<6} create, target {life.created_target}"
    for entry, change in life.events:
        yield f"    line {entry.line:<6} event {entry.event_index:<6} {_change_text(change)}"
    if life.end is not None:
        yield f"    ended: {life.end}"
    elif life.record.kind in ("every", "cron"):
        yield f"    next intended occurrences: {', '.join(intended(life.record))}"


def _valid_instead(v: Violation, replayed: Replayed) -> list[str]:
    """What would have been valid in place of the offending event (empty when nothing simple)."""
    offending = replayed.offending
    change = offending[1] if offending else None
    state = replayed.state
    if v.rule == "fold.gate" and isinstance(change, DispatchChange) and change.accepted_at and replayed.batches:
        last = parse_instant(replayed.batches[-1][0])
        accepted = parse_instant(change.accepted_at)
        assert last is not None and accepted is not None
        opens = last + GATE_MS
        if accepted < last:
            return [f"a new recurring batch must come after the last one ({replayed.batches[-1][0]})"]
        return [
            f"the next recurring batch may be accepted from {format_instant(opens)}; this one was accepted "
            f"at {change.accepted_at}, {_ms_text(opens - accepted)} ms early."
        ]
    dispatch = change if isinstance(change, DispatchChange) else None
    life = replayed.lives.get(dispatch.id) if dispatch is not None else None
    if v.rule == "fold.every.arith" and life is not None and dispatch is not None and dispatch.accepted_at:
        target, accepted = parse_instant(life.record.scheduled_at), parse_instant(dispatch.accepted_at)
        assert target is not None and accepted is not None
        return [
            f"acceptedAt may be {life.record.scheduled_at} (the record's target) or later; this dispatch "
            f"was accepted at {dispatch.accepted_at}, {_ms_text(target - accepted)} ms early."
        ]
    if v.rule == "fold.cron.progression" and life is not None and dispatch is not None:
        return _cron_instead(life.record, dispatch)
    if v.rule == "fold.create.reuse" and state is not None:
        return [f"a fresh id: the next one the owner allocates is {allocate_id(state)!r}."]
    if v.rule.endswith(".inactive") and state is not None:
        active = ", ".join(repr(r.id) for r in state.active) or "none"
        return [f"a {v.rule.split('.')[1]} of an active id; active at that point: {active}."]
    if v.rule == "fold.dispatch.kind-shape" and life is not None:
        shapes = " or ".join(SHAPES_FOR_KIND[life.record.kind])
        article = "an" if life.record.kind[0] in "aeiou" else "a"
        return [f"{article} {life.record.kind} record takes a dispatch of shape {shapes}."]
    if v.rule == "fold.seed.bounds":
        return ["a seedLength that is a safe integer from 0 to the log's event count."]
    return []


def _cron_instead(record: Record, change: DispatchChange) -> list[str]:
    """The occurrence and next target the calendar gives a cron dispatch accepted when this one was."""
    accepted = parse_instant(change.accepted_at or "")
    target = parse_instant(record.scheduled_at)
    if not isinstance(record, CronRecord) or accepted is None or target is None:
        return []
    lines = [f"occurrenceAt a whole minute from {record.scheduled_at} (the record's target) to {change.accepted_at}"]
    if accepted < target:
        return [f"acceptedAt {record.scheduled_at} (the record's target) or later."]
    zone = load_zone(record.time_zone)
    if zone is not None:
        rule = parse_cron(record.cron)
        latest, cursor = record.scheduled_at, target
        while (nxt := next_occurrence(rule, zone, cursor)) is not None and nxt <= accepted:
            latest, cursor = format_instant(nxt), nxt
        following = next_occurrence(rule, zone, accepted)
        lines = [
            f"the calendar's decision for a dispatch accepted at {change.accepted_at}: occurrenceAt {latest}, "
            f"nextScheduledAt {'none' if following is None else format_instant(following)}."
        ]
    return lines


def story(report: SessionReport, judgement: Judgement | None) -> list[str]:
    """The session's story, line by line (not yet made terminal-safe), told from the judgement
    behind the report (None for an unreadable log)."""
    changes = [entry for entry, _ in judgement.steps] if judgement is not None else []
    rows = judgement.ledger if judgement is not None else ()
    state = judgement.state if judgement is not None else None
    who = f" [{report.session}]" if report.session else ""
    profile = get_profile(report.profile.name if report.profile is not None else "calendar")
    v = report.violation
    if report.verdict is not Verdict.CORRUPT or v is None:
        return _summary(report, changes, rows, profile, who)
    replayed = _replay(changes, rows, state, profile, v.index)
    lines = [f"CORRUPT {report.path}{who} (profile {profile.name})", ""]
    lines += [f"Rule {v.rule}: {describe(v.rule).replace('`', '')}."]
    involved: list[str] = []
    offending = replayed.offending
    if offending is not None and offending[1] is not None:
        c = offending[1]
        involved.append(c.record.id if isinstance(c, CreateChange) else c.id)
    if v.rule == "fold.gate" and replayed.batches:  # and the members of the batch it came too soon after
        involved += replayed.batches[-1][2]
    lives = [replayed.lives[i] for i in dict.fromkeys(involved) if i in replayed.lives]
    if lives:
        lines += ["", "History up to the violation:"]
        for life in lives:
            lines += list(_history(life))
    if replayed.batches and v.rule.startswith(("fold.gate", "fold.every", "fold.cron")):
        lines += ["", "Recurring batches (each opens the gate for 300 s):"]
        for accepted, line, ids in replayed.batches[-5:]:
            opens = parse_instant(accepted)
            window = "" if opens is None else f"; the next may be accepted from {format_instant(opens + GATE_MS)}"
            lines.append(f"  line {line!s:<6} accepted {accepted}: {', '.join(map(repr, ids))}{window}")
    where = f"line {v.line}" if v.line is not None else "the log"
    event = f", event {v.index}" if v.index is not None else ""
    lines += ["", f"Offending event: {where}{event}{', ' + v.pointer if v.pointer else ''}"]
    if offending is not None and offending[1] is not None:
        lines.append(f"  {_change_text(offending[1])}")
    if offending is not None and v.pointer:
        found = _at_pointer(offending[0].event, v.pointer)
        if found is not _ABSENT:
            lines.append(f"  value: {_value_text(found)}")
    lines.append(f"  {with_human_durations(v.message)}")
    ids = list(dict.fromkeys(involved))
    if ids:
        lines.append(f"  ids involved: {', '.join(map(repr, ids))}")
    lines.append("  severity: error (the reference refuses to load this log: its reminders cannot be derived)")
    if v.related:
        lines += ["", "Related:"]
        lines += [f"  {x.where()}: {x.meaning}" for x in v.related]
    instead = [with_human_durations(line) for line in _valid_instead(v, replayed)]
    if instead:
        lines += ["", "What would have been valid: " + instead[0], *instead[1:]]
    return lines


_ABSENT = object()


def _at_pointer(value: object, pointer: str) -> object:
    """The value a JSON pointer (RFC 6901) names in `value`, or _ABSENT."""
    for token in pointer.split("/")[1:]:
        key = token.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and key in value:
            value = value[key]
        elif isinstance(value, list) and key.isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return _ABSENT
    return value


def _value_text(value: object, limit: int = 120) -> str:
    """A value as JSON with every non-ASCII character escaped (a no-break space shows as \u00a0,
    not as an invisible space), cut to `limit` characters."""
    text = json.dumps(echoed(value), ensure_ascii=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_DURATION = re.compile(r"\b(\d{1,3}(?: \d{3})+|\d{4,}) ms\b")
_UNITS = ((86_400_000, "d"), (3_600_000, "h"), (60_000, "min"), (1_000, "s"))


def human_duration(ms: int) -> str:
    """`ms` in the largest units that write it exactly, at most two: 120000 -> 2 min, 5400000 -> 1 h 30 min."""
    parts: list[str] = []
    rest = ms
    for size, unit in _UNITS:
        if rest >= size and len(parts) < 2:
            parts.append(f"{rest // size} {unit}")
            rest %= size
    if rest and len(parts) < 2 and rest % 1000 == 0:
        parts.append(f"{rest // 1000} s")
    elif rest:
        return f"{ms / 1000:g} s"
    return " ".join(parts) or "0 s"


def with_human_durations(text: str) -> str:
    """A message with each duration of 1,000 ms or more also given in human units."""
    return _DURATION.sub(lambda m: f"{m.group(0)} ({human_duration(int(m.group(1).replace(' ', '')))})", text)


def _summary(
    report: SessionReport, changes: Sequence[Entry], rows: Sequence[LedgerRow], profile: Profile, who: str
) -> list[str]:
    head = f"{report.verdict.value.upper()} {report.path}{who}"
    if report.verdict is not Verdict.OK:
        reasons = []
        for f in report.findings:
            reasons.append(f"  {f.severity}: {f.code}: {with_human_durations(f.message)}")
            reasons.append(f"    ({describe(f.code).replace('`', '')})")
        return [head, *reasons]
    replayed = _replay(changes, rows, None, profile, None)
    lines = [head + f": {report.events} events, {len(replayed.lives)} schedule(s) created in its own part"]
    for life in replayed.lives.values():
        state = life.end or f"active, next target {life.record.scheduled_at}"
        dispatches = sum(1 for _, c in life.events if isinstance(c, DispatchChange))
        lines.append(
            f"  {record_text(life.record)}: created at line {life.created.line}, {dispatches} dispatch(es), {state}"
        )
    return lines


def explain_path(
    path: str, reading: Reading = DEFAULT_READING, cache: Path | None = None
) -> tuple[SessionReport, list[str]]:
    """The report and the story of one session log, read once (through the verdict cache in
    folder `cache` when given): the judgement behind the report holds every schedule change."""
    report, judgement = judged(path, reading, cache)
    if report.verdict is Verdict.UNREADABLE:
        return report, story(report, None)
    told = story(report, judgement)
    if report.verdict is Verdict.CORRUPT and report.violation is None and reading.mode is Mode.STRICT:
        told += _lenient_reading(path, reading)
    return report, told


def _lenient_reading(path: str, reading: Reading) -> list[str]:
    """For a log the strict reader refuses: what the lenient one (the fixture reader's rules:
    header fields only read, blank lines skipped) makes of it, found by reading it so."""
    lenient = lenient_report(path, reading)
    if lenient.verdict is Verdict.OK:
        return ["", "With --mode lenient (the fixture reader's rules) it is ok: only the strict reader refuses it."]
    why = (
        lenient.violation.rule
        if lenient.violation is not None
        else ", ".join(dict.fromkeys(f.code for f in lenient.findings if f.severity == "error"))
    )
    return ["", f"With --mode lenient (the fixture reader's rules) it is {lenient.verdict.value} too ({why})."]
