"""The three `schedule_*` tool surfaces a session log may record (host.md §7, owner.md §3-§4).

- `session-local`: the reminder tools of the schedule/change era (owner.md; create, list,
  delete), views with `deliveryMode: "session-local"`.
- `host-1.0`: the shipped Host service's tools (dsh-schedule 0.2.x/1.0.x, `tools.ts` in public
  forks; create, list, delete, update): titled reminders of six kinds, views with
  `deliveryMode: "host"`, values rendered as `JSON.stringify` of the value.
- `seed-002`: seed 002's design (create, list, view, edit) over Host tasks, with an `rrule`
  (rrule.py) and a delivery `target`. No implementation exists; what the seed leaves open is
  schedlog's choice, written beside each shape.

Each tool's parameters are an open object (undeclared keys reach the body, as the host
validates), its output is a union of closed objects, and its own checks (`refusal`) run in the
order the shipped body runs them.
"""

from __future__ import annotations

from collections.abc import Mapping

from .create import check_prompt, select_kind
from .errors import ScheduleInputError
from .hoststore import MIN_EVERY_SECONDS, TITLE_UNITS
from .jsvalue import MAX_SAFE_INTEGER, js_trim, shown
from .rrule import rrule_problem
from .shapes import (
    TITLED_RECORD_SHAPES,
    ArrayOf,
    Boolean,
    Const,
    Nested,
    Number,
    ObjectShape,
    OneOf,
    SafeInt,
    Spec,
    Text,
)
from .surfacenames import HOST, LOCAL, SEED, SURFACE_NAMES
from .toolshapes import CREATE_ARGS, DELETE_ARGS, DELETED, ERROR_CODES, ERROR_SHAPES, LIST_ARGS, NOT_FOUND
from .toolshapes import VIEW_SHAPES as LOCAL_VIEWS
from .toolsurface import (
    Refused,
    Tool,
    array_of,
    blank,
    enum,
    error_shapes,
    field,
    number_refusal,
    title_refusal,
    union,
    untrimmed_id,
)

INTEGER = SafeInt(-MAX_SAFE_INTEGER)
"""An output schema's `integer` (the values a tool renders are safe)."""

# --- session-local (owner.md §3-§4; the fixed-rate profile's views may carry a title) ----------


def _local_view(kind: str) -> ObjectShape:
    view = LOCAL_VIEWS[kind]
    title = next(f for f in TITLED_RECORD_SHAPES[kind].fields if f.name == "title")
    return ObjectShape(view.name, view.title, view.description, (*view.fields, title))


LOCAL_VIEW_SHAPES = tuple(_local_view(kind) for kind in LOCAL_VIEWS)


def _local_refusal(args: Mapping[str, object]) -> Refused | None:
    """No single selector (any profile refuses it), or a blank prompt."""
    try:
        select_kind(args)
        check_prompt(args.get("prompt"))
    except ScheduleInputError as err:
        return err.code, err.message
    return None


def _local_created(args: Mapping[str, object], value: object) -> str | None:
    """A created view is of the kind the arguments select, with the call's prompt trimmed and
    its delay or interval (profiles.md §3.7)."""
    if not isinstance(value, dict) or "state" not in value:
        return None
    try:
        kind = select_kind(args)
    except ScheduleInputError:
        return None
    if value.get("kind") != kind:
        return f"the view's kind is {value.get('kind')!r}, but the arguments select {kind!r}"
    prompt = args.get("prompt")
    if type(prompt) is str and js_trim(prompt) != value.get("prompt"):
        return "the view's prompt is not the call's prompt trimmed"
    for arg, key in (("after_seconds", "afterSeconds"), ("every_seconds", "everySeconds")):
        if arg in args and value.get(key) != args[arg]:
            return f"the view's {key} is {shown(value.get(key))}, the call's {arg} {shown(args[arg])}"
    return None


BLANK_PROMPT = ("invalid_prompt", "the prompt is empty after trimming")


