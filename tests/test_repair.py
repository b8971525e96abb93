"""`schedlog repair` (issue 68): a session the harness refuses given back by setting events
aside (invariant.setaside), never in place, verified before it is written: `ok`, every line it
did not write byte-identical to the input's, loaded by the published reader and folded."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import zstandard
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fixtures.upgrade import log_bytes, upgrade
from invariant.readers import READERS
from invariant.setaside import SET_ASIDE_TYPE, is_set_aside
from replay.cli import main
from replay.judge.verify import verify_bytes, verify_path
from replay.lines.jsonline import JsonLineError, parse_json_line
from replay.reading import Mode, Reading
from replay.sources.zstdframes import scan_frames
from replay.testing.strategies import CorruptLog, corrupt_logs
from replay.tools.plaintext import NotHeld, plaintext
from replay.tools.repair import CannotRepair, Repaired, repair_log, repair_path

from .conftest import ROOT
from .reference import engine, reference_dir

CORRUPT = sorted((ROOT / "fixtures" / "sessions" / "corrupt").glob("*.jsonl"))
FIXED_RATE = ROOT / "fixtures" / "formats" / "fixed-rate" / "v0" / "session.jsonl"


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


STRICT = Reading()


def held_to(original: bytes, repaired: Repaired, reading: Reading = STRICT) -> None:
    """What every repair must be: ok when judged again, each line it did not write (a line that
    is no set-aside event) one of the input's, in the input's order, and nothing more to repair."""
    out = _plain(repaired.data) if repaired.data[:4] == b"\x28\xb5\x2f\xfd" else repaired.data
    judged = verify_bytes(repaired.path, out, reading)
    assert judged.verdict == "ok", judged.findings
    kept = [line for line in _lines(out)[1:] if line and not line.startswith(b'{"type":"' + SET_ASIDE_TYPE.encode())]
    source = iter(_lines(original))
    assert all(any(line == other for other in source) for line in kept)  # (a subsequence, byte for byte)
    again = repair_log(repaired.path, out, reading)
    assert again.changes == () and again.data == out


def _plain(data: bytes) -> bytes:
    with zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True) as reader:
        return reader.read()


@pytest.mark.parametrize("path", CORRUPT, ids=lambda p: p.name)
def test_every_corrupt_fixture_is_repaired(path: Path) -> None:
    data = path.read_bytes()
    repaired = repair_path(str(path))
    assert repaired.before.verdict == "corrupt" and repaired.after.verdict == "ok" and repaired.changes
    held_to(data, repaired)


def test_a_repair_names_each_change_and_what_it_does_to_the_reminders() -> None:
    repaired = repair_path(str(ROOT / "fixtures" / "sessions" / "corrupt" / "seq-gap.session.jsonl"))
    shown = [(c.kind, c.line, c.seq, c.rule) for c in repaired.changes]
    assert shown == [("set-aside", 7, 9, "format.seq-gap"), ("set-aside", 38, 52, "fold.dispatch.inactive")]
    assert b'"seq":12' in repaired.changes[0].original  # (the original line, byte for byte)
    now = {r.id: (r.claimed, r.now, r.fires_again) for r in repaired.reminders}
    assert now == {
        "schedule-1": ("created", "never created", False),
        "schedule-2": ("created, then deleted", "cancelled", False),
        "schedule-3": ("created", "active", True),
    }
    aside = json.loads(_lines(repaired.data)[6])
    assert aside["type"] == SET_ASIDE_TYPE and aside["seq"] == 9 and aside["data"]["event"]["seq"] == 12


# --- the committed region (session-log.md §7.2) ------------------------------------------------


def _log(*events: object, header: dict[str, Any] | None = None) -> bytes:
    head = header or {"type": "session", "version": 0, "id": "s", "createdAt": 1, "cwd": "/p", "delegationDepth": 0}
    lines = [json.dumps(head), *(e if isinstance(e, str) else json.dumps(e) for e in events)]
    return "".join(line + "\n" for line in lines).encode()


def _ev(seq: int, tag: str = "goal/change", **data: object) -> dict[str, object]:
    return {"type": tag, "seq": seq, "time": 10 + seq, "data": data or {"n": seq}}


TURN_END = {"turn": 1, "reason": {"kind": "completed"}}
COMMITTED = {
    # after seq 0, before a committed turn/end at the seq given: (lines, the changes' kinds, or the refusal's words)
    "unparsable line": (["{not json", _ev(2)], 3, ["set-aside"]),
    "two unparsable lines": (["{", "[1,", _ev(3)], 4, ["set-aside", "set-aside"]),
    "damaged packed row": (['{"type":"text-chunks","seq0":1}', _ev(4)], 5, ["set-aside", "missing", "missing"]),
    "blank line": (["", _ev(1)], 2, ["blank"]),
    "missing seqs": ([_ev(3)], 4, ["missing", "missing"]),
    "a wrong seq": ([_ev(7), _ev(2)], 3, ["set-aside"]),
    "a duplicated line": ([_ev(0), _ev(1)], 2, ["duplicate"]),
    "garbage holding no seq": (["junk", _ev(1)], 2, "which events they held cannot be told"),
    "a different line at a seq": ([{**_ev(0), "data": {"other": 1}}, _ev(1)], 2, "which seq it holds"),
}


@pytest.mark.parametrize("case", sorted(COMMITTED))
def test_committed_corruption_is_set_aside_only_where_the_neighbours_prove_it(case: str) -> None:
    middle, end, expected = COMMITTED[case]
    data = _log(_ev(0), *middle, _ev(end, "turn/end", **TURN_END))
    assert verify_bytes("s.jsonl", data).verdict == "corrupt"
    if isinstance(expected, str):
        with pytest.raises(CannotRepair, match=expected):
            repair_log("s.jsonl", data)
        return
    repaired = repair_log("s.jsonl", data)
    assert [c.kind for c in repaired.changes] == expected
    held_to(data, repaired)


def test_a_defect_after_the_last_turn_end_is_the_harness_own_tail_and_stays() -> None:
    data = _log(_ev(0), _ev(1, "turn/end", **TURN_END), "{torn", _ev(9)) + b'{"type":"goal'
    repaired = repair_log("s.jsonl", data)
    assert [c.kind for c in repaired.changes] == []  # (ok already: the load drops the tail itself)
    assert repaired.before.verdict == "ok" and repaired.data == data


def test_a_torn_final_record_is_dropped_with_its_bytes_in_the_report() -> None:
    bad = {"type": "schedule/change", "seq": 1, "time": 5, "data": {"version": 2}}
    data = _log(_ev(0), bad, _ev(2, "turn/end", **TURN_END)) + b'{"type":"go'
    repaired = repair_log("s.jsonl", data)
    assert (repaired.changes[0].kind, repaired.changes[0].original) == ("torn", b'{"type":"go')
    held_to(data, repaired)


# --- schedule violations, every profile, the fork cut -------------------------------------------


def _as_log(log: CorruptLog, version: int) -> bytes:
    header = {"type": "session", "version": 0, "id": "g", "createdAt": 1, "cwd": "/p", "delegationDepth": 0}
    if log.seed_length:
        header["seedLength"] = log.seed_length
    events = [{**e, "time": e.get("time", 0)} for e in log.events]
    if version == 0:
        return log_bytes(header, events)
    head, upgraded, _ = upgrade(header, events, version)
    return log_bytes(head, upgraded)


@settings(max_examples=60)
@given(log=corrupt_logs(), version=st.sampled_from([0, 4]), mode=st.sampled_from([Mode.STRICT, Mode.LENIENT]))
def test_a_generated_corrupt_log_is_repaired_or_refused_for_a_reason(log: CorruptLog, version: int, mode: Mode) -> None:
    """Broken in one place at an event (schedlog's corrupt_logs strategy), as v0 and as v4: the
    repair sets aside the fewest schedule changes the fold needs, never an inherited one; a
    log-level break (a seedLength past the log) is refused, said why."""
    data = _as_log(log, version)
    reading = Reading(mode=mode)
    before = verify_bytes("g.jsonl", data, reading)
    if before.verdict != "corrupt":
        return  # (the break is in an inherited event, or upgrading dropped it: nothing to repair)
    try:
        repaired = repair_log("g.jsonl", data, reading)
    except CannotRepair as err:
        assert log.index is None or "inherited" in str(err), err
        return
    assert all(c.seq is None or c.seq >= (before.seed_length or 0) for c in repaired.changes)  # type: ignore[operator]
    assert {c.rule for c in repaired.changes} >= ({log.rule} if log.index is not None else set())
    held_to(data, repaired, reading)


@pytest.mark.parametrize("profile", sorted(READERS))
def test_each_profile_reader_gets_set_aside_events_it_loads(profile: str) -> None:
    """A set-aside event is marked ignorable exactly where the profile's reader takes the key
    (formats v2-v4 always): unknown types are legal to the readers without it."""
    from invariant.profiles import get_profile

    fixture = ROOT / "fixtures" / "formats" / profile.removesuffix("-exact") / "v0" / "session.jsonl"
    events = [json.loads(line) for line in fixture.read_bytes().splitlines()]
    bad = {"type": "schedule/change", "seq": verify_path(str(fixture)).events, "time": 1, "data": {"version": 2}}
    for version in (0, 4):
        data = log_bytes(events[0], [*events[1:], bad]) if version == 0 else _upgraded(fixture, events, bad)
        reading = Reading(profile=get_profile(profile))
        repaired = repair_log("p.jsonl", data, reading)
        aside = [json.loads(line) for line in _lines(repaired.data)[1:] if SET_ASIDE_TYPE.encode() in line[:40]]
        assert len(aside) == 1 and is_set_aside(aside[0])
        assert ("ignorable" in aside[0]) == (version >= 2 or READERS[profile].ignorable)
        assert verify_bytes("p.jsonl", repaired.data, reading).verdict == "ok"


def _upgraded(fixture: Path, events: list[dict[str, Any]], bad: dict[str, Any]) -> bytes:
    from replay.logs.logfile import SessionLog

    log = SessionLog("f.jsonl", data=fixture.read_bytes())
    expanded = [e for entry in log.entries() for e in entry.events()]
    head, upgraded, _ = upgrade(events[0], [*expanded, bad], 4)
    return log_bytes(head, upgraded)


# --- the fuzzer's corrupt logs --------------------------------------------------------------------


def fuzzed_corrupt_logs(count: int) -> Iterator[tuple[int, str, bytes]]:
    """The corrupt logs among the first `count` inputs of the session-log fuzzer (seeded: line
    and byte edits of every fixture, plain and Zstandard, v0-v4; no store): index, name, bytes."""
    from fuzz.logs import make, sources

    pool = sources(ROOT / "no-real-logs")
    for index in range(count):
        item = make(20261207, index, pool)
        if item.source.startswith("store:"):
            continue
        try:
            data, _ = plaintext(item.name, item.data, 1 << 24, "repair")
        except NotHeld:
            continue
        if verify_bytes(item.name, data).verdict == "corrupt":
            yield index, item.name, data


def test_the_fuzzers_corrupt_logs_are_repaired_or_refused_never_broken() -> None:
    """A seeded sample of the session-log fuzzer's inputs (line and byte edits of every fixture,
    plain and Zstandard, v0-v4): each corrupt one is repaired (held_to) or refused with a
    reason; none raises anything else."""
    outcomes = {"repaired": 0, "refused": 0}
    for _, name, data in fuzzed_corrupt_logs(160):
        try:
            repaired = repair_log(name, data)
        except CannotRepair as err:
            assert str(err), name
            outcomes["refused"] += 1
            continue
        held_to(data, repaired)
        outcomes["repaired"] += 1
    assert outcomes["repaired"] >= 5, outcomes


# --- the command: never in place, atomic, read-only input ----------------------------------------


def _digest(path: Path) -> tuple[str, float, int]:
    st_ = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), st_.st_mtime, st_.st_mode


def test_the_command_writes_out_and_never_its_input(tmp_path: Path) -> None:
    log = tmp_path / "gate.session.jsonl"
    log.write_bytes((CORRUPT[0]).read_bytes())
    log.chmod(0o444)  # (read-only: a write would fail loudly)
    before = _digest(log)
    out = tmp_path / "fixed.session.jsonl"
    done = CliRunner().invoke(main, ["repair", str(log), "--output", str(out)])
    assert done.exit_code == 0, done.output
    assert "corrupt -> ok" in done.output and f"written to {out}" in done.output
    assert verify_path(str(out)).verdict == "ok" and _digest(log) == before
    again = CliRunner().invoke(main, ["repair", str(log), "--output", str(out)])
    assert again.exit_code == 2 and "exists" in again.output and verify_path(str(out)).verdict == "ok"
    forced = CliRunner().invoke(main, ["repair", str(log), "--output", str(out), "--force", "--format", "json"])
    assert forced.exit_code == 0
    shown = json.loads(forced.stdout)
    assert shown["verdictBefore"] == "corrupt" and shown["verdictAfter"] == "ok" and shown["changes"]
    assert _digest(log) == before


def test_the_command_refuses_to_write_over_its_input(tmp_path: Path) -> None:
    log = tmp_path / "gate.session.jsonl"
    log.write_bytes(CORRUPT[0].read_bytes())
    (tmp_path / "link.jsonl").symlink_to(log)
    before = _digest(log)
    for target in (log, tmp_path / "link.jsonl", tmp_path / "." / log.name):
        done = CliRunner().invoke(main, ["repair", str(log), "--output", str(target), "--force"])
        assert done.exit_code == 2 and "itself" in done.output, done.output
    assert _digest(log) == before


def test_a_failed_run_writes_nothing(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    log.write_bytes(_log(_ev(0), "junk", _ev(1), _ev(2, "turn/end", **TURN_END)))
    before = _digest(log)
    out = tmp_path / "out.jsonl"
    done = CliRunner().invoke(main, ["repair", str(log), "--output", str(out)])
    assert done.exit_code == 1 and "cannot repair" in done.output
    assert not out.exists() and _digest(log) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]  # (no temporary file left)
    missing = CliRunner().invoke(main, ["repair", str(CORRUPT[0]), "--output", str(tmp_path / "no" / "out.jsonl")])
    assert missing.exit_code == 2 and not (tmp_path / "no").exists()
    for name, data in (("empty.jsonl", b""), ("text.jsonl", b"hello\n"), ("absent.jsonl", None)):
        if data is not None:
            (tmp_path / name).write_bytes(data)
        unread = CliRunner().invoke(main, ["repair", str(tmp_path / name), "--output", str(out)])
        assert unread.exit_code == 2 and name in unread.output and not out.exists(), unread.output


def test_a_dry_run_prints_the_plan_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    done = CliRunner().invoke(main, ["repair", str(CORRUPT[0]), "--output", str(out), "--dry-run"])
    assert done.exit_code == 0 and "dry run: nothing written" in done.output and "set-aside" in done.output
    assert not out.exists()


def test_a_zstandard_log_is_written_back_in_the_harness_framing(tmp_path: Path) -> None:
    data = CORRUPT[0].read_bytes()
    log = tmp_path / "gate.session.jsonl.zstd"
    log.write_bytes(zstandard.ZstdCompressor(write_checksum=True).compress(data))  # (framed whole by a tool)
    out = tmp_path / "fixed.session.jsonl.zstd"
    assert CliRunner().invoke(main, ["repair", str(log), "-o", str(out), "--mode", "lenient"]).exit_code == 0
    frames = scan_frames(out.read_bytes())
    assert len(frames) == 2
    first = zstandard.ZstdDecompressor().decompress(out.read_bytes()[frames[0].start : frames[0].end])
    assert first.count(b"\n") == 1 and first.endswith(b"\n")  # the header line alone
    assert verify_path(str(out)).verdict == "ok"
    again = tmp_path / "again.session.jsonl.zstd"
    assert CliRunner().invoke(main, ["repair", str(out), "-o", str(again)]).exit_code == 0
    assert again.read_bytes() == out.read_bytes()  # (a repaired log is given back byte for byte)


def test_a_stores_session_is_repaired_into_a_jsonl_log(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    store.write_bytes((ROOT / "fixtures" / "stores" / "sessions.db").read_bytes())
    sessions = [r for r in json.loads(CliRunner().invoke(main, ["verify", "--format", "json", str(store)]).stdout)]
    corrupt = [r for r in sessions if r["verdict"] == "corrupt" and r["violation"]]
    assert corrupt, sessions
    out = tmp_path / "out.jsonl"
    done = CliRunner().invoke(main, ["repair", corrupt[0]["path"], "-o", str(out)])
    assert done.exit_code == 0, done.output
    assert verify_path(str(out)).verdict == "ok"
    whole = CliRunner().invoke(main, ["repair", str(store), "-o", str(tmp_path / "all.jsonl")])
    assert whole.exit_code == 1 and "SESSION_ID" in whole.output


# --- the reference tier ---------------------------------------------------------------------------


def test_the_published_reader_loads_and_folds_what_repair_gives_back(tmp_path: Path) -> None:
    """Fixed-rate v0 logs (the vocabulary and format the published packages read), broken at a
    schedule change and in their committed region, repaired: the published persistence reader
    loads each, and the published fold folds it to schedlog's active records."""
    folder = reference_dir()
    events = [json.loads(line) for line in FIXED_RATE.read_bytes().splitlines()]
    header, body = events[0], events[1:]
    count = verify_path(str(FIXED_RATE)).events
    rng = random.Random(68)
    logs: list[tuple[Path, Repaired]] = []
    breaks = [
        {"version": 2},
        {"version": 1, "operation": "delete", "id": "never"},
        {"version": 1, "operation": "pause", "id": "x"},
    ]
    for k, data in enumerate(breaks):
        bad = {"type": "schedule/change", "seq": count, "time": 1, "data": data}
        end = {"type": "turn/end", "seq": count + 1, "time": 2, "data": TURN_END}
        for variant in ("violation", "unparsable"):
            lines = [json.dumps(header), *map(json.dumps, body), json.dumps(bad), json.dumps(end)]
            if variant == "unparsable":
                cut = rng.randrange(2, len(lines) - 1)
                lines[cut] = lines[cut][: len(lines[cut]) // 2]
            raw = "".join(line + "\n" for line in lines).encode()
            try:
                repaired = repair_log("r.jsonl", raw, Reading(profile=_fixed_rate()))
            except CannotRepair:
                continue
            path = tmp_path / f"{k}-{variant}.jsonl"
            path.write_bytes(repaired.data)
            logs.append((path, repaired))
    assert len(logs) >= 4
    paths = [str(p) for p, _ in logs]
    done = subprocess.run(
        [engine(), "load-session.mjs", *paths], cwd=folder, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    for (path, repaired), line in zip(logs, done.stdout.splitlines(), strict=True):
        answer = json.loads(line)
        assert "loaded" in answer and "foldError" not in answer, (path.name, answer)
        folded = repaired.after.folded
        assert folded is not None and answer["active"] == [r.id for r in folded.active]


def _marked(data: bytes) -> bytes:
    """A repaired log in the published reader's dialect: each set-aside event marked
    `ignorable: true` (its envelope's last key, as repair writes it for that reader)."""
    head = b'{"type":"' + SET_ASIDE_TYPE.encode() + b'"'
    lines = _lines(data)
    return b"\n".join(line[:-1] + b',"ignorable":true}' if line.startswith(head) else line for line in lines)


def test_every_corrupt_fixtures_repair_loads_in_the_published_reader_as_far_as_it_reads_calendar_logs(
    tmp_path: Path,
) -> None:
    """The corrupt fixtures are calendar logs, whose reader (0d8e8baabe) was never published: it
    has no unknown-type guard and no `ignorable` key, so repair leaves their set-aside events
    unmarked (a marker is an envelope that reader refuses: test_each_profile_reader_gets_...).
    The published reader (611615650f, the fixed-rate profile's) is the one the reference tier
    runs: unmarked, it refuses them for the set-aside type alone, where schedlog's model of its
    guard says it will (and loads the others); in its own dialect
    (the set-aside events marked) its session layer loads every one, and its fold folds each to
    schedlog's active reminders, or refuses the calendar vocabulary exactly as it refuses the
    valid calendar fixture the log was cut from (a log schedlog and 0d8e8baabe call ok)."""
    folder = reference_dir()
    valid = ROOT / "fixtures" / "sessions" / "valid" / "reminders.session.jsonl"
    paths, repairs = [valid], []
    for path in CORRUPT:
        repaired = repair_path(str(path))
        assert repaired.after.verdict == "ok"
        for dialect, data in (("unmarked", repaired.data), ("marked", _marked(repaired.data))):
            (out := tmp_path / f"{dialect}-{path.name}").write_bytes(data)
            paths.append(out)
        repairs.append(repaired)
    done = subprocess.run(
        [engine(), "load-session.mjs", *map(str, paths)], cwd=folder, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    control, *answers = map(json.loads, done.stdout.splitlines())
    assert "loaded" in control and "v1 schedule kind" in control["foldError"]  # (the calendar vocabulary)
    folded_alike = refused = 0
    for repaired, unmarked, marked in zip(repairs, answers[::2], answers[1::2], strict=True):
        guarded = verify_bytes(repaired.path, repaired.data, Reading(profile=_fixed_rate())).verdict == "unsupported"
        if guarded:  # (its guard refuses the set-aside type where schedlog's model of it says so, and only there)
            assert unmarked["refused"] == "SessionFormatUnsupportedError", unmarked
            assert SET_ASIDE_TYPE in unmarked["message"]
            refused += 1
        else:
            assert "loaded" in unmarked, unmarked
        assert "loaded" in marked, (repaired.path, marked)
        assert repaired.after.folded is not None
        if "foldError" in marked:
            assert marked["foldError"] == control["foldError"], (repaired.path, marked)
        else:
            assert marked["active"] == [r.id for r in repaired.after.folded.active], repaired.path
            folded_alike += 1
    assert folded_alike >= len(CORRUPT) - 1 and refused >= 1


def _kept(data: bytes, events: int) -> bytes:
    """What the harness's file reader hands its session layer of a log schedlog judged: the
    header and the records of its first `events` seqs (no blank line, no tail past them), as
    the reference adapter takes a log (the committed prefix, as given)."""
    kept = [data.split(b"\n", 1)[0]]
    for line in data.split(b"\n")[1:]:
        try:
            value = parse_json_line(line) if line.strip() else None
        except JsonLineError:  # (a line past the kept prefix: its tail)
            continue
        seq = value.get("seq", value.get("seq0")) if isinstance(value, dict) else None
        if type(seq) is int and seq < events:
            kept.append(line)
    return b"\n".join(kept) + b"\n"


def test_the_fuzzers_repaired_v0_logs_load_in_the_published_reader(tmp_path: Path) -> None:
    """The fuzzer's corrupt v0 logs (the format the published reader reads), repaired: what
    the harness's reader keeps of each is loaded by the published session layer in its dialect
    (set-aside events marked) and folded to schedlog's active reminders, or, for a calendar log,
    refused by its fold for the calendar vocabulary only; unmarked, it is refused exactly where
    schedlog's model of its guard says `unsupported`."""
    cases: list[tuple[Repaired, list[bool]]] = []
    paths: list[Path] = []
    for index, name, data in fuzzed_corrupt_logs(200):
        if b'"version":0' not in data.split(b"\n", 1)[0]:
            continue
        try:
            repaired = repair_log(name, data)
        except CannotRepair:
            continue
        kept = _kept(repaired.data, repaired.after.events)
        guards = []
        for dialect, log in (("unmarked", kept), ("marked", _marked(kept))):
            (path := tmp_path / f"{index}-{dialect}.jsonl").write_bytes(log)
            paths.append(path)
            guards.append(verify_bytes(name, log, Reading(profile=_fixed_rate())).verdict == "unsupported")
        cases.append((repaired, guards))
    assert len(cases) >= 8
    done = subprocess.run(
        [engine(), "load-session.mjs", *map(str, paths)],
        cwd=reference_dir(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    folded = 0
    for (repaired, guards), unmarked, marked in zip(cases, answers[::2], answers[1::2], strict=True):
        where = (repaired.path, unmarked, marked)
        for guarded, answer in zip(guards, (unmarked, marked), strict=True):  # (refused where the model says)
            assert ("refused" in answer) == guarded, where
            assert answer.get("refused", "SessionFormatUnsupportedError") == "SessionFormatUnsupportedError", where
        if guards[1]:  # (a type of the input's own that its reader refuses, not one repair wrote)
            assert SET_ASIDE_TYPE not in marked["message"], where
            continue
        assert repaired.after.folded is not None
        if "foldError" in marked:
            profile = repaired.after.profile
            assert profile is not None and profile.name == "calendar" and "v1 schedule kind" in marked["foldError"], (
                where
            )
        else:
            assert marked["active"] == [r.id for r in repaired.after.folded.active], where
            folded += 1
    assert folded >= len(cases) // 2


def _fixed_rate() -> Any:
    from invariant.profiles import get_profile

    return get_profile("fixed-rate")


def test_the_input_is_opened_read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every open of the input asks for reading only (a write mode would be a bug)."""
    import builtins

    log = tmp_path / "s.session.jsonl"
    log.write_bytes(CORRUPT[0].read_bytes())
    opened: list[str] = []
    real = builtins.open

    def spy(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if os.fspath(file) == str(log):
            opened.append(mode)
        return real(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy)
    repair_path(str(log))
    assert opened and all(set(mode) <= set("rb") for mode in opened), opened


def test_the_documented_set_aside_event_is_what_repair_writes() -> None:
    """docs/repair.md's example event is the line repair writes for the bundled seq-gap log."""
    from .documentation import BLOCKS

    (shown,) = [body for lang, body, _ in BLOCKS if lang == "json" and body.startswith('{"type":"schedlog/set-aside"')]
    repaired = repair_path(str(ROOT / "fixtures" / "sessions" / "corrupt" / "seq-gap.session.jsonl"))
    written = [line for line in _lines(repaired.data) if line.startswith(b'{"type":"schedlog/set-aside","seq":52,')]
    assert [shown.strip().encode()] == written


def _change(seq: int, **data: object) -> dict[str, object]:
    return {"type": "schedule/change", "seq": seq, "time": 1, "data": {"version": 1, **data}}


BREAKS: dict[str, Any] = {
    "payload version": lambda seq: _change(seq, version=2),
    "unknown operation": lambda seq: _change(seq, operation="pause", id="a"),
    "delete of nothing": lambda seq: _change(seq, operation="delete", id="nope"),
    "dispatch of nothing": lambda seq: _change(seq, operation="dispatch", id="nope"),
    "message without id": lambda seq: {**_ev(seq, "user/message", role="user", content=[]), "surfaceOp": "append"},
    "bad time": lambda seq: {**_ev(seq), "time": 1.5},
}
"""Ways to break one event of a log: each makes it corrupt wherever it lands before a turn/end."""


@settings(max_examples=40)
@given(
    profile=st.sampled_from(["after-only", "calendar", "fixed-rate"]),
    breaks=st.lists(st.tuples(st.sampled_from(sorted(BREAKS)), st.floats(0, 1)), min_size=1, max_size=3),
    unparsable=st.lists(st.floats(0, 1), max_size=2),
    version=st.sampled_from([0, 4]),
)
def test_a_log_of_every_profile_broken_anywhere_is_repaired(
    profile: str, breaks: list[tuple[str, float]], unparsable: list[float], version: int
) -> None:
    """Each profile's log with events replaced by broken ones, and lines damaged, anywhere before
    its last turn/end, as v0 and v4: repaired (held_to), the broken events set aside (with the
    damaged lines), or refused only for a damaged line whose events cannot be told."""
    from replay.logs.logfile import SessionLog

    fixture = ROOT / "fixtures" / "formats" / profile / "v0" / "session.jsonl"
    log = SessionLog("f.jsonl", data=fixture.read_bytes())
    events = [e for entry in log.entries() for e in entry.events()]
    header = dict(log.head.header or {})  # (read with the entries)
    if version:
        header, events, _ = upgrade(header, events, version)
    ends = [k for k, e in enumerate(events) if e["type"] == "turn/end"]
    lines = [json.dumps(e) for e in events]
    for how, where in breaks:
        k = int(where * ends[-1])
        lines[k] = json.dumps(BREAKS[how](k))
    for where in unparsable:
        k = int(where * ends[-1])
        lines[k] = lines[k][: len(lines[k]) // 2]
    data = "".join(line + "\n" for line in [json.dumps(header), *lines]).encode()
    reading = Reading(profile=_profile(profile))
    if verify_bytes("b.jsonl", data, reading).verdict != "corrupt":
        return
    try:
        repaired = repair_log("b.jsonl", data, reading)
    except CannotRepair as err:
        assert "cannot be told" in str(err) or "which seq it holds" in str(err), err
        return
    held_to(data, repaired, reading)


def _profile(name: str) -> Any:
    from invariant.profiles import get_profile

    return get_profile(name)
