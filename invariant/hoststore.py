"""The Host task store (`schedule.json`, host.md §1-§4): its shapes and the rules that make the
Host refuse to open it.

The Host opens its store all or nothing: one malformed task rejects the whole store. So a
store is judged whole, and every finding is kept (not only the first), each with its rule id,
its JSON pointer into the store and the task it belongs to. The shapes are `ObjectShape`s, as
the log protocol's are, so that the JSON Schemas can be rendered from the same definitions.

The file layer is judged as the Host's JSON storage backend reads it (host.md §1): strict about
the header (`unit` names `schedule`, its version the number 1; `tables` an object; `tasks`, when
present, a plain object), lenient about the rest of the envelope (`global`, other top-level keys,
other `unit` keys, other tables), which `ignored_parts` names as information, never as a refusal.
A stored cron expression must be its canonical spelling (`hostcron.canonical`, host.md §4.1).

Choices (host.md leaves them to the toolkit): a history record's optional `prompt` is any
string; a `window`'s dates are years 0001-9999, as every other Host date; the later 1.0
revision's `window.timeZone` rule (a zone ICU resolves) is the one applied.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from itertools import pairwise

from .findings import Finding, Severity
from .hostcron import HostCronError, canonical, parse_host_cron
from .instant import format_instant, parse_instant
from .jsvalue import is_number, shown
from .occurrences import DAY_MS
from .patterns import DATE, END, ZONE
from .retention import NO_RETENTION, Retention
from .shapes import (
    MAX_EVERY_SECONDS,
    ZONE_SHAPE,
    ArrayOf,
    Boolean,
    Const,
    Enum,
    Field,
    Instant,
    JsonSchema,
    Nested,
    ObjectShape,
    OneOf,
    Reject,
    SafeInt,
    Spec,
    Text,
    TrimmedText,
    pointer_to,
    shape_problems,
)
from .zones import load_zone, resolve_zone

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MIN_EVERY_SECONDS = 60
"""The Host's shortest `every` interval (the log protocol's is 300 s)."""
TITLE_UNITS = 120


@dataclass(frozen=True)
class HostInstant(Spec):
    """A canonical UTC instant of years 0001-9999 (the field's own rule when it is not)."""

    description: str = ""

    def check(self, value: object) -> object:
        try:
            return Instant().check(value)
        except Reject as err:
            raise Reject(err.message) from None

    def schema(self) -> JsonSchema:
        return Instant().schema()


WALL_TIME = re.compile(r"(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{3}")


@dataclass(frozen=True)
class WallTime(Spec):
    """A local wall time `HH:mm:ss.SSS`."""

    description: str = ""

    def check(self, value: object) -> object:
        if type(value) is not str or WALL_TIME.fullmatch(value) is None:
            raise Reject(f"must be a HH:mm:ss.SSS wall time, got {shown(value)}")
        return value

    def schema(self) -> JsonSchema:
        return {"type": "string", "pattern": f"^{WALL_TIME.pattern}{END}"}


@dataclass(frozen=True)
class CalendarDate(Spec):
    """A real calendar date `YYYY-MM-DD` of years 0001-9999 (a window bound: not an instant)."""

    description: str = ""

    def check(self, value: object) -> object:
        if not _is_date(value):
            raise Reject(f"must be a YYYY-MM-DD calendar date, got {shown(value)}")
        return value

    def schema(self) -> JsonSchema:
        return {"type": "string", "pattern": f"^{DATE}{END}"}


@dataclass(frozen=True)
class NonEmptyText(Spec):
    """A non-empty string, taken as written (no trim rule: the Host opens `" a"`)."""

    description: str = ""

    def check(self, value: object) -> object:
        if type(value) is not str or not value:
            raise Reject(f"must be a non-empty string, got {shown(value)}")
        return value

    def schema(self) -> JsonSchema:
        return {"type": "string", "minLength": 1}


@dataclass(frozen=True)
class Weekdays(Spec):
    """Non-empty, unique, ascending integers 1..7 (Monday 1 ... Sunday 7)."""

    description: str = ""

    def check(self, value: object) -> object:
        days = ArrayOf(SafeInt(1, 7), min_items=1).check(value)
        assert isinstance(days, list)
        numbers = [int(d) for d in days]
        if len(set(numbers)) != len(numbers):
            raise Reject(f"must be unique, got {shown(value)}")
        if any(b <= a for a, b in pairwise(numbers)):
            raise Reject(f"must be ascending, got {shown(value)}", "host.weekly.weekdays.order")
        return numbers

    def schema(self) -> JsonSchema:
        return {"type": "array", "items": SafeInt(1, 7).schema(), "minItems": 1, "uniqueItems": True}


@dataclass(frozen=True)
class KnownZone(Spec):
    """`UTC` or an Area/Location name that ICU resolves; the stored spelling is kept."""

    description: str = ""

    def check(self, value: object) -> object:
        if type(value) is not str or (value != "UTC" and ZONE_SHAPE.fullmatch(value) is None):
            raise Reject(f"must be UTC or an Area/Location zone name, got {shown(value)}")
        if resolve_zone(value) is None:
            raise Reject(f"{shown(value)} is not a zone name ICU resolves", "host.record.timeZone.unknown")
        return value

    def schema(self) -> JsonSchema:
        return {"type": "string", "pattern": ZONE}


@dataclass(frozen=True)
class HostCronText(Spec):
    """A five-field Host cron expression in a canonical spelling."""

    description: str = ""

    def check(self, value: object) -> object:
        if type(value) is not str:
            raise Reject(f"must be a string, got {shown(value)}")
        try:
            spelled = canonical(parse_host_cron(value))
        except HostCronError as err:
            raise Reject(str(err), "host.cron.grammar") from None
        if spelled != value:
            raise Reject(f"stored {shown(value)}; the Host stores {spelled!r}", "host.cron.canonical")
        return value

    def schema(self) -> JsonSchema:
        return {"type": "string"}


def _f(name: str, spec: Spec, rule: str, meaning: str, optional: bool = False) -> Field:
    return Field(name, spec, rule, meaning, optional)


_ID = _f("id", TrimmedText(), "host.record.id", "The task's id (`schedule-<uuid>`; legacy `schedule-N`).")
_COMMON = (
    _f(
        "title",
        TrimmedText(max_units=TITLE_UNITS, length_rule="host.record.title.length"),
        "host.record.title",
        "Trimmed, non-empty, at most 120 UTF-16 code units.",
    ),
    _f("prompt", TrimmedText(), "host.record.prompt", "The instruction delivered: trimmed, non-empty."),
    _f("scheduledAt", HostInstant(), "host.record.scheduledAt", "The next target, or the final occurrence."),
)
_ZONE = _f("timeZone", KnownZone(), "host.record.timeZone", "UTC or a zone ICU resolves (spelling kept).")
_TIME = _f("time", WallTime(), "host.record.time", "The local wall time, HH:mm:ss.SSS.")
_EXTRA = {
    "after": (_f("afterSeconds", SafeInt(1), "host.after.afterSeconds", "Seconds after creation: positive."),),
    "at": (),
    "every": (
        _f(
            "everySeconds",
            SafeInt(MIN_EVERY_SECONDS, MAX_EVERY_SECONDS),
            "host.every.everySeconds",
            "The interval: at least 60 seconds, its milliseconds a safe integer.",
        ),
    ),
    "daily": (_TIME, _ZONE),
    "weekly": (_TIME, _ZONE, _f("weekdays", Weekdays(), "host.weekly.weekdays", "Days 1 (Monday) .. 7 (Sunday).")),
    "cron": (
        _f("expression", HostCronText(), "host.record.expression", "A five-field Host cron expression, canonical."),
        _ZONE,
    ),
}
RECORD_SHAPES = {
    kind: ObjectShape(
        f"host-{kind}-record",
        f"Host {kind} record",
        f"A Host schedule record of kind {kind}.",
        (_ID, _f("kind", Const(kind), "host.record.kind", f"The kind: {kind}."), *_COMMON, *extra),
    )
    for kind, extra in _EXTRA.items()
}
RECEIPT = ObjectShape(
    "host-receipt",
    "Delivery receipt",
    "One delivery: the occurrence delivered, when, and the message that carried it.",
    (
        _f("scheduledAt", HostInstant(), "host.receipt.scheduledAt", "The occurrence delivered."),
        _f("deliveredAt", HostInstant(), "host.receipt.deliveredAt", "When it was delivered."),
        _f("messageId", TrimmedText(), "host.receipt.messageId", "The user/message that carried it."),
    ),
)
HISTORY_RECORD = ObjectShape(
    "host-history-record",
    "Delivery history record",
    "A retained receipt, with the prompt delivered.",
    (*RECEIPT.fields, _f("prompt", Text(), "host.history.prompt", "The prompt delivered.", True)),
)
HISTORY = ObjectShape(
    "host-history",
    "Delivery history",
    "The retained receipts, oldest first, and whether earlier ones are missing.",
    (
        _f("records", ArrayOf(Nested(HISTORY_RECORD)), "host.history.records", "Retained receipts, in append order."),
        _f("earlierRecordsUnavailable", Boolean(), "host.history.unavailable", "Earlier receipts were never kept."),
        _f("earlierRecordsPruned", Boolean(), "host.history.pruned", "Earlier receipts were pruned.", True),
    ),
)
WINDOW = ObjectShape(
    "host-window",
    "Recurrence window",
    "1.0.x: when a recurring task may fire.",
    (
        _f("start", CalendarDate(), "host.window.start", "The first local date it may fire on.", True),
        _f("end", CalendarDate(), "host.window.end", "The last local date it may fire on.", True),
        _ZONE,
    ),
)
TASK = ObjectShape(
    "host-task",
    "Host task",
    "One row of the `tasks` table: the record, its session, status and deliveries.",
    (
        _f("sessionId", NonEmptyText(), "host.task.sessionId", "The session that created it and receives it."),
        _f(
            "record",
            OneOf(tuple(Nested(shape) for shape in RECORD_SHAPES.values())),
            "host.record",
            "A Host schedule record of one of six kinds.",
        ),
        _f("status", Enum(("active", "inactive")), "host.task.status", "Absent reads as active.", True),
        _f("lastDelivery", Nested(RECEIPT), "host.receipt", "The latest delivery.", True),
        _f("deliveryHistory", Nested(HISTORY), "host.history", "Retained deliveries.", True),
        _f("window", Nested(WINDOW), "host.window", "When a recurring task may fire.", True),
    ),
)


def host_finding(
    code: str, pointer: str, task: str | None, message: str, severity: Severity = Severity.ERROR
) -> Finding:
    """A rule the store breaks (an error: the Host refuses the store), where (a JSON pointer into
    the store) and in which task (named first in the message)."""
    where = f"task {task!r}: " if task is not None else ""
    return Finding(code, severity, where + message, pointer=pointer)


_soft = partial(host_finding, severity=Severity.WARNING)
"""What host.md §6 lets an auditor add: the Host opens the store all the same."""
_ignored = partial(host_finding, severity=Severity.INFO)
"""What the Host reads past without a word."""


def _object(value: object, shape: ObjectShape, pointer: str, task: str | None, keys_rule: str) -> Iterator[Finding]:
    """Every way `value` breaks `shape`, nested objects looked into (not summarised); a task's
    record is left to `_record` (its shape depends on its kind)."""
    skip = frozenset({"record"}) if shape is TASK else frozenset()
    for problem in shape_problems(value, shape, pointer, keys_rule, nested=True, skip=skip):
        said = problem.message if problem.field is not None else f"{problem.shape.title} {problem.message}"
        yield host_finding(problem.rule, problem.pointer, task, said)


def _record(value: object, pointer: str, task: str | None) -> Iterator[Finding]:
    kind = value.get("kind") if isinstance(value, dict) else None
    if not isinstance(value, dict) or type(kind) is not str or kind not in RECORD_SHAPES:
        shown_kind = "missing" if isinstance(value, dict) and "kind" not in value else shown(kind)
        what = f"kind {shown_kind} is not one of {', '.join(RECORD_SHAPES)}" if isinstance(value, dict) else "an object"
        yield host_finding(
            "host.record.kind", pointer + ("/kind" if isinstance(value, dict) else ""), task, f"record {what}"
        )
        return
    yield from _object(value, RECORD_SHAPES[kind], pointer, task, "host.record.keys")


def _same_receipt(a: Mapping[str, object], b: Mapping[str, object]) -> bool:
    return all(a.get(k) == b.get(k) for k in ("scheduledAt", "deliveredAt", "messageId"))


def _deliveries(task: Mapping[str, object], pointer: str, task_id: str) -> Iterator[Finding]:
    """History and lastDelivery agree; message ids are unique within the task."""
    history, last = task.get("deliveryHistory"), task.get("lastDelivery")
    records = history.get("records") if isinstance(history, dict) else None
    if not isinstance(records, list):
        return
    seen: dict[object, int] = {}
    for n, record in enumerate(records):
        message = record.get("messageId") if isinstance(record, dict) else None
        if isinstance(message, str):
            if message in seen:
                where = f"{pointer}/deliveryHistory/records/{n}/messageId"
                text = f"message id {message!r} repeats record {seen[message]}"
                yield host_finding("host.history.duplicate-message", where, task_id, text)
            seen.setdefault(message, n)
    if not records:
        if last is not None:
            text = "an empty delivery history has no lastDelivery"
            yield host_finding("host.history.last-delivery", f"{pointer}/lastDelivery", task_id, text)
        return
    latest = records[-1]
    if isinstance(latest, dict) and (not isinstance(last, dict) or not _same_receipt(latest, last)):
        text = "lastDelivery must equal the latest history record (scheduledAt, deliveredAt, messageId)"
        yield host_finding("host.history.last-delivery", f"{pointer}/lastDelivery", task_id, text)


def _is_date(value: object) -> bool:
    return type(value) is str and re.fullmatch(DATE, value) is not None


def _window(task: Mapping[str, object], pointer: str, task_id: str) -> Iterator[Finding]:
    """A window bounds something: at least one date, and `start` not after `end`."""
    window = task.get("window")
    if not isinstance(window, dict):
        return
    start, end = window.get("start"), window.get("end")
    if "start" not in window and "end" not in window:
        yield host_finding("host.window.bounds", f"{pointer}/window", task_id, "a window needs start or end")
    elif _is_date(start) and _is_date(end) and str(start) > str(end):  # YYYY-MM-DD compares as text
        text = f"window start {start} is after its end {end}"
        yield host_finding("host.window.order", f"{pointer}/window", task_id, text)


def task_findings(key: str, task: object, pointer: str) -> Iterator[Finding]:
    """Every rule of host.md §2-§4 one task (row `key`) breaks."""
    yield from _object(task, TASK, pointer, key, "host.task.keys")
    if not isinstance(task, dict):
        return
    if "record" in task:
        yield from _record(task["record"], f"{pointer}/record", key)
        record = task["record"]
        if isinstance(record, dict) and "id" in record and record["id"] != key:
            text = f"row key {key!r} differs from record.id {shown(record['id'])}"
            yield host_finding("host.task.key", f"{pointer}/record/id", key, text)
    yield from _window(task, pointer, key)
    yield from _deliveries(task, pointer, key)


def _header(store: Mapping[str, object]) -> Iterator[Finding]:
    """The JSON backend's header checks (host.md §1): `unit` an object naming `schedule` with a
    number for `version` (else a malformed medium), that number 1 (else a version mismatch);
    `tables` an object (an array passes); `tasks`, when present, a plain object."""
    unit = store.get("unit")
    if not isinstance(unit, dict):
        yield host_finding("host.store.unit", "/unit", None, f"unit must be an object, got {shown(unit)}")
    else:
        if unit.get("name") != "schedule":
            text = f"unit.name must be 'schedule', got {shown(unit.get('name'))}"
            yield host_finding("host.store.unit", "/unit/name", None, text)
        version = unit.get("version")
        if not is_number(version):
            yield host_finding(
                "host.store.unit", "/unit/version", None, f"unit.version must be a number, got {shown(version)}"
            )
        elif version != 1:
            text = f"unit.version is {shown(version)}; this Host reads version 1"
            yield host_finding("host.store.version", "/unit/version", None, text)
    tables = store.get("tables")
    if not isinstance(tables, dict | list):
        yield host_finding("host.store.tables", "/tables", None, f"tables must be an object, got {shown(tables)}")
    elif isinstance(tables, dict) and "tasks" in tables and not isinstance(tables["tasks"], dict):
        text = f"tables.tasks must be an object of tasks by id, got {shown(tables['tasks'])}"
        yield host_finding("host.store.tables", "/tables/tasks", None, text)


def store_findings(store: object) -> list[Finding]:
    """Every rule the store breaks (empty: the Host opens it)."""
    if not isinstance(store, dict):
        return [host_finding("host.store.json", "", None, f"the store must be a JSON object, got {shown(store)}")]
    found = list(_header(store))
    for key, task in tasks_of(store).items():
        found.extend(task_findings(key, task, f"/tables/tasks{pointer_to(key)}"))
    return found


def ignored_parts(store: object) -> list[Finding]:
    """What the Host reads past without a word (host.md §1): top-level keys other than `unit`,
    `global` and `tables`, a `global` that is not null, other `unit` keys, other tables. Worth
    mentioning, never a reason to call the store corrupt."""
    if not isinstance(store, dict):
        return []
    found = [
        _ignored("host.store.ignored", pointer_to(key), None, f"top-level key {key!r} is not read")
        for key in store
        if key not in ("unit", "global", "tables")
    ]
    if store.get("global") is not None:
        found.append(
            _ignored(
                "host.store.ignored", "/global", None, f"global is {shown(store['global'])}, not null; it is not read"
            )
        )
    unit, tables = store.get("unit"), store.get("tables")
    if isinstance(unit, dict):
        found += [
            _ignored("host.store.ignored", f"/unit{pointer_to(key)}", None, f"unit key {key!r} is not read")
            for key in unit
            if key not in ("name", "version")
        ]
    if isinstance(tables, dict):
        found += [
            _ignored("host.store.ignored", f"/tables{pointer_to(key)}", None, f"table {key!r} is not read")
            for key in tables
            if key != "tasks"
        ]
    elif isinstance(tables, list):
        found.append(_ignored("host.store.ignored", "/tables", None, "tables is an array: read as no tasks"))
    if isinstance(tables, dict) and "tasks" not in tables:
        found.append(_ignored("host.store.ignored", "/tables", None, "no tasks table: read as no tasks"))
    return found


def tasks_of(store: object) -> dict[str, object]:
    """The store's `tables.tasks` rows (none when the store has no such object)."""
    tables = store.get("tables") if isinstance(store, dict) else None
    tasks = tables.get("tasks") if isinstance(tables, dict) else None
    return tasks if isinstance(tasks, dict) else {}


def receipts(task: Mapping[str, object]) -> list[dict[str, object]]:
    """A task's retained receipts, oldest first: its history's records, or its `lastDelivery`
    alone when it has no history records (written before histories existed)."""
    return [receipt for _, receipt in located_receipts(task, "")]


def located_receipts(task: Mapping[str, object], pointer: str) -> list[tuple[str, dict[str, object]]]:
    """`receipts`, each with its JSON pointer in the store (the task being at `pointer`)."""
    history = task.get("deliveryHistory")
    records = history.get("records") if isinstance(history, dict) else None
    where = f"{pointer}/deliveryHistory/records"
    kept = (
        [(f"{where}/{n}", r) for n, r in enumerate(records) if isinstance(r, dict)] if isinstance(records, list) else []
    )
    last = task.get("lastDelivery")
    return kept if kept or not isinstance(last, dict) else [(f"{pointer}/lastDelivery", last)]


_NAMED_ID = re.compile(r"^schedule_id_json: (.*)$", re.MULTILINE)
_NAMED_BATCH = re.compile(r"^reminders_json: (.*)$", re.MULTILINE)


def _json(text: str) -> object:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def named_tasks(text: str) -> list[str]:
    """The schedule ids a reminder's framing names: each `schedule_id_json` line, and each item
    of a batch's `reminders_json` (profiles.md §3.4)."""
    names = [n for m in _NAMED_ID.finditer(text) if isinstance(n := _json(m.group(1)), str)]
    for m in _NAMED_BATCH.finditer(text):
        items = _json(m.group(1))
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and isinstance(name := item.get("schedule_id"), str):
                names.append(name)
    return names


def from_a_kept_task(text: str, session_id: str, tasks: Mapping[str, object]) -> bool:
    """Whether a task still in the store may have delivered this reminder text to `session_id`:
    one the framing names by id, or, for a framing that names none, one of the session's tasks
    whose prompt the text holds (as written or JSON-escaped). A deleted task takes its receipts
    with it (host.md §5), so a reminder from none of them can have no receipt."""
    names = named_tasks(text)
    if names:
        return any(name in tasks for name in names)
    for task in tasks.values():
        if not isinstance(task, dict) or task.get("sessionId") != session_id:
            continue
        record = task.get("record")
        prompt = record.get("prompt") if isinstance(record, dict) else None
        if (
            isinstance(prompt, str)
            and prompt
            and (prompt in text or json.dumps(prompt, ensure_ascii=False)[1:-1] in text)
        ):
            return True
    return False


def is_store(value: object) -> bool:
    """Whether a JSON value claims to be a Host task store (by its unit's name)."""
    unit = value.get("unit") if isinstance(value, dict) else None
    return isinstance(unit, dict) and unit.get("name") == "schedule"


# --- what an auditor can add (host.md §6): soft findings, never a refusal --------------------------


def _local(ms: int, zone_name: object) -> datetime | None:
    zone = load_zone(zone_name)
    if zone is None:
        return None
    try:
        return (EPOCH + timedelta(milliseconds=ms)).astimezone(zone)
    except (OverflowError, ValueError):  # a local date before year 1 or after 9999
        return None


def _wall(local: datetime) -> str:
    return f"{local:%H:%M:%S}.{local.microsecond // 1000:03d}"


def occurrence_problem(record: Mapping[str, object]) -> str | None:
    """Why a wall-clock record's `scheduledAt` is no occurrence of its rule (None: it is, or the
    record is not of a wall-clock kind). An overlap's occurrence is its earlier instant."""
    kind, at = record.get("kind"), record.get("scheduledAt")
    ms = parse_instant(at) if type(at) is str else None
    if kind not in ("daily", "weekly", "cron") or ms is None:
        return None
    local = _local(ms, record.get("timeZone"))
    if local is None:
        return None
    if local.fold:
        return f"{at} is the second pass of a repeated local time (the Host takes the earlier one)"
    if kind in ("daily", "weekly"):
        if _wall(local) != record.get("time"):
            return f"{at} is {_wall(local)} local, not {record.get('time')}"
        weekdays = record.get("weekdays")
        if kind == "weekly" and isinstance(weekdays, list) and local.isoweekday() not in weekdays:
            return f"{at} falls on weekday {local.isoweekday()}, not one of {weekdays}"
        return None
    try:
        cron = parse_host_cron(record.get("expression"))
    except HostCronError:
        return None
    minute, hour, dom, month, dow = cron.values
    if local.second or local.microsecond or local.minute not in minute or local.hour not in hour:
        return f"{at} ({_wall(local)} local) is not a minute the expression names"
    if local.month not in month:
        return f"{at} falls in month {local.month}, which the expression does not name"
    dom_ok, dow_ok = local.day in dom, local.isoweekday() % 7 in dow
    star = cron.star[2] or cron.star[4]
    if not ((dom_ok and dow_ok) if star else (dom_ok or dow_ok)):
        return f"{at} falls on a day the expression does not name"
    return None


def soft_findings(store: object, now: int | None = None, retention: Retention = NO_RETENTION) -> list[Finding]:
    """What host.md §6 lets an auditor add, as warnings: a wall-clock `scheduledAt` that is no
    occurrence of its rule, an active task overdue at `now`, deliveries out of order, a history
    beyond the deployment's retention, an inactive one-shot with no delivery."""
    found: list[Finding] = []
    for key, task in tasks_of(store).items():
        if not isinstance(task, dict) or not isinstance(record := task.get("record"), dict):
            continue
        pointer = f"/tables/tasks{pointer_to(key)}"
        problem = occurrence_problem(record)
        if problem is not None:
            found.append(_soft("host.soft.occurrence", f"{pointer}/record/scheduledAt", key, problem))
        target = parse_instant(record["scheduledAt"]) if type(record.get("scheduledAt")) is str else None
        active = task.get("status", "active") == "active"
        if now is not None and active and target is not None and target <= now:
            text = f"active and overdue at {format_instant(now)}: scheduledAt {record['scheduledAt']}"
            found.append(_soft("host.soft.overdue", f"{pointer}/record/scheduledAt", key, text))
        found.extend(_history_findings(task, pointer, key, retention))
        delivered = isinstance(task.get("lastDelivery"), dict)
        if record.get("kind") in ("after", "at") and task.get("status") == "inactive" and not delivered:
            text = "an inactive one-shot with no delivery (a crash between flush and commit can leave one)"
            found.append(_soft("host.soft.undelivered", f"{pointer}/status", key, text))
    return found


def _history_findings(task: Mapping[str, object], pointer: str, key: str, retention: Retention) -> list[Finding]:
    history = task.get("deliveryHistory")
    records = history.get("records") if isinstance(history, dict) else None
    if not isinstance(records, list):
        return []
    times = [
        parse_instant(r["deliveredAt"]) if isinstance(r, dict) and type(r.get("deliveredAt")) is str else None
        for r in records
    ]
    known = [t for t in times if t is not None]
    found = []
    where = f"{pointer}/deliveryHistory/records"
    if any(b < a for a, b in pairwise(known)):
        found.append(_soft("host.soft.history-order", where, key, "deliveredAt goes back in time"))
    if retention.records is not None and len(records) > retention.records:
        text = f"{len(records)} records retained, beyond deliveryHistoryRecords {retention.records}"
        found.append(_soft("host.soft.retention", where, key, text))
    if retention.days is not None and known:
        oldest_kept = max(known) - retention.days * DAY_MS
        stale = sum(1 for t in known if t < oldest_kept)
        if stale:
            text = f"{stale} record(s) older than deliveryHistoryDays {retention.days} before the newest"
            found.append(_soft("host.soft.retention", where, key, text))
    return found