def _id_refusal(args: Mapping[str, object]) -> Refused | None:
    """An id must be non-empty with no surrounding whitespace (checked before anything else)."""
    if untrimmed_id(args.get("id")):
        return "invalid_rule", f"the id {shown(args.get('id'))} is empty or padded"
    return None


def _echo(args: Mapping[str, object], value: object) -> str | None:
    """The value names the id the call gave."""
    if isinstance(value, dict) and "id" in value and "id" in args and value["id"] != args["id"]:
        return f"the value's id {value['id']!r} is not the id called with, {args['id']!r}"
    return None


VIEW_ONLY_KEYS = ("state", "deliveryMode", "deliveryNotBefore")


def _operations(appended: tuple[object, ...], operation: str) -> list[dict[str, object]]:
    return [c for c in appended if isinstance(c, dict) and c.get("operation") == operation]


def _local_create_appended(args: Mapping[str, object], value: object, appended: tuple[object, ...]) -> str | None:
    """A created view is the record the call appended (profiles.md §3.7: same id, kind,
    prompt, timing and target)."""
    if not isinstance(value, dict) or "state" not in value:
        return None
    creates = _operations(appended, "create")
    if len(creates) != 1:
        return f"a created view, but the call appended {len(creates)} create(s), not 1"
    record = creates[0].get("schedule")
    view = {k: v for k, v in value.items() if k not in VIEW_ONLY_KEYS}
    if view != record:
        differ = sorted(k for k in {*view, *(record if isinstance(record, dict) else {})} if
                        not isinstance(record, dict) or view.get(k) != record.get(k))  # fmt: skip
        return f"the view differs from the record the call appended ({', '.join(differ)})"
    return None


def _local_delete_appended(args: Mapping[str, object], value: object, appended: tuple[object, ...]) -> str | None:
    """`deleted: true` appended the delete of that id; `schedule_not_found` appended none."""
    if not isinstance(value, dict) or "deleted" not in value:
        return None
    deletes = [c.get("id") for c in _operations(appended, "delete")]
    if value["deleted"] is True and deletes != [value.get("id")]:
        return f"deleted: true, but the call appended the delete of {deletes or 'no id'}"
    if value["deleted"] is False and deletes:
        return f"schedule_not_found, but the call appended the delete of {deletes}"
    return None


LOCAL_TOOLS = (
    Tool(
        LOCAL,
        "schedule_create",
        CREATE_ARGS,
        union(*LOCAL_VIEW_SHAPES, *ERROR_SHAPES),
        ERROR_CODES,
        _local_refusal,
        _local_created,
        _local_create_appended,
    ),
    Tool(LOCAL, "schedule_list", LIST_ARGS, union(array_of(LOCAL_VIEW_SHAPES), *ERROR_SHAPES), ERROR_CODES),
    Tool(
        LOCAL,
        "schedule_delete",
        DELETE_ARGS,
        union(DELETED, NOT_FOUND, *ERROR_SHAPES),
        ERROR_CODES,
        _id_refusal,
        _echo,
        _local_delete_appended,
    ),
)

# --- the shipped Host 1.0 tools -----------------------------------------------------------------

HOST_CODES = (
    "invalid_prompt",
    "invalid_selector",
    "invalid_rule",
    "invalid_time_zone",
    "not_future",
    "time_out_of_range",
    "frequency_too_high",
    "internal_error",
)
HOST_ERRORS = error_shapes("host", HOST_CODES)
_SELECTORS = ("at", "every_seconds", "daily", "weekly", "cron")
_SELECTOR_KIND = {"after_seconds": "after", "at": "at", "every_seconds": "every", "daily": "daily"}
_SELECTOR_KIND |= {"weekly": "weekly", "cron": "cron"}


def _closed(name: str, title: str, meaning: str, *fields: tuple[str, Spec, str]) -> ObjectShape:
    return ObjectShape(name, title, meaning, tuple(field(n, s, m) for n, s, m in fields))


