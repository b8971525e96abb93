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
from itertools import pairwise

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

    def matches_date(self, month: int, day: int, weekday: int) -> bool:
        """Calendar-date part of a match: month, then day-of-month or day-of-week.

        When day-of-month is `*` the weekday decides (so `* *` matches every day).
        """
        if month not in self.months:
            return False
        if self.day_is_star:
            return weekday in self.weekdays
        return day in self.days


def _number(text: str, field: CronField, lo: int, hi: int, what: str = "value") -> int:
    value = int(text)
    if not lo <= value <= hi:
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


def parse_cron(text: str) -> CronRule:
    """Parse restricted cron text (canonical or not) into a rule; raise CronSyntaxError."""
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


def canonical_cron_text(text: str) -> str:
    """The canonical text of a grammatical rule; raise CronSyntaxError otherwise."""
    return parse_cron(text).text
