"""A session as data for a picture (`schedlog report`): one lane per schedule id.

Each lane holds the id's events as marks on the log's own clock (the envelope `time` of each
event; a recurring dispatch at its `acceptedAt`): its create, dispatches (recurring ones
numbered by batch), delete, the inherited ones before the fork cut, and the offending event;
each mark carries its file line, event index and JSON text. Beside them: the record's
intended occurrences as ticks, the recurring gate windows (300 s after each batch, shared by
all lanes), the fork cut, the violation and its related events. Everything is plain JSON
values, built in one pass with the verdict (`judge_log`); a mark is the array `[kind, time,
line, index, json, note]`, its kind `create`, `dispatch`, `delete`, `inherited` or `violation`
(compact, since a fleet report holds every schedule event).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from invariant.changes import CreateChange, DeleteChange, DispatchChange, Record, decode_change
from invariant.errors import ScheduleLogError
from invariant.instant import GATE_MS, MAX_MS, parse_instant
from invariant.jsvalue import safe_integer
from invariant.ledger import Status
from invariant.profiles import get_profile
from replay.audit.fanout import Group, file_size, group_bytes, grouped, in_processes
from replay.cache.cached import judged, let_go
from replay.judge.report import SessionReport
from replay.judge.rules import describe
from replay.judge.verdicts import Verdict
from replay.judge.verify import VERIFY_BUDGET, Judgement
from replay.lines import deepjson
from replay.logs.logfile import Entry
from replay.reading import DEFAULT_READING, Reading
from replay.tools.explain import intended, record_text

JSON_CHARS = 2000
"""How much of an event's JSON text a mark carries (the rest is cut, and says so)."""
TICKS = 60
"""At most this many intended occurrences per lane."""


def _json_text(entry: Entry) -> str:
    text = entry.raw.decode("utf-8", "replace") if entry.raw is not None else deepjson.dumps(entry.event)
    return text if len(text) <= JSON_CHARS else text[:JSON_CHARS] + f"... ({len(text) - JSON_CHARS} more characters)"


def _time(entry: Entry) -> int | None:
    value = safe_integer(entry.event.get("time")) if entry.event is not None else None
    return value if value is not None and -MAX_MS <= value <= MAX_MS else None


def _schedule_id(entry: Entry, change: Any) -> str:
    if isinstance(change, CreateChange):
        return change.record.id
    if isinstance(change, (DeleteChange, DispatchChange)):
        return change.id
    data = entry.event.get("data") if entry.event is not None else None
    found = data.get("id") if isinstance(data, dict) else None
    if found is None and isinstance(data, dict) and isinstance(data.get("schedule"), dict):
        found = data["schedule"].get("id")
    return found if isinstance(found, str) else "(no id)"