_WALL = ("time", Text(), "HH:mm:ss with optional 1-3 fractional digits.")
_ZONE_ARG = ("time_zone", Text(), "UTC or IANA Area/Location.")
DAILY_ARG = _closed("host-daily-arg", "daily", "Every day at a local time.", _WALL, _ZONE_ARG)
WEEKLY_ARG = _closed(
    "host-weekly-arg",
    "weekly",
    "On the given weekdays at a local time.",
    _WALL,
    _ZONE_ARG,
    ("weekdays", ArrayOf(INTEGER), "ISO weekdays, Monday 1 through Sunday 7, without repetitions."),
)
CRON_ARG = _closed(
    "host-cron-arg",
    "cron",
    "A five-field Vixie cron expression in a time zone.",
    ("expression", Text(), "minute hour day-of-month month day-of-week."),
    _ZONE_ARG,
)
AT_LOCAL_ARG = _closed(
    "host-at-local-arg",
    "local at",
    "A local date, time, and IANA time zone.",
    ("date", Text(), "YYYY-MM-DD."),
    ("time", Text(), "HH:mm:ss."),
    _ZONE_ARG,
)
_SELECTOR_FIELDS = (
    field("every_seconds", Number(), f"Fixed-rate interval in whole seconds, at least {MIN_EVERY_SECONDS}.", True),
    field("daily", Nested(DAILY_ARG), "Every day at a local time.", True),
    field("weekly", Nested(WEEKLY_ARG), "On the given weekdays at a local time.", True),
    field("cron", Nested(CRON_ARG), "Five-field Vixie cron expression in a time zone.", True),
    field(
        "at",
        OneOf((Text(), Nested(AT_LOCAL_ARG))),
        "An RFC 3339 date-time with offset, or a local date, time, and time_zone.",
        True,
    ),
)
HOST_CREATE_ARGS = ObjectShape(
    "host-create-args",
    "schedule_create arguments (Host 1.0)",
    "A prompt, a title, and exactly one timing parameter.",
    (
        field("prompt", Text(), "Reminder content delivered when due."),
        field("title", Text(), f"Task name of at most {TITLE_UNITS} characters."),
        field("after_seconds", Number(), "Delay in whole seconds.", True),
        *_SELECTOR_FIELDS,
    ),
    closed=False,
)
HOST_LIST_ARGS = ObjectShape("host-list-args", "schedule_list arguments (Host 1.0)", "No parameters.", (), False)
HOST_DELETE_ARGS = ObjectShape(
    "host-delete-args",
    "schedule_delete arguments (Host 1.0)",
    "The id of a reminder of this session, active or inactive.",
    (field("id", Text(), "Schedule id returned by schedule_list."),),
    closed=False,
)
HOST_UPDATE_ARGS = ObjectShape(
    "host-update-args",
    "schedule_update arguments (Host 1.0)",
    "A new title, prompt, or at most one timing parameter; omitted fields keep their values.",
    (
        field("id", Text(), "Schedule id returned by schedule_list."),
        field("title", Text(), f"New task name of at most {TITLE_UNITS} characters.", True),
        field("prompt", Text(), "New reminder content.", True),
        *_SELECTOR_FIELDS,
    ),
    closed=False,
)

