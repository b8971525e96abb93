"""Related locations: the earlier events a violated rule compared against, per rule family."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from invariant import ScheduleLogError, fold
from invariant.errors import Related
from replay.cli import main

from .conftest import ROOT, protocol_examples

SESSIONS = ROOT / "fixtures" / "sessions"
T0 = 1785931200000


def change(seq: int, data: dict[str, Any]) -> dict[str, Any]:
    return {"type": "schedule/change", "seq": seq, "time": T0 + seq, "data": {"version": 1, **data}}


def create(seq: int, sid: str, kind: str = "after", target: str = "2026-08-05T12:05:00.000Z") -> dict[str, Any]:
    record: dict[str, Any] = {"id": sid, "kind": kind, "prompt": "p"}
    record |= {
        "after": {"afterSeconds": 300},
        "at": {},
        "every": {"everySeconds": 300},
        "cron": {"cron": "*/5 * * * *", "timeZone": "UTC"},
    }[kind]
    return change(seq, {"operation": "create", "schedule": {**record, "scheduledAt": target}})


def dispatch(seq: int, sid: str, **fields: str) -> dict[str, Any]:
    return change(seq, {"operation": "dispatch", "id": sid, **fields})


def noise(seq: int) -> dict[str, Any]:
    return {"type": "turn/start", "seq": seq, "time": T0 + seq, "data": {}}


CASES: dict[str, tuple[list[dict[str, Any]], int, str, int | None, list[Related]]] = {
    # family: (events, seedLength, rule, index, related)
    "reuse": (
        [create(0, "a"), noise(1), create(2, "a")],
        0,
        "fold.create.reuse",
        2,
        [Related("first-create", 0, "/data/schedule/id")],
    ),
    "inactive after delete": (
        [noise(0), create(1, "a"), change(2, {"operation": "delete", "id": "a"}), dispatch(3, "a")],
        0,
        "fold.dispatch.inactive",
        3,
        [Related("create", 1, "/data/schedule/id"), Related("ended", 2, "/data/operation")],
    ),
    "inactive after dispatch": (
        [create(0, "a"), dispatch(1, "a"), change(2, {"operation": "delete", "id": "a"})],
        0,
        "fold.delete.inactive",
        2,
        [Related("create", 0, "/data/schedule/id"), Related("ended", 1, "/data/operation")],
    ),
    "inactive, never created": ([dispatch(0, "ghost")], 0, "fold.dispatch.inactive", 0, []),
    "dispatch shape": (
        [create(0, "a", "every"), noise(1), dispatch(2, "a")],
        0,
        "fold.dispatch.kind-shape",
        2,
        [Related("create", 0, "/data/schedule/kind")],
    ),
    "before target (every, first target)": (
        [create(0, "e", "every"), dispatch(1, "e", acceptedAt="2026-08-05T12:04:59.999Z")],
        0,
        "fold.every.arith",
        1,
        [Related("target", 0, "/data/schedule/scheduledAt")],
    ),
    "before target (every, after a dispatch)": (
        [
            create(0, "e", "every"),
            dispatch(1, "e", acceptedAt="2026-08-05T12:06:00.000Z"),  # next target 12:10
            dispatch(2, "e", acceptedAt="2026-08-05T12:09:00.000Z"),
        ],
        0,
        "fold.every.arith",
        2,
        [Related("target", 1, "/data/acceptedAt")],
    ),
    "cron progression": (
        [
            create(0, "c", "cron"),
            dispatch(
                1,
                "c",
                occurrenceAt="2026-08-05T12:05:00.000Z",
                acceptedAt="2026-08-05T12:05:00.000Z",
                nextScheduledAt="2026-08-05T12:10:00.000Z",
            ),
            dispatch(
                2,
                "c",
                occurrenceAt="2026-08-05T12:05:00.000Z",
                acceptedAt="2026-08-05T12:20:00.000Z",
                nextScheduledAt="2026-08-05T12:25:00.000Z",
            ),
        ],
        0,
        "fold.cron.progression",
        2,
        [Related("target", 1, "/data/nextScheduledAt")],
    ),
    "gate": (
        [
            create(0, "a", "every"),
            create(1, "b", "every", "2026-08-05T12:06:00.000Z"),
            dispatch(2, "a", acceptedAt="2026-08-05T12:05:00.000Z"),
            noise(3),
            dispatch(4, "b", acceptedAt="2026-08-05T12:07:00.000Z"),
        ],
        0,
        "fold.gate",
        4,
        [Related("previous-batch", 2, "/data/acceptedAt")],
    ),
    "seed bounds": ([create(0, "a"), noise(1)], 5, "fold.seed.bounds", None, [Related("last-event", 1, "")]),
}


@pytest.mark.parametrize("family", CASES)
def test_each_rule_family_names_the_events_it_compared(family: str) -> None:
    events, seed, rule, index, related = CASES[family]
    with pytest.raises(ScheduleLogError) as info:
        fold(events, seed)
    err = info.value
    assert (err.rule, err.index, list(err.related)) == (rule, index, related)
    for r in err.related:  # each pointer resolves in its event
        value: Any = events[r.index]
        for part in r.pointer.split("/")[1:]:
            value = value[part]


FOLD_EXAMPLES = [e for e in protocol_examples() if "candidate" not in e and e["expect"] == "corrupt"]


@pytest.mark.parametrize("example", FOLD_EXAMPLES, ids=[e["name"] for e in FOLD_EXAMPLES])
def test_every_corrupt_example_relates_what_its_rule_compares(example: dict[str, Any]) -> None:
    events = example["events"]
    with pytest.raises(ScheduleLogError) as info:
        fold(events, example["seedLength"])
    err = info.value
    if err.rule.startswith("decode."):  # the event against its own shape: nothing earlier
        assert err.related == ()
        return
    never_created = err.rule.endswith(".inactive") and "never created" in err.message
    unrelated_seed = err.rule == "fold.seed.bounds" and (not events or "safe integer" in err.message)
    assert bool(err.related) != (never_created or unrelated_seed), err
    for r in err.related:
        assert err.index is None or r.index < err.index
        assert events[r.index]["type"] == "schedule/change" or r.role == "last-event"


def verify_json(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(main, ["verify", "--format", "json", *args], catch_exceptions=False)
    reports: list[dict[str, Any]] = json.loads(result.output)
    return reports


def test_the_corrupt_session_fixtures_locate_their_related_lines() -> None:
    expected = {  # read off the fixture files by hand
        "gate-too-soon.session.jsonl": [
            {"role": "previous-batch", "index": 27, "seq": 27, "line": 21, "pointer": "/data/acceptedAt"}
        ],
        "reused-id.session.jsonl": [
            {"role": "first-create", "index": 9, "seq": 9, "line": 7, "pointer": "/data/schedule/id"}
        ],
        "non-canonical-cron.session.jsonl": [],  # decode rules: the event against its shape alone
        "untrimmed-prompt.session.jsonl": [],
    }
    found = {Path(r["path"]).name: r["violation"]["related"] for r in verify_json(str(SESSIONS)) if r["violation"]}
    assert found == expected


def test_a_seed_length_beyond_the_log_points_at_the_header(tmp_path: Path) -> None:
    from .sessionfiles import header, write_session

    path = write_session(tmp_path / "s.session.jsonl", [create(0, "a"), noise(1)], header("s", seed_length=9))
    (report,) = verify_json(str(path))
    assert report["violation"]["rule"] == "fold.seed.bounds"
    assert report["violation"]["related"] == [
        {"role": "header", "index": None, "seq": None, "line": 1, "pointer": "/seedLength"},
        {"role": "last-event", "index": 1, "seq": 1, "line": None, "pointer": ""},  # not a schedule change
    ]


def test_related_locations_reach_every_output(tmp_path: Path) -> None:
    gate = str(SESSIONS / "corrupt" / "gate-too-soon.session.jsonl")
    run = CliRunner()
    text = run.invoke(main, ["verify", gate]).output
    assert "    related line 21 (event 27, /data/acceptedAt): the previous recurring batch" in text
    github = run.invoke(main, ["verify", "--format", "github", gate]).output
    assert f"::notice file={gate},line=21,title=fold.gate::the previous recurring batch" in github
    assert "(see line 21 (event 27, /data/acceptedAt): the previous recurring batch)" in github
    sarif = json.loads(run.invoke(main, ["verify", "--format", "sarif", gate]).output)
    (related,) = sarif["runs"][0]["results"][0]["relatedLocations"]
    assert (
        related["physicalLocation"]["region"]["startLine"] == 21 and related["properties"]["role"] == "previous-batch"
    )
    junit = run.invoke(main, ["verify", "--format", "junit", gate]).output
    assert "related line 21" in junit
    db = tmp_path / "r.duckdb"
    run.invoke(main, ["replay", str(SESSIONS), "--db", str(db)])
    rows = run.invoke(
        main, ["sql", str(db), "SELECT role, seq, line FROM violation_related ORDER BY line", "--format", "json"]
    ).output
    assert json.loads(rows) == [
        {"role": "first-create", "seq": 9, "line": 7},
        {"role": "previous-batch", "seq": 27, "line": 21},
    ]
