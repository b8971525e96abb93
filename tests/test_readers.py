"""The harness's unknown-event guard and the `ignorable` marker, as each reader applies them
(issue 69; session-log.md §11.4, formats.md §4, invariant.readers): from 611615650f on (the
released packages, the fixed-rate profile's reader) a v0 or v1 log holding an event of a type
outside dsh-session's known list, unmarked, is refused as unsupported, and `ignorable: true` is
accepted; the earlier readers (0d8e8baabe's, the after-only revision's) take every type and
refuse the key; formats v2-v4 take the marker, and no guard is modelled for them."""

from __future__ import annotations

import json
import random
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from invariant.readers import KNOWN_TYPES_611615650F, READERS, UPGRADED_TYPES, guarded
from replay.cli import main
from replay.judge.verify import verify_path
from replay.modes import Mode
from replay.reading import Reading as ReadingOptions
from replay.tools.shrink import shrink_log

from .conftest import REAL_LOGS, ROOT, requires_real_logs
from .reference import engine, reference_dir

FORMATS = ROOT / "fixtures" / "formats"
V0 = {name: FORMATS / name / "v0" / "session.jsonl" for name in ("after-only", "calendar", "fixed-rate")}
V4 = FORMATS / "after-only" / "v4" / "session.v4.jsonl"
APPENDED = "plugin/custom-thing"
MARKS: dict[str, dict[str, object]] = {"unmarked": {}, "marked": {"ignorable": True}, "false": {"ignorable": False}}


def appended(log: Path, out: Path, tag: str = APPENDED, **extra: object) -> Path:
    """`log` with one event of type `tag` (its envelope `extra`) appended at the next seq."""
    report = verify_path(str(log))
    assert report.verdict == "ok", report.findings
    last = json.loads(log.read_bytes().splitlines()[-1])
    event = {"type": tag, "seq": report.events, "time": last.get("time", last.get("time0")), "data": {}, **extra}
    out.write_bytes(log.read_bytes() + json.dumps(event).encode() + b"\n")
    return out


EXPECTED = {
    # (reader of the log, the appended event's marker): (verdict, the finding that says why)
    ("after-only", "unmarked"): ("ok", None),
    ("after-only", "marked"): ("corrupt", "format.envelope"),
    ("after-only", "false"): ("corrupt", "format.envelope"),
    ("calendar", "unmarked"): ("ok", None),
    ("calendar", "marked"): ("corrupt", "format.envelope"),
    ("calendar", "false"): ("corrupt", "format.envelope"),
    ("fixed-rate", "unmarked"): ("unsupported", "format.event.unknown"),
    ("fixed-rate", "marked"): ("ok", None),
    ("fixed-rate", "false"): ("unsupported", "format.event.unknown"),  # (the guard runs before the envelope check)
    ("v4", "unmarked"): ("ok", None),
    ("v4", "marked"): ("ok", None),
    ("v4", "false"): ("corrupt", "format.envelope"),
}
"""The issue's table, for every profile's v0 reader and a v4 log. `ignorable: false` on an
unknown type is unsupported for the 611615650f reader, not an invalid envelope (as the issue's
table has it): the published reader's guard refuses the log before its envelopes are checked
(held against it in the reference tier below)."""


@pytest.mark.parametrize(("reader", "mark"), sorted(EXPECTED))
def test_an_unknown_event_type_and_its_marker_as_each_reader_reads_them(tmp_path: Path, reader: str, mark: str) -> None:
    name = "session.v4.jsonl" if reader == "v4" else "session.jsonl"  # (the name says the version)
    log = appended(V4 if reader == "v4" else V0[reader], tmp_path / name, **MARKS[mark])
    verdict, code = EXPECTED[(reader, mark)]
    report = verify_path(str(log))
    assert report.verdict == verdict, report.findings
    assert report.profile.name == ("after-only" if reader == "v4" else reader)
    codes = [f.code for f in report.findings]
    assert (code in codes) if code else not codes, codes
    if verdict == "unsupported":
        (found,) = [f for f in report.findings if f.code == code]
        assert f"'{APPENDED}'" in found.message and found.index == report.events - 1
        text = CliRunner().invoke(main, ["verify", "--no-cache", str(log)])
        assert text.exit_code == 3 and f"UNSUPPORTED {log}" in text.output and APPENDED in text.output
        shown = json.loads(CliRunner().invoke(main, ["verify", "--no-cache", "--format", "json", str(log)]).stdout)
        assert shown[0]["verdict"] == "unsupported" and code in [f["code"] for f in shown[0]["formatFindings"]]


