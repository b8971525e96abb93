"""Cron occurrences in an IANA zone (calendar.md §4): next, previous-through, resolve.

Read top down: local-time primitives (zone offsets, local readings, matching local wall times),
then the intended rule, then the emulation of the reference's decisions; the public searches
at the end pick one of the two once.

An instant t is an *occurrence* of a rule in zone Z when it is a whole UTC minute within years
0001-9999, its local reading in Z has second 0, matches the rule, and is the *first* instant
with that reading (a gap time has none and is skipped; an overlap counts once, first pass).

The search walks local wall times that match the rule (pure integer calendar arithmetic over
proleptic Gregorian day ordinals), converting only candidates to instants.

The reference obtains candidates from croner and so misses some occurrences (non-one-hour
overlaps; previous-through during the second pass of an overlap). schedlog reproduces those
decisions by default, because the host that writes the logs *is* the reference; pass
`ideal=True` for the intended rule instead.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING

from .cron import CronRule, CronSyntaxError, has_matching_date, parse_cron
from .errors import ScheduleInputError
from .instant import MAX_MS, MIN_MS, MINUTE_MS
from .zones import canonical_zone, zone_rules

if TYPE_CHECKING:  # (zoneinfo loads with the first zone's rules: invariant.zones)
    from zoneinfo import ZoneInfo

DAY_MS = 86_400_000
HOUR_MS = 3_600_000
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_NAIVE = datetime(1970, 1, 1)
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_MAX_ORDINAL = date(9999, 12, 31).toordinal()
_ONE_MS = timedelta(milliseconds=1)
_ERA_STEP_MS = 28 * DAY_MS


# --- zone offsets and local readings ---------------------------------------------------------


def _is_utc(zone: ZoneInfo) -> bool:
    return zone.key == "UTC"


@lru_cache(maxsize=4096)
def offset_ms(zone: ZoneInfo, t: int) -> int:
    """The UTC offset (ms, seconds kept) in force at instant t.

    Remembered: resolving a cron dispatch reads the acceptance instant both looking back for the
    occurrence and forward for the next target.
    """
    if _is_utc(zone):
        return 0
    try:
        # transitions fall on whole seconds, so the second holding t has t's offset
        return datetime.fromtimestamp(t // 1000, zone).utcoffset() // _ONE_MS  # type: ignore[operator]
    except (OverflowError, ValueError, OSError):
        pass
    try:
        return (_EPOCH + timedelta(milliseconds=t)).astimezone(zone).utcoffset() // _ONE_MS  # type: ignore[operator]
    except OverflowError:
        # the local reading leaves years 1-9999; two days inward the offset is the same
        shifted = t - 2 * DAY_MS if t > 0 else t + 2 * DAY_MS
        return (_EPOCH + timedelta(milliseconds=shifted)).astimezone(zone).utcoffset() // _ONE_MS  # type: ignore[operator]


def wall_ms(zone: ZoneInfo, t: int) -> int:
    """The local reading of instant t as milliseconds of a UTC-like wall clock."""
    return t + offset_ms(zone, t)


@lru_cache(maxsize=4096)
def _fold_offsets(zone: ZoneInfo, wall: int) -> tuple[int, int]:
    """The offsets of local wall time `wall` read with fold 0 and fold 1 (they differ only in a
    gap or an overlap). The zone reads the naive time's fields and fold itself, as it would for
    the time made aware, without building that.

    Remembered: a recurring rule's next target, resolved at one dispatch, is read again as the
    latest occurrence at the next."""
    local = _EPOCH_NAIVE + timedelta(0, wall // 1000)  # a zone reads whole seconds of the time
    off0 = zone.utcoffset(local)
    off1 = zone.utcoffset(local.replace(fold=1))
    assert off0 is not None and off1 is not None
    return off0 // _ONE_MS, off1 // _ONE_MS


def first_instance(zone: ZoneInfo, wall: int) -> tuple[int | None, bool]:
    """(earliest instant whose local reading is `wall`, or None in a gap; near a transition?)."""
    if _is_utc(zone):
        return wall, False
    off0, off1 = _fold_offsets(zone, wall)
    if off0 == off1:
        return wall - off0, False
    valid = [t for t in (wall - off0, wall - off1) if wall_ms(zone, t) == wall]
    return (min(valid) if valid else None), True


def _whole_minute_era(zone: ZoneInfo, t: int) -> int | None:
    """First instant after t from which the offset is a whole number of minutes (leaves LMT)."""
    lo = t
    hi = t + _ERA_STEP_MS
    while offset_ms(zone, hi) % MINUTE_MS:
        lo = hi
        hi += _ERA_STEP_MS
        if hi > MAX_MS:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if offset_ms(zone, mid) % MINUTE_MS:
            lo = mid
        else:
            hi = mid
    return hi


# --- matching local wall times: pure calendar arithmetic ------------------------------------------


def _ordinal_wall(ordinal: int, minute_of_day: int) -> int:
    return (ordinal - _EPOCH_ORDINAL) * DAY_MS + minute_of_day * MINUTE_MS


def _days_in_month(year: int, month: int) -> int:
    if month == 12:
        return 31
    return (date(year, month + 1, 1) - date(year, month, 1)).days


def next_local(rule: CronRule, wall: int) -> int | None:
    """The smallest matching local wall time >= `wall` (ms), local years up to 9999."""
    if wall > MAX_MS:
        return None
    wall = max(wall, MIN_MS)
    days, rest = divmod(wall, DAY_MS)
    ordinal = days + _EPOCH_ORDINAL
    minute = -(-rest // MINUTE_MS)
    if minute >= 1440:
        ordinal += 1
        minute = 0
    times = rule.times
    if rule.every_day:  # the loop below, when every date matches
        i = bisect_left(times, minute)
        if i == len(times):
            ordinal += 1
            i = 0
        return _ordinal_wall(ordinal, times[i]) if ordinal <= _MAX_ORDINAL else None
    months = rule.months
    while ordinal <= _MAX_ORDINAL:
        day = date.fromordinal(ordinal)
        if day.month not in months:
            i = bisect_right(months, day.month)
            year, month = (day.year, months[i]) if i < len(months) else (day.year + 1, months[0])
            if year > 9999:
                return None
            ordinal = date(year, month, 1).toordinal()
            minute = 0
            continue
        if rule.day_is_star:
            if ordinal % 7 not in rule.weekdays:
                ordinal += 1
                minute = 0
                continue
        elif day.day not in rule.days:
            i = bisect_right(rule.days, day.day)
            length = _days_in_month(day.year, day.month)
            if i < len(rule.days) and rule.days[i] <= length:
                ordinal += rule.days[i] - day.day
            else:
                ordinal += length - day.day + 1
            minute = 0
            continue
        i = bisect_left(times, minute)
        if i < len(times):
            return _ordinal_wall(ordinal, times[i])
        ordinal += 1
        minute = 0
    return None


def previous_local(rule: CronRule, wall: int) -> int | None:
    """The largest matching local wall time <= `wall` (ms), local years from 1."""
    if wall < MIN_MS:
        return None
    wall = min(wall, MAX_MS)
    days, rest = divmod(wall, DAY_MS)
    ordinal = days + _EPOCH_ORDINAL
    minute = rest // MINUTE_MS
    times = rule.times
    if rule.every_day:  # the loop below, when every date matches
        i = bisect_right(times, minute) - 1
        if i < 0:
            ordinal -= 1
            i = len(times) - 1
        return _ordinal_wall(ordinal, times[i]) if ordinal >= 1 else None
    months = rule.months
    while ordinal >= 1:
        day = date.fromordinal(ordinal)
        if day.month not in months:
            i = bisect_left(months, day.month) - 1
            year, month = (day.year, months[i]) if i >= 0 else (day.year - 1, months[-1])
            if year < 1:
                return None
            ordinal = date(year, month, _days_in_month(year, month)).toordinal()
            minute = 1439
            continue
        if rule.day_is_star:
            if ordinal % 7 not in rule.weekdays:
                ordinal -= 1
                minute = 1439
                continue
        elif day.day not in rule.days:
            i = bisect_left(rule.days, day.day) - 1
            ordinal -= day.day - rule.days[i] if i >= 0 else day.day
            minute = 1439
            continue
        i = bisect_right(times, minute) - 1
        if i >= 0:
            return _ordinal_wall(ordinal, times[i])
        ordinal -= 1
        minute = 1439
    return None


def _matches_wall(rule: CronRule, wall: int) -> bool:
    days, rest = divmod(wall, DAY_MS)
    if rest % MINUTE_MS:
        return False
    ordinal = days + _EPOCH_ORDINAL
    day = date.fromordinal(ordinal)
    return rest // MINUTE_MS in rule.times and rule.matches_date(day.month, day.day, ordinal % 7)


def is_occurrence(rule: CronRule, zone: ZoneInfo, t: int) -> bool:
    """The intended definition (calendar.md §4.1), checked directly on an instant."""
    if not MIN_MS <= t <= MAX_MS or t % MINUTE_MS:
        return False
    wall = wall_ms(zone, t)
    if not MIN_MS <= wall <= MAX_MS or not _matches_wall(rule, wall):
        return False
    return first_instance(zone, wall)[0] == t


def _utc_year(t: int) -> int:
    """The UTC year of instant t, 0 for the year before year 1 (JavaScript dates have one)."""
    ordinal = t // DAY_MS + _EPOCH_ORDINAL
    return date.fromordinal(ordinal).year if ordinal >= 1 else 0


def _local_start(zone: ZoneInfo, after: int) -> int:
    """Where a forward walk starts: the local reading of `after`, floored to its minute."""
    wall = wall_ms(zone, after)
    return wall - wall % MINUTE_MS


_CYCLE_MS = 146_097 * DAY_MS
"""One 400-year Gregorian cycle: shifting by it keeps every calendar field but the year."""


def _shift_years(wall: int, years: int) -> int:
    """The same local fields `years` later (the reading may lie in year 0, so go via a cycle)."""
    moment = _EPOCH_NAIVE + timedelta(milliseconds=wall + _CYCLE_MS)
    shifted = moment.replace(year=moment.year - 400 + years)
    return (shifted - _EPOCH_NAIVE) // _ONE_MS


Counts = Callable[["ZoneInfo", int, int, bool], bool]
"""Whether a matching local time `wall`, whose first instance is t (near a transition or not),
is an occurrence a search may answer: the one place the intended rule and the reference part."""


def _walk_next(
    rule: CronRule, zone: ZoneInfo, after: int, start: int, counts: Counts, last_wall: int = MAX_MS
) -> int | None:
    """The first occurrence after `after` that `counts`, walking matching local times from `start`."""
    wall = start
    while True:
        candidate = next_local(rule, wall)
        if candidate is None or candidate > last_wall:
            return None
        t, near = first_instance(zone, candidate)
        if t is not None:
            if t > MAX_MS:
                return None
            if t % MINUTE_MS:  # a sub-minute (local mean time) offset: no occurrence in this era
                era = _whole_minute_era(zone, t)
                if era is None:
                    return None
                wall = max(candidate + MINUTE_MS, wall_ms(zone, era))
                continue
            if t > after and counts(zone, candidate, t, near):
                return t
        wall = candidate + MINUTE_MS


# --- the intended rule (calendar.md §4.1) -------------------------------------------------------


def _every_first_instance(zone: ZoneInfo, wall: int, t: int, near: bool) -> bool:
    """Intended: every matching local time's first instance is an occurrence."""
    return True


