"""Hypothesis properties of the calendar engine, checked against slow independent oracles."""

from __future__ import annotations

import copy
import itertools
import os
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from invariant import ScheduleInputError, canonical_cron, parse_cron
from invariant.cron import CronRule, CronSyntaxError, frequency_ok, has_matching_date
from invariant.instant import MAX_MS, MIN_MS
from invariant.occurrences import (
    _fold_offsets,
    next_local,
    next_occurrence,
    offset_ms,
    previous_local,
    previous_through,
    resolve_occurrence,
)
from invariant.zones import zone_rules

from .conftest import ROOT

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

BOUNDS = [(0, 59, 60), (0, 23, 24), (1, 31, 31), (1, 12, 12), (0, 7, 7)]


def _num(draw: Any, value: int) -> str:
    return "0" * draw(st.integers(0, 2)) + str(value)


@st.composite
def field_text(draw: Any, index: int) -> str:
    lo, hi, step_max = BOUNDS[index]
    form = draw(st.sampled_from(["star", "star-step", "range", "range-step", "list", "single"]))
    if form == "star":
        return "*"
    if form == "star-step":
        return "*/" + _num(draw, draw(st.integers(1, step_max)))
    if form in ("range", "range-step"):
        a = draw(st.integers(lo, hi - 1))
        b = draw(st.integers(a + 1, hi))
        text = f"{_num(draw, a)}-{_num(draw, b)}"
        return text + ("/" + _num(draw, draw(st.integers(1, step_max))) if form == "range-step" else "")
    if form == "list":
        values = sorted(draw(st.sets(st.integers(lo, hi), min_size=2, max_size=6)))
        return ",".join(_num(draw, v) for v in values)
    return _num(draw, draw(st.integers(lo, hi)))


@st.composite
def cron_texts(draw: Any) -> str:
    fields = [draw(field_text(i)) for i in range(5)]
    if draw(st.booleans()):
        fields[2 if draw(st.booleans()) else 4] = "*"
    seps = [draw(st.sampled_from([" ", "  ", "\t", " \n "])) for _ in range(4)]
    return fields[0] + "".join(s + f for s, f in zip(seps, fields[1:], strict=True))


def _grammatical(text: str) -> CronRule:
    try:
        return parse_cron(text)
    except CronSyntaxError:
        assume(False)
        raise


def _meaning(rule: CronRule) -> tuple[object, ...]:
    day_meaning = ("weekday", rule.weekdays) if rule.day_is_star else ("day", rule.days)
    return rule.times, rule.months, day_meaning


@SETTINGS
@given(cron_texts())
def test_canonical_form_is_idempotent_and_keeps_the_meaning(text: str) -> None:
    rule = _grammatical(text)
    again = parse_cron(rule.text)
    assert again.text == rule.text
    assert _meaning(again) == _meaning(rule)


@SETTINGS
@given(cron_texts())
def test_canonical_cron_agrees_with_the_parser(text: str) -> None:
    try:
        rule = parse_cron(text)
    except CronSyntaxError:
        with pytest.raises(ScheduleInputError) as info:
            canonical_cron(text)
        assert info.value.code == "invalid_rule"
        return
    if frequency_ok(rule):
        assert canonical_cron(text) == rule.text
    else:
        with pytest.raises(ScheduleInputError) as info:
            canonical_cron(text)
        assert info.value.code == "frequency_too_high"


# --- the frequency proof against enumeration of real calendar days -------------------------------

WINDOWS = [
    (date(2023, 1, 1), date(2024, 12, 31)),  # every month end, common and leap February, a year end
    (date(2099, 12, 1), date(2101, 3, 31)),  # 28 Feb 2100 (not a leap year) and two year ends
    (date(2399, 12, 25), date(2400, 1, 7)),  # the cycle seam: 2399-12-31 -> 2400-01-01 (= 2000-01-01)
]


