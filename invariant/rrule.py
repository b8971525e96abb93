"""Seed 002's `rrule` argument: one DTSTART line and one RRULE line, in a subset of RFC 5545
that maps onto the Host's six record kinds (host.md §7; the subset is schedlog's choice).

The seed names no subset beyond "one DTSTART line and one RRULE line", so schedlog accepts
exactly what one Host record can hold, and reads each rule as RFC 5545 (and python-dateutil)
expands it:

- `DTSTART:YYYYMMDDTHHMMSSZ` (UTC) or `DTSTART;TZID=<zone>:YYYYMMDDTHHMMSS` (a zone the Host
  accepts); a floating DTSTART (no zone) is refused: a Host record always has one.
- `RRULE:` parts, each at most once: `FREQ` (MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY,
  YEARLY; required), `INTERVAL`, `COUNT=1`, `UNTIL` (UTC), `BYMINUTE`, `BYHOUR`, `BYDAY`
  (`MO`..`SU`, no ordinals), `BYMONTHDAY` (1..31), `BYMONTH` (1..12).
- `COUNT=1` is an `at`; MINUTELY/HOURLY with no BY part an `every` (INTERVAL minutes or hours);
  DAILY with no BY part a `daily`; WEEKLY with at most BYDAY a `weekly`; any other rule with
  INTERVAL 1 a five-field `cron` (DTSTART's seconds must be 0). `UNTIL` becomes the 1.0
  window's end.
- Refused (`invalid_rule`): any other part (BYSECOND, BYSETPOS, BYWEEKNO, BYYEARDAY, WKST),
  COUNT above 1, an INTERVAL above 1 on a calendar rule, and BYMONTHDAY with BYDAY (RFC 5545
  intersects them; Vixie cron, the Host's, unites them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from .hostcron import HostCronError, canonical, parse_host_cron
from .hoststore import KnownZone
from .shapes import Reject

FREQUENCIES = ("MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY")
PARTS = ("FREQ", "INTERVAL", "COUNT", "UNTIL", "BYMINUTE", "BYHOUR", "BYDAY", "BYMONTHDAY", "BYMONTH")
WEEKDAYS = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
"""RFC 5545 day names, Monday first: the Host's weekday n is WEEKDAYS[n - 1]."""
_STAMP = r"([0-9]{4})([0-9]{2})([0-9]{2})T([0-9]{2})([0-9]{2})([0-9]{2})"
_DTSTART = re.compile(rf"DTSTART(?:;TZID=([^:;]+))?:{_STAMP}(Z?)")
_UNTIL = re.compile(rf"{_STAMP}Z")
_NUMBER = re.compile(r"[1-9][0-9]*|0")
_BY_RANGES = {"BYMINUTE": (0, 59), "BYHOUR": (0, 23), "BYMONTHDAY": (1, 31), "BYMONTH": (1, 12)}


class RruleError(ValueError):
    """The text is outside the subset (`invalid_rule`)."""


@dataclass(frozen=True)
class Start:
    """DTSTART: a wall date and time in a zone (`UTC` for a `Z` stamp)."""

    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int
    zone: str

    @property
    def weekday(self) -> int:
        """ISO weekday: Monday 1 .. Sunday 7."""
        return date(self.year, self.month, self.day).isoweekday()

    @property
    def wall_time(self) -> str:
        return f"{self.hour:02d}:{self.minute:02d}:{self.second:02d}.000"


@dataclass(frozen=True)
class RuleRecord:
    """The Host record a rule maps onto: its kind and timing fields (Host key names), the
    start, and the 1.0 window's end (UNTIL) when given."""

    kind: str
    timing: tuple[tuple[str, object], ...]
    start: Start
    until: str | None = None


