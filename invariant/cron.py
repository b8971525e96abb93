"""The restricted five-field cron language: parse once into a frozen rule.

Grammar (protocol.md §2.6): numeric fields only; each field is `*`, `*/S`, `L-U/S`, `L-U`,
a strictly increasing list, or one integer; Sunday is 0 or 7 but may not be named twice;
day-of-month or day-of-week must be `*`. Canonical text drops leading zeros, writes `*/1`
as `*`, and joins the fields with single spaces. The durable log stores only canonical text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum
from functools import lru_cache
from itertools import pairwise

from .errors import ScheduleInputError
from .jsvalue import is_trimmed_nonempty


class CronField(IntEnum):
    MINUTE = 0
    HOUR = 1
    DAY = 2
    MONTH = 3
    WEEKDAY = 4


#: (min, max, largest step) per field.
_BOUNDS = {
    CronField.MINUTE: (0, 59, 60),
    CronField.HOUR: (0, 23, 24),
    CronField.DAY: (1, 31, 31),
    CronField.MONTH: (1, 12, 12),
    CronField.WEEKDAY: (0, 7, 7),
}
_NAMES = {
    CronField.MINUTE: "minute",
    CronField.HOUR: "hour",
    CronField.DAY: "day-of-month",
    CronField.MONTH: "month",
    CronField.WEEKDAY: "day-of-week",
}

_SEPARATORS = re.compile("[ \t\n\v\f\r]+")
_INT = "([0-9]+)"
_STAR_STEP = re.compile(r"\*/" + _INT)
_RANGE_STEP = re.compile(_INT + "-" + _INT + "/" + _INT)
_RANGE = re.compile(_INT + "-" + _INT)
_LIST = re.compile(_INT + "(?:," + "[0-9]+" + ")+")
_NUMBER = re.compile(_INT)


class CronSyntaxError(ValueError):
    """The text is not a grammatical restricted cron expression."""


@dataclass(frozen=True)
class CronRule:
    """A parsed rule. Weekdays are 0-6 (Sunday = 0, 7 already folded in)."""

    text: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: tuple[int, ...]
    months: tuple[int, ...]
    weekdays: tuple[int, ...]
    day_is_star: bool
    weekday_is_star: bool
    times: tuple[int, ...] = ()
    """Sorted minutes of the day (60 * hour + minute) the rule matches."""
    every_day: bool = False
    """Every calendar date matches (`* * *` in effect): only `times` decide."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "times", tuple(sorted(60 * h + m for h in self.hours for m in self.minutes)))
        every_day = self.day_is_star and len(set(self.weekdays)) == 7 and len(set(self.months)) == 12
        object.__setattr__(self, "every_day", every_day)

    def matches_date(self, month: int, day: int, weekday: int) -> bool:
        """Calendar-date part of a match: month, then day-of-month or day-of-week.

        When day-of-month is `*` the weekday (0 = Sunday) decides, so `* *` matches every day;
        there is no classic either-field OR.
        """
        if month not in self.months:
            return False
        if self.day_is_star:
            return weekday in self.weekdays
        return day in self.days


# --- the 400-year Gregorian cycle: matching dates and the frequency proof (calendar.md §2) ---

_LONGEST = {1: 31, 2: 29, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}
GAP_MINUTES = 5


def has_matching_date(rule: CronRule) -> bool:
    """Some proleptic Gregorian date matches (every month holds every weekday)."""
    if rule.day_is_star:
        return True
    return any(d <= _LONGEST[m] for m in rule.months for d in rule.days)


def has_adjacent_dates(rule: CronRule) -> bool:
    """Two consecutive calendar days both match, somewhere in the 400-year cycle.

    The cycle's wrap (a Friday 2399-12-31 to a Saturday 2000-01-01) adds no new weekday pair.
    """
    if rule.day_is_star:
        return any((w + 1) % 7 in rule.weekdays for w in rule.weekdays)
    days = set(rule.days)
    months = set(rule.months)
    if any(d + 1 in days and d + 1 <= _LONGEST[m] for m in months for d in days):
        return True
    if 1 not in days:
        return False
    for m in months:
        if m % 12 + 1 not in months:
            continue
        last = (28, 29) if m == 2 else (_LONGEST[m],)
        if any(d in days for d in last):
            return True
    return False


def frequency_ok(rule: CronRule) -> bool:
    """No two nominal local occurrences closer than five minutes (DST ignored, by design).

    A rule with no matching date passes (it fails later as having no occurrence).
    """
    if not has_matching_date(rule):
        return True
    times = rule.times
    if any(b - a < GAP_MINUTES for a, b in pairwise(times)):
        return False
    return not (has_adjacent_dates(rule) and 1440 - times[-1] + times[0] < GAP_MINUTES)