def brute_force_ok(rule: CronRule) -> bool:
    """Nominal occurrences on a day-minute timeline; too frequent when two are < 5 min apart."""
    times = rule.times
    for first, last in WINDOWS:
        previous: int | None = None
        for ordinal in range(first.toordinal(), last.toordinal() + 1):
            day = date.fromordinal(ordinal)
            if not rule.matches_date(day.month, day.day, (day.weekday() + 1) % 7):
                continue
            if any(b - a < 5 for a, b in itertools.pairwise(times)):
                return False
            if previous == ordinal - 1 and 1440 - times[-1] + times[0] < 5:
                return False
            previous = ordinal
    return True


@settings(max_examples=40, deadline=None)
@given(cron_texts())
def test_frequency_proof_agrees_with_enumeration(text: str) -> None:
    rule = _grammatical(text)
    assert frequency_ok(rule) == brute_force_ok(rule)


@settings(max_examples=40, deadline=None)
@given(cron_texts())
def test_matching_date_agrees_with_enumeration(text: str) -> None:
    rule = _grammatical(text)
    first, last = WINDOWS[0]
    seen = any(
        rule.matches_date(d.month, d.day, (d.weekday() + 1) % 7)
        for d in map(date.fromordinal, range(first.toordinal(), last.toordinal() + 1))
    )
    assert has_matching_date(rule) == seen


# --- occurrence search against a slow independent matcher ---------------------------------------

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
ONE_HOUR_SHIFT_ZONES = ["UTC", "America/New_York", "Europe/London", "America/Santiago", "Asia/Calcutta"]
ALL_ZONES = [*ONE_HOUR_SHIFT_ZONES, "Australia/Lord_Howe", "Pacific/Apia", "Antarctica/Troll"]
TRANSITIONS = [
    "2026-03-08T07:00:00Z", "2026-11-01T06:00:00Z", "2026-03-29T01:00:00Z", "2026-10-25T01:00:00Z",
    "2026-04-04T15:00:00Z", "2026-10-03T15:30:00Z", "2011-12-30T10:00:00Z", "2026-09-06T04:00:00Z",
]  # fmt: skip


def slow_is_occurrence(rule: CronRule, zone_name: str, t: int) -> bool:
    """calendar.md §4.1 straight from zoneinfo, no shared code with the engine."""
    zone = zone_rules(zone_name)
    local = (EPOCH + timedelta(milliseconds=t)).astimezone(zone)
    if local.second or local.microsecond:
        return False
    if local.hour * 60 + local.minute not in rule.times:
        return False
    if not rule.matches_date(local.month, local.day, (local.weekday() + 1) % 7):
        return False
    wall = local.replace(tzinfo=None)
    for minutes in range(15, 26 * 60 + 1, 15):  # is the same wall time read earlier?
        earlier = (EPOCH + timedelta(milliseconds=t - minutes * 60_000)).astimezone(zone)
        if earlier.replace(tzinfo=None) == wall:
            return False
    return True


@st.composite
def frequent_rules(draw: Any) -> str:
    minutes = sorted(draw(st.sets(st.sampled_from(range(0, 60, 5)), min_size=1, max_size=4)))
    hours = draw(st.sampled_from(["*", "0-3", "1,2", "1", "23", "*/2", "0,12"]))
    days = draw(st.sampled_from(["* * *", "* * 0,6", "1-31 * *", "* * 1-5", "29,30,31 * *"]))
    return f"{','.join(map(str, minutes))} {hours} {days}"


@st.composite
def instants(draw: Any) -> int:
    base = datetime.fromisoformat(draw(st.sampled_from(TRANSITIONS))).timestamp() * 1000
    return int(base) + draw(st.integers(-2 * 86_400_000, 86_400_000))