_VIEW_COMMON = (
    ("id", Text(), "The schedule id."),
    ("title", Text(), "The task name."),
    ("prompt", Text(), "The reminder content."),
    ("scheduledAt", Text(), "The next target."),
    ("state", enum("scheduled", "overdue"), "overdue once the clock reached scheduledAt."),
    ("deliveryMode", Const("host"), "The Host delivers it."),
)
_VIEW_EXTRA: dict[str, tuple[tuple[str, Spec, str], ...]] = {
    "after": (("afterSeconds", INTEGER, "The delay."),),
    "at": (),
    "every": (("everySeconds", INTEGER, "The interval."),),
    "daily": (("time", Text(), "The wall time."), ("timeZone", Text(), "The zone.")),
    "weekly": (
        ("time", Text(), "The wall time."),
        ("timeZone", Text(), "The zone."),
        ("weekdays", ArrayOf(INTEGER), "ISO weekdays."),
    ),
    "cron": (("expression", Text(), "The cron expression."), ("timeZone", Text(), "The zone.")),
}
HOST_VIEWS = tuple(
    _closed(
        f"host-{kind}-view",
        f"{kind} view (Host 1.0)",
        f"A {kind} reminder as the Host 1.0 tools show it.",
        *_VIEW_COMMON,
        ("kind", Const(kind), f"The kind: {kind}."),
        *extra,
    )
    for kind, extra in _VIEW_EXTRA.items()
)
HOST_DELETED = _closed(
    "host-deleted",
    "deleted",
    "The reminder was deleted.",
    ("id", Text(), "The id given."),
    ("deleted", Const(True), "True."),
)
HOST_NOT_DELETED = _closed(
    "host-not-deleted",
    "not found",
    "No reminder of this session has the id.",
    ("id", Text(), "The id given."),
    ("deleted", Const(False), "False."),
    ("code", Const("schedule_not_found"), "Why."),
)
HOST_NOT_UPDATED = _closed(
    "host-not-updated",
    "not updated",
    "Unknown id, an ended reminder, or a concurrent change: nothing changed.",
    ("id", Text(), "The id given."),
    ("updated", Const(False), "False."),
    ("code", enum("schedule_not_found", "schedule_ended", "schedule_conflict"), "Why."),
)


def _selectors(args: Mapping[str, object], names: tuple[str, ...]) -> list[str]:
    return [name for name in names if name in args]


def _interval_refusal(args: Mapping[str, object]) -> Refused | None:
    if "every_seconds" not in args:
        return None
    return number_refusal("every_seconds", args["every_seconds"], MIN_EVERY_SECONDS, "frequency_too_high")


def _host_create_refusal(args: Mapping[str, object]) -> Refused | None:
    """The shipped body's checks, in its order: keys and exactly one selector, prompt, title,
    after_seconds, every_seconds."""
    extra = sorted(set(args) - {"prompt", "title", "after_seconds", *_SELECTORS})
    chosen = _selectors(args, ("after_seconds", *_SELECTORS))
    if extra or len(chosen) != 1:
        return "invalid_selector", f"undeclared key {extra[0]}" if extra else f"{len(chosen)} timing parameters, not 1"
    if blank(args.get("prompt")):
        return BLANK_PROMPT
    if (refused := title_refusal(args.get("title"), TITLE_UNITS)) is not None:
        return refused
    if "after_seconds" in args and number_refusal("after_seconds", args["after_seconds"], 1, "invalid_rule"):
        return "invalid_rule", f"after_seconds {shown(args['after_seconds'])} is not a positive safe integer"
    return _interval_refusal(args)


def _host_update_refusal(args: Mapping[str, object]) -> Refused | None:
    """The shipped body's checks, in its order: keys and at most one selector, the id, a
    change, title, prompt, every_seconds."""
    selectors = _selectors(args, _SELECTORS)
    extra = sorted(set(args) - {"id", "title", "prompt", *_SELECTORS})
    if extra or len(selectors) > 1:
        return "invalid_selector", f"undeclared key {extra[0]}" if extra else f"{len(selectors)} timing parameters"
    if (refused := _id_refusal(args)) is not None:
        return refused
    if not selectors and "title" not in args and "prompt" not in args:
        return "invalid_selector", "no new title, prompt or timing"
    if (refused := title_refusal(args.get("title"), TITLE_UNITS)) is not None:
        return refused
    if blank(args.get("prompt")):
        return BLANK_PROMPT
    return _interval_refusal(args)


def _host_kind(args: Mapping[str, object], value: object, names: tuple[str, ...]) -> str | None:
    if isinstance(value, dict) and "state" in value:
        chosen = _selectors(args, names)
        if len(chosen) == 1 and value.get("kind") != _SELECTOR_KIND[chosen[0]]:
            return f"the view's kind is {value.get('kind')!r}, but the call gave {chosen[0]}"
    return None