def _stamp(groups: tuple[str, ...], what: str) -> tuple[int, int, int, int, int, int]:
    year, month, day, hour, minute, second = map(int, groups)
    if year < 1:
        raise RruleError(f"{what}: year 0000 is outside 0001-9999")
    try:
        date(year, month, day)
    except ValueError:
        raise RruleError(f"{what}: {year:04d}-{month:02d}-{day:02d} is no calendar date") from None
    if hour > 23 or minute > 59 or second > 59:
        raise RruleError(f"{what}: {hour:02d}:{minute:02d}:{second:02d} is no wall time")
    return year, month, day, hour, minute, second


def parse_start(line: str) -> Start:
    """A DTSTART line of the subset."""
    match = _DTSTART.fullmatch(line)
    if match is None:
        raise RruleError(f"{line!r} is not DTSTART:YYYYMMDDTHHMMSSZ or DTSTART;TZID=<zone>:YYYYMMDDTHHMMSS")
    zone, utc = match.group(1), match.group(8) == "Z"
    if zone is not None and utc:
        raise RruleError("DTSTART has both TZID and a Z stamp")
    if zone is None and not utc:
        raise RruleError("DTSTART is floating (no TZID, no Z): a Host record needs a time zone")
    if zone is not None:
        try:
            KnownZone().check(zone)  # the Host record's own zone rule
        except Reject:
            raise RruleError(f"TZID {zone!r} is not UTC or a zone name the Host resolves") from None
    return Start(*_stamp(match.groups()[1:7], "DTSTART"), zone="UTC" if zone is None else zone)


def _numbers(name: str, text: str) -> tuple[int, ...]:
    lo, hi = _BY_RANGES[name]
    items = text.split(",")
    if not all(_NUMBER.fullmatch(item) for item in items):
        raise RruleError(f"{name}={text} is not a list of numbers")
    values = sorted({int(item) for item in items})
    if values[0] < lo or values[-1] > hi:
        raise RruleError(f"{name}={text} is outside {lo}..{hi}")
    return tuple(values)


def _days(text: str) -> tuple[int, ...]:
    items = text.split(",")
    unknown = [item for item in items if item not in WEEKDAYS]
    if unknown:
        raise RruleError(f"BYDAY item {unknown[0]!r} is not MO..SU (ordinals are outside the subset)")
    return tuple(sorted({WEEKDAYS.index(item) + 1 for item in items}))


def parse_rule(line: str) -> dict[str, str]:
    """The parts of an RRULE line of the subset, by name."""
    if not line.startswith("RRULE:") or len(line) == len("RRULE:"):
        raise RruleError(f"{line!r} is not an RRULE line")
    parts: dict[str, str] = {}
    for part in line[len("RRULE:") :].split(";"):
        name, equals, value = part.partition("=")
        if not equals or not value:
            raise RruleError(f"RRULE part {part!r} is not NAME=VALUE")
        if name not in PARTS:
            raise RruleError(f"RRULE part {name} is outside the subset")
        if name in parts:
            raise RruleError(f"RRULE part {name} is given twice")
        parts[name] = value
    if parts.get("FREQ") not in FREQUENCIES:
        raise RruleError(f"FREQ must be one of {', '.join(FREQUENCIES)}, got {parts.get('FREQ')!r}")
    for name in ("INTERVAL", "COUNT"):
        if name in parts and (_NUMBER.fullmatch(parts[name]) is None or int(parts[name]) < 1):
            raise RruleError(f"{name}={parts[name]} is not a positive integer")
    return parts


def _field(values: tuple[int, ...] | None) -> str:
    return "*" if values is None else ",".join(map(str, values))


