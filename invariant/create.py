"""Record creation from model input (calendar.md §4.3, §5, §6; owner.md §3.2-3.3).

Each selector has a pure constructor taking an explicit `now` (epoch ms); the first failing
check decides the closed error code, in the reference's order. `create_record` adds the tool's
selector and prompt checks and builds the durable record.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date

from .changes import AfterRecord, AtRecord, CronRecord, EveryRecord, Record
from .cron import parse_live_cron
from .errors import ScheduleInputError
from .instant import MAX_MS, MIN_MS, format_instant
from .jsvalue import MAX_SAFE_INTEGER, js_trim, safe_integer
from .occurrences import DAY_MS, next_occurrence, wall_ms
from .profiles import Profile, get_profile
from .zones import canonical_zone, zone_rules

MIN_RECURRING_SECONDS = 300
SELECTOR_KEYS = ("after_seconds", "at", "every_seconds", "cron", "time_zone")
ARGUMENT_KEYS = frozenset({"prompt", *SELECTOR_KEYS})

_DATE = r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
_TIME = r"([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,3}))?"
_AT_STRING = re.compile(_DATE + "T" + _TIME + r"(Z|[+-][0-9]{2}:[0-9]{2})")
_LOCAL = re.compile(_DATE + "\x00" + _TIME)
"""date and time of a local at object, joined by NUL (which neither may contain)."""
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


def _invalid(message: str) -> ScheduleInputError:
    return ScheduleInputError("invalid_rule", message)


def _out_of_range(message: str) -> ScheduleInputError:
    return ScheduleInputError("time_out_of_range", message)


def _clock(now: object) -> int:
    """The wall-clock sample; a non-safe value (NaN) is out of range, as in the reference."""
    n = safe_integer(now)
    if n is None:
        raise _out_of_range("the clock sample is not a safe integer")
    return n


def _delay_target(now: object, seconds: int) -> int:
    """now + seconds, when every step stays a safe integer inside the four-digit years."""
    clock = _clock(now)
    delta = seconds * 1000
    target = clock + delta
    if delta > MAX_SAFE_INTEGER or abs(target) > MAX_SAFE_INTEGER or target <= clock or not MIN_MS <= target <= MAX_MS:
        raise _out_of_range(f"{seconds} s after {clock} ms is outside years 0001-9999")
    return target


def check_after_seconds(after_seconds: object) -> int:
    """The delay check that runs before persistence: a positive safe integer (§6.1)."""
    seconds = safe_integer(after_seconds)
    if seconds is None or seconds <= 0:
        raise _invalid("after_seconds must be a positive safe integer")
    return seconds


def after_target(after_seconds: object, now: object) -> int:
    """Target of an `after_seconds` delay (§6.1)."""
    return _delay_target(now, check_after_seconds(after_seconds))


def check_every_seconds(every_seconds: object) -> int:
    """The interval checks that run before persistence (§6.2 steps 1-2)."""
    seconds = safe_integer(every_seconds)
    if seconds is None:
        raise _invalid("every_seconds must be a safe integer")
    if seconds < MIN_RECURRING_SECONDS:
        raise ScheduleInputError("frequency_too_high", f"every_seconds must be at least {MIN_RECURRING_SECONDS}")
    return seconds


def every_target(every_seconds: object, now: object) -> int:
    """First target of a fixed-rate record: one full interval after creation (§6.2)."""
    return _delay_target(now, check_every_seconds(every_seconds))


def _wall_fields(match: re.Match[str]) -> int:
    """Wall milliseconds of strict date/time fields; raise invalid_rule for unreal values."""
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction = match.group(7) or ""
    if year == 0 or hour > 23 or minute > 59 or second > 59:
        raise _invalid("date-time field out of range")
    try:
        ordinal = date(year, month, day).toordinal()
    except ValueError:
        raise _invalid(f"{year:04d}-{month:02d}-{day:02d} is not a calendar date") from None
    millis = int(fraction.ljust(3, "0")) if fraction else 0
    return (ordinal - _EPOCH_ORDINAL) * DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 + millis


def _future(instant: int, now: object) -> int:
    """§5.3: the clock must be safe and the instant representable, then strictly future."""
    clock = _clock(now)
    if not MIN_MS <= instant <= MAX_MS:
        raise _out_of_range("the instant is outside years 0001-9999")
    if instant <= clock:
        raise ScheduleInputError("not_future", f"{format_instant(instant)} is not after now")
    return instant


def _offset_instant(text: str) -> int:
    match = _AT_STRING.fullmatch(text)
    if match is None:
        raise _invalid("at must be YYYY-MM-DDTHH:mm:ss[.SSS] followed by Z or +HH:MM/-HH:MM")
    wall = _wall_fields(match)
    zone = match.group(8)
    if zone == "Z":
        return wall
    if zone == "-00:00":
        raise _invalid("the unknown-offset spelling -00:00 is not accepted")
    hours, minutes = int(zone[1:3]), int(zone[4:6])
    if hours > 23 or minutes > 59:
        raise _invalid(f"offset {zone} is out of range")
    sign = 1 if zone[0] == "+" else -1
    return wall - sign * (hours * 60 + minutes) * 60_000


def _local_instant(wall: int, zone_name: str) -> int:
    """The earliest instant whose local reading in the zone is `wall` (§5.2), dates read in the
    proleptic Gregorian calendar (calendar.md §4.8; the released package on its declared engine,
    Node 24, where Node 20's ICU would read dates before 1582-10-15 as Julian)."""
    zone = zone_rules(zone_name)
    probes = {min(max(wall + k * DAY_MS, MIN_MS), MAX_MS) for k in (-2, -1, 0, 1, 2)}
    offsets = {wall_ms(zone, p) - p for p in probes}
    found: list[int] = []
    outside = False
    for offset in offsets:
        candidate = wall - offset
        if not MIN_MS <= candidate <= MAX_MS:
            outside = True
        elif wall_ms(zone, candidate) == wall:
            found.append(candidate)
    if found:
        return min(found)
    if outside:
        raise _out_of_range("the local time is outside years 0001-9999")
    raise _invalid("the local time does not exist in that zone (daylight-saving gap)")


def at_target(at: object, now: object, implicit_time_zone: str | None = None) -> int:
    """Target of an `at` selector: an offset string or a local {date, time[, time_zone]} (§5)."""
    if type(at) is str:
        return _future(_offset_instant(at), now)
    if not isinstance(at, Mapping):
        raise _invalid("at must be a string or a {date, time, time_zone} object")
    if set(at) not in ({"date", "time"}, {"date", "time", "time_zone"}):
        raise _invalid("the at object takes exactly date, time and an optional time_zone")
    if type(at["date"]) is not str or type(at["time"]) is not str:
        raise _invalid("at.date and at.time must be strings")
    if "time_zone" in at:
        zone: object = at["time_zone"]
        if type(zone) is not str:
            raise ScheduleInputError("invalid_time_zone", "at.time_zone must be a string")
    elif implicit_time_zone is None:
        raise ScheduleInputError(
            "timezone_confirmation_required", "a local at without time_zone needs a confirmed session zone"
        )
    else:
        zone = implicit_time_zone
    fields = _LOCAL.fullmatch(f"{at['date']}\x00{at['time']}")
    if fields is None:
        raise _invalid("at.date must be YYYY-MM-DD and at.time HH:mm:ss[.SSS]")
    wall = _wall_fields(fields)
    return _future(_local_instant(wall, canonical_zone(zone)), now)


def cron_target(cron: object, time_zone: object, now: object) -> tuple[str, str, int]:
    """(canonical rule, canonical zone, first occurrence strictly after now) (§4.3)."""
    clock = _clock(now)
    if not MIN_MS <= clock <= MAX_MS:
        raise _out_of_range("the clock is outside years 0001-9999")
    rule = parse_live_cron(cron)
    zone = canonical_zone(time_zone)
    first = next_occurrence(rule, zone_rules(zone), clock)
    if first is None:
        raise ScheduleInputError("no_future_occurrence", f"{rule.text!r} in {zone} has no occurrence before year 10000")
    return rule.text, zone, first


def select_kind(args: Mapping[str, object]) -> str:
    """The record kind the arguments select; `invalid_selector` unless exactly one is present.

    A top-level `time_zone` always belongs to the cron pair (a local at carries its zone inside).
    """
    extra = set(args) - ARGUMENT_KEYS
    present = [k for k in ("after_seconds", "at", "every_seconds") if k in args]
    cron_pair = [k for k in ("cron", "time_zone") if k in args]
    if extra or len(present) + (1 if cron_pair else 0) != 1 or len(cron_pair) == 1:
        raise ScheduleInputError(
            "invalid_selector",
            "schedule_create accepts exactly one of after_seconds, at, every_seconds, or cron with time_zone.",
        )
    return "cron" if cron_pair else {"after_seconds": "after", "at": "at", "every_seconds": "every"}[present[0]]


AFTER_ONLY_SELECTOR = "schedule_create accepts exactly the after_seconds selector in this version."


def select_profile_kind(args: Mapping[str, object], profile: str | Profile = "calendar") -> str:
    """The kind the arguments select under `profile`: after-only takes exactly prompt and
    after_seconds; the others select as `select_kind` does, among the profile's own kinds."""
    prof = get_profile(profile)
    if prof.name == "after-only":
        if set(args) != {"prompt", "after_seconds"}:
            raise ScheduleInputError("invalid_selector", AFTER_ONLY_SELECTOR)
        return "after"
    kind = select_kind(args)
    if kind not in prof.record_kinds:
        raise ScheduleInputError("invalid_selector", f"profile {prof.name} has no {kind} records")
    return kind


def check_prompt(prompt: object) -> str:
    """The trimmed prompt; `invalid_prompt` when it is not a string or empty after trimming."""
    text = js_trim(prompt) if type(prompt) is str else ""
    if not text:
        raise ScheduleInputError("invalid_prompt", "prompt must be non-empty after trimming.")
    return text


def create_record(
    kind: str,
    args: Mapping[str, object],
    now: object,
    id: str,
    implicit_time_zone: str | None = None,
    profile: str | Profile = "calendar",
) -> Record:
    """Build the durable record for `schedule_create` arguments (model-input names).

    Checks, first failure wins: selector (and that it selects `kind`), prompt, then the
    kind's own rules with one clock sample `now` (epoch ms).
    """
    if select_kind(args) != kind:
        raise ScheduleInputError("invalid_selector", f"the arguments do not select a {kind} record")
    prompt = check_prompt(args.get("prompt"))
    if kind == "after":
        seconds = check_after_seconds(args["after_seconds"])
        return AfterRecord(id, prompt, seconds, format_instant(after_target(seconds, now)))
    if kind == "every":
        seconds = check_every_seconds(args["every_seconds"])
        return EveryRecord(id, prompt, seconds, format_instant(every_target(seconds, now)))
    if kind == "at":
        return AtRecord(id, prompt, format_instant(at_target(args["at"], now, implicit_time_zone)))
    rule, zone, first = cron_target(args["cron"], args["time_zone"], now)
    return CronRecord(id, prompt, rule, zone, format_instant(first))
