"""The judge's saved state is bounded by what is live, never by the number of events (issue 64):
no record is kept, the events that hold no schedule change leave it as it was, and a resumed
reading feeds the judge only the records appended."""

from __future__ import annotations

import json
import pickle

import pytest

from replay.judge.judge import Judge
from replay.judge.verify import judge_log, verify_log
from replay.logs.logfile import SessionLog
from replay.logs.records import Entry

from .conftest import ROOT

REMINDERS = ROOT / "fixtures" / "sessions" / "valid" / "reminders.session.jsonl"


def _with_turns(turns: int) -> bytes:
    """The reminders fixture and `turns` more turns after it, none of which touches a reminder."""
    lines = REMINDERS.read_bytes().splitlines()
    seq = verify_log(SessionLog(str(REMINDERS))).events  # (packed rows stand for several events)
    time = 1785940000000
    for turn in range(turns):
        for kind, data in (
            ("turn/start", {"turn": 100 + turn}),
            ("step/start", {"turn": 100 + turn, "step": 1}),
            ("step/end", {"turn": 100 + turn, "step": 1}),
            ("turn/end", {"turn": 100 + turn, "reason": {"kind": "completed"}}),
        ):
            event = {"type": kind, "seq": seq, "time": time, "data": data}
            lines.append(json.dumps(event, separators=(",", ":")).encode())
            seq, time = seq + 1, time + 10
    return b"\n".join(lines) + b"\n"


def _state(data: bytes) -> bytes:
    log = SessionLog("s.jsonl", data=data, saving=True)
    verify_log(log)
    assert log.saved is not None and log.saved.judge is not None
    return log.saved.judge


def test_events_that_hold_no_schedule_change_leave_the_judges_state_as_it_was() -> None:
    few, many = _state(_with_turns(5)), _state(_with_turns(5_000))
    assert verify_log(SessionLog("s.jsonl", data=_with_turns(5_000))).verdict.value == "ok"
    assert len(many) == len(few)


def test_no_record_is_kept_in_a_saved_reading() -> None:
    log = SessionLog("s.jsonl", data=_with_turns(50), saving=True)
    verify_log(log)
    assert log.saved is not None
    assert Entry.__name__.encode() not in pickle.dumps(log.saved)
    judge = Judge.resumed(log.saved.judge or b"")
    assert all(track.steps is None for track in judge.tracks)  # (a judgement is kept only when asked for)


def test_a_resumed_reading_feeds_the_judge_only_what_was_appended() -> None:
    data = _with_turns(20)
    cut = data.index(b'"turn":110') - 40
    cut = data.rindex(b"\n", 0, cut) + 1
    first = SessionLog("s.jsonl", data=data[:cut], saving=True)
    verify_log(first)
    fed: list[int] = []
    feed = Judge.feed

    def counting(self: Judge, entry: Entry, deep: object = None) -> None:
        fed.append(entry.event_index)
        feed(self, entry, deep)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Judge, "feed", counting)
        resumed = verify_log(SessionLog("s.jsonl", data=data, resume=first.saved))
    assert fed == []  # the turns appended hold no record the judge reads
    assert resumed.to_json() == verify_log(SessionLog("s.jsonl", data=data)).to_json()


def test_a_judgement_is_kept_only_by_a_read_from_the_logs_start() -> None:
    first = SessionLog("s.jsonl", data=_with_turns(2), saving=True)
    verify_log(first)
    _, judgement = judge_log(SessionLog("s.jsonl", data=_with_turns(2)), keep=True)
    assert judgement.steps and len(judgement.steps) == len(judgement.ledger)
    try:
        judge_log(SessionLog("s.jsonl", data=_with_turns(3), resume=first.saved), keep=True)
    except ValueError as err:
        assert "from the log's start" in str(err)
    else:
        raise AssertionError("a resumed read kept a judgement it cannot have")


def test_a_read_nobody_resumes_saves_no_state() -> None:
    """Saving is asked for by whoever resumes (the verdict cache, watch): `--no-cache` pickles
    no judge."""
    log = SessionLog("s.jsonl", data=_with_turns(2))
    verify_log(log)
    assert log.saved is None
