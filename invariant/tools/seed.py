"""Seed 002's designed tools (create, list, view, edit) over Host tasks, with an `rrule`
(rrule.py) and a delivery `target`. No implementation exists; what the seed leaves open is
schedlog's choice, written beside each shape."""

from __future__ import annotations

from collections.abc import Mapping

from ..hoststore import TITLE_UNITS
from ..rrule import rrule_problem
from ..shapes import ArrayOf, Boolean, Const, Nested, ObjectShape, OneOf, SafeInt, Text
from .host import HOST_CODES
from .model import BLANK_PROMPT, Refused, Tool, blank, closed, echo, enum, error_shapes, field, title_refusal, union
from .names import SEED, SEED_TARGETS

TARGETS = SEED_TARGETS
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
SEED_DELIVERY = closed(
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
    return closed(
        name,
        "no such task" if len(codes) == 1 else "not changed",
        "Nothing changed.",
        ("id", Text(), "The id given."),
        ("code", enum(*codes), "Why."),
    )


SEED_NOT_FOUND = _id_code("seed-not-found", ("schedule_not_found",))
SEED_NOT_EDITED = _id_code("seed-not-edited", ("schedule_not_found", "schedule_conflict"))
SEED_DELETED = closed(
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
    if (mismatch := echo(args, value)) is not None:
        return mismatch
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
        disagreement=echo,
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