LATER = {"unmarked": ("ok", None), "marked": ("ok", None), "false": ("corrupt", "format.envelope")}
"""Formats v2-v4: their envelope takes `ignorable: true`, and no guard is modelled for them."""


@pytest.mark.parametrize("mark", sorted(MARKS))
@pytest.mark.parametrize("version", [1, 2, 3, 4])
@pytest.mark.parametrize("profile", sorted(V0))
def test_the_table_for_every_profile_and_format_version(tmp_path: Path, profile: str, version: int, mark: str) -> None:
    """Each profile's log as format v1 (the v0 layout, the same reader) and as v2-v4 (fixtures/
    upgrade.py), with the unknown event appended: v1 as its profile's v0 reader answers, v2-v4
    as LATER says, the profile unchanged."""
    from fixtures.upgrade import upgrade

    from .test_formats import _v0, _write

    header, events = _v0(V0[profile])
    if version == 1:
        header = {**header, "version": 1}
    else:
        header, events, _ = upgrade(header, events, version)
    events = [*events, {"type": APPENDED, "seq": len(events), "time": events[-1]["time"], "data": {}, **MARKS[mark]}]
    report = verify_path(str(_write(tmp_path, header, events)))
    verdict, code = EXPECTED[(profile, mark)] if version == 1 else LATER[mark]
    assert (report.verdict, report.format_version, report.profile.name) == (verdict, version, profile), report.findings
    codes = [f.code for f in report.findings]
    assert (code in codes) if code else not codes, codes


def test_the_fixture_reader_warns_of_the_guard_and_loads_the_log(tmp_path: Path) -> None:
    """In lenient mode (the fixture reader, which has no guard) the guard's refusal is a warning."""
    log = appended(V0["fixed-rate"], tmp_path / "session.jsonl")
    report = verify_path(str(log), ReadingOptions(mode=Mode.LENIENT))
    assert report.verdict == "ok" and [f.code for f in report.findings] == ["format.event.unknown"]


def test_a_marked_event_is_evidence_of_the_reader_that_takes_the_marker(tmp_path: Path) -> None:
    """A log without schedule evidence whose events are marked is read as the released reader
    reads it (the marker is a tie-break toward the fixed-rate profile); with no marker and no
    evidence, the profile is undecided and the report names the readers that would refuse it."""
    header = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "cwd": "/p", "delegationDepth": 0}
    events = [
        {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}},
        {"type": "plugin/x", "seq": 1, "time": 2, "data": {}, "ignorable": True},
        {"type": "plugin/y", "seq": 2, "time": 3, "data": {}},
    ]
    log = tmp_path / "session.jsonl"
    log.write_text("".join(json.dumps(v) + "\n" for v in (header, *events)))
    report = verify_path(str(log))
    assert (report.profile.name, report.profile.source, report.verdict) == ("fixed-rate", "evidence", "unsupported")
    assert "'plugin/y' (seq 2, line 4)" in next(f.message for f in report.findings if f.code == "format.event.unknown")
    log.write_text("".join(json.dumps(v) + "\n" for v in (header, events[0], {**events[2], "seq": 1})))
    undecided = verify_path(str(log))
    assert (undecided.profile.source, undecided.verdict) == ("undecided", "ok")
    (found,) = undecided.findings
    assert found.code == "format.readers" and "611615650f" in found.message and "'plugin/y' (seq 1" in found.message


def test_a_legacy_shape_keeps_its_own_diagnostic(tmp_path: Path) -> None:
    """The guard runs on the events as upgraded: a steering/message (upgraded to a user message)
    is no unknown type, and an obsolete type is refused as corrupt before the guard looks."""
    assert not guarded("steering/message", False) and UPGRADED_TYPES["steering/message"] in KNOWN_TYPES_611615650F
    log = appended(V0["fixed-rate"], tmp_path / "mode.jsonl", "mode/set")
    report = verify_path(str(log))
    assert report.verdict == "corrupt" and "format.session" in [f.code for f in report.findings]


@requires_real_logs
def test_the_compact_events_of_a_real_log_are_refused_by_the_released_reader() -> None:
    """compaction-recovery.session.jsonl (0d8e8baabe) holds compact/start, compact/summary and
    compact/end, renamed compaction/* at 611615650f with no upgrade of the old names: its reader
    refuses the log as unsupported (the reference tier holds it); 0d8e8baabe's loads it."""
    log = str(REAL_LOGS / "compaction-recovery.session.jsonl")
    released = verify_path(log, ReadingOptions(profile=_profile("fixed-rate")))
    assert released.verdict == "unsupported"
    (found,) = [f for f in released.findings if f.code == "format.event.unknown"]
    assert "'compact/start' (seq 19, line 21)" in found.message
    assert verify_path(log, ReadingOptions(profile=_profile("calendar"))).verdict == "ok"
    undecided = verify_path(log)
    assert undecided.verdict == "ok" and "format.readers" in [f.code for f in undecided.findings]


