"""The Host task store (host.md §1-§4): a valid store opens; each single corruption is caught
with its own rule id and pointer; random valid stores pass."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures.host.stores import CORRUPTIONS, RECEIPT, RECORDS, VARIANTS, WINDOW, T, corrupted, store, task, varied
from fixtures.host.stores import files as store_files
from invariant.hostcron import HostCronError, canonical, parse_host_cron
from invariant.hoststore import ignored_parts, store_findings
from invariant.instant import MAX_MS, MIN_MS, format_instant, parse_instant
from invariant.logshapes import appended
from replay.sources.discover import STORE_NAME

from .conftest import ROOT
from .mutation import mutate

SESSIONS = ROOT / "fixtures" / "sessions"


@pytest.mark.parametrize("kind", sorted(RECORDS))
def test_a_valid_store_of_each_kind_opens(kind: str) -> None:
    assert store_findings(store(task(kind))) == []
    minimal = {"sessionId": "s", "record": task(kind)["record"]}  # no status, no deliveries
    assert store_findings(store(minimal)) == []


@pytest.mark.parametrize("name", sorted(CORRUPTIONS))
def test_each_single_corruption_is_caught_with_its_rule_and_pointer(name: str) -> None:
    corrupt, rule, pointer = CORRUPTIONS[name]
    value = store()
    corrupt(value)
    found = store_findings(value)
    assert [(f.code, f.pointer) for f in found] == [(rule, pointer)], found
    tasks = [f"task {pointer.split('/')[3]!r}: " if pointer.startswith("/tables/tasks/") else "" for f in found]
    assert all(f.message.startswith(task) for f, task in zip(found, tasks, strict=True))
    assert all(f.severity == "error" for f in found)


KIND_CORRUPTIONS = {
    "after": ("afterSeconds", 0, "host.after.afterSeconds"),
    "every": ("everySeconds", 59, "host.every.everySeconds"),
    "daily": ("time", "09:00:00", "host.record.time"),
    "cron": ("expression", "0 9 * * MON", "host.cron.grammar"),
}


@pytest.mark.parametrize("kind", sorted(KIND_CORRUPTIONS))
def test_each_kind_rule(kind: str) -> None:
    key, value, rule = KIND_CORRUPTIONS[kind]
    bad = task(kind)
    bad["record"][key] = value
    assert [(f.code, f.pointer) for f in store_findings(store(bad))] == [(rule, f"{T}/record/{key}")]


@pytest.mark.parametrize(
    ("expression", "spelled"),
    [
        ("0 09 * * *", "0 9 * * *"),
        ("0 9 * * 7", "0 9 * * 0"),
        ("*/1 * * * *", "* * * * *"),
        ("5-5 * * * *", "5 * * * *"),
        ("30,15 * * * *", "15-30/15 * * * *"),
        ("0  9 * * *", "0 9 * * *"),
        (" 0 9 * * *", "0 9 * * *"),
        ("0 9 * * 1,2,3,4,5", "0 9 * * 1-5"),
    ],
)
def test_a_stored_cron_not_in_its_canonical_spelling_is_refused_and_the_spelling_named(
    expression: str, spelled: str
) -> None:
    bad = task("cron")
    bad["record"]["expression"] = expression
    (finding,) = store_findings(store(bad))
    assert finding.code == "host.cron.canonical" and f"the Host stores {spelled!r}" in finding.message
    assert f"stored {expression!r}" in finding.message


@pytest.mark.parametrize(
    "expression",
    ["0 9 * * MON", "@daily", "0 9 * * 1#2", "0 9 L * *", "0 0 9 * * *", "5-1 * * * *", "*/0 * * * *", "1,,2 * * * *"],
)
def test_the_host_grammar_refuses(expression: str) -> None:
    with pytest.raises(HostCronError):
        parse_host_cron(expression)


def test_the_host_grammar_reads_sunday_seven_as_zero_and_keeps_star_spelling() -> None:
    cron = parse_host_cron("*/20 0 * * 5-7")
    assert cron.values[4] == frozenset({5, 6, 0}) and cron.values[0] == frozenset({0, 20, 40})
    assert cron.star == (True, False, True, True, False)
    assert canonical(cron) == "*/20 0 * * 0,5-6"


def test_every_finding_is_kept_not_only_the_first() -> None:
    bad = store(task("weekly", "schedule-a"), task("after", "schedule-b"))
    bad["tables"]["tasks"]["schedule-a"]["record"]["title"] = ""
    bad["tables"]["tasks"]["schedule-b"]["record"]["afterSeconds"] = -1
    bad["tables"]["tasks"]["schedule-b"]["status"] = "paused"
    assert [(f.message.split("'")[1], f.code) for f in store_findings(bad)] == [
        ("schedule-a", "host.record.title"),
        ("schedule-b", "host.task.status"),
        ("schedule-b", "host.after.afterSeconds"),
    ]


def test_a_store_that_is_not_an_object_or_has_no_tasks() -> None:
    assert [f.code for f in store_findings([])] == ["host.store.json"]
    no_tables = {"unit": {"name": "schedule", "version": 1}, "global": None}
    assert [(f.code, f.pointer) for f in store_findings(no_tables)] == [("host.store.tables", "/tables")]


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_store_as_the_host_writes_it_opens(name: str) -> None:
    """host.md §1-§2: a window of dates, an untrimmed session id, envelope extras (read past)."""
    assert store_findings(varied(name)) == []


def test_what_the_host_reads_past_is_named_as_information() -> None:
    assert ignored_parts(store()) == []
    assert [f.pointer for f in ignored_parts(varied("envelope extras"))] == [
        "/extra", "/global", "/unit/writer", "/tables/other"
    ]  # fmt: skip
    assert [f.pointer for f in ignored_parts(varied("no tasks table"))] == ["/tables"]
    assert [f.pointer for f in ignored_parts({**store(), "tables": []})] == ["/tables"]
    assert store_findings({**store(), "tables": []}) == []  # an array passes the JSON backend's test


@pytest.mark.parametrize(
    ("unit", "rule", "pointer"),
    [
        ([], "host.store.unit", "/unit"),
        (None, "host.store.unit", "/unit"),
        ({"name": "Schedule", "version": 1}, "host.store.unit", "/unit/name"),
        ({"version": 1}, "host.store.unit", "/unit/name"),
        ({"name": "schedule"}, "host.store.unit", "/unit/version"),
        ({"name": "schedule", "version": True}, "host.store.unit", "/unit/version"),
        ({"name": "schedule", "version": 2}, "host.store.version", "/unit/version"),
        ({"name": "schedule", "version": 1.5}, "host.store.version", "/unit/version"),
    ],
)
def test_each_header_refusal(unit: object, rule: str, pointer: str) -> None:
    """host.md §1: a malformed medium (unit not an object, name not `schedule`, version not a
    number) or a version mismatch (a number other than 1)."""
    value = {**store(), "unit": unit}
    assert [(f.code, f.pointer) for f in store_findings(value)] == [(rule, pointer)]


@pytest.mark.parametrize("tasks", [None, [], "x", 1, True])
def test_a_tasks_table_that_is_no_plain_object_is_refused(tasks: object) -> None:
    value = {**store(), "tables": {"tasks": tasks}}
    assert [(f.code, f.pointer) for f in store_findings(value)] == [("host.store.tables", "/tables/tasks")]


@pytest.mark.parametrize(
    ("seconds", "ok"), [(60, True), (9_007_199_254_740, True), (9_007_199_254_741, False), (2**53 - 1, False)]
)
def test_every_seconds_in_milliseconds_is_a_safe_integer(seconds: int, ok: bool) -> None:
    value = task("every")
    value["record"]["everySeconds"] = seconds
    assert [f.code for f in store_findings(store(value))] == ([] if ok else ["host.every.everySeconds"])


@pytest.mark.parametrize(
    ("window", "rule"),
    [
        (WINDOW, None),
        ({"end": "2026-09-20", "timeZone": "US/Eastern"}, None),
        ({"start": "2024-02-29", "timeZone": "UTC"}, None),
        ({"start": "2026-09-20T00:00:00.000Z", "end": "2026-09-21", "timeZone": "UTC"}, "host.window.start"),
        ({"start": "2025-02-29", "timeZone": "UTC"}, "host.window.start"),
        ({"start": "0000-01-01", "timeZone": "UTC"}, "host.window.start"),
        ({"timeZone": "UTC"}, "host.window.bounds"),
        ({**WINDOW, "end": "2026-09-19"}, "host.window.order"),
        ({"start": "2026-09-20"}, "host.window.keys"),
        ({**WINDOW, "timeZone": "GMT"}, "host.record.timeZone"),
    ],
)  # fmt: skip
def test_a_window_holds_calendar_dates_in_order(window: dict[str, Any], rule: str | None) -> None:
    value = task("daily")
    value["window"] = window
    assert [f.code for f in store_findings(store(value))] == ([] if rule is None else [rule])


TITLES = st.text(st.characters(codec="utf-8", exclude_categories=("Zs", "Cc")), min_size=1, max_size=40)
INSTANTS = st.integers(MIN_MS, MAX_MS).map(format_instant)


@st.composite
def valid_tasks(draw: Any, task_id: str) -> dict[str, Any]:
    kind = draw(st.sampled_from(sorted(RECORDS)))
    value = task(kind, task_id)
    value["record"]["title"] = draw(TITLES)
    value["record"]["scheduledAt"] = draw(INSTANTS)
    if kind == "weekly":
        value["record"]["weekdays"] = sorted(draw(st.sets(st.integers(1, 7), min_size=1)))
    if kind == "every":
        value["record"]["everySeconds"] = draw(st.integers(60, (2**53 - 1) // 1000))
    receipts = draw(st.lists(INSTANTS, max_size=4))
    records = [{"scheduledAt": t, "deliveredAt": t, "messageId": f"m{n}"} for n, t in enumerate(receipts)]
    value["deliveryHistory"]["records"] = records
    if records:
        value["lastDelivery"] = dict(records[-1])
    else:
        del value["lastDelivery"]
    if draw(st.booleans()):
        del value["status"]
    return value


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text("abcdef-", min_size=1, max_size=8), unique=True, max_size=6).flatmap(
    lambda ids: st.tuples(*[valid_tasks(i) for i in ids])
))  # fmt: skip
def test_random_valid_stores_open(tasks: tuple[dict[str, Any], ...]) -> None:
    assert store_findings(store(*tasks) if tasks else {**store(), "tables": {"tasks": {}}}) == []


# --- through schedlog verify ---------------------------------------------------------------------


def verify(*args: str) -> tuple[int, str]:
    from click.testing import CliRunner

    from replay.cli import main

    result = CliRunner().invoke(main, ["verify", *args], catch_exceptions=False)
    return result.exit_code, result.output


def test_verify_finds_a_store_in_a_walked_root_and_judges_it(tmp_path: Path) -> None:
    root = tmp_path / "host"
    (root / "sessions").mkdir(parents=True)
    shutil.copy(SESSIONS / "valid" / "reminders.session.jsonl", root / "sessions" / "session.jsonl")
    (root / STORE_NAME).write_text(json.dumps(store(task("weekly"), task("cron", "schedule-b"))))
    code, out = verify(str(root))
    assert code == 0, out
    assert f"ok         {root / STORE_NAME}: Host task store, 2 task(s)" in out
    assert "2 session(s): 2 ok" in out


def test_verify_reports_a_corrupt_store_with_its_rule_pointer_and_task(tmp_path: Path) -> None:
    bad = store(task("weekly"), task("daily", "schedule-b"))
    bad["tables"]["tasks"]["schedule-a"]["record"]["weekdays"] = [2, 2]
    bad["tables"]["tasks"]["schedule-b"]["status"] = "paused"
    path = tmp_path / "backup-of-tasks.json"  # found by its content, whatever its name
    path.write_text(json.dumps(bad))
    code, out = verify(str(path))
    assert code == 1
    assert f"CORRUPT    {path}: host.weekly.weekdays: task 'schedule-a': weekdays must be unique" in out, out
    assert "host.task.status: task 'schedule-b': " in out and "(at /tables/tasks/schedule-b/status)" in out, out
    code, out = verify("--format", "json", str(path))
    (report,) = json.loads(out)
    assert report["kind"] == "host-task-store" and report["verdict"] == "corrupt"
    assert report["violation"]["pointer"] == "/tables/tasks/schedule-a/record/weekdays"
    (status,) = [f for f in report["formatFindings"] if f["code"] == "host.task.status"]
    assert status["pointer"] == "/tables/tasks/schedule-b/status"  # a place of its own, not in the text
    assert status["message"].startswith("task 'schedule-b': ")


def test_a_json_file_that_is_no_store_is_read_as_a_log(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text('{"unit": {"name": "something-else"}}')
    code, out = verify(str(path))
    assert code == 2 and "UNREADABLE" in out


# --- a Host root: the store against the session logs beside it -------------------------------------


def reminder(seq: int, message_id: str) -> dict[str, Any]:
    content = [{"type": "text", "text": "[SCHEDULE REMINDER]\njoin the call"}]  # the prompt of task()
    data = {"id": message_id, "role": "user", "content": content, "source": {"kind": "schedule"}}
    return appended("user/message", seq, 0, data)


def host_root(tmp_path: Path, messages: dict[str, list[str]], tasks: list[dict[str, Any]]) -> Path:
    """A root: the store, and one session directory per session id holding its reminder messages."""
    from .sessionfiles import ev, header, write_session

    root = tmp_path / "root"
    for n, (session_id, ids) in enumerate(messages.items()):
        folder = root / f"--work--{n}" / session_id
        folder.mkdir(parents=True)
        events = [ev(0), *(reminder(k + 1, m) for k, m in enumerate(ids))]
        write_session(folder / "session.jsonl", events, header(session_id))
    (root / STORE_NAME).write_text(json.dumps(store(*tasks)))
    return root


def delivered(task_id: str, session_id: str, *message_ids: str, pruned: bool = False) -> dict[str, Any]:
    value = task("daily", task_id)
    value["sessionId"] = session_id
    records = [{**RECEIPT, "messageId": m} for m in message_ids]
    history: dict[str, Any] = {"records": records, "earlierRecordsUnavailable": False}
    if pruned:
        history["earlierRecordsPruned"] = True
    value["deliveryHistory"] = history
    if records:
        value["lastDelivery"] = dict(records[-1])
    else:
        del value["lastDelivery"]
    return value


def root_codes(root: Path) -> list[tuple[str, str]]:
    code, out = verify("--format", "json", str(root))
    assert code == 0, out
    (store_report,) = [r for r in json.loads(out) if r.get("kind") == "host-task-store"]
    return [(f["code"], f["message"]) for f in store_report["formatFindings"]]


def test_a_consistent_root_is_quiet(tmp_path: Path) -> None:
    tasks = [delivered("schedule-a", "s1", "m1", "m2"), delivered("schedule-b", "s2", "m3")]
    assert root_codes(host_root(tmp_path, {"s1": ["m1", "m2"], "s2": ["m3"]}, tasks)) == []


def test_a_receipt_without_its_message(tmp_path: Path) -> None:
    tasks = [delivered("schedule-a", "s1", "m1", "m2")]
    (finding,) = root_codes(host_root(tmp_path, {"s1": ["m1"]}, tasks))
    assert finding[0] == "host.receipt.unmatched" and "'m2'" in finding[1] and "'schedule-a'" in finding[1]


def test_a_message_without_its_receipt_unless_pruned(tmp_path: Path) -> None:
    (finding,) = root_codes(host_root(tmp_path, {"s1": ["m0", "m1"]}, [delivered("schedule-a", "s1", "m1")]))
    assert finding[0] == "host.message.unreceipted" and "'m0'" in finding[1]
    pruned = [delivered("schedule-a", "s1", "m1", pruned=True)]
    assert root_codes(host_root(tmp_path / "p", {"s1": ["m0", "m1"]}, pruned)) == []


def test_a_task_whose_session_has_no_log(tmp_path: Path) -> None:
    tasks = [delivered("schedule-a", "s1", "m1"), delivered("schedule-b", "gone", "m9")]
    (finding,) = root_codes(host_root(tmp_path, {"s1": ["m1"]}, tasks))
    assert finding[0] == "host.session.missing" and "'gone'" in finding[1]


def test_legacy_reminders_still_active_in_a_host_era_log_are_named(tmp_path: Path) -> None:
    from .sessionfiles import header, write_session

    record = {"id": "schedule-1", "kind": "at", "prompt": "p", "scheduledAt": "2026-08-06T01:00:00.000Z"}
    legacy = {
        "type": "schedule/change",
        "seq": 1,
        "time": 0,
        "data": {"version": 1, "operation": "create", "schedule": record},
    }
    path = write_session(tmp_path / "session.jsonl", [reminder(0, "m1"), legacy], header("s1"))
    code, out = verify(str(path))
    assert code == 0 and "host.legacy-reminders" in out and "still active, never to fire: 'schedule-1'" in out


# --- the JSON Schema of a task accepts exactly what the decoder accepts ------------------------------

BEYOND_SCHEMA = {
    "host.task.key",
    "host.history.last-delivery",
    "host.history.duplicate-message",
    "host.window.bounds",
    "host.window.order",
    "host.weekly.weekdays.order",
    "host.record.timeZone.unknown",
    "host.cron.grammar",
    "host.cron.canonical",
    "host.record.title.length",
}
"""The decoder's rules JSON Schema cannot state (each named in the schema's description)."""
REPLACEMENTS = st.sampled_from(
    [None, 0, -1, 1, 1.5, 60, 59, 2**53, "", " x", "x", "x ", [], {}, True, [1, 2], [2, 1], "2026-01-01T00:00:00.000Z",
     "2026-01-01T00:00:00Z", "US/Eastern", "Mars/Olympus", "GMT", "09:00:00.000", "9:00", "active", "inactive",
     "after", "cron", "weekly", "0 9 * * 1-5", "0 9 * * MON", {"timeZone": "UTC"}]
)  # fmt: skip


@st.composite
def mutated_tasks(draw: Any) -> Any:
    keys = ["extra", "kind", "time", "weekdays", "window", "prompt"]
    return mutate(draw, draw(valid_tasks("schedule-a")), REPLACEMENTS, keys)


@settings(max_examples=400, deadline=None)
@given(mutated_tasks())
def test_the_task_schema_accepts_exactly_what_the_decoder_accepts(value: dict[str, Any]) -> None:
    from invariant.hoststore import task_findings

    from .schemahelp import valid

    key = value.get("record", {}).get("id") if isinstance(value.get("record"), dict) else None
    key = key if isinstance(key, str) else "schedule-a"
    found = [f for f in task_findings(key, value, "") if f.code not in BEYOND_SCHEMA]
    assert valid("host/task.schema.json", value) == (not found), found
    if "record" in value:  # the record schema, alone, judges the record as the task's checks do
        in_record = [f for f in found if f.pointer == "/record" or f.pointer.startswith("/record/")]
        assert valid("host/record.schema.json", value["record"]) == (not in_record), in_record
    history = value.get("deliveryHistory")
    records = history.get("records") if isinstance(history, dict) else None
    if isinstance(records, list) and records and isinstance(records[0], dict) and "prompt" not in records[0]:
        at = "/deliveryHistory/records/0"  # a history record without a prompt is a receipt
        in_receipt = [f for f in found if f.pointer == at or f.pointer.startswith(at + "/")]
        assert valid("host/receipt.schema.json", records[0]) == (not in_receipt), in_receipt


def test_the_schemas_hold_the_host_documents() -> None:
    from .schemahelp import valid

    assert valid("host/store.schema.json", store()) and valid("host/store.schema.json", {**store(), "x": 1})
    for name in VARIANTS:
        assert valid("host/store.schema.json", varied(name)), name
    for name, (_, rule, _) in CORRUPTIONS.items():
        if rule.startswith("host.store."):
            assert not valid("host/store.schema.json", corrupted(name)), name
    assert valid("host/task.schema.json", task("cron")) and not valid("host/task.schema.json", {"sessionId": "s"})


# --- the fixture root, replayed ---------------------------------------------------------------------

HOST_FIXTURES = ROOT / "fixtures" / "host"


def test_the_fixture_root_is_what_its_generator_writes() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("host_generate", HOST_FIXTURES / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written = module.files()
    on_disk = {
        p.relative_to(HOST_FIXTURES / "root").as_posix() for p in (HOST_FIXTURES / "root").rglob("*") if p.is_file()
    }
    assert on_disk == set(written)
    assert all((HOST_FIXTURES / "root" / name).read_text(encoding="utf-8") == text for name, text in written.items())


def test_a_host_root_replays_into_the_host_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """(The README's query on these tables runs in tests/test_readme_snippets.py.)"""
    from click.testing import CliRunner

    from replay.cli import main

    monkeypatch.chdir(ROOT)
    db = tmp_path / "host.duckdb"
    replayed = CliRunner().invoke(main, ["replay", "fixtures/host/root", "--db", str(db)], catch_exceptions=False)
    assert replayed.exit_code == 0, replayed.output
    counts = CliRunner().invoke(
        main, ["sql", str(db), "SELECT count(*) AS n FROM host_tasks UNION ALL SELECT count(*) FROM host_deliveries "
               "UNION ALL SELECT count(*) FROM host_findings", "--format", "json"],
    ).output  # fmt: skip
    assert [row["n"] for row in json.loads(counts)] == [4, 5, 3]


# --- soft findings (host.md §6) ---------------------------------------------------------------------


def soft(value: dict[str, Any], now: str | None = None, **retention: int) -> list[tuple[str, str]]:
    from invariant.hoststore import Retention, soft_findings

    now_ms = None if now is None else parse_instant(now)
    return [(f.code, f.pointer) for f in soft_findings(value, now_ms, Retention(**retention))]


SHANGHAI_MON_WED = {"time": "09:00:00.000", "timeZone": "Asia/Shanghai", "weekdays": [1, 3]}
WORKING_QUARTERS = {"expression": "*/15 9-17 * * 1-5", "timeZone": "UTC"}


@pytest.mark.parametrize(
    ("kind", "extra", "at", "ok"),
    [
        ("daily", {"time": "09:00:00.000", "timeZone": "US/Eastern"}, "2026-08-06T13:00:00.000Z", True),
        ("daily", {"time": "09:00:00.000", "timeZone": "US/Eastern"}, "2026-08-06T14:00:00.000Z", False),
        ("daily", {"time": "09:00:00.000", "timeZone": "US/Eastern"}, "2026-12-07T14:00:00.000Z", True),  # EST
        ("daily", {"time": "01:30:00.000", "timeZone": "America/New_York"}, "2026-11-01T05:30:00.000Z", True),
        ("daily", {"time": "01:30:00.000", "timeZone": "America/New_York"}, "2026-11-01T06:30:00.000Z", False),
        ("weekly", SHANGHAI_MON_WED, "2026-08-05T01:00:00.000Z", True),
        ("weekly", SHANGHAI_MON_WED, "2026-08-06T01:00:00.000Z", False),
        ("cron", WORKING_QUARTERS, "2026-08-05T09:45:00.000Z", True),
        ("cron", WORKING_QUARTERS, "2026-08-08T09:45:00.000Z", False),  # Saturday
        ("cron", {"expression": "0 9 13 * 5", "timeZone": "UTC"}, "2026-08-13T09:00:00.000Z", True),  # 13th: Vixie or
        ("cron", {"expression": "0 9 13 * 5", "timeZone": "UTC"}, "2026-08-07T09:00:00.000Z", True),  # a Friday
        ("cron", {"expression": "0 9 13 * 5", "timeZone": "UTC"}, "2026-08-12T09:00:00.000Z", False),
        ("cron", {"expression": "0 9 */2 * 5", "timeZone": "UTC"}, "2026-08-14T09:00:00.000Z", False),  # star-led: and
        ("cron", {"expression": "0 9 * * 0", "timeZone": "UTC"}, "2026-08-09T09:00:00.000Z", True),  # Sunday 0
    ],
)  # fmt: skip
def test_a_wall_clock_target_is_an_occurrence_of_its_rule(kind: str, extra: dict[str, Any], at: str, ok: bool) -> None:
    value = task(kind)
    value["record"] |= {**{k: v for k, v in RECORDS[kind].items() if k not in extra}, **extra, "scheduledAt": at}
    assert store_findings(store(value)) == []
    assert soft(store(value)) == ([] if ok else [("host.soft.occurrence", f"{T}/record/scheduledAt")])


def test_overdue_order_retention_and_an_undelivered_one_shot() -> None:
    value = task("at")
    value["record"]["scheduledAt"] = "2026-08-05T12:00:00.000Z"
    assert soft(store(value), now="2026-08-05T11:59:59.999Z") == []
    assert soft(store(value), now="2026-08-05T12:00:00.000Z") == [("host.soft.overdue", f"{T}/record/scheduledAt")]
    late = {**RECEIPT, "deliveredAt": "2026-08-05T12:00:00.000Z", "messageId": "m0"}
    history = task("after")
    history["deliveryHistory"]["records"].insert(0, {**late, "deliveredAt": "2026-09-05T12:00:00.000Z"})
    assert soft(store(history)) == [("host.soft.history-order", f"{T}/deliveryHistory/records")]
    two = task("after")
    two["deliveryHistory"]["records"].insert(0, late | {"deliveredAt": "2026-07-01T00:00:00.000Z"})
    assert soft(store(two), days=30) == [("host.soft.retention", f"{T}/deliveryHistory/records")]
    assert soft(store(two), records=1) == [("host.soft.retention", f"{T}/deliveryHistory/records")]
    assert soft(store(two), days=60, records=2) == []
    once = {"sessionId": "s", "record": task("after")["record"], "status": "inactive"}
    assert soft(store(once)) == [("host.soft.undelivered", f"{T}/status")]


def test_soft_findings_reach_verify_as_warnings(tmp_path: Path) -> None:
    value = task("at")
    path = tmp_path / STORE_NAME
    path.write_text(json.dumps(store(value)))
    code, out = verify(str(path), "--now", "2030-01-01T00:00:00.000Z")
    assert code == 0 and "warning: host.soft.overdue" in out
    assert verify(str(path), "--now", "tomorrow")[0] == 2


def test_the_committed_store_fixtures_are_what_the_generator_writes_and_verify_agrees() -> None:
    folder = ROOT / "fixtures" / "host" / "stores"
    written = store_files()
    assert {p.name for p in folder.iterdir()} == set(written)
    assert all((folder / name).read_text(encoding="utf-8") == text for name, text in written.items())
    expected = json.loads((folder / "expected.json").read_text())
    code, out = verify("--format", "json", *(str(folder / name) for name in sorted(expected)))
    reports = {Path(r["path"]).name: r for r in json.loads(out)}
    assert code == 1 and set(reports) == set(expected)
    assert all(r.get("kind") == "host-task-store" for r in reports.values())  # found by content
    for name, want in expected.items():
        got = reports[name]
        assert got["verdict"] == want["verdict"], name
        if want["verdict"] == "corrupt":
            assert (got["violation"]["rule"], got["violation"]["pointer"]) == (want["rule"], want["pointer"]), name


def test_the_large_generated_store_is_ok_with_no_finding(tmp_path: Path) -> None:
    """The 10,000-task store bench/hoststore.py times: every kind, targets on their rules."""
    from fixtures.host.stores import large_store
    from replay.judge.verify import verify_path

    path = tmp_path / STORE_NAME
    path.write_text(json.dumps(large_store(10_000)))
    report = verify_path(str(path))
    assert (report.verdict, report.events, report.findings) == ("ok", 10_000, ())


# --- the file layer (host.md §1): what the JSON backend refuses before any task ----------------------


@pytest.mark.parametrize(
    ("name", "data", "rule"),
    [
        ("a BOM", b"\xef\xbb\xbf" + json.dumps(store()).encode(), "host.store.json"),
        ("NaN", json.dumps(store()).replace('"version": 1', '"version": NaN').encode(), "host.store.json"),
        ("trailing bytes", json.dumps(store()).encode() + b"\n{}", "host.store.json"),
        ("an empty file", b"", "host.store.json"),
        ("not an object", b"[]", "host.store.json"),
        ("unit not an object", json.dumps({**store(), "unit": "schedule"}).encode(), "host.store.unit"),
        ("another unit", json.dumps({**store(), "unit": {"name": "tasks", "version": 1}}).encode(), "host.store.unit"),
        ("version 2", json.dumps({**store(), "unit": {"name": "schedule", "version": 2}}).encode(),
         "host.store.version"),
        ("tables null", json.dumps({**store(), "tables": None}).encode(), "host.store.tables"),
        ("tasks null", json.dumps({**store(), "tables": {"tasks": None}}).encode(), "host.store.tables"),
    ],
)  # fmt: skip
def test_a_schedule_json_the_host_refuses_to_open_is_corrupt(tmp_path: Path, name: str, data: bytes, rule: str) -> None:
    path = tmp_path / STORE_NAME
    path.write_bytes(data)
    code, out = verify("--format", "json", str(path))
    (report,) = json.loads(out)
    assert code == 1 and report["kind"] == "host-task-store" and report["verdict"] == "corrupt", out
    assert report["violation"]["rule"] == rule


def test_extras_the_host_reads_past_are_information_on_an_ok_store(tmp_path: Path) -> None:
    path = tmp_path / STORE_NAME
    path.write_text(json.dumps(varied("envelope extras")))
    code, out = verify("--format", "json", str(path))
    (report,) = json.loads(out)
    assert code == 0 and report["verdict"] == "ok"
    notes = [(f["code"], f["severity"]) for f in report["formatFindings"] if f["code"].startswith("host.store")]
    assert notes == [("host.store.ignored", "info")] * 4


def framed(message_id: str, task_id: str, prompt: str) -> dict[str, Any]:
    """A Host reminder naming its task as the framing does (profiles.md §3.4)."""
    event = reminder(0, message_id)
    text = f"[SCHEDULE REMINDER]\nschedule_id_json: {json.dumps(task_id)}\nreminder_prompt_json: {json.dumps(prompt)}"
    event["data"]["content"] = [{"type": "text", "text": text}]
    return event


def test_a_reminder_from_a_task_deleted_since_is_information(tmp_path: Path) -> None:
    """host.md §5: delete removes the task with its history, so no receipt can name its messages."""
    from .sessionfiles import ev, header, write_session

    root = tmp_path / "root"
    (root / "s1").mkdir(parents=True)
    events = [
        ev(0),
        {**framed("m1", "schedule-a", "stand-up in five minutes"), "seq": 1},
        {**framed("m-old", "schedule-gone", "water the plants"), "seq": 2},  # its task was deleted
        {**framed("m-lost", "schedule-a", "stand-up in five minutes"), "seq": 3},  # a kept task, no receipt
        {**reminder(4, "m-plain"), "data": {**reminder(4, "m-plain")["data"], "content": [
            {"type": "text", "text": "[SCHEDULE REMINDER]\nfeed the cat"}]}},  # names no id; no kept task's prompt
    ]  # fmt: skip
    write_session(root / "s1" / "session.jsonl", events, header("s1"))
    (root / STORE_NAME).write_text(json.dumps(store(delivered("schedule-a", "s1", "m1"))))
    _, out = verify("--format", "json", str(root))
    (report,) = [r for r in json.loads(out) if r.get("kind") == "host-task-store"]
    got = sorted((f["code"], f["severity"], f["message"].split("'")[1]) for f in report["formatFindings"])
    assert got == [
        ("host.message.task-deleted", "info", "m-old"),
        ("host.message.task-deleted", "info", "m-plain"),
        ("host.message.unreceipted", "warning", "m-lost"),
    ]


def test_a_store_is_read_once_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """verify (with its cross-check) and replay (with its Host tables) each read the store once:
    the report carries the tasks it read."""
    from click.testing import CliRunner

    import replay.judge.verify as verifying
    from replay.cli import main

    reads: list[str] = []
    store_file = verifying._store_file

    def counted(path: str, held: object = None) -> object:
        if path.endswith("schedule.json"):
            reads.append(path)
        return store_file(path, held)  # type: ignore[arg-type]

    monkeypatch.setattr(verifying, "_store_file", counted)
    root = str(ROOT / "fixtures" / "host" / "root")
    result = CliRunner().invoke(main, ["verify", root, "--format", "json"], catch_exceptions=False)
    assert "host.receipt.unmatched" in result.output and len(reads) == 1, reads
    reads.clear()
    result = CliRunner().invoke(main, ["replay", root, "--db", str(tmp_path / "h.duckdb")], catch_exceptions=False)
    assert result.exit_code == 0 and len(reads) == 1, (reads, result.output)
    tasks = CliRunner().invoke(main, ["sql", str(tmp_path / "h.duckdb"), "SELECT count(*) AS n FROM host_tasks"])
    assert "4" in tasks.output
