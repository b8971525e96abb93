"""`schedlog explain`: the story of a corrupt session names its related lines and, for gate and
progression violations, the instant that would have been valid."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from replay.cli import main
from replay.tools.explain import explain_path

from .conftest import ROOT
from .sessionfiles import header, write_session
from .test_related import CASES

SESSIONS = ROOT / "fixtures" / "sessions"
EXPECTED = json.loads((SESSIONS / "expected.json").read_text())


def explain(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["explain", *args], catch_exceptions=False)
    return result.exit_code, result.output


STORIES = {  # what each corrupt fixture's story must say (read off the files by hand)
    "corrupt/gate-too-soon.session.jsonl": [
        "Rule fold.gate: two distinct recurring batches less than 300 s apart",
        "line 21     accepted 2026-08-05T12:05:00.000Z: 'schedule-1'; "
        "the next may be accepted from 2026-08-05T12:10:00.000Z",
        "Offending event: line 23, event 29, /data/acceptedAt",
        "line 21 (event 27, /data/acceptedAt): the previous recurring batch",
        "the next recurring batch may be accepted from 2026-08-05T12:10:00.000Z; this one was accepted at "
        "2026-08-05T12:07:00.000Z, 180 000 ms (3 min) early.",
        "recurring batch accepted at 2026-08-05T12:07:00.000Z is 120000 ms (2 min) after the batch at",
        "ids involved: 'schedule-2', 'schedule-1'",
        'value: "2026-08-05T12:07:00.000Z"',
        "severity: error",
    ],
    "corrupt/reused-id.session.jsonl": [
        "line 7      event 9      create, target 2026-08-06T01:00:00.000Z",
        "ended: deleted at line 16",
        "Offending event: line 25, event 35, /data/schedule/id",
        "line 7 (event 9, /data/schedule/id): the first create of this id",
        "a fresh id: the next one the owner allocates is 'schedule-2'.",
    ],
    "corrupt/non-canonical-cron.session.jsonl": ["Rule decode.cron.canonical", "Offending event: line 7, event 9"],
    "corrupt/untrimmed-prompt.session.jsonl": ["Rule decode.prompt.js-whitespace", "Offending event: line 7, event 9"],
    "corrupt/seq-gap.session.jsonl": ["CORRUPT", "format.seq-gap: seq gap at line 7"],
}


@pytest.mark.parametrize("name", sorted(STORIES))
def test_each_corrupt_fixture_is_told(name: str) -> None:
    assert EXPECTED[name]["verdict"] == "corrupt"
    code, out = explain(str(SESSIONS / name))
    assert code == 1
    for expected in STORIES[name]:
        assert expected in out, expected


PROGRESSION = {
    "before target (every, after a dispatch)": [
        "Related:\n  line 3 (event 1, /data/acceptedAt): the event that set the record's current target",
        "acceptedAt may be 2026-08-05T12:10:00.000Z (the record's target) or later; this dispatch was accepted at "
        "2026-08-05T12:09:00.000Z, 60 000 ms (1 min) early.",
    ],
    "before target (every, first target)": [
        "line 2 (event 0, /data/schedule/scheduledAt): the event that set the record's current target",
        "acceptedAt may be 2026-08-05T12:05:00.000Z (the record's target) or later; this dispatch was accepted at "
        "2026-08-05T12:04:59.999Z, 1 ms early.",
    ],
    "cron progression": [
        "line 3 (event 1, /data/nextScheduledAt): the event that set the record's current target",
        "the calendar's decision for a dispatch accepted at 2026-08-05T12:20:00.000Z: occurrenceAt "
        "2026-08-05T12:20:00.000Z, nextScheduledAt 2026-08-05T12:25:00.000Z.",
    ],
    "gate": [
        "line 4 (event 2, /data/acceptedAt): the previous recurring batch",
        "accepted at 2026-08-05T12:07:00.000Z, 180 000 ms (3 min) early.",
    ],
    "dispatch shape": [
        "line 2 (event 0, /data/schedule/kind): the create of this id",
        "an every record takes a dispatch of shape every.",
    ],
    "inactive after delete": [
        "line 4 (event 2, /data/operation): the event that ended it",
        "active at that point: none",
    ],
    "seed bounds": ["line 1 (/seedLength): the header's seedLength", "a seedLength that is a safe integer"],
}


@pytest.mark.parametrize("family", sorted(PROGRESSION))
def test_progression_and_gate_stories_give_the_valid_instant(tmp_path: Path, family: str) -> None:
    events, seed, *_ = CASES[family]
    path = write_session(tmp_path / "s.session.jsonl", events, header("s", seed_length=seed or None))
    code, out = explain(str(path))
    assert code == 1
    for expected in PROGRESSION[family]:
        assert expected in out, (expected, out)


def test_a_valid_session_is_summed_up() -> None:
    code, out = explain(str(SESSIONS / "valid" / "reminders.session.jsonl"))
    assert code == 0 and out.startswith("OK ")
    assert "'schedule-3' (cron '55 8 * * 1-5' in Europe/Berlin" in out and "active, next target" in out
    assert "dispatched at line 38" in out and "deleted at line 58" in out


def test_session_selection_json_and_escaping(tmp_path: Path) -> None:
    code, out = explain(str(SESSIONS), "--session", "reused-id", "--format", "json")
    (told,) = json.loads(out)
    assert code == 1 and told["verdict"] == "corrupt" and told["path"].endswith("reused-id.session.jsonl")
    assert explain(str(SESSIONS), "--session", "nobody")[0] == 2
    hostile = "x\x1b]0;title\x07"
    event = {
        "type": "schedule/change",
        "seq": 0,
        "time": 0,
        "data": {"version": 1, "operation": "delete", "id": hostile},
    }
    path = write_session(tmp_path / "h.session.jsonl", [event], header(hostile))
    _, text = explain(str(path))
    assert "\x1b" not in text and "\x07" not in text and "x\\x1b]0;title" in text


def test_the_offending_value_is_shown_escaped() -> None:
    """A prompt ending in a no-break space shows it as \\u00a0, not as an invisible space."""
    _, lines = explain_path(str(ROOT / "fixtures" / "sessions" / "corrupt" / "untrimmed-prompt.session.jsonl"))
    assert '  value: "standup\\u00a0"' in lines


@pytest.mark.parametrize(
    ("ms", "text"), [(120_000, "2 min"), (5_400_000, "1 h 30 min"), (1_500, "1.5 s"), (86_400_000, "1 d")]
)
def test_durations_in_human_units(ms: int, text: str) -> None:
    from replay.tools.explain import human_duration, with_human_durations

    assert human_duration(ms) == text
    assert with_human_durations(f"is {ms} ms after") == f"is {ms} ms ({text}) after"


def test_a_format_refusal_says_whether_the_lenient_reader_takes_the_log(tmp_path: Path) -> None:
    head = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "cwd": "/w"}  # no delegationDepth
    log = tmp_path / "s.jsonl"
    log.write_text(json.dumps(head) + "\n")
    _, lines = explain_path(str(log))
    assert "  error: format.header: not a session header: header lacks delegationDepth" in lines
    assert lines[-1] == "With --mode lenient (the fixture reader's rules) it is ok: only the strict reader refuses it."
    _, gap = explain_path(str(ROOT / "fixtures" / "sessions" / "corrupt" / "seq-gap.session.jsonl"))
    assert gap[-1] == "With --mode lenient (the fixture reader's rules) it is corrupt too (format.seq-gap)."


def test_the_story_is_told_from_the_judgement_without_folding_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """explain feeds the fold exactly as verify does (judge_log's steps and state are the story's),
    and the state before the violating event names the ids active there."""
    from invariant.folding import Folder
    from replay.judge.verify import verify_path

    from .test_related import change, create

    events = [create(0, "a"), create(1, "b"), change(2, {"operation": "delete", "id": "a"})]
    events.append(change(3, {"operation": "delete", "id": "a"}))
    path = write_session(tmp_path / "s.session.jsonl", events, header("s"))
    fed = {"count": 0}
    feed = Folder.feed

    def counted(self: Folder, event: object) -> object:
        fed["count"] += 1
        return feed(self, event)

    monkeypatch.setattr(Folder, "feed", counted)
    verify_path(str(path))
    by_verify, fed["count"] = fed["count"], 0
    report, told = explain_path(str(path))
    assert report.violation is not None and report.violation.rule == "fold.delete.inactive"
    assert fed["count"] == by_verify > 0
    assert "a delete of an active id; active at that point: 'b'." in "\n".join(told)
