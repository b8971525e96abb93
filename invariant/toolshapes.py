"""Shapes of the three management tools' arguments and results (owner.md §3-§4).

The argument shapes are what the host validates before a tool body runs (open objects:
undeclared keys reach the body); the result shapes are the canonical values a tool returns.
"""

from __future__ import annotations

from .jsvalue import is_lossless
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
    object_problems,
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


def _local_at(name: str, title: str, zone_required: bool) -> ObjectShape:
    zone = "UTC or an IANA Area/Location zone."
    meaning = "the session's confirmed zone when absent" if not zone_required else "the released tool requires it"
    return ObjectShape(
        name,
        title,
        f"A local calendar date and time, resolved in time_zone ({meaning}).",
        (
            _f("date", Text(), "YYYY-MM-DD."),
            _f("time", Text(), "HH:mm:ss with an optional .S, .SS or .SSS."),
            _f("time_zone", Text(), zone, optional=not zone_required),
        ),
    )


AT_LOCAL = _local_at("LocalAt", "local at", zone_required=False)
AT_LOCAL_ZONED = _local_at("LocalAtZoned", "local at (zone required)", zone_required=True)
_PROMPT = _f("prompt", Text(), "Reminder text; trimmed before storing.")
_AFTER = _f("after_seconds", Number(), "Positive safe-integer delay.", optional=True)
_EVERY = _f("every_seconds", Number(), "Safe-integer interval of at least 300.", optional=True)


def _at(local: ObjectShape, meaning: str) -> Field:
    return _f("at", OneOf((Text(), Nested(local))), meaning, optional=True)


CREATE_ARGS = ObjectShape(
    "ScheduleCreateArgs",
    "schedule_create arguments",
    "A non-empty prompt and exactly one selector: after_seconds, at, every_seconds, or cron with time_zone.",
    (
        _PROMPT,
        _AFTER,
        _EVERY,
        _f("cron", Text(), "Restricted five-field cron (minute hour day-of-month month day-of-week).", optional=True),
        _f("time_zone", Text(), "IANA zone of the cron rule.", optional=True),
        _at(AT_LOCAL, "YYYY-MM-DDTHH:mm:ss[.SSS](Z|+HH:MM) or a local {date, time, time_zone?}."),
    ),
    closed=False,
)
FIXED_RATE_CREATE_ARGS = ObjectShape(
    "FixedRateScheduleCreateArgs",
    "schedule_create arguments (fixed-rate)",
    "The released tool's parameters: a prompt and one of after_seconds, at (an offset instant, or a local "
    "date and time with its zone) or every_seconds.",
    (_PROMPT, _AFTER, _EVERY, _at(AT_LOCAL_ZONED, "Strict offset RFC 3339, or a local {date, time, time_zone}.")),
    closed=False,
)
AFTER_ONLY_CREATE_ARGS = ObjectShape(
    "AfterOnlyScheduleCreateArgs",
    "schedule_create arguments (after-only)",
    "A prompt and a delay in seconds.",
    (_PROMPT, _f("after_seconds", Number(), "Positive safe-integer delay.")),
    closed=False,
)
CREATE_ARGS_BY_PROFILE = {
    "calendar": CREATE_ARGS,
    "after-only": AFTER_ONLY_CREATE_ARGS,
    "fixed-rate": FIXED_RATE_CREATE_ARGS,
    "fixed-rate-exact": FIXED_RATE_CREATE_ARGS,
}
"""The parameters each revision's host validates before the tool body runs (a value that breaks
them, or holds a number that is not lossless JSON, is `invalid_arguments`)."""


def create_args_problems(args: object, profile: str) -> list[str]:
    """Why the host of `profile`'s revision refuses `schedule_create` arguments before its body
    runs (`invalid_arguments`): they break its parameters, or hold a number that is not lossless
    JSON (`-0`, or beyond a double); empty when they pass."""
    problems = object_problems(args, CREATE_ARGS_BY_PROFILE[profile])
    if not problems and not is_lossless(args):
        problems = ["holds a number that is not lossless JSON (-0, or beyond a double)"]
    return problems


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