def _intended_next(rule: CronRule, zone: ZoneInfo, after: int) -> int | None:
    return _walk_next(rule, zone, after, _local_start(zone, after), _every_first_instance)


def _intended_previous(rule: CronRule, zone: ZoneInfo, through: int, baseline: int) -> int | None:
    # an overlap's first pass can hold local times later than through's own reading
    wall = _local_start(zone, through) + 26 * HOUR_MS
    floor = wall_ms(zone, baseline) - 2 * DAY_MS
    while True:
        candidate = previous_local(rule, wall)
        if candidate is None or candidate < floor:
            return None
        t, _ = first_instance(zone, candidate)
        if t is not None:
            if t <= baseline:
                return None
            if t <= through and t % MINUTE_MS == 0 and MIN_MS <= t <= MAX_MS:
                return t
        wall = candidate - MINUTE_MS


def _intended_resolve(rule: CronRule, zone: ZoneInfo, target: int, accepted: int) -> tuple[int, int | None]:
    latest = previous_through(rule, zone, accepted, target, ideal=True)
    return _occurrence(latest, target), next_occurrence(rule, zone, accepted, ideal=True)


# --- the reference's decisions (calendar.md §4.2-§4.4, §4.7), misses included -----------------------


def _pick(zone: ZoneInfo, wall: int) -> tuple[int, bool]:
    """The reference's candidate instant for local wall time `wall`, and whether it reads `wall`.

    It resolves through the offset at the wall time read as UTC, so in an overlap that is not
    one hour long it can land on the second pass (calendar.md §4.2).
    """
    o = wall - offset_ms(zone, wall)
    if wall_ms(zone, o) == wall:
        earlier = o - HOUR_MS
        return (earlier if wall_ms(zone, earlier) == wall else o), True
    later = wall - offset_ms(zone, o)
    return later, wall_ms(zone, later) == wall