def _number(text: str, field: CronField, lo: int, hi: int, what: str = "value") -> int:
    """A field's number (digits), in lo-hi. Digits past any field's range are refused as out of it
    unread: `int` refuses strings past the interpreter's digit limit, and a rule may hold any."""
    value = int(text) if len(text.lstrip("0")) <= 18 else None
    if value is None or not lo <= value <= hi:
        raise CronSyntaxError(f"{_NAMES[field]} {what} {text} is outside {lo}-{hi}")
    return value


def _dedupe_check(field: CronField, values: list[int], text: str) -> None:
    if field is CronField.WEEKDAY:
        folded = [0 if v == 7 else v for v in values]
        if len(set(folded)) != len(folded):
            raise CronSyntaxError(f"day-of-week {text!r} names Sunday twice")


def _parse_field(field: CronField, text: str) -> tuple[str, list[int]]:
    """Return (canonical text, values) of one field, or raise CronSyntaxError."""
    lo, hi, largest_step = _BOUNDS[field]
    if text == "*":
        return "*", list(range(lo, hi + 1))
    m = _STAR_STEP.fullmatch(text)
    if m:
        step = _number(m.group(1), field, 1, largest_step, "step")
        return ("*" if step == 1 else f"*/{step}"), list(range(lo, hi + 1, step))
    m = _RANGE_STEP.fullmatch(text)
    if m:
        first = _number(m.group(1), field, lo, hi)
        last = _number(m.group(2), field, lo, hi)
        step = _number(m.group(3), field, 1, largest_step, "step")
        if first >= last:
            raise CronSyntaxError(f"{_NAMES[field]} range {text!r} is not increasing")
        values = list(range(first, last + 1, step))
        _dedupe_check(field, values, text)
        return f"{first}-{last}/{step}", values
    m = _RANGE.fullmatch(text)
    if m:
        first = _number(m.group(1), field, lo, hi)
        last = _number(m.group(2), field, lo, hi)
        if first >= last:
            raise CronSyntaxError(f"{_NAMES[field]} range {text!r} is not increasing")
        values = list(range(first, last + 1))
        _dedupe_check(field, values, text)
        return f"{first}-{last}", values
    if _LIST.fullmatch(text):
        values = [_number(part, field, lo, hi) for part in text.split(",")]
        if any(a >= b for a, b in pairwise(values)):
            raise CronSyntaxError(f"{_NAMES[field]} list {text!r} is not strictly increasing")
        _dedupe_check(field, values, text)
        return ",".join(str(v) for v in values), values
    if _NUMBER.fullmatch(text):
        value = _number(text, field, lo, hi)
        return str(value), [value]
    raise CronSyntaxError(f"{_NAMES[field]} field {text!r} is not a supported form")


@lru_cache(maxsize=4096)
def parse_cron(text: str) -> CronRule:
    """Parse restricted cron text (canonical or not) into a rule; raise CronSyntaxError.

    Memoized: a rule is a frozen value, and the owner resolves the same rules again and again.
    """
    if not is_trimmed_nonempty(text):
        raise CronSyntaxError("cron text must be non-empty without surrounding whitespace")
    parts = _SEPARATORS.split(text)
    if len(parts) != 5:
        raise CronSyntaxError(f"cron needs exactly 5 fields, got {len(parts)}")
    canon: list[str] = []
    values: list[list[int]] = []
    for field, part in zip(CronField, parts, strict=True):
        c, v = _parse_field(field, part)
        canon.append(c)
        values.append(v)
    if canon[CronField.DAY] != "*" and canon[CronField.WEEKDAY] != "*":
        raise CronSyntaxError("day-of-month and day-of-week cannot both be restricted")
    weekdays = sorted({0 if v == 7 else v for v in values[CronField.WEEKDAY]})
    return CronRule(
        text=" ".join(canon),
        minutes=tuple(values[CronField.MINUTE]),
        hours=tuple(values[CronField.HOUR]),
        days=tuple(values[CronField.DAY]),
        months=tuple(values[CronField.MONTH]),
        weekdays=tuple(weekdays),
        day_is_star=canon[CronField.DAY] == "*",
        weekday_is_star=canon[CronField.WEEKDAY] == "*",
    )


def parse_live_cron(text: object) -> CronRule:
    """A rule as the tools accept it: grammar, then the frequency proof.

    Raises ScheduleInputError `invalid_rule` or `frequency_too_high` (a malformed rule is
    `invalid_rule` even when it would also be too frequent).
    """
    if type(text) is not str:
        raise ScheduleInputError("invalid_rule", "cron must be a string")
    try:
        rule = parse_cron(text)
    except CronSyntaxError as err:
        raise ScheduleInputError("invalid_rule", str(err)) from None
    if not frequency_ok(rule):
        raise ScheduleInputError("frequency_too_high", f"cron {rule.text!r} can match less than five minutes apart")
    return rule


def canonical_cron(text: object) -> str:
    """The canonical text of a rule the tools accept; raise ScheduleInputError otherwise."""
    return parse_live_cron(text).text
