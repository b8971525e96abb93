"""The documented divergences from the reference (calendar.md §4.2a): one test per family pins
schedlog's own answer, and the README lists them (concerns only the calendar revision)."""

from __future__ import annotations

import pytest

from invariant import format_instant, parse_instant
from invariant.cron import parse_cron
from invariant.instant import MAX_MS
from invariant.occurrences import next_occurrence, previous_through, resolve_occurrence
from invariant.zones import zone_rules


def _ms(text: str) -> int:
    ms = parse_instant(text)
    assert ms is not None
    return ms


@pytest.mark.parametrize("ideal", [False, True])
def test_croner_backward_crash_family_follows_the_intended_rule(ideal: bool) -> None:
    """The reference's croner throws while searching back into a shorter month and refuses the
    dispatch as corrupt_schedule_log; schedlog decides it by the intended rule, in both modes."""
    occurrence, following = resolve_occurrence(
        parse_cron("0 9 * 4 *"), zone_rules("UTC"), _ms("2029-04-30T09:00:00.000Z"), _ms("2029-05-01T08:00:00.000Z"),
        ideal=ideal,
    )  # fmt: skip
    assert format_instant(occurrence) == "2029-04-30T09:00:00.000Z"  # no later occurrence: the target itself
    assert following is not None and format_instant(following) == "2030-04-01T09:00:00.000Z"


@pytest.mark.parametrize("ideal", [False, True])
def test_local_year_10000_family_follows_the_intended_rule(ideal: bool) -> None:
    """Near MAX east of UTC the reference answers an occurrence whose local date is in year 10000;
    schedlog keeps to local years 1-9999, as its creation path does, in both modes."""
    latest = previous_through(
        parse_cron("0 1 * * *"), zone_rules("Asia/Tokyo"), MAX_MS, _ms("9999-12-29T00:00:00.000Z"), ideal=ideal
    )
    assert latest is not None and format_instant(latest) == "9999-12-30T16:00:00.000Z"  # reference: 12-31T16:00Z


@pytest.mark.parametrize(
    ("zone", "reference_model", "intended"),
    [
        ("America/New_York", "1901-01-01T06:00:00.000Z", "1883-11-19T06:00:00.000Z"),
        ("Europe/London", "1901-01-01T01:00:00.000Z", "1847-12-01T01:00:00.000Z"),
        ("Asia/Kolkata", "1905-12-31T19:30:00.000Z", "1905-12-31T19:30:00.000Z"),
    ],
)
def test_local_mean_time_family_follows_the_restart_model(zone: str, reference_model: str, intended: str) -> None:
    """Searches starting in a zone's local-mean-time era: schedlog's default follows calendar.md
    §4.4's restart-in-1900+y model (which the reference's croner internals do not always match,
    17 measured cases), --ideal the intended rule; both pinned here."""
    rule, rules, start = parse_cron("0 1 * * *"), zone_rules(zone), _ms("0001-01-01T00:00:00.000Z")
    assert format_instant(next_occurrence(rule, rules, start) or 0) == reference_model
    assert format_instant(next_occurrence(rule, rules, start, ideal=True) or 0) == intended


def test_the_readme_lists_the_divergences() -> None:
    from tests.documentation import section as of

    section = of("Where schedlog and the reference part")
    for family in ("croner", "year 10000", "local mean time"):
        assert family in section
