"""Logged `schedule_*` tool calls and results against the three tool surfaces (host.md §7,
owner.md §3-§4), the seed's RRULE subset, and the surfaces' JSON Schemas."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from itertools import islice
from pathlib import Path
from typing import Any

import pytest
from dateutil.rrule import rrulestr
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fixtures.host.transcripts import (
    CASES,
    DIR,
    HOST_CREATE,
    HOST_ID,
    RRULE,
    SEED_CREATE,
    host_view,
    seed_task,
    session_log,
)
from fixtures.host.transcripts import files as transcript_files
from invariant.hostcron import parse_host_cron
from invariant.hoststore import RECORD_SHAPES
from invariant.rrule import RruleError, parse_rrule
from invariant.shapes import object_problems
from invariant.tools.judge import MODEL_RULES, NO_RESULT, ToolUse, Unparsed, judge_use, judge_uses
from invariant.tools.names import HOST, LOCAL, SEED
from invariant.tools.surfaces import SURFACES
from replay.judge.transcript import parse_json_text
from replay.judge.verify import verify_bytes, verify_path

from .conftest import ROOT
from .mutation import mutate
from .schemahelp import valid

# --- the fixtures --------------------------------------------------------------------------------


def test_the_transcript_fixtures_are_what_the_generator_writes() -> None:
    written = {p.name: p.read_text(encoding="utf-8") for p in DIR.iterdir()}
    assert written == transcript_files()


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_transcript_fixture_has_its_findings_and_keeps_its_verdict(name: str) -> None:
    expected = json.loads((DIR / "expected.json").read_text())[f"{name}.session.v4.jsonl"]
    report = verify_path(str(DIR / f"{name}.session.v4.jsonl"))
    found = [f for f in report.findings if f.code.startswith("tool.")]
    assert [f.code for f in found] == expected
    assert all(f.severity == ("info" if f.code in MODEL_RULES else "warning") for f in found)
    assert report.verdict == "ok" and all(f.line is not None for f in found)


def test_the_bundled_session_fixtures_have_consistent_transcripts() -> None:
    """The session-local calls of the bundled logs are judged without a finding on a valid log."""
    for path in sorted((ROOT / "fixtures" / "sessions" / "valid").iterdir()):
        report = verify_path(str(path))
        assert not [f for f in report.findings if f.code.startswith("tool.")], path.name


# --- judging one use -------------------------------------------------------------------------------


def rules(*uses: ToolUse) -> list[str]:
    return [f.code for f in judge_uses(uses)]


def test_the_shipped_checks_run_in_the_shipped_order() -> None:
    create = SURFACES[HOST]["schedule_create"]
    update = SURFACES[HOST]["schedule_update"]
    first = {
        "an undeclared key before a blank prompt": (create, {**HOST_CREATE, "prompt": " ", "x": 1}, "invalid_selector"),
        "two timings": (create, {**HOST_CREATE, "after_seconds": 5}, "invalid_selector"),
        "a blank prompt before a long title": (create, {**HOST_CREATE, "prompt": "\u3000", "title": "t" * 121},
                                               "invalid_prompt"),
        "after_seconds 0": (create, {"prompt": "p", "title": "t", "after_seconds": 0}, "invalid_rule"),
        "after_seconds 1.5": (create, {"prompt": "p", "title": "t", "after_seconds": 1.5}, "invalid_rule"),
        "every 59 s": (create, {"prompt": "p", "title": "t", "every_seconds": 59}, "frequency_too_high"),
        "every 60.0 s is 60": (create, {"prompt": "p", "title": "t", "every_seconds": 60.0}, None),
        "a padded id before no change": (update, {"id": " x"}, "invalid_rule"),
        "no change": (update, {"id": "x"}, "invalid_selector"),
        "a title of 120 UTF-16 units after trim": (update, {"id": "x", "title": " " + "\U0001f600" * 60}, None),
        "a title of 121": (update, {"id": "x", "title": "\U0001f600" * 60 + "a"}, "invalid_prompt"),
    }  # fmt: skip
    for why, (tool, args, code) in first.items():
        refused = tool.refusal(args)
        assert (refused and refused[0]) == code, why


def test_a_host_failure_and_an_interrupted_call_judge_the_call_only() -> None:
    bad = {**SEED_CREATE, "title": ""}
    assert rules(ToolUse("schedule_create", bad, 1, "ignored", True, 2)) == ["tool.call.refused"]
    assert rules(ToolUse("schedule_create", bad, 1)) == ["tool.call.refused"]
    assert rules(ToolUse("schedule_create", SEED_CREATE, 1)) == []


def test_a_session_local_list_is_not_judged_as_a_seed_page() -> None:
    view = {"id": "schedule-1", "kind": "at", "prompt": "p", "scheduledAt": "2026-08-05T12:00:00.000Z"}
    view |= {"state": "scheduled", "deliveryMode": "session-local"}
    assert rules(ToolUse("schedule_list", {}, 1, [view], False, 2)) == []
    assert rules(ToolUse("schedule_list", {}, 1, [{**view, "deliveryMode": "host"}], False, 2)) == ["tool.result.shape"]


def test_the_surface_is_the_one_the_session_points_to() -> None:
    """A list with a page limit of 600 is a seed call once the session used schedule_view."""
    page = {"limit": 600}
    assert rules(ToolUse("schedule_list", page, 1)) == []  # the session-local list ignores arguments
    assert rules(ToolUse("schedule_list", page, 1), ToolUse("schedule_view", {"id": "t"}, 2)) == ["tool.call.params"]


def test_a_page_keeps_its_counts_order_and_filter() -> None:
    listing = SURFACES[SEED]["schedule_list"]
    active, later, paused = (
        seed_task(),
        seed_task(id="b", scheduledAt="2026-09-01T00:00:00.000Z"),
        seed_task(id="c", status="paused"),
    )

    def told(args: dict[str, Any], items: list[dict[str, Any]], **page: Any) -> str | None:
        value = {"items": items, "shown": len(items), "total": 9, "limit": 100, "offset": 0} | page
        assert valid("seed-002/schedule_list.result.schema.json", value)
        return listing.disagreement(args, value)

    assert told({}, [active, later, paused]) is None
    assert told({"limit": 2, "offset": 7}, [active, later], limit=2, offset=7) is None
    assert "limit" in (told({"limit": 2}, [active]) or "")
    assert "exceeds total" in (told({"offset": 8}, [active, later], offset=8) or "")
    assert "before an active" in (told({}, [paused, active]) or "")
    assert "order of next occurrence" in (told({}, [later, active]) or "")
    assert "active: false" in (told({"active": False}, [paused, active]) or "")


def test_an_edit_result_fits_its_action() -> None:
    edit = SURFACES[SEED]["schedule_edit"]
    assert edit.disagreement({"id": "task-1", "action": "update", "title": "x"}, {"id": "task-1", "deleted": True})
    assert edit.disagreement({"id": "task-1", "action": "update", "active": False}, seed_task())
    assert edit.disagreement({"id": "task-1", "action": "update", "active": True}, seed_task(status="ended"))
    assert not edit.disagreement({"id": "task-1", "action": "update", "active": True}, seed_task())


def test_arguments_keep_a_lone_surrogate_as_javascript_does() -> None:
    text = json.dumps({**SEED_CREATE, "title": "\ud83d" * 121})  # 121 UTF-16 code units
    assert parse_json_text(text)["title"] == "\ud83d" * 121  # type: ignore[index]
    assert rules(ToolUse("schedule_create", parse_json_text(text), 1)) == ["tool.call.refused"]
    assert isinstance(parse_json_text('{"a": NaN}'), Unparsed) and isinstance(parse_json_text("{"), Unparsed)


def test_a_fork_child_judges_its_own_calls_not_its_parents() -> None:
    log = session_log("s", [("schedule_edit", {"id": "t", "action": "update"}, None)] * 2)
    lines = log.splitlines(keepends=True)
    header = json.loads(lines[0]) | {"isSeeded": True}
    marker = {"type": "session/end-seed", "seq": 0, "time": 0, "data": {"inherited": True}}
    first_turn = lines[1:6]  # turn/start, step/start, tool/call, step/end, turn/end
    rest = [json.loads(line) for line in [*first_turn, json.dumps(marker) + "\n", *lines[6:]]]
    for seq, event in enumerate(rest):
        event["seq"] = seq
    data = "".join([json.dumps(header) + "\n", *(json.dumps(e) + "\n" for e in rest)]).encode()
    report = verify_bytes("child.session.v4.jsonl", data)
    assert [(f.code, f.line) for f in report.findings if f.code.startswith("tool.")] == [("tool.call.refused", 10)]


def test_a_session_local_value_is_held_to_the_changes_its_call_appended() -> None:
    delete = {"operation": "delete", "id": "schedule-1"}
    deleted, missing = {"id": "schedule-1", "deleted": True}, {"id": "schedule-1", "deleted": False,
                                                               "code": "schedule_not_found"}  # fmt: skip
    view = {"id": "schedule-1", "kind": "at", "prompt": "p", "scheduledAt": "2026-08-05T12:00:00.000Z"}
    create = {"operation": "create", "schedule": view}
    view = view | {"state": "scheduled", "deliveryMode": "session-local"}

    def told(name: str, args: dict[str, Any], value: object, *appended: object) -> list[str]:
        """The rules broken in a log with schedule/change events (session-local evidence)."""
        return [f.code for f in judge_uses([ToolUse(name, args, 1, value, False, 2, appended)], evidence=[LOCAL])]

    assert told("schedule_delete", {"id": "schedule-1"}, deleted, delete) == []
    assert told("schedule_delete", {"id": "schedule-1"}, deleted) == ["tool.result.log"]
    assert told("schedule_delete", {"id": "schedule-1"}, missing) == []
    assert told("schedule_delete", {"id": "schedule-1"}, missing, delete) == ["tool.result.log"]
    at = {"prompt": " p", "at": "2026-08-05T12:00:00Z"}
    assert told("schedule_create", at, view, create) == []
    assert told("schedule_create", at, view) == ["tool.result.log"]
    assert told("schedule_create", at, view, create, create) == ["tool.result.log"]
    assert told("schedule_create", {**at, "prompt": "q"}, view, create) == ["tool.result.call"]
    error = {"code": "persistence_uncertain", "message": "m", "operation": "create", "id": "schedule-1"}
    assert told("schedule_create", at, error, create) == []  # the barrier failed after the append


def test_a_legacy_flat_result_is_read() -> None:
    log = session_log("s", [("schedule_view", {"id": "t"}, None)])
    result = {"type": "tool/result", "seq": 5, "time": 1, "data": {"callId": "call-1", "isError": False,
              "content": [{"type": "text", "text": '{"code":"storage_failed","message":"EIO"}'}]}}  # fmt: skip
    lines = log.splitlines(keepends=True)
    events = [json.loads(line) for line in lines[1:]]
    events.insert(3, result)
    for seq, event in enumerate(events):
        event["seq"] = seq
    data = (lines[0] + "".join(json.dumps(e) + "\n" for e in events)).encode()
    report = verify_bytes("legacy.session.v4.jsonl", data)
    assert [f.code for f in report.findings if f.code.startswith("tool.")] == ["tool.result.code"]


# --- consistent calls are quiet (property) ---------------------------------------------------------

titles = st.text(st.characters(blacklist_categories=["Cs", "Zs", "Cc"]), min_size=1, max_size=40)
ids = st.from_regex(r"schedule-[0-9a-f]{8}", fullmatch=True)


@st.composite
def host_uses(draw: Any) -> ToolUse:
    """A consistent shipped call and value: a create of each timing, an update, a delete."""
    title, prompt, task = draw(titles), draw(titles), draw(ids)
    timing = draw(st.sampled_from(["after", "at", "every", "daily", "weekly", "cron"]))
    args: dict[str, Any] = {"title": title, "prompt": prompt}
    extra: dict[str, Any] = {
        "after": {"afterSeconds": draw(st.integers(1, 10**9))},
        "at": {},
        "every": {"everySeconds": draw(st.integers(60, 10**9))},
        "daily": {"time": "09:00:00.000", "timeZone": "UTC"},
        "weekly": {"time": "09:00:00.000", "timeZone": "UTC", "weekdays": sorted(draw(st.sets(st.integers(1, 7),
                                                                                               min_size=1)))},
        "cron": {"expression": "*/15 9-17 * * 1-5", "timeZone": "UTC"},
    }[timing]  # fmt: skip
    args |= {
        "after": {"after_seconds": extra.get("afterSeconds")},
        "at": {"at": "2027-01-01T09:00:00+01:00"},
        "every": {"every_seconds": extra.get("everySeconds")},
        "daily": {"daily": {"time": "09:00:00", "time_zone": "UTC"}},
        "weekly": {"weekly": {"time": "09:00:00", "time_zone": "UTC", "weekdays": extra.get("weekdays")}},
        "cron": {"cron": {"expression": "*/15 9-17 * * 1-5", "time_zone": "UTC"}},
    }[timing]
    view = host_view(id=task, title=title, prompt=prompt, kind=timing) | extra
    view = {k: v for k, v in view.items() if k in {"id", "title", "prompt", "scheduledAt", "state", "deliveryMode",
                                                   "kind", *extra}}  # fmt: skip
    tool = draw(st.sampled_from(["schedule_create", "schedule_update", "schedule_delete"]))
    if tool == "schedule_update":
        args = {"id": task, **{k: v for k, v in args.items() if k not in ("title", "after_seconds")}}  # no delay
    elif tool == "schedule_delete":
        args, view = {"id": task}, {"id": task, "deleted": True}
    return ToolUse(tool, args, 1, view, False, 2)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(host_uses())
def test_consistent_shipped_calls_have_no_finding(use: ToolUse) -> None:
    assert judge_use(SURFACES[HOST][use.name], use) == []


# --- the RRULE subset ---------------------------------------------------------------------------------

MAPPED = {
    "DTSTART:20260805T120000Z\nRRULE:FREQ=DAILY;COUNT=1": ("at", {}),
    "DTSTART:20260805T120000Z\nRRULE:FREQ=MINUTELY;INTERVAL=15": ("every", {"everySeconds": 900}),
    "DTSTART:20260805T120000Z\r\nRRULE:FREQ=HOURLY;INTERVAL=2\r\n": ("every", {"everySeconds": 7200}),
    "DTSTART;TZID=Asia/Shanghai:20260805T071530\nRRULE:FREQ=DAILY": ("daily", {"time": "07:15:30.000",
                                                                              "timeZone": "Asia/Shanghai"}),
    RRULE: ("weekly", {"time": "09:00:00.000", "timeZone": "Europe/Berlin", "weekdays": [1, 3]}),
    "RRULE:FREQ=WEEKLY\nDTSTART:20260805T120000Z": ("weekly", {"time": "12:00:00.000", "timeZone": "UTC",
                                                               "weekdays": [3]}),
    "DTSTART:20260805T123000Z\nRRULE:FREQ=MONTHLY": ("cron", {"expression": "30 12 5 * *", "timeZone": "UTC"}),
    "DTSTART:20260805T123000Z\nRRULE:FREQ=YEARLY": ("cron", {"expression": "30 12 5 8 *", "timeZone": "UTC"}),
    "DTSTART:20260805T123000Z\nRRULE:FREQ=WEEKLY;BYDAY=SU,MO;BYHOUR=17,9": ("cron", {"expression": "30 9-17/8 * * 0-1",
                                                                                    "timeZone": "UTC"}),
    "DTSTART:20260805T123000Z\nRRULE:FREQ=HOURLY;BYMINUTE=0,30": ("cron", {"expression": "0-30/30 * * * *",
                                                                           "timeZone": "UTC"}),
}  # fmt: skip
REFUSED = {
    "DTSTART:20260805T120000\nRRULE:FREQ=DAILY": "floating",
    "DTSTART;TZID=Mars/Olympus:20260805T120000\nRRULE:FREQ=DAILY": "TZID",
    "DTSTART:20260230T120000Z\nRRULE:FREQ=DAILY": "no calendar date",
    "DTSTART:00000101T000000Z\nRRULE:FREQ=DAILY": "year 0000",
    "DTSTART:20260805T120000Z\nRRULE:FREQ=SECONDLY": "FREQ",
    "DTSTART:20260805T120000Z\nRRULE:FREQ=DAILY;COUNT=2": "COUNT=2",
    "DTSTART:20260805T120000Z\nRRULE:FREQ=DAILY;INTERVAL=2": "INTERVAL=2",
    "DTSTART:20260805T120000Z\nRRULE:FREQ=MONTHLY;BYDAY=1MO": "ordinals",
    "DTSTART:20260805T120000Z\nRRULE:FREQ=MONTHLY;BYMONTHDAY=1;BYDAY=MO": "intersects",
    "DTSTART:20260805T120000Z\nRRULE:FREQ=MONTHLY;BYSETPOS=1": "outside the subset",
    "DTSTART:20260805T120005Z\nRRULE:FREQ=MONTHLY": "seconds",
    "DTSTART:20260805T120000Z\nRRULE:FREQ=DAILY;FREQ=DAILY": "twice",
    "DTSTART:20260805T120000Z\nDTSTART:20260805T120000Z": "exactly one",
    "DTSTART:20260805T120000Z": "exactly one",
    "DTSTART:20260805T120000Z\nRRULE:FREQ=DAILY;UNTIL=20270101": "UNTIL",
}


@pytest.mark.parametrize("text", sorted(MAPPED))
def test_a_subset_rule_maps_onto_a_host_record(text: str) -> None:
    record = parse_rrule(text)
    assert (record.kind, dict(record.timing)) == MAPPED[text]


@pytest.mark.parametrize("text", sorted(REFUSED))
def test_a_rule_outside_the_subset_is_refused_with_its_reason(text: str) -> None:
    with pytest.raises(RruleError, match=REFUSED[text]):
        parse_rrule(text)


def test_until_becomes_the_window_end() -> None:
    assert parse_rrule("DTSTART:20260805T120000Z\nRRULE:FREQ=DAILY;UNTIL=20270101T000000Z").until == (
        "2027-01-01T00:00:00.000Z"
    )


def fires(record: Any, start: datetime, count: int) -> list[datetime]:
    """The first `count` instants (UTC) at which the Host record a rule maps onto fires, from
    DTSTART on (within four years)."""
    timing = dict(record.timing)
    if record.kind == "at":
        return [start]
    if record.kind == "every":
        return [start + n * timedelta(seconds=timing["everySeconds"]) for n in range(count)]
    out: list[datetime] = []
    day = start.replace(hour=0, minute=0, second=0)
    if record.kind in ("daily", "weekly"):
        hour, minute, second = (int(timing["time"][i : i + 2]) for i in (0, 3, 6))
        times, weekdays = [(hour, minute, second)], set(timing.get("weekdays", range(1, 8)))
        day_matches = lambda d: d.isoweekday() in weekdays  # noqa: E731
    else:
        cron = parse_host_cron(timing["expression"])
        minutes, hours, month_days, months, cron_days = cron.values
        times = [(h, m, 0) for h in sorted(hours) for m in sorted(minutes)]

        def day_matches(d: datetime) -> bool:
            both = [d.day in month_days, d.isoweekday() % 7 in cron_days]
            return d.month in months and (all(both) if cron.star[2] or cron.star[4] else any(both))

    while len(out) < count and day < start + timedelta(days=4 * 366):
        if day_matches(day):
            out += [t for h, m, sec in times if (t := day.replace(hour=h, minute=m, second=sec)) >= start]
        day += timedelta(days=1)
    return out[:count]


@st.composite
def subset_rules(draw: Any) -> str:
    start = draw(st.datetimes(datetime(2026, 1, 1), datetime(2030, 12, 31))).replace(microsecond=0)
    freq = draw(st.sampled_from(["MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY"]))
    parts = [f"FREQ={freq}"]
    if freq in ("MINUTELY", "HOURLY") and draw(st.booleans()):
        parts.append(f"INTERVAL={draw(st.integers(1, 90))}")
    elif freq != "MINUTELY":
        start = start.replace(second=0)
        lists = {"BYMINUTE": (0, 59), "BYHOUR": (0, 23), "BYMONTH": (1, 12)}
        lists |= draw(st.sampled_from([{}, {"BYMONTHDAY": (1, 31)}, {"BYDAY": (0, 6)}]))
        for name, (lo, hi) in lists.items():
            if draw(st.integers(0, 2)) == 0:
                values = sorted(draw(st.sets(st.integers(lo, hi), min_size=1, max_size=4)))
                days = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
                parts.append(f"{name}=" + ",".join(days[v] if name == "BYDAY" else str(v) for v in values))
    if draw(st.integers(0, 5)) == 0:
        parts = [f"FREQ={freq}", "COUNT=1"]
    return f"DTSTART:{start:%Y%m%dT%H%M%S}Z\nRRULE:" + ";".join(parts)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(subset_rules())
def test_a_subset_rule_fires_where_rfc_5545_says(text: str) -> None:
    """The Host record a rule maps onto fires at the occurrences python-dateutil expands
    (UTC; the first 200)."""
    record = parse_rrule(text)
    s = record.start
    start = datetime(s.year, s.month, s.day, s.hour, s.minute, s.second, tzinfo=UTC)
    expected = list(islice(rrulestr(text), 200))
    expected = [t for t in expected if t < start + timedelta(days=4 * 366)]
    assert fires(record, start, len(expected)) == expected
    stored = {"id": "schedule-1", "kind": record.kind, "title": "t", "prompt": "p"}
    stored |= {"scheduledAt": "2026-08-05T12:00:00.000Z", **dict(record.timing)}
    assert object_problems(stored, RECORD_SHAPES[record.kind]) == []  # a record the Host opens (canonical cron)


# --- the surfaces' schemas accept exactly what the checks' shapes accept -----------------------------

EXAMPLES: dict[tuple[str, str], list[object]] = {
    (HOST, "schedule_create"): [HOST_CREATE, {"prompt": "p", "title": "t", "at": {"date": "d", "time": "t",
                                                                                  "time_zone": "UTC"}}],
    (HOST, "schedule_list"): [{}],
    (HOST, "schedule_delete"): [{"id": HOST_ID}],
    (HOST, "schedule_update"): [{"id": HOST_ID, "weekly": {"time": "t", "time_zone": "z", "weekdays": [1, 2]}}],
    (SEED, "schedule_create"): [SEED_CREATE],
    (SEED, "schedule_list"): [{"active": True, "limit": 500, "offset": 0}],
    (SEED, "schedule_view"): [{"id": "task-1"}],
    (SEED, "schedule_edit"): [{"id": "task-1", "action": "update", "target": "new", "expectedUpdatedAt": "x"}],
}  # fmt: skip
EVERY_VIEW = {k: v for k, v in host_view(kind="every", everySeconds=60).items() if k not in ("time", "timeZone")}
RESULTS: dict[tuple[str, str], list[object]] = {
    (HOST, "schedule_create"): [host_view(), {"code": "not_future", "message": "m"}],
    (HOST, "schedule_list"): [[host_view(), EVERY_VIEW]],
    (HOST, "schedule_delete"): [{"id": "x", "deleted": False, "code": "schedule_not_found"}],
    (HOST, "schedule_update"): [{"id": "x", "updated": False, "code": "schedule_conflict"}],
    (SEED, "schedule_create"): [seed_task(lastDelivery={"scheduledAt": "a", "deliveredAt": "b",
                                                        "targetSessionId": "s"})],
    (SEED, "schedule_list"): [{"items": [seed_task()], "shown": 1, "total": 1, "limit": 1, "offset": 0}],
    (SEED, "schedule_view"): [{"id": "t", "code": "schedule_not_found"}, seed_task(target={"kind": "new"})],
    (SEED, "schedule_edit"): [{"id": "t", "deleted": True}, {"code": "subagent_session", "message": "m"}],
}  # fmt: skip
REPLACEMENTS = st.sampled_from(
    [None, 0, -1, 1, 1.5, 60, 500, 501, 2**53, "", " x", "x", [], {}, True, False, [1, 2], ["x"], "UTC", "new",
     "this_session", "update", "delete", "active", "paused", "host", "session-local", "daily", "schedule_not_found",
     "internal_error", "bogus", {"time": "t", "time_zone": "z"}]
)  # fmt: skip


@st.composite
def mutated(draw: Any, pool: dict[tuple[str, str], list[object]]) -> tuple[tuple[str, str], object]:
    key = draw(st.sampled_from(sorted(pool)))
    value = copy.deepcopy(draw(st.sampled_from(pool[key])))
    keys = ["extra", "code", "id", "kind", "title", "deleted", "message"]
    return key, mutate(draw, value, REPLACEMENTS, keys, whole=True)


def folder(surface: str) -> str:
    return "host/tools" if surface == HOST else "seed-002"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(EXAMPLES))
def test_the_argument_schemas_accept_exactly_what_the_checks_accept(case: tuple[tuple[str, str], object]) -> None:
    (surface, name), value = case
    tool = SURFACES[surface][name]
    assert valid(f"{folder(surface)}/{name}.args.schema.json", value) == (not object_problems(value, tool.params))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(RESULTS))
def test_the_result_schemas_accept_exactly_what_the_checks_accept(case: tuple[tuple[str, str], object]) -> None:
    from invariant.tools.judge import closest_problem

    (surface, name), value = case
    tool = SURFACES[surface][name]
    assert valid(f"{folder(surface)}/{name}.result.schema.json", value) == (not closest_problem(tool.result, value))


def test_the_examples_are_valid() -> None:
    for pool, part in ((EXAMPLES, "args"), (RESULTS, "result")):
        for (surface, name), values in pool.items():
            for value in values:
                if value is NO_RESULT:
                    continue
                assert valid(f"{folder(surface)}/{name}.{part}.schema.json", value), (surface, name, value)


def test_every_tool_of_both_host_surfaces_has_its_schemas() -> None:
    expected = {
        f"{folder(s)}/{n}.{p}.schema.json" for s in (HOST, SEED) for n in SURFACES[s] for p in ("args", "result")
    }
    on_disk = {str(p.relative_to(ROOT / "schemas")) for p in (ROOT / "schemas").rglob("*.schema.json")}
    assert expected <= on_disk


def test_judge_uses_takes_parsed_arguments_from_a_log(tmp_path: Path) -> None:
    path = tmp_path / "s.session.v4.jsonl"
    path.write_text(session_log("s", [("schedule_view", {"id": "task-1"}, seed_task(id="task-2"))]))
    assert [f.code for f in verify_path(str(path)).findings] == ["tool.result.call"]


def test_the_tool_surface_can_be_named(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from replay.cli import main
    from replay.reading import Reading

    seed = str(DIR / "consistent-seed.session.v4.jsonl")
    for surface, jobs in ((SEED, "1"), ("auto", "2")):
        out = CliRunner().invoke(main, ["verify", "--tool-surface", surface, "--jobs", jobs, "--format", "json", seed])
        assert out.exit_code == 0 and "tool." not in out.output
    out = CliRunner().invoke(main, ["verify", "--tool-surface", HOST, "--format", "json", seed])
    found = [f["code"] for f in json.loads(out.output)[0]["formatFindings"]]
    assert found.count("tool.surface.unknown") == 4  # view and edit are no Host 1.0 tools
    with pytest.raises(ValueError, match="unknown tool surface"):
        Reading(tool_surface="seed-003")