def view(report: SessionReport, judgement: Judgement, size: int, key: int) -> dict[str, Any]:
    """The session's picture data (see the module docstring)."""
    profile = get_profile(report.profile.name if report.profile is not None else "calendar")
    lanes: dict[str, dict[str, Any]] = {}
    opened: set[int] = set()
    gates: list[list[int]] = []
    cut_time: int | None = None
    v = report.violation

    def lane(schedule_id: str) -> dict[str, Any]:
        if schedule_id not in lanes:
            lanes[schedule_id] = {"id": schedule_id, "title": repr(schedule_id), "marks": [], "ticks": []}
        return lanes[schedule_id]

    for (entry, step), row in zip(judgement.steps, judgement.ledger, strict=True):
        t = _time(entry)
        if t is None:
            continue
        violating = row.status is Status.VIOLATION
        change: Any = step.change if step is not None else None
        if change is None and entry.event is not None:
            try:
                change = decode_change(entry.event.get("data"), profile)
            except ScheduleLogError:
                change = None
        inherited = row.owned is False
        if row.owned and cut_time is None and _forked(report):
            cut_time = t
        kind = "violation" if violating else "inherited" if inherited else _kind(change)
        if step is None and not violating and not inherited:
            continue  # after the violation: the fold stopped
        note = ""
        if isinstance(change, DispatchChange) and change.accepted_at is not None and not inherited:
            note = f"accepted {change.accepted_at}"
            if row.batch is not None:  # a recurring batch's member (invariant.ledger)
                note = f"batch {row.batch}, {note}"
                accepted = parse_instant(change.accepted_at)
                if row.batch not in opened and profile.recurring_gate and accepted is not None:
                    gates.append([accepted, accepted + GATE_MS])
                opened.add(row.batch)
        if isinstance(change, DispatchChange) and change.accepted_at is not None:
            t = parse_instant(change.accepted_at) or t  # a recurring dispatch sits at its acceptance
        target = lane(_schedule_id(entry, change))
        target["marks"].append([kind, t, entry.line, entry.event_index, _json_text(entry), note])
        if isinstance(change, CreateChange) and not inherited:
            target["title"] = record_text(change.record)
            target["ticks"] = _ticks(change.record)
    related = [] if v is None else [{**r.to_json(), "meaning": r.meaning} for r in v.related]
    return {
        "key": key,
        "path": report.path,
        "session": report.session,
        "verdict": str(report.verdict),
        "events": report.events,
        "bytes": size,
        "profile": profile.name,
        "seed": report.seed_length if isinstance(report.seed_length, int) else None,
        "first": min((m[1] for lane_ in lanes.values() for m in lane_["marks"]), default=None),
        "rule": v.rule if v is not None else next((f.code for f in report.findings if f.severity == "error"), None),
        "violation": None
        if v is None
        else {
            "rule": v.rule,
            "meaning": describe(v.rule).replace("`", ""),
            "message": v.message,
            "index": v.index,
            "line": v.line,
            "pointer": v.pointer,
            "related": related,
        },
        "findings": [[f.code, str(f.severity), f.line, f.message] for f in report.findings],
        "lanes": list(lanes.values()),
        "gates": gates,
        "cut": cut_time,
    }


def _forked(report: SessionReport) -> bool:
    """The session inherits a prefix: its owned part starts at a cut."""
    seed = report.seed_length
    return isinstance(seed, int) and seed > 0


def _kind(change: Any) -> str:
    if isinstance(change, CreateChange):
        return "create"
    if isinstance(change, DeleteChange):
        return "delete"
    return "dispatch"


def _ticks(record: Record) -> list[int]:
    """The intended occurrences of a recurring record from its first target (at most TICKS)."""
    if record.kind not in ("every", "cron"):
        target = parse_instant(record.scheduled_at)
        return [] if target is None else [target]
    found = (parse_instant(t) for t in intended(record, TICKS))
    return [t for t in found if t is not None]


def session_view(path: str, key: int, reading: Reading = DEFAULT_READING, cache: Path | None = None) -> dict[str, Any]:
    """One log's picture data (its size from the bytes read), through the verdict cache in
    folder `cache` when given."""
    report, judgement = judged(path, reading, cache)
    if report.verdict is Verdict.UNREADABLE:
        judgement = Judgement(None, None, (), ())
    return view(report, judgement, file_size(path), key)


ViewTask = tuple[Group, int, Reading, Path | None]
"""Consecutive logs pictured by one worker call, the key of the first, how to read them, and the
verdict cache's folder."""


def _view_group(task: ViewTask) -> list[dict[str, Any]]:
    group, first, reading, cache = task
    try:
        return [session_view(path, first + n, reading, cache) for n, (path, _) in enumerate(group)]
    finally:
        let_go(cache, close=False)


def _task_size(task: ViewTask) -> int:
    return group_bytes(task[0])


def fleet_views(
    paths: Sequence[str],
    reading: Reading = DEFAULT_READING,
    jobs: int = 1,
    progress: Callable[[int], None] | None = None,
    cache: Path | None = None,
) -> Iterator[dict[str, Any]]:
    """Each log's picture data, keyed by its position, in input order (groups of logs in
    `jobs` worker processes when jobs > 1, as verify reads them), through the verdict cache in
    folder `cache` when given."""
    if jobs > 1:
        tasks: list[ViewTask] = []
        first = 0
        for group in grouped(paths):
            tasks.append((group, first, reading, cache))
            first += len(group)
        if len(tasks) > 1:
            with in_processes(_view_group, tasks, jobs, progress, VERIFY_BUDGET, _task_size) as results:
                for _, views in results:
                    yield from views
            return
    try:
        for key, path in enumerate(paths):
            view_ = session_view(path, key, reading, cache)
            if progress is not None:
                progress(view_["bytes"])
            yield view_
    finally:
        let_go(cache, close=True)
