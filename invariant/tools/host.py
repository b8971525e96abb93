"""The shipped Host 1.0 tools (host.md §7: dsh-schedule 0.2.x/1.0.x, `tools.ts` in public forks):
titled reminders of six kinds, views with `deliveryMode: "host"`, values rendered as
`JSON.stringify` of the value."""

from __future__ import annotations

from collections.abc import Mapping

from ..hoststore import MIN_EVERY_SECONDS, TITLE_UNITS
from ..jsvalue import shown
from ..shapes import ArrayOf, Const, Nested, Number, ObjectShape, OneOf, Spec, Text
from .model import (
    BLANK_PROMPT,
    INTEGER,
    Refused,
    Tool,
    array_of,
    blank,
    closed,
    echo,
    enum,
    error_shapes,
    field,
    id_refusal,
    number_refusal,
    title_refusal,
    union,
)
from .names import HOST

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


_WALL = ("time", Text(), "HH:mm:ss with optional 1-3 fractional digits.")
_ZONE_ARG = ("time_zone", Text(), "UTC or IANA Area/Location.")
DAILY_ARG = closed("host-daily-arg", "daily", "Every day at a local time.", _WALL, _ZONE_ARG)
WEEKLY_ARG = closed(
    "host-weekly-arg",
    "weekly",
    "On the given weekdays at a local time.",
    _WALL,
    _ZONE_ARG,
    ("weekdays", ArrayOf(INTEGER), "ISO weekdays, Monday 1 through Sunday 7, without repetitions."),
)
CRON_ARG = closed(
    "host-cron-arg",
    "cron",
    "A five-field Vixie cron expression in a time zone.",
    ("expression", Text(), "minute hour day-of-month month day-of-week."),
    _ZONE_ARG,
)
AT_LOCAL_ARG = closed(
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
    closed(
        f"host-{kind}-view",
        f"{kind} view (Host 1.0)",
        f"A {kind} reminder as the Host 1.0 tools show it.",
        *_VIEW_COMMON,
        ("kind", Const(kind), f"The kind: {kind}."),
        *extra,
    )
    for kind, extra in _VIEW_EXTRA.items()
)
HOST_DELETED = closed(
    "host-deleted",
    "deleted",
    "The reminder was deleted.",
    ("id", Text(), "The id given."),
    ("deleted", Const(True), "True."),
)
HOST_NOT_DELETED = closed(
    "host-not-deleted",
    "not found",
    "No reminder of this session has the id.",
    ("id", Text(), "The id given."),
    ("deleted", Const(False), "False."),
    ("code", Const("schedule_not_found"), "Why."),
)
HOST_NOT_UPDATED = closed(
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
    if (refused := id_refusal(args)) is not None:
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
        id_refusal,
        echo,
    ),
    Tool(
        HOST,
        "schedule_update",
        HOST_UPDATE_ARGS,
        union(*HOST_VIEWS, HOST_NOT_UPDATED, *HOST_ERRORS),
        HOST_CODES,
        _host_update_refusal,
        lambda args, value: echo(args, value) or _host_kind(args, value, _SELECTORS),
    ),
)