HOST_TOOLS = (
    Tool(
        HOST,
        "schedule_create",
        HOST_CREATE_ARGS,
        union(*HOST_VIEWS, *HOST_ERRORS),
        HOST_CODES,
        _host_create_refusal,
        lambda args, value: _host_kind(args, value, ("after_seconds", *_SELECTORS)),
    ),
    Tool(HOST, "schedule_list", HOST_LIST_ARGS, union(array_of(HOST_VIEWS), *HOST_ERRORS), HOST_CODES),
    Tool(
        HOST,
        "schedule_delete",
        HOST_DELETE_ARGS,
        union(HOST_DELETED, HOST_NOT_DELETED, *HOST_ERRORS),
        HOST_CODES,
        _id_refusal,
        _echo,
    ),
    Tool(
        HOST,
        "schedule_update",
        HOST_UPDATE_ARGS,
        union(*HOST_VIEWS, HOST_NOT_UPDATED, *HOST_ERRORS),
        HOST_CODES,
        _host_update_refusal,
        lambda args, value: _echo(args, value) or _host_kind(args, value, _SELECTORS),
    ),
)

# --- seed 002 -----------------------------------------------------------------------------------

TARGETS = ("this_session", "new_once", "new")
STATUSES = ("active", "paused", "ended")
"""Choice: the seed names active, paused and ended tasks; `status` holds those words."""
LIST_DEFAULT_LIMIT = 100
LIST_MAX_LIMIT = 500
SEED_GUARD_CODES = ("subagent_session", "internal_error")
SEED_INPUT_CODES = (*(code for code in HOST_CODES if code != "internal_error"), "no_future_occurrence")
"""Choice: the seed declares no list; a Host ScheduleInputError's codes are the shipped tools'
and the session-local `no_future_occurrence` (a resume "needs a future occurrence")."""
SEED_CHANGE_CODES = (*SEED_INPUT_CODES, *SEED_GUARD_CODES)
SEED_TARGET = OneOf((enum(*TARGETS), Nested(ObjectShape("seed-target", "target", "A resolved target.", (), False))))
SEED_DELIVERY = _closed(
    "seed-last-delivery",
    "last delivery",
    "The latest delivery.",
    ("scheduledAt", Text(), "The occurrence delivered."),
    ("deliveredAt", Text(), "When it was delivered."),
    ("targetSessionId", Text(), "The session that received it."),
)
SEED_TASK = ObjectShape(
    "seed-task",
    "task (seed 002)",
    "A Host task as seed 002's tools return it; its kind's timing fields (seven kinds, not named "
    "by the seed) may follow.",
    (
        field("id", Text(), "The task id."),
        field("kind", Text(), "The timing kind."),
        field("title", Text(), "The task name."),
        field("prompt", Text(), "The instruction delivered at each occurrence."),
        field("scheduledAt", Text(), "The next occurrence (UTC)."),
        field("scheduledAtLocal", Text(), "The next occurrence in the task's zone."),
        field("target", SEED_TARGET, "this_session, new_once or new."),
        field("status", enum(*STATUSES), "active, paused or ended."),
        field("updatedAt", Text(), "The revision to pass as expectedUpdatedAt.", True),
        field("lastDelivery", Nested(SEED_DELIVERY), "The latest delivery.", True),
    ),
    closed=False,
)
SEED_PAGE = ObjectShape(
    "seed-page",
    "task page",
    "One page of every Host task: active first by next occurrence, then paused and ended, newest first.",
    (
        field("items", ArrayOf(Nested(SEED_TASK)), "The page's tasks."),
        field("shown", SafeInt(0), "How many items."),
        field("total", SafeInt(0), "How many tasks match."),
        field("limit", SafeInt(1, LIST_MAX_LIMIT), "The page size asked (default 100)."),
        field("offset", SafeInt(0), "The offset asked (default 0)."),
    ),
)