@settings(max_examples=40, deadline=None)
@given(frequent_rules(), st.sampled_from(ALL_ZONES), instants())
def test_next_is_the_first_occurrence_after(text: str, zone_name: str, after: int) -> None:
    rule = parse_cron(text)
    zone = zone_rules(zone_name)
    found = next_occurrence(rule, zone, after, ideal=True)
    assert found is not None and found > after
    assume(found - after <= 2 * 86_400_000)
    assert slow_is_occurrence(rule, zone_name, found)
    first_minute = after // 60_000 * 60_000 + 60_000
    for t in range(first_minute, found, 60_000):
        assert not slow_is_occurrence(rule, zone_name, t), t
    assert previous_through(rule, zone, found, after, ideal=True) == found
    if zone_name in ONE_HOUR_SHIFT_ZONES:  # the reference's quirks need non-one-hour overlaps
        assert next_occurrence(rule, zone, after) == found


@settings(max_examples=40, deadline=None)
@given(frequent_rules(), st.sampled_from(ALL_ZONES), instants())
def test_previous_through_is_the_last_occurrence_up_to(text: str, zone_name: str, through: int) -> None:
    rule = parse_cron(text)
    zone = zone_rules(zone_name)
    baseline = through - 86_400_000
    found = previous_through(rule, zone, through, baseline, ideal=True)
    start = found if found is not None else baseline
    assert found is None or (baseline < found <= through and slow_is_occurrence(rule, zone_name, found))
    for t in range(start // 60_000 * 60_000 + 60_000, through + 1, 60_000):
        assert not slow_is_occurrence(rule, zone_name, t), t


@settings(max_examples=200, deadline=None)
@given(
    frequent_rules(),
    st.sampled_from(ALL_ZONES),
    instants(),
    st.integers(0, 3 * 86_400_000),
    st.sampled_from([1, 1000, 60_000]),
)
def test_resolution_is_previous_through_then_next(text: str, zone_name: str, target: int, late: int, unit: int) -> None:
    """`resolve_occurrence` answers the usual case in one pass; it must equal its definition
    (calendar.md §4.7) of two searches, near transitions and at sub-minute acceptance too."""
    rule = parse_cron(text)
    zone = zone_rules(zone_name)
    target = target // unit * unit
    accepted = (target + late) // unit * unit
    latest = previous_through(rule, zone, accepted, target)
    expected = (latest if latest is not None and latest > target else target, next_occurrence(rule, zone, accepted))
    assert resolve_occurrence(rule, zone, target, accepted) == expected


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(["0 0 * * *", "*/5 * * * *", "59 23 31 12 *"]),
    st.sampled_from(["UTC", "America/New_York", "Pacific/Kiritimati"]),
    st.one_of(st.integers(), st.integers(MIN_MS - 3 * 86_400_000, MIN_MS), st.integers(MAX_MS - 60_000, MAX_MS + 10)),
)
def test_searches_take_any_integer_instant(text: str, zone_name: str, t: int) -> None:
    """Occurrences lie in years 0001-9999: asked from beyond either end, a search answers as
    from just inside it (the target check of a year-1 create asks from year 0)."""
    rule = parse_cron(text)
    zone = zone_rules(zone_name)
    following = next_occurrence(rule, zone, t)
    assert following == (None if t >= MAX_MS else next_occurrence(rule, zone, max(t, MIN_MS - 1)))
    assert following is None or (MIN_MS <= following <= MAX_MS and following > t)
    latest = previous_through(rule, zone, t, t - 400 * 86_400_000)
    assert latest == (None if t < MIN_MS else previous_through(rule, zone, min(t, MAX_MS), t - 400 * 86_400_000))
    assert latest is None or MIN_MS <= latest <= min(t, MAX_MS)


EDGE_DAYS = 3 * 86_400_000
WALLS = st.one_of(
    st.integers(MIN_MS, MAX_MS),
    st.integers(MIN_MS - EDGE_DAYS, MIN_MS + EDGE_DAYS),
    st.integers(MAX_MS - EDGE_DAYS, MAX_MS + EDGE_DAYS),
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["5 * * * *", "0,30 9-17 * * *", "59 23 * * *", "0 0 * 1-12 0-6", "*/7 */5 * * 0-6"]), WALLS)
def test_every_day_shortcut_is_the_date_walk(text: str, wall: int) -> None:
    """Rules matching every date skip the date walk of next_local / previous_local; the answer
    must be the walk's, up to the calendar's ends."""
    rule = parse_cron(text)
    assert rule.every_day
    walked = copy.copy(rule)
    object.__setattr__(walked, "every_day", False)
    assert next_local(rule, wall) == next_local(walked, wall)
    assert previous_local(rule, wall) == previous_local(walked, wall)