def _profile(name: str) -> Any:
    from invariant.profiles import get_profile

    return get_profile(name)


_UNKNOWN = st.text(min_size=1, max_size=12).filter(lambda t: guarded(t, False))


@settings(max_examples=40)
@given(tag=_UNKNOWN, marked=st.booleans(), where=st.sampled_from(["fixed-rate", "calendar"]))
def test_an_event_of_any_unknown_type_is_refused_unmarked_and_skipped_marked(
    tmp_path_factory: pytest.TempPathFactory, tag: str, marked: bool, where: str
) -> None:
    """On the reader with the guard an event of a random unknown type is refused without the
    marker and skipped with it (the report is the log's without it, one event more); on the
    readers without it the type is legal and the marker is an unexpected key."""
    out = tmp_path_factory.mktemp("guard") / "session.jsonl"
    log = appended(V0[where], out, tag, **({"ignorable": True} if marked else {}))
    report, before = verify_path(str(log)), verify_path(str(V0[where]))
    if where == "fixed-rate" and not marked:
        assert report.verdict == "unsupported" and report.findings[-1].code == "format.event.unknown"
    elif where == "calendar" and marked:
        assert report.verdict == "corrupt" and report.findings[-1].code == "format.envelope"
    else:
        assert (report.verdict, report.findings, report.folded) == (before.verdict, before.findings, before.folded)
        assert report.events == before.events + 1


_TAGS = st.one_of(_UNKNOWN, st.sampled_from(["goal/change", "mode/set", "steering/message", "compact/start"]))


@settings(max_examples=60)
@given(
    tail=st.lists(st.tuples(_TAGS, st.booleans()), min_size=1, max_size=5),
    cuts=st.lists(st.floats(0, 1), min_size=1, max_size=3),
    where=st.sampled_from(["fixed-rate", "calendar", "after-only"]),
    fast=st.booleans(),
)
def test_what_a_reading_saw_of_types_and_markers_survives_its_resumption(
    tail: list[tuple[str, bool]], cuts: list[float], where: str, fast: bool
) -> None:
    """A reading resumed from its saved state (the cache's, watch's) knows the unknown types and
    markers it saw before: its report is the cold read's wherever the log was cut."""
    from replay.judge.verify import verify_log
    from replay.logs.logfile import SessionLog

    data = V0[where].read_bytes()
    count = verify_path(str(V0[where])).events
    for k, (tag, marked) in enumerate(tail):
        event = {"type": tag, "seq": count + k, "time": 1, "data": {}, **({"ignorable": True} if marked else {})}
        data += json.dumps(event).encode() + b"\n"

    def read(upto: bytes, state: Any = None) -> tuple[str, Any]:
        log = SessionLog("session.jsonl", ReadingOptions(), upto, fast=fast, resume=state, saving=True)
        return json.dumps(verify_log(log).to_json(), sort_keys=True), log.saved

    whole, _ = read(data)
    state = None
    for cut in sorted(int(c * len(data)) for c in cuts):
        _, state = read(data[:cut], state)
    if state is not None:
        assert read(data, state)[0] == whole


def test_every_profile_has_its_reader() -> None:
    from invariant.names import PROFILE_NAMES

    assert set(READERS) == set(PROFILE_NAMES) and READERS["fixed-rate"].known_types == KNOWN_TYPES_611615650F
    assert len(KNOWN_TYPES_611615650F) == 48


# --- the reference tier --------------------------------------------------------------------------


def test_the_known_types_are_the_published_session_packages() -> None:
    folder = reference_dir()
    for package in ("@deepseek-ai/dsh-session", "dsh-session-chunks"):
        source = (folder / "node_modules" / package / "lib" / "types" / "known-event-types.js").read_text()
        listed = re.search(r"KNOWN_SESSION_EVENT_TYPES = new Set\(\[(.*?)\]\)", source, re.S)
        assert listed is not None
        assert set(re.findall(r"'([^']+)'", listed[1])) == KNOWN_TYPES_611615650F, package


ODD_TYPES = ("mode/set", "request/header-delta", "Schedule/Change", "compaction/start", "compact/end", " turn/end", "")
"""Types near the list's edges: the obsolete ones (refused before the guard, as corrupt), one
of another case, a renamed one and its old name, one with a space, the empty one."""
ALPHABET = "abz/-_.:0Z \u00e9\u4e2d\U0001f600"


