"""Did each reminder reach the conversation? The soft delivery checks (invariant.reminders,
profiles.md §2.5, §4.7, §5.1 steps 4-5): one log breaking each rule and one holding it, under
the profile that wrote it; the fixtures and the real logs give no false warning."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from invariant import BatchItem, record_from_json, render_batch_framing, render_framing
from invariant.findings import Finding, Severity, Violation
from invariant.instant import format_instant
from invariant.logshapes import appended
from replay.judge.verify import verify_path
from replay.reading import Reading

from .conftest import REAL_LOGS, ROOT, requires_real_logs
from .sessionfiles import header, write_session

T0 = 1_785_931_200_000


def after(n: int, at: int, prompt: str = "check logs") -> dict[str, Any]:
    return {
        "id": f"schedule-{n}",
        "kind": "after",
        "prompt": prompt,
        "afterSeconds": 30,
        "scheduledAt": format_instant(at),
    }


def every(n: int, at: int) -> dict[str, Any]:
    return {
        "id": f"schedule-{n}",
        "kind": "every",
        "prompt": f"tick {n}",
        "everySeconds": 300,
        "scheduledAt": format_instant(at),
    }


class Log:
    """A session log built event by event, seqs contiguous."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def add(self, type_: str, data: object, time: int) -> None:
        self.events.append(appended(type_, len(self.events), time, data))

    def create(self, record: dict[str, Any], time: int = T0) -> None:
        self.add("schedule/change", {"version": 1, "operation": "create", "schedule": record}, time)

    def queue(self, text: str, time: int, message_id: str = "reminder-1", plugin: str = "tool-schedule") -> None:
        message = {"id": message_id, "role": "user", "content": [{"type": "text", "text": text}],
                   "source": {"kind": "plugin", "plugin": plugin}}  # fmt: skip
        self.add("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [message]}, time)
        self.last = message

    def dispatch(self, schedule_id: str, time: int, accepted: int | None = None) -> None:
        data: dict[str, Any] = {"version": 1, "operation": "dispatch", "id": schedule_id}
        if accepted is not None:
            data["acceptedAt"] = format_instant(accepted)
        self.add("schedule/change", data, time)

    def turn(self, time: int, message: dict[str, Any] | None = None) -> None:
        self.add("turn/start", {"turn": 1}, time)
        self.add("user/message", message or self.last, time + 1)
        self.add("turn/end", {"turn": 1, "reason": {"kind": "completed"}}, time + 2)

    def verify(self, tmp_path: Path, profile: str | None = None) -> list[tuple[str, str]]:
        path = write_session(tmp_path / "session.jsonl", self.events, header("s1"))
        report = verify_path(str(path), Reading.of(profile=profile or "auto"))
        assert report.verdict == "ok", report
        return [(f.code, f.message) for f in report.findings if f.code.startswith("delivery.")]


def one_shot(prompt_in_message: str = "check logs", dispatch_at: int = T0 + 30_002, delivered: bool = True) -> Log:
    log = Log()
    record = after(1, T0 + 30_000)
    log.create(record)
    log.queue(render_framing(record_from_json({**record, "prompt": prompt_in_message})), T0 + 30_001)
    log.dispatch("schedule-1", dispatch_at)
    if delivered:
        log.turn(T0 + 30_003)
    return log


def codes(found: list[tuple[str, str]]) -> list[str]:
    return [code for code, _ in found]


def test_a_one_shot_delivered_as_the_owner_does_holds(tmp_path: Path) -> None:
    assert one_shot().verify(tmp_path) == []


def test_a_dispatch_with_no_reminder_queued(tmp_path: Path) -> None:
    log = one_shot()
    del log.events[1]  # the inbox insertion
    for n, event in enumerate(log.events):
        event["seq"] = n
    assert codes(log.verify(tmp_path)) == ["delivery.unqueued"]


def test_a_reminder_that_is_not_the_framing_of_the_dispatch(tmp_path: Path) -> None:
    (finding,) = one_shot(prompt_in_message="check the logs").verify(tmp_path)
    assert finding[0] == "delivery.framing" and "line 5" in finding[1]


def test_a_queued_reminder_that_never_reaches_the_conversation(tmp_path: Path) -> None:
    assert codes(one_shot(delivered=False).verify(tmp_path)) == ["delivery.undelivered"]
    other = one_shot(delivered=False)
    other.turn(T0 + 30_003, {**other.last, "id": "another-id"})  # a turn, but not this message
    assert codes(other.verify(tmp_path)) == ["delivery.undelivered"]


def test_a_dispatch_written_before_its_record_was_due(tmp_path: Path) -> None:
    assert codes(one_shot(dispatch_at=T0 + 29_999).verify(tmp_path)) == ["delivery.early"]


def test_one_shots_go_in_target_then_create_order(tmp_path: Path) -> None:
    log = Log()
    late, early = after(1, T0 + 60_000, "late"), after(2, T0 + 30_000, "early")
    log.create(late)
    log.create(early)
    log.queue(render_framing(record_from_json(late)), T0 + 60_001)
    log.dispatch("schedule-1", T0 + 60_002)  # while schedule-2 (earlier target) is due
    log.turn(T0 + 60_003)
    found = log.verify(tmp_path)
    assert codes(found) == ["delivery.order"] and "'schedule-2'" in found[0][1]


def batch_log(members: list[dict[str, Any]], accepted: int, profile_text: str = "calendar") -> Log:
    log = Log()
    for record in members:
        log.create(record)
    items = [BatchItem(record_from_json(r, profile_text), r["scheduledAt"]) for r in members]
    plugin = "schedule" if profile_text == "fixed-rate" else "tool-schedule"
    log.queue(render_batch_framing(items, profile_text), accepted + 1, plugin=plugin)
    for record in members:
        log.dispatch(record["id"], accepted + 2, accepted)
    log.turn(accepted + 3)
    return log


@pytest.mark.parametrize("profile", ["calendar", "fixed-rate"])
def test_a_batch_of_every_due_record_in_target_order_holds(tmp_path: Path, profile: str) -> None:
    members = [every(1, T0 + 300_000), every(2, T0 + 240_000)]
    members.sort(key=lambda r: r["scheduledAt"])
    assert batch_log(members, T0 + 300_000, profile).verify(tmp_path, profile) == []


def test_a_batch_framed_with_another_revisions_instruction(tmp_path: Path) -> None:
    log = batch_log([every(1, T0 + 300_000)], T0 + 300_000, "calendar")
    found = log.verify(tmp_path, "fixed-rate")
    assert codes(found) == ["delivery.framing"] and "line 2" in found[0][1]


def test_a_batch_that_leaves_out_a_due_record(tmp_path: Path) -> None:
    log = Log()
    log.create(every(2, T0 + 200_000))  # due at acceptedAt, but not in the batch
    log.events += batch_log([every(1, T0 + 300_000)], T0 + 300_000).events
    for n, event in enumerate(log.events):
        event["seq"] = n
    log.last = log.events[-2]["data"]
    found = log.verify(tmp_path, "calendar")
    assert codes(found) == ["delivery.order"] and "schedule-2" in found[0][1]


def test_a_batch_dispatched_while_a_one_shot_was_due(tmp_path: Path) -> None:
    log = Log()
    log.create(after(9, T0 + 100_000))
    log.events += batch_log([every(1, T0 + 300_000)], T0 + 300_000).events
    for n, event in enumerate(log.events):
        event["seq"] = n
    found = log.verify(tmp_path)
    assert codes(found) == ["delivery.order"] and "one-shot 'schedule-9'" in found[0][1]


def test_the_bundled_fixtures_give_no_delivery_warning_but_the_fabricated_one() -> None:
    """Every valid fixture delivers as the owner does; gate-too-soon queues a reminder no turn
    ever takes (the log ends on its violation)."""
    warned = {}
    for path in sorted((ROOT / "fixtures").rglob("*.jsonl*")):
        report = verify_path(str(path))
        found = [f.code for f in report.findings if f.code.startswith("delivery.")]
        if found:
            warned[path.name] = found
    assert warned == {"gate-too-soon.session.jsonl": ["delivery.undelivered"]}


@requires_real_logs
def test_the_real_logs_give_no_delivery_warning() -> None:
    for path in sorted(REAL_LOGS.glob("*.jsonl")):
        report = verify_path(str(path))
        assert [f for f in report.findings if f.code.startswith("delivery.")] == [], path.name


def test_delivery_findings_reach_sarif_with_a_rule_descriptor(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from replay.cli import main

    log = one_shot(delivered=False)
    path = write_session(tmp_path / "session.jsonl", log.events, header("s1"))
    result = CliRunner().invoke(main, ["verify", "--format", "sarif", str(path)])
    sarif = json.loads(result.output)
    rules = {r["id"]: r for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    assert "delivery.undelivered" in rules and "never appears" in json.dumps(rules["delivery.undelivered"])


@given(
    st.sampled_from(list(Severity)),
    st.none() | st.integers(0, 10**6),
    st.none() | st.integers(0, 10**6),
    st.none() | st.text(max_size=5),
)
def test_a_finding_moved_to_a_line_is_replace_with_that_line(
    severity: Severity, line: int | None, index: int | None, pointer: str | None
) -> None:
    """`Finding.at_line` (which delivery findings are located with) is `dataclasses.replace`
    with the line, made directly for a plain Finding, and for a Violation too."""
    plain = Finding("delivery.early", severity, "m", 3, pointer, index)
    violation = Violation(
        code="corrupt_schedule_log", message="m", line=3, pointer=pointer, index=index, rule="fold.gate", seq=index
    )
    for found in (plain, violation):
        moved = found.at_line(line)
        assert moved == dataclasses.replace(found, line=line) and type(moved) is type(found)
