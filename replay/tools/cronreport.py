"""`cron`: why a rule is accepted or refused, and when it fires (calendar.md §1-§4)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from invariant import ScheduleInputError, format_instant
from invariant.create import cron_target
from invariant.cron import CronSyntaxError, parse_cron
from invariant.occurrences import cron_occurrences, offset_ms, wall_ms
from invariant.zones import resolve_zone, zone_rules

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Occurrence:
    utc: str
    local: str
    offset: str
    abbreviation: str
    dst: bool
    shifted: bool
    """The UTC offset differs from the one in force at the search start (a transition passed)."""

    def to_json(self) -> dict[str, object]:
        return {
            "utc": self.utc,
            "local": self.local,
            "offset": self.offset,
            "abbreviation": self.abbreviation,
            "dst": self.dst,
            "shifted": self.shifted,
        }


@dataclass(frozen=True)
class CronReport:
    expression: str
    time_zone: str
    after: str
    canonical: str | None
    canonical_zone: str | None
    verdict: str
    code: str | None
    message: str | None
    occurrences: tuple[Occurrence, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "expression": self.expression,
            "timeZone": self.time_zone,
            "after": self.after,
            "canonical": self.canonical,
            "canonicalTimeZone": self.canonical_zone,
            "verdict": self.verdict,
            "code": self.code,
            "message": self.message,
            "occurrences": [o.to_json() for o in self.occurrences],
        }


def _offset_text(ms: int) -> str:
    sign = "+" if ms >= 0 else "-"
    seconds = abs(ms) // 1000
    hours, rest = divmod(seconds, 3600)
    text = f"{sign}{hours:02d}:{rest // 60:02d}"
    return text + (f":{rest % 60:02d}" if rest % 60 else "")


def describe_cron(expression: str, time_zone: str, after_ms: int, count: int = 5, *, ideal: bool = False) -> CronReport:
    """What `schedule_create` would answer at `after_ms`, and the next `count` occurrences."""
    try:
        cron_target(expression, time_zone, after_ms)
        verdict, code, message = "accepted", None, None
    except ScheduleInputError as err:
        verdict, code, message = "rejected", err.code, err.message
    try:
        canonical: str | None = parse_cron(expression).text
    except CronSyntaxError:
        canonical = None
    zone = resolve_zone(time_zone)
    occurrences: list[Occurrence] = []
    if zone is not None:
        try:
            found = cron_occurrences(expression, zone, after_ms, count, ideal=ideal)
        except ScheduleInputError:
            found = []
        rules = zone_rules(zone)
        start = offset_ms(rules, after_ms)
        for t in found:
            local = datetime(1970, 1, 1) + timedelta(milliseconds=wall_ms(rules, t))
            aware = (_EPOCH + timedelta(milliseconds=t)).astimezone(rules)
            occurrences.append(
                Occurrence(
                    utc=format_instant(t),
                    local=f"{local.year:04d}-{local.month:02d}-{local.day:02d} {local.hour:02d}:{local.minute:02d}",
                    offset=_offset_text(offset_ms(rules, t)),
                    abbreviation=aware.tzname() or "",
                    dst=bool(aware.dst()),
                    shifted=offset_ms(rules, t) != start,
                )
            )
    return CronReport(
        expression, time_zone, format_instant(after_ms), canonical, zone, verdict, code, message, tuple(occurrences)
    )
