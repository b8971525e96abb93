"""create_record: selector and prompt precedence, then each kind's own rules (owner.md §3.2-3.3)."""

from __future__ import annotations

from typing import Any

import pytest

from invariant import (
    AfterRecord,
    CronRecord,
    EveryRecord,
    ScheduleInputError,
    create_record,
    parse_instant,
    select_kind,
)

NOW = parse_instant("2026-08-05T12:00:00.000Z")


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"prompt": " ", "after_seconds": 1, "every_seconds": 300}, "invalid_selector"),  # selector before prompt
        ({"prompt": "x", "at": "2026-08-06T01:00:00Z", "time_zone": "UTC"}, "invalid_selector"),
        ({"prompt": "x", "cron": "0 9 * * *"}, "invalid_selector"),
        ({"prompt": "x", "time_zone": "UTC"}, "invalid_selector"),
        ({"prompt": "x"}, "invalid_selector"),
        ({"prompt": "x", "after_seconds": 1, "extra": True}, "invalid_selector"),
        ({"prompt": " \u3000 ", "after_seconds": 1}, "invalid_prompt"),
        ({"prompt": 7, "after_seconds": 1}, "invalid_prompt"),
        ({"prompt": "x", "after_seconds": 0}, "invalid_rule"),
        ({"prompt": "x", "every_seconds": 299}, "frequency_too_high"),
        ({"prompt": "x", "every_seconds": 300.5}, "invalid_rule"),
        ({"prompt": "x", "cron": "*/4 * * * *", "time_zone": "CST"}, "frequency_too_high"),
        ({"prompt": "x", "cron": "* * 31 2 *", "time_zone": "CST"}, "invalid_time_zone"),
        ({"prompt": "x", "cron": "* * 31 2 *", "time_zone": "UTC"}, "no_future_occurrence"),
        ({"prompt": "x", "at": {"date": "2026-08-06", "time": "09:00:00"}}, "timezone_confirmation_required"),
        ({"prompt": "x", "at": "2026-08-05T12:00:00Z"}, "not_future"),
    ],
)
def test_first_failure_wins(args: dict[str, Any], code: str) -> None:
    with pytest.raises(ScheduleInputError) as info:
        kind = select_kind(args)
        create_record(kind, args, NOW, "schedule-1")
    assert info.value.code == code


def test_records_are_canonical_and_trimmed() -> None:
    after = create_record("after", {"prompt": "  check logs\n", "after_seconds": 30.0}, NOW, "schedule-1")
    assert after == AfterRecord("schedule-1", "check logs", 30, "2026-08-05T12:00:30.000Z")
    assert type(after.after_seconds) is int
    every = create_record("every", {"prompt": "m", "every_seconds": 300}, NOW, "schedule-2")
    assert every == EveryRecord("schedule-2", "m", 300, "2026-08-05T12:05:00.000Z")
    args = {"prompt": "standup", "cron": "00 09 * * 1,2,3,4,5", "time_zone": "US/Eastern"}
    cron = create_record("cron", args, NOW, "schedule-3")
    assert cron == CronRecord(
        "schedule-3", "standup", "0 9 * * 1,2,3,4,5", "America/New_York", "2026-08-05T13:00:00.000Z"
    )


def test_local_at_uses_the_implicit_zone_and_keeps_only_utc() -> None:
    args = {"prompt": "x", "at": {"date": "2026-08-06", "time": "09:00:00"}}
    record = create_record("at", args, NOW, "schedule-1", implicit_time_zone="Asia/Shanghai")
    assert record.to_json() == {
        "id": "schedule-1",
        "kind": "at",
        "prompt": "x",
        "scheduledAt": "2026-08-06T01:00:00.000Z",
    }


def test_kind_must_match_the_selector() -> None:
    with pytest.raises(ScheduleInputError) as info:
        create_record("every", {"prompt": "x", "after_seconds": 5}, NOW, "schedule-1")
    assert info.value.code == "invalid_selector"