def _id_code(name: str, codes: tuple[str, ...]) -> ObjectShape:
    return _closed(
        name,
        "no such task" if len(codes) == 1 else "not changed",
        "Nothing changed.",
        ("id", Text(), "The id given."),
        ("code", enum(*codes), "Why."),
    )


SEED_NOT_FOUND = _id_code("seed-not-found", ("schedule_not_found",))
SEED_NOT_EDITED = _id_code("seed-not-edited", ("schedule_not_found", "schedule_conflict"))
SEED_DELETED = _closed(
    "seed-deleted",
    "deleted",
    "The task and its deliveries were removed.",
    ("id", Text(), "The id given."),
    ("deleted", Const(True), "True."),
)
SEED_CHANGE_ERRORS = error_shapes("seed", SEED_CHANGE_CODES)
SEED_GUARD_ERRORS = error_shapes("seed", SEED_GUARD_CODES)
_TITLE = field("title", Text(), f"At most {TITLE_UNITS} characters, naming the action and object.")
_PROMPT = field("prompt", Text(), "The instruction delivered at each occurrence.")
_RRULE = field("rrule", Text(), "One DTSTART line and one RRULE line (schedlog's subset: rrule.py).")
_TARGET = field("target", enum(*TARGETS), "The session receiving each delivery.")
SEED_CREATE_ARGS = ObjectShape(
    "seed-create-args",
    "schedule_create arguments (seed 002)",
    "All four inputs are required.",
    (_TITLE, _PROMPT, _RRULE, _TARGET),
    closed=False,
)
SEED_LIST_ARGS = ObjectShape(
    "seed-list-args",
    "schedule_list arguments (seed 002)",
    "One page of every Host task.",
    (
        field("active", Boolean(), "true: only active tasks; false: only paused and ended ones.", True),
        field("limit", SafeInt(1, LIST_MAX_LIMIT), "1 through 500; default 100.", True),
        field("offset", SafeInt(0), "Tasks to skip; default 0.", True),
    ),
    closed=False,
)
SEED_VIEW_ARGS = ObjectShape(
    "seed-view-args",
    "schedule_view arguments (seed 002)",
    "One task by id.",
    (field("id", Text(), "The task id."),),
    closed=False,
)
PATCH_FIELDS = ("title", "prompt", "rrule", "target", "active")
SEED_EDIT_ARGS = ObjectShape(
    "seed-edit-args",
    "schedule_edit arguments (seed 002)",
    "An update changing at least one of title, prompt, rrule, target and active, or a delete with no patch field.",
    (
        field("id", Text(), "The task id."),
        field("action", enum("update", "delete"), "update or delete."),
        *(field(f.name, f.spec, f.description, True) for f in (_TITLE, _PROMPT, _RRULE, _TARGET)),
        field("active", Boolean(), "false pauses the task, true resumes it.", True),
        field("expectedUpdatedAt", Text(), "The updatedAt read; a later change gives schedule_conflict.", True),
    ),
    closed=False,
)


def _seed_content_refusal(args: Mapping[str, object]) -> Refused | None:
    """Title (trimmed, at most 120 UTF-16 code units), prompt and rrule, as the shipped Host
    checks title and prompt (choice: the seed gives the bound, not the check)."""
    if (refused := title_refusal(args.get("title"), TITLE_UNITS)) is not None:
        return refused
    if blank(args.get("prompt")):
        return BLANK_PROMPT
    if "rrule" in args and (problem := rrule_problem(args["rrule"])) is not None:
        return "invalid_rule", f"the rrule is outside the subset: {problem}"
    return None


def _seed_edit_refusal(args: Mapping[str, object]) -> Refused | None:
    """An update changes something; a delete carries no patch field."""
    patch = [name for name in PATCH_FIELDS if name in args]
    if args.get("action") == "update" and not patch:
        return "invalid_selector", "an update changes none of " + ", ".join(PATCH_FIELDS)
    if args.get("action") == "delete" and patch:
        return "invalid_selector", f"a delete takes no patch field, got {', '.join(patch)}"
    return _seed_content_refusal(args)