def _reference_counts(zone: ZoneInfo, wall: int, t: int, near: bool) -> bool:
    """The reference's one DST predicate: near a transition its candidate for a local time is
    the instant `_pick` gives, and the time counts only when that is the first instance."""
    return not near or _pick(zone, wall) == (t, True)


_REFERENCE_FROM = (date(109, 1, 1).toordinal() - _EPOCH_ORDINAL) * DAY_MS
"""The first instant of UTC year 109: from there on, both searches follow the reference alone."""


def _reference_next(rule: CronRule, zone: ZoneInfo, after: int) -> int | None:
    start = _local_start(zone, after)
    year = _utc_year(after)
    if year <= 108:
        # the reference searches low years itself (JavaScript remaps years 0-99)
        last_wall = _ordinal_wall(date(110, 1, 1).toordinal(), 0) - 1
        found = _walk_next(rule, zone, after, start, _every_first_instance, last_wall)
        if found is not None:
            return found
        if year <= 99 and offset_ms(zone, after) % MINUTE_MS:
            # quirk: its fallback evaluator restarts in year 1900 + y (calendar.md §4.4)
            start = _shift_years(wall_ms(zone, after), 1900)
    return _walk_next(rule, zone, after, start, _reference_counts)


def _reference_cursor_previous(rule: CronRule, zone: ZoneInfo, through: int, baseline: int) -> int:
    """The reference's backward cursor search (calendar.md §4.2), baseline when nothing found."""
    cursor = min(through // MINUTE_MS * MINUTE_MS + MINUTE_MS, MAX_MS)
    while cursor > baseline:
        candidate = previous_local(rule, wall_ms(zone, cursor) - 1000)
        if candidate is None:
            return baseline
        c, _ = _pick(zone, candidate)
        if c >= cursor:
            cursor -= MINUTE_MS
            continue
        if c <= baseline:
            return baseline
        if c <= through and is_occurrence(rule, zone, c):
            return c
        cursor = min(cursor - MINUTE_MS, c - 1)
    return baseline


_UNDECIDED = -1 << 62


def _plain_previous_at(rule: CronRule, zone: ZoneInfo, wall: int, baseline: int) -> int | None:
    """The answer when no daylight-saving transition is involved, else _UNDECIDED.

    When the local reading `wall` of `through` is unambiguous and the latest matching local time
    before it is neither a gap nor an overlap time, every algorithm agrees: that time's one
    instant.
    """
    if wall % 1000 or not MIN_MS <= wall <= MAX_MS:
        return _UNDECIDED
    off0, off1 = _fold_offsets(zone, wall - wall % MINUTE_MS)
    if off0 != off1 or off0 % MINUTE_MS:
        return _UNDECIDED
    candidate = previous_local(rule, wall)
    if candidate is None:
        return _UNDECIDED
    t, near = first_instance(zone, candidate)
    if near or t is None or t % MINUTE_MS or not MIN_MS <= t <= MAX_MS:
        return _UNDECIDED
    return t if t > baseline else None


def _reference_previous(rule: CronRule, zone: ZoneInfo, through: int, baseline: int) -> int | None:
    if _utc_year(through) <= 108:
        return _intended_previous(rule, zone, through, baseline)
    plain = _plain_previous_at(rule, zone, wall_ms(zone, through), baseline)
    if plain != _UNDECIDED:
        return plain
    result = _reference_cursor_previous(rule, zone, through, baseline)
    following = next_occurrence(rule, zone, result)
    if following is not None and following <= through:
        return following
    return result if result > baseline else None


def _reference_resolve(rule: CronRule, zone: ZoneInfo, target: int, accepted: int) -> tuple[int, int | None]:
    if _REFERENCE_FROM <= accepted <= MAX_MS and has_matching_date(rule):
        # The usual case, answered by the same steps as below with the local reading of
        # `accepted` read once: the plain previous occurrence, then the reference walk onward.
        wall = wall_ms(zone, accepted)
        latest = _plain_previous_at(rule, zone, wall, target)
        if latest != _UNDECIDED:
            start = wall - wall % MINUTE_MS
            return _occurrence(latest, target), _walk_next(rule, zone, accepted, start, _reference_counts)
    latest = previous_through(rule, zone, accepted, target)
    return _occurrence(latest, target), next_occurrence(rule, zone, accepted)


# --- the public searches: each picks the intended rule or the reference's decisions once -----------


def next_occurrence(rule: CronRule, zone: ZoneInfo, after: int, *, ideal: bool = False) -> int | None:
    """The first occurrence strictly after instant `after`, or None up to year 9999.

    Any integer instant may be asked: occurrences lie in years 0001-9999, so from further back
    the answer is the first one, and from MAX_MS on there is none.
    """
    if after >= MAX_MS or not has_matching_date(rule):
        return None
    search = _intended_next if ideal else _reference_next
    return search(rule, zone, max(after, MIN_MS - 1))


def previous_through(rule: CronRule, zone: ZoneInfo, through: int, baseline: int, *, ideal: bool = False) -> int | None:
    """The latest occurrence t with baseline < t <= through, or None.

    Any integer instants may be asked: occurrences lie in years 0001-9999, so both bounds are
    first brought within reach of them.
    """
    if through < MIN_MS or not has_matching_date(rule):
        return None
    search = _intended_previous if ideal else _reference_previous
    return search(rule, zone, min(through, MAX_MS), max(baseline, MIN_MS - 1))


def _occurrence(latest: int | None, target: int) -> int:
    """A late dispatch's occurrence: the latest one after the target, else the target itself."""
    return latest if latest is not None and latest > target else target


def resolve_occurrence(
    rule: CronRule, zone: ZoneInfo, target: int, accepted: int, *, ideal: bool = False
) -> tuple[int, int | None]:
    """The late-dispatch decision (calendar.md §4.7): (occurrenceAt, nextScheduledAt or None).

    The occurrence is the latest one in (target, accepted], else the persisted target itself
    (kept as a history-stable baseline even when current data no longer matches it).
    """
    resolve = _intended_resolve if ideal else _reference_resolve
    return resolve(rule, zone, target, accepted)


def cron_occurrences(cron: str, time_zone: str, after_ms: int, count: int, *, ideal: bool = False) -> list[int]:
    """The next `count` occurrences strictly after `after_ms`, fewer when the calendar ends.

    `cron` may be any grammatical text and `time_zone` any known name or link; raises
    ScheduleInputError `invalid_rule` / `invalid_time_zone` otherwise.
    """
    try:
        rule = parse_cron(cron)
    except CronSyntaxError as err:
        raise ScheduleInputError("invalid_rule", str(err)) from None
    zone = zone_rules(canonical_zone(time_zone))
    found: list[int] = []
    cursor = after_ms
    while len(found) < count:
        following = next_occurrence(rule, zone, cursor, ideal=ideal)
        if following is None:
            break
        found.append(following)
        cursor = following
    return found
