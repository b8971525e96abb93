"""Every zone name the reference was asked about (zones-icu.json, calendar.md §3.6), loaded as data:
accepted with its canonical name, or refused; and the SystemV rules as ICU applies them."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from invariant import ScheduleInputError, canonical_zone, cron_occurrences, parse_instant
from invariant.systemv import DAYLIGHT, FIXED_OFFSETS, NAMES, dst_period
from invariant.zones import zone_rules

from .conftest import CONFORMANCE

TABLE = json.loads((CONFORMANCE / "zones-icu.json").read_text(encoding="utf-8"))
ACCEPTED: dict[str, str] = TABLE["accepted"]
REFUSED: list[str] = TABLE["refused"]


def test_the_table_is_whole() -> None:
    assert len(ACCEPTED) == 576 and len(REFUSED) == 71
    assert set(NAMES) <= set(ACCEPTED.values())


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_name(name: str) -> None:
    canonical = canonical_zone(name)
    assert canonical == ACCEPTED[name]
    rules = zone_rules(canonical)  # every canonical name has rules (tzdata, or SystemV's own)
    assert rules.utcoffset(datetime(2026, 6, 1)) is not None


@pytest.mark.parametrize("name", REFUSED)
def test_refused_name(name: str) -> None:
    with pytest.raises(ScheduleInputError) as info:
        canonical_zone(name)
    assert info.value.code == "invalid_time_zone"


def _offset_hours(zone: str, utc: str) -> float:
    offset = datetime.fromisoformat(utc).replace(tzinfo=UTC).astimezone(zone_rules(zone)).utcoffset()
    assert offset is not None
    return offset.total_seconds() / 3600


@pytest.mark.parametrize("name", sorted(FIXED_OFFSETS))
def test_systemv_fixed_offsets(name: str) -> None:
    hours = FIXED_OFFSETS[name]
    for utc in ("1974-03-01T12:00:00", "2026-01-15T12:00:00", "2026-07-15T12:00:00"):
        assert _offset_hours(f"SystemV/{name}", utc) == -hours


# (year, DST start, DST end) as measured through the reference (calendar.md §3.6)
MEASURED = [(2026, "2026-04-26", "2026-10-25"), (1987, "1987-04-26", "1987-10-25"),
            (1974, "1974-01-06", "1974-10-27"), (1975, "1975-02-23", "1975-10-26")]  # fmt: skip


@pytest.mark.parametrize("name", sorted(DAYLIGHT))
@pytest.mark.parametrize(("year", "start", "end"), MEASURED)
def test_systemv_daylight_rule(name: str, year: int, start: str, end: str) -> None:
    _, hours, _ = DAYLIGHT[name]
    zone = f"SystemV/{name}"
    assert [d.isoformat() for d in dst_period(year)] == [start, end]
    # clocks change at 02:00 local: standard 02:00 is (2 + hours) UTC, daylight 02:00 is (1 + hours) UTC
    assert _offset_hours(zone, f"{start}T{2 + hours - 1:02d}:59:00") == -hours
    assert _offset_hours(zone, f"{start}T{2 + hours:02d}:00:00") == -hours + 1
    assert _offset_hours(zone, f"{end}T{1 + hours - 1:02d}:59:00") == -hours + 1
    assert _offset_hours(zone, f"{end}T{1 + hours:02d}:00:00") == -hours
    assert _offset_hours(zone, f"{year}-12-01T12:00:00") == -hours


def test_systemv_daylight_never_followed_the_1987_and_2007_us_changes() -> None:
    assert _offset_hours("SystemV/EST5EDT", "2026-03-15T12:00:00") == -5  # New York is on daylight time
    assert _offset_hours("America/New_York", "2026-03-15T12:00:00") == -4


def test_cron_in_a_systemv_zone_skips_its_gap() -> None:
    after = parse_instant("2026-04-24T00:00:00.000Z")
    assert after is not None
    found = cron_occurrences("30 2 * * *", "SystemV/EST5EDT", after, 3)
    days = [datetime.fromtimestamp(t / 1000, UTC).astimezone(zone_rules("SystemV/EST5EDT")).date() for t in found]
    assert [d.day for d in days] == [24, 25, 27]  # 26 April has no 02:30