def _cron(freq: str, by: dict[str, tuple[int, ...]], start: Start) -> str:
    """The five-field expression of a calendar rule, with RFC 5545's defaults from DTSTART."""
    if "BYMONTHDAY" in by and "BYDAY" in by:
        raise RruleError("BYMONTHDAY with BYDAY: RFC 5545 intersects them, the Host's cron unites them")
    if start.second:
        raise RruleError("a cron-shaped rule needs DTSTART's seconds to be 00 (cron has whole minutes)")
    days = by.get("BYDAY")
    month_days, months = by.get("BYMONTHDAY"), by.get("BYMONTH")
    if "BYMONTHDAY" not in by and "BYDAY" not in by:  # dateutil's defaults from DTSTART
        if freq == "YEARLY":
            months = months or (start.month,)
            month_days = (start.day,)
        elif freq == "MONTHLY":
            month_days = (start.day,)
        elif freq == "WEEKLY":
            days = (start.weekday,)
    hours = by.get("BYHOUR", None if freq == "HOURLY" else (start.hour,))
    minutes = by.get("BYMINUTE", (start.minute,))
    weekdays = None if days is None else tuple(sorted(d % 7 for d in days))  # cron's Sunday is 0
    try:  # stored, as the Host stores it, in its canonical spelling (host.md §4.1)
        return canonical(parse_host_cron(" ".join(_field(f) for f in (minutes, hours, month_days, months, weekdays))))
    except HostCronError as err:
        raise RruleError(str(err)) from None


def parse_rrule(text: str) -> RuleRecord:
    """The Host record `text` (seed 002's `rrule`) maps onto; RruleError when it is outside
    the subset. Lines end with LF or CRLF; one final line end may follow."""
    lines = text.removesuffix("\n").removesuffix("\r").replace("\r\n", "\n").split("\n")
    if len(lines) != 2:
        raise RruleError(f"needs exactly one DTSTART line and one RRULE line, got {len(lines)} line(s)")
    starts = [line for line in lines if line.startswith("DTSTART")]
    if len(starts) != 1:
        raise RruleError("needs exactly one DTSTART line and one RRULE line")
    start = parse_start(starts[0])
    parts = parse_rule(lines[1] if lines[0] is starts[0] else lines[0])
    freq, interval = parts["FREQ"], int(parts.get("INTERVAL", "1"))
    until = None
    if "UNTIL" in parts:
        match = _UNTIL.fullmatch(parts["UNTIL"])
        if match is None:
            raise RruleError(f"UNTIL={parts['UNTIL']} is not a UTC YYYYMMDDTHHMMSSZ stamp")
        y, mo, d, h, mi, s = _stamp(match.groups(), "UNTIL")
        until = f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}.000Z"
    by = {
        name: _days(v) if name == "BYDAY" else _numbers(name, v) for name, v in parts.items() if name.startswith("BY")
    }
    if "COUNT" in parts:
        if parts["COUNT"] != "1":
            raise RruleError(f"COUNT={parts['COUNT']}: only COUNT=1 (one occurrence, an `at`) maps onto a Host record")
        if by or until is not None or interval != 1:
            raise RruleError("COUNT=1 takes no INTERVAL, UNTIL or BY part")
        return RuleRecord("at", (), start)
    if freq in ("MINUTELY", "HOURLY") and not by:
        seconds = interval * (60 if freq == "MINUTELY" else 3600)
        return RuleRecord("every", (("everySeconds", seconds),), start, until)
    if freq == "MINUTELY":
        raise RruleError("MINUTELY with a BY part maps onto no Host record")
    if interval != 1:
        raise RruleError(f"INTERVAL={interval} on a {freq} rule with BY parts maps onto no Host record")
    zone = ("timeZone", start.zone)
    if freq == "DAILY" and not by:
        return RuleRecord("daily", (("time", start.wall_time), zone), start, until)
    if freq == "WEEKLY" and by.keys() <= {"BYDAY"}:
        days = by.get("BYDAY", (start.weekday,))
        return RuleRecord("weekly", (("time", start.wall_time), zone, ("weekdays", list(days))), start, until)
    return RuleRecord("cron", (("expression", _cron(freq, by, start)), zone), start, until)


def rrule_problem(text: object) -> str | None:
    """Why `text` is no rrule of the subset (None when it is one)."""
    if type(text) is not str:
        return "rrule must be a string"
    try:
        parse_rrule(text)
    except RruleError as err:
        return str(err)
    return None
