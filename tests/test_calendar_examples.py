"""Every line of calendar-examples.jsonl, loaded as data (reference values by default)."""

from __future__ import annotations

from typing import Any

import pytest

from invariant import format_instant, parse_instant
from invariant.changes import CronRecord
from invariant.create import after_target, at_target, cron_target, every_target
from invariant.cron import canonical_cron, parse_cron
from invariant.errors import ScheduleInputError, ScheduleLogError
from invariant.live import resolve_cron
from invariant.occurrences import next_occurrence
from invariant.zones import canonical_zone, load_zone

from .calendar_data import clock, examples, ident
from .conftest import CONFORMANCE, load_jsonl


def outcome(fn: Any) -> tuple[object, str | None]:
    try:
        return fn(), None
    except ScheduleInputError as err:
        return None, err.code


def test_every_kind_is_covered() -> None:
    kinds = {e["kind"] for e in load_jsonl(CONFORMANCE / "calendar-examples.jsonl")}
    assert kinds == {"cron_canonical", "cron_next", "cron_create", "cron_resolve", "zone", "at", "after", "every"}
    assert len(load_jsonl(CONFORMANCE / "calendar-examples.jsonl")) == 1073


@pytest.mark.parametrize("e", examples("cron_canonical"), ids=ident)
def test_cron_canonical(e: dict[str, Any]) -> None:
    assert outcome(lambda: canonical_cron(e["input"])) == (e.get("expect"), e.get("expect_error"))


@pytest.mark.parametrize("e", examples("zone"), ids=ident)
def test_zone(e: dict[str, Any]) -> None:
    assert outcome(lambda: canonical_zone(e["input"])) == (e.get("expect"), e.get("expect_error"))


def _chain(e: dict[str, Any], ideal: bool) -> tuple[list[str | None], list[str | None]]:
    rule, zone = parse_cron(e["cron"]), load_zone(e["time_zone"])
    assert zone is not None
    first = e["ideal"] if ideal else e["expect"]
    then = e.get("ideal_then", e.get("then", [])) if ideal else e.get("then", [])
    want = [first, *(then or [])]
    got: list[str | None] = []
    cursor = parse_instant(e["after"])
    assert cursor is not None
    for _ in want:
        found = next_occurrence(rule, zone, cursor, ideal=ideal)
        got.append(None if found is None else format_instant(found))
        if found is None:
            break
        cursor = found
    return got, want


@pytest.mark.parametrize("e", examples("cron_next"), ids=ident)
def test_cron_next(e: dict[str, Any]) -> None:
    got, want = _chain(e, ideal=False)
    assert got == want


@pytest.mark.parametrize("e", [e for e in examples("cron_next") if e.get("reference_quirk")], ids=ident)
def test_cron_next_ideal_mode(e: dict[str, Any]) -> None:
    got, want = _chain(e, ideal=True)
    assert got == want and got != _chain(e, ideal=False)[0]


def _cron_record(e: dict[str, Any]) -> CronRecord:
    return CronRecord("schedule-1", "p", e["cron"], e["time_zone"], e["scheduledAt"])


@pytest.mark.parametrize("e", examples("cron_resolve"), ids=ident)
def test_cron_resolve(e: dict[str, Any]) -> None:
    accepted = parse_instant(e["acceptedAt"])
    if e.get("expect_log_error"):
        with pytest.raises(ScheduleLogError):
            resolve_cron(_cron_record(e), accepted)
        return
    for ideal, key in ((False, "expect"), (True, "ideal" if e.get("reference_quirk") else "expect")):
        occurrence, following = resolve_cron(_cron_record(e), accepted, ideal=ideal)
        got = {"occurrenceAt": occurrence} | ({"nextScheduledAt": following} if following else {})
        assert got == e[key]


@pytest.mark.parametrize("e", examples("cron_create"), ids=ident)
def test_cron_create(e: dict[str, Any]) -> None:
    def create() -> dict[str, str]:
        rule, zone, first = cron_target(e["cron"], e["time_zone"], clock(e["now"]))
        return {"cron": rule, "timeZone": zone, "scheduledAt": format_instant(first)}

    assert outcome(create) == (e.get("expect"), e.get("expect_error"))


@pytest.mark.parametrize("e", examples("at"), ids=ident)
def test_at(e: dict[str, Any]) -> None:
    got = outcome(lambda: format_instant(at_target(e["input"], clock(e["now"]), e.get("implicit_time_zone"))))
    assert got == (e.get("expect"), e.get("expect_error"))


@pytest.mark.parametrize("e", examples("after"), ids=ident)
def test_after(e: dict[str, Any]) -> None:
    got = outcome(lambda: format_instant(after_target(e["after_seconds"], clock(e["now"]))))
    assert got == (e.get("expect"), e.get("expect_error"))


@pytest.mark.parametrize("e", examples("every"), ids=ident)
def test_every(e: dict[str, Any]) -> None:
    got = outcome(lambda: format_instant(every_target(e["every_seconds"], clock(e["now"]))))
    assert got == (e.get("expect"), e.get("expect_error"))