OFFSET_ZONES = [*ALL_ZONES, "Africa/Monrovia", "Europe/Amsterdam", "America/St_Johns", "Asia/Kathmandu"]
NEAR_TRANSITION = st.builds(
    lambda base, delta: int(datetime.fromisoformat(base).timestamp() * 1000) + delta,
    st.sampled_from([*TRANSITIONS, "1972-01-07T00:00:00Z", "1937-07-01T00:00:00Z", "1883-11-18T17:00:00Z"]),
    st.one_of(st.integers(-2_000, 2_000), st.integers(-7_200_000, 7_200_000)),
)


@settings(max_examples=400, deadline=None)
@given(st.sampled_from(OFFSET_ZONES), st.one_of(WALLS, NEAR_TRANSITION))
def test_offsets_are_the_zones_own_readings(zone_name: str, t: int) -> None:
    """`offset_ms` and `_fold_offsets` take shortcuts (whole seconds, `fromtimestamp`); they must
    give what zoneinfo gives for the exact millisecond, LMT seconds and the calendar's ends too."""
    zone = zone_rules(zone_name)
    one_ms = timedelta(milliseconds=1)
    try:
        expected = (EPOCH + timedelta(milliseconds=t)).astimezone(zone).utcoffset() // one_ms  # type: ignore[operator]
    except OverflowError:
        expected = None
    walls = [t]
    if expected is not None:
        assert offset_ms.__wrapped__(zone, t) == expected
        walls.append(t + expected)  # t's local reading: near a transition when t is
    for wall in walls:
        try:
            local = datetime(1970, 1, 1) + timedelta(milliseconds=wall)
        except OverflowError:
            continue
        readings = tuple(zone.utcoffset(local.replace(fold=f)) // one_ms for f in (0, 1))  # type: ignore[operator]
        assert _fold_offsets.__wrapped__(zone, wall) == readings


# --- nothing depends on the process time zone or clock --------------------------------------------

DIGEST = """
import hashlib, json, sys
sys.path.insert(0, {root!r})
from tests.test_calendar_examples import *  # noqa
from tests.calendar_data import clock
from invariant import cron_occurrences, canonical_zone, parse_instant
from invariant.create import at_target
out = []
for line in open({path!r}):
    e = json.loads(line)
    if e["kind"] == "cron_next":
        out.append(cron_occurrences(e["cron"], e["time_zone"], parse_instant(e["after"]), 4))
    elif e["kind"] == "at":
        try:
            out.append(at_target(e["input"], clock(e["now"]), e.get("implicit_time_zone")))
        except Exception as err:
            out.append(str(getattr(err, "code", err)))
print(hashlib.sha256(json.dumps(out).encode()).hexdigest())
"""


def test_answers_do_not_depend_on_the_process_time_zone() -> None:
    code = DIGEST.format(root=str(ROOT), path=str(ROOT / "fixtures/conformance/calendar-examples.jsonl"))
    digests = set()
    for tz in ("UTC", "America/New_York", "Asia/Kolkata", "Pacific/Apia", "Australia/Lord_Howe"):
        env = {**os.environ, "TZ": tz}
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        digests.add(proc.stdout.strip())
    assert len(digests) == 1


def test_no_code_reads_the_wall_clock_or_local_zone() -> None:
    import ast

    forbidden = {"now", "utcnow", "today", "time", "localtime", "monotonic", "perf_counter", "tzlocal"}
    for path in sorted((ROOT / "invariant").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                assert node.func.attr not in forbidden, f"{path.name}: .{node.func.attr}()"