def test_the_published_reader_refuses_what_the_released_readers_guard_refuses(tmp_path: Path) -> None:
    """Generated logs with unknown types, marked, unmarked and marked false, of every profile's
    fixture, loaded by the published persistence reader (load-session.mjs): refused as
    unsupported exactly where schedlog, reading as that reader (the fixed-rate profile), says
    unsupported, and naming the same type and seq."""
    folder = reference_dir()
    logs: list[Path] = []
    for k, (name, source) in enumerate(sorted(V0.items())):
        for j, mark in enumerate(MARKS.values()):
            logs.append(appended(source, tmp_path / f"{k}-{j}.jsonl", f"{name}/extension.{j}", **mark))
        logs.append(appended(source, tmp_path / f"{k}-known.jsonl", "goal/change", ignorable=True))
    rng = random.Random(69)
    for j, tag in enumerate([*ODD_TYPES, *("".join(rng.choices(ALPHABET, k=rng.randint(1, 14))) for _ in range(24))]):
        mark = MARKS[rng.choice(sorted(MARKS))]
        logs.append(appended(V0["fixed-rate"], tmp_path / f"odd-{j}.jsonl", tag, **mark))
    if REAL_LOGS.is_dir():
        logs.append(REAL_LOGS / "compaction-recovery.session.jsonl")
    done = subprocess.run(
        [engine(), "load-session.mjs", *map(str, logs)], cwd=folder, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(answers) == len(logs)
    released = ReadingOptions(profile=_profile("fixed-rate"))
    for log, answer in zip(logs, answers, strict=True):
        report = verify_path(str(log), released)
        refused = answer.get("refused") == "SessionFormatUnsupportedError"
        assert refused == (report.verdict == "unsupported"), (log.name, answer, report.verdict, report.findings)
        if refused:
            (found,) = [f for f in report.findings if f.code == "format.event.unknown"]
            tag, seq = re.search(r'event type "(.*?)" \(seq (\d+)\)', answer["message"]).groups()  # type: ignore[union-attr]
            assert f"'{tag}' (seq {seq}," in found.message


@pytest.mark.parametrize("profile", ["fixed-rate", "calendar"])
def test_a_simulated_log_marks_the_events_its_reader_would_refuse(tmp_path: Path, profile: str) -> None:
    """Every log schedlog writes is one its reader loads: the simulator marks an event of a type
    its profile's reader does not know `ignorable: true`, where that reader takes the marker."""
    at = "2026-08-05T12:00:00.000Z"
    steps = [{"at": at, "do": "log", "args": {"type": t, "data": 1}} for t in ("plugin/x", "goal/change")]
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"start": at, "steps": steps}))
    log = tmp_path / "out.jsonl"
    done = CliRunner().invoke(main, ["simulate", str(scenario), "--profile", profile, "--log", str(log)])
    assert done.exit_code == 0, done.output
    events = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    assert [e["type"] for e in events if e.get("ignorable") is True] == (
        ["plugin/x"] if profile == "fixed-rate" else []
    )
    assert verify_path(str(log), ReadingOptions(profile=_profile(profile))).verdict == "ok"


def test_a_shrunk_log_keeps_each_kept_events_marker(tmp_path: Path) -> None:
    """shrink writes no event of its own: a line it keeps keeps its type and its marker, so a
    log the released reader loads shrinks to one it loads (no unmarked unknown type appears)."""
    original = ROOT / "fixtures" / "sessions" / "corrupt" / "gate-too-soon.session.jsonl"
    lines = original.read_bytes().splitlines()
    step = json.loads(lines[2])  # step/start, seq 1: one the rule does not need, made a marked plugin event
    marked = {"type": "plugin/x", "seq": step["seq"], "time": step["time"], "data": {}, "ignorable": True}
    lines[2] = json.dumps(marked).encode()
    data = b"\n".join(lines) + b"\n"
    before = verify_path(_write(tmp_path / "marked.session.jsonl", data))
    assert (before.verdict, before.violation and before.violation.rule) == ("corrupt", "fold.gate")
    shrunk = shrink_log("marked.session.jsonl", data)
    kept = [json.loads(line) for line in shrunk.data.splitlines()[1:]]
    assert all(e.get("ignorable") is True for e in kept if guarded(e["type"], False)), kept
    assert {e["type"] for e in kept} <= {json.loads(line)["type"] for line in lines[1:]}
    after = verify_path(_write(tmp_path / "shrunk.session.jsonl", shrunk.data))
    assert (after.verdict, after.violation and after.violation.rule) == ("corrupt", "fold.gate")


def _write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)