def _seed_page(args: Mapping[str, object], value: object) -> str | None:
    """The page echoes its limit and offset, counts its items, and keeps the order and filter."""
    if not isinstance(value, dict) or "items" not in value:
        return None
    items = [i for i in value["items"] if isinstance(i, dict)]
    limit, offset = args.get("limit", LIST_DEFAULT_LIMIT), args.get("offset", 0)
    if value.get("limit") != limit or value.get("offset") != offset:
        return f"the page says limit {value.get('limit')} offset {value.get('offset')}, the call {limit} {offset}"
    shown, total = value.get("shown"), value.get("total")
    if shown != len(items):
        return f"shown is {shown}, but the page holds {len(items)} item(s)"
    if isinstance(limit, int) and len(items) > limit:
        return f"the page holds {len(items)} item(s), more than its limit {limit}"
    if isinstance(offset, int) and isinstance(total, int) and offset + len(items) > total:
        return f"offset {offset} plus {len(items)} item(s) exceeds total {total}"
    if (active := args.get("active")) is not None:
        wrong = [i for i in items if (i.get("status") == "active") is not active]
        if wrong:
            task, status = wrong[0].get("id"), wrong[0].get("status")
            return f"active: {str(active).lower()} lists task {task!r} of status {status!r}"
    states = [i.get("status") == "active" for i in items]
    if states != sorted(states, reverse=True):
        return "a paused or ended task is listed before an active one"
    times = [i.get("scheduledAt") for i in items if i.get("status") == "active"]
    texts = [t for t in times if type(t) is str]
    if len(texts) == len(times) and texts != sorted(texts):
        return "active tasks are not in order of next occurrence"
    return None


def _seed_edited(args: Mapping[str, object], value: object) -> str | None:
    """The value echoes the id and fits the action: a task after an update, a deletion after a
    delete; a pause or resume shows in the status."""
    if (echo := _echo(args, value)) is not None:
        return echo
    if not isinstance(value, dict) or "code" in value:
        return None
    action = args.get("action")
    if action == "delete" and "deleted" not in value:
        return "a delete returned a task, not {id, deleted: true}"
    if action == "update" and "deleted" in value:
        return "an update returned a deletion"
    active, status = args.get("active"), value.get("status")
    if action == "update" and active is False and status == "active":
        return "active: false (pause) returned an active task"
    if action == "update" and active is True and status != "active" and "status" in value:
        return f"active: true (resume) returned a task of status {status!r}"
    return None


SEED_TOOLS = (
    Tool(
        SEED,
        "schedule_create",
        SEED_CREATE_ARGS,
        union(SEED_TASK, *SEED_CHANGE_ERRORS),
        SEED_CHANGE_CODES,
        _seed_content_refusal,
    ),
    Tool(
        SEED,
        "schedule_list",
        SEED_LIST_ARGS,
        union(SEED_PAGE, *SEED_GUARD_ERRORS),
        SEED_GUARD_CODES,
        disagreement=_seed_page,
    ),
    Tool(
        SEED,
        "schedule_view",
        SEED_VIEW_ARGS,
        union(SEED_TASK, SEED_NOT_FOUND, *SEED_GUARD_ERRORS),
        SEED_GUARD_CODES,
        disagreement=_echo,
    ),
    Tool(
        SEED,
        "schedule_edit",
        SEED_EDIT_ARGS,
        union(SEED_TASK, SEED_DELETED, SEED_NOT_EDITED, *SEED_CHANGE_ERRORS),
        SEED_CHANGE_CODES,
        _seed_edit_refusal,
        _seed_edited,
    ),
)

SURFACES: dict[str, dict[str, Tool]] = {
    tools[0].surface: {t.name: t for t in tools} for tools in (LOCAL_TOOLS, HOST_TOOLS, SEED_TOOLS)
}
"""Every surface's tools by name, in the order a tie is broken."""
assert tuple(SURFACES) == SURFACE_NAMES
