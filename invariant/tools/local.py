"""The session-local tools (owner.md §3-§4): the shapes of their arguments and results, and the
tools themselves (their own checks, and how a value contradicts the call or the changes it
appended). The fixed-rate profile's views may carry a title.

The argument shapes are what the host validates before a tool body runs (open objects:
undeclared keys reach the body); the result shapes are the canonical values a tool returns.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..create import check_prompt, select_kind
from ..errors import ScheduleInputError
from ..jsvalue import is_lossless, js_trim, shown
from ..shapes import (
    RECORD_SHAPES,
    TITLED_RECORD_SHAPES,
    ArrayOf,
    Const,
    Enum,
    Field,
    Instant,
    Nested,
    Number,
    ObjectShape,
    OneOf,
    Text,
    TrimmedText,
    object_problems,
)
from .model import Refused, Tool, array_of, echo, field, id_refusal, union
from .names import LOCAL

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


def _local_at(name: str, title: str, zone_required: bool) -> ObjectShape:
    zone = "UTC or an IANA Area/Location zone."
    meaning = "the session's confirmed zone when absent" if not zone_required else "the released tool requires it"
    return ObjectShape(
        name,
        title,
        f"A local calendar date and time, resolved in time_zone ({meaning}).",
        (
            field("date", Text(), "YYYY-MM-DD."),
            field("time", Text(), "HH:mm:ss with an optional .S, .SS or .SSS."),
            field("time_zone", Text(), zone, optional=not zone_required),
        ),
    )


AT_LOCAL = _local_at("LocalAt", "local at", zone_required=False)
AT_LOCAL_ZONED = _local_at("LocalAtZoned", "local at (zone required)", zone_required=True)
_PROMPT = field("prompt", Text(), "Reminder text; trimmed before storing.")
_AFTER = field("after_seconds", Number(), "Positive safe-integer delay.", optional=True)
_EVERY = field("every_seconds", Number(), "Safe-integer interval of at least 300.", optional=True)


def _at(local: ObjectShape, meaning: str) -> Field:
    return field("at", OneOf((Text(), Nested(local))), meaning, optional=True)


CREATE_ARGS = ObjectShape(
    "ScheduleCreateArgs",
    "schedule_create arguments",
    "A non-empty prompt and exactly one selector: after_seconds, at, every_seconds, or cron with time_zone.",
    (
        _PROMPT,
        _AFTER,
        _EVERY,
        field(
            "cron", Text(), "Restricted five-field cron (minute hour day-of-month month day-of-week).", optional=True
        ),
        field("time_zone", Text(), "IANA zone of the cron rule.", optional=True),
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
    (_PROMPT, field("after_seconds", Number(), "Positive safe-integer delay.")),
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
    (field("id", Text(), "The schedule id."),),
    closed=False,
)

_STATE = field("state", Enum(("scheduled", "overdue")), "overdue once the clock reached scheduledAt.")
_MODE = field("deliveryMode", Const("session-local"), "Reminders fire only while the session is live.")
_NOT_BEFORE = field(
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
    (field("id", Text(), "The id given."), field("deleted", Const(True), "True.")),
)
NOT_FOUND = ObjectShape(
    "NotFound",
    "not found",
    "No active record has this id; nothing was appended.",
    (
        field("id", Text(), "The id given."),
        field("deleted", Const(False), "False."),
        field("code", Const("schedule_not_found"), "Why."),
    ),
)
_MESSAGE = field("message", Text(), "A stable human-readable diagnostic.")
BASIC_ERROR = ObjectShape(
    "BasicError",
    "error",
    "A closed error code and its message.",
    (field("code", Enum(BASIC_ERROR_CODES), "The error code."), _MESSAGE),
)
ZONE_ERROR = ObjectShape(
    "TimezoneConfirmationRequired",
    "time-zone confirmation required",
    "A local at without time_zone, and no confirmed session zone: ask the user for the zone.",
    (
        field("code", Const("timezone_confirmation_required"), "The error code."),
        _MESSAGE,
        field("sessionTimeZone", Text(), "The session's zone, or 'unavailable'."),
        field("clientTimeZones", ArrayOf(Text()), "Zones the current turn's clients reported."),
    ),
)
PERSISTENCE_ERROR = ObjectShape(
    "PersistenceUncertain",
    "persistence uncertain",
    "A checkpoint failed: retry with schedule_list before relying on the result.",
    (
        field("code", Const("persistence_uncertain"), "The error code."),
        _MESSAGE,
        field("operation", Enum(("create", "list", "delete")), "The tool that could not confirm."),
        field("id", TrimmedText(), "The id involved, when known.", optional=True),
    ),
)
ERROR_SHAPES = (BASIC_ERROR, ZONE_ERROR, PERSISTENCE_ERROR)


def _local_view(kind: str) -> ObjectShape:
    view = VIEW_SHAPES[kind]
    title = next(f for f in TITLED_RECORD_SHAPES[kind].fields if f.name == "title")
    return ObjectShape(view.name, view.title, view.description, (*view.fields, title))


LOCAL_VIEW_SHAPES = tuple(_local_view(kind) for kind in VIEW_SHAPES)


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
        id_refusal,
        echo,
        _local_delete_appended,
    ),
)
