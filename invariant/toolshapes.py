"""Shapes of the three management tools' arguments and results (owner.md §3-§4).

The argument shapes are what the host validates before a tool body runs (open objects:
undeclared keys reach the body); the result shapes are the canonical values a tool returns.
"""

from __future__ import annotations

from .shapes import (
    RECORD_SHAPES,
    ArrayOf,
    Const,
    Enum,
    Field,
    Instant,
    Nested,
    Number,
    ObjectShape,
    OneOf,
    Spec,
    Text,
    TrimmedText,
)

ERROR_CODES = (
    "invalid_prompt",
    "invalid_selector",
    "invalid_rule",
    "invalid_time_zone",
    "timezone_confirmation_required",
    "not_future",
    "time_out_of_range",
    "frequency_too_high",
    "no_future_occurrence",
    "corrupt_schedule_log",
    "persistence_uncertain",
    "internal_error",
)
BASIC_ERROR_CODES = tuple(
    c for c in ERROR_CODES if c not in ("timezone_confirmation_required", "persistence_uncertain")
)


def _f(name: str, spec: Spec, meaning: str, optional: bool = False) -> Field:
    return Field(name, spec, "tool", meaning, optional)


AT_LOCAL = ObjectShape(
    "LocalAt",
    "local at",
    "A local calendar date and time, resolved in time_zone (or the session's confirmed zone).",
    (
        _f("date", Text(), "YYYY-MM-DD."),
        _f("time", Text(), "HH:mm:ss with an optional .S, .SS or .SSS."),
        _f("time_zone", Text(), "UTC or an IANA Area/Location zone.", optional=True),
    ),
)
CREATE_ARGS = ObjectShape(
    "ScheduleCreateArgs",
    "schedule_create arguments",
    "A non-empty prompt and exactly one selector: after_seconds, at, every_seconds, or cron with time_zone.",
    (
        _f("prompt", Text(), "Reminder text; trimmed before storing."),
        _f("after_seconds", Number(), "Positive safe-integer delay.", optional=True),
        _f("every_seconds", Number(), "Safe-integer interval of at least 300.", optional=True),
        _f("cron", Text(), "Restricted five-field cron (minute hour day-of-month month day-of-week).", optional=True),
        _f("time_zone", Text(), "IANA zone of the cron rule.", optional=True),
        _f(
            "at",
            OneOf((Text(), Nested(AT_LOCAL))),
            "YYYY-MM-DDTHH:mm:ss[.SSS](Z|+HH:MM) or a local {date, time, time_zone?}.",
            optional=True,
        ),
    ),
    closed=False,
)
LIST_ARGS = ObjectShape(
    "ScheduleListArgs", "schedule_list arguments", "No parameters; any are ignored.", (), closed=False
)
DELETE_ARGS = ObjectShape(
    "ScheduleDeleteArgs",
    "schedule_delete arguments",
    "The exact id of one active reminder; other keys are ignored.",
    (_f("id", Text(), "The schedule id."),),
    closed=False,
)

_STATE = _f("state", Enum(("scheduled", "overdue")), "overdue once the clock reached scheduledAt.")
_MODE = _f("deliveryMode", Const("session-local"), "Reminders fire only while the session is live.")
_NOT_BEFORE = _f(
    "deliveryNotBefore", Instant(), "An overdue recurring record is held by the shared 300 s gate until then.", True
)


def _view(kind: str) -> ObjectShape:
    record = RECORD_SHAPES[kind]
    extra = (_STATE, _MODE, _NOT_BEFORE) if kind in ("every", "cron") else (_STATE, _MODE)
    return ObjectShape(
        f"{record.name[:-6]}View", f"{kind} view", f"An active {kind} record as a tool shows it.", record.fields + extra
    )


VIEW_SHAPES = {kind: _view(kind) for kind in RECORD_SHAPES}
DELETED = ObjectShape(
    "Deleted",
    "deleted",
    "The record was active and a delete was appended.",
    (_f("id", Text(), "The id given."), _f("deleted", Const(True), "True.")),
)
NOT_FOUND = ObjectShape(
    "NotFound",
    "not found",
    "No active record has this id; nothing was appended.",
    (
        _f("id", Text(), "The id given."),
        _f("deleted", Const(False), "False."),
        _f("code", Const("schedule_not_found"), "Why."),
    ),
)
_MESSAGE = _f("message", Text(), "A stable human-readable diagnostic.")
BASIC_ERROR = ObjectShape(
    "BasicError",
    "error",
    "A closed error code and its message.",
    (_f("code", Enum(BASIC_ERROR_CODES), "The error code."), _MESSAGE),
)
ZONE_ERROR = ObjectShape(
    "TimezoneConfirmationRequired",
    "time-zone confirmation required",
    "A local at without time_zone, and no confirmed session zone: ask the user for the zone.",
    (
        _f("code", Const("timezone_confirmation_required"), "The error code."),
        _MESSAGE,
        _f("sessionTimeZone", Text(), "The session's zone, or 'unavailable'."),
        _f("clientTimeZones", ArrayOf(Text()), "Zones the current turn's clients reported."),
    ),
)
PERSISTENCE_ERROR = ObjectShape(
    "PersistenceUncertain",
    "persistence uncertain",
    "A checkpoint failed: retry with schedule_list before relying on the result.",
    (
        _f("code", Const("persistence_uncertain"), "The error code."),
        _MESSAGE,
        _f("operation", Enum(("create", "list", "delete")), "The tool that could not confirm."),
        _f("id", TrimmedText(), "The id involved, when known.", optional=True),
    ),
)
ERROR_SHAPES = (BASIC_ERROR, ZONE_ERROR, PERSISTENCE_ERROR)
