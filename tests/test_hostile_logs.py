"""One hostile log must not change another's verdict (issue 33): no process-wide state a log can
change, and JSON numbers of any length read as `JSON.parse` reads them (a double)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from invariant.cron import CronSyntaxError, parse_cron
from replay.cli import main
from replay.judge.verify import verify_bytes, verify_log, verify_path
from replay.logs import envelope
from replay.logs.logfile import SessionLog
from replay.reading import Reading

HEADER = json.dumps({"type": "session", "version": 0, "id": "s", "createdAt": 1, "cwd": "/w", "delegationDepth": 0})
BIG = "7" * 5000
"""An integer past Python's 4,300-digit conversion limit: valid JSON, a number (Infinity) to JSON.parse."""


def log(*lines: str) -> bytes:
    return "".join(f"{line}\n" for line in (HEADER, *lines)).encode()


HOSTILE = log('{"type":"\\ud800","seq":0,"time":1,"data":{}}')
"""An event whose type holds a lone surrogate (a JavaScript string may): no msgspec tag."""


def clean(tag: str) -> bytes:
    """A clean log of a type this process has not met yet, with a schedule change after it."""
    change = {"version": 1, "operation": "create", "schedule": {"id": "a", "kind": "after", "prompt": "p",
              "afterSeconds": 30, "scheduledAt": "2026-08-05T12:00:30.000Z"}}  # fmt: skip
    events = [
        {"type": tag, "seq": 0, "time": 1, "data": {}},
        {"type": "schedule/change", "seq": 1, "time": 2, "data": change},
    ]
    return log(*(json.dumps(e) for e in events))


def test_a_hostile_type_leaves_the_decoder_registry_as_it_was() -> None:
    before = dict(envelope.REGISTRY.classes)
    assert verify_bytes("hostile.jsonl", HOSTILE).verdict == "ok"  # the harness loads unknown types
    assert envelope.REGISTRY.classes == before
    report = verify_bytes("clean.jsonl", clean("hostile-test/first-sight"))
    assert (report.verdict, report.events, report.schedule_events) == ("ok", 2, 1)
    assert "hostile-test/first-sight" in envelope.REGISTRY.classes


def test_a_hostile_log_among_others_through_verify_jobs_replay_and_fleet(tmp_path: Path) -> None:
    """verify -j 2, replay and fleet over clean logs and the hostile one: each clean log's report
    is what it is alone, and the hostile one gets its own."""
    for n in range(6):
        (tmp_path / f"clean-{n}.session.jsonl").write_bytes(clean(f"hostile-test/kind-{n}"))
    (tmp_path / "hostile.session.jsonl").write_bytes(HOSTILE)
    alone = {p.name: verify_bytes(str(p), p.read_bytes()).to_json() for p in sorted(tmp_path.glob("*.jsonl"))}
    runner = CliRunner()
    done = runner.invoke(main, ["verify", "-j", "2", "--format", "json", str(tmp_path)], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert {Path(r["path"]).name: r for r in json.loads(done.stdout)} == {
        name: {**r, "path": str(tmp_path / name)} for name, r in alone.items()
    }
    db = tmp_path / "out" / "r.duckdb"
    db.parent.mkdir()
    done = runner.invoke(main, ["replay", str(tmp_path), "--db", str(db), "-j", "2"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*), count(*) FILTER (verdict = 'ok') FROM sessions").fetchone() == (7, 7)
    pytest.importorskip("distributed", reason="the dask extra (schedlog[dask]) is not installed")
    fleet = tmp_path / "fleet"
    done = runner.invoke(main, ["fleet", str(tmp_path), "--output", str(fleet), "--workers", "2"])
    assert done.exit_code == 0, done.output
    with duckdb.connect() as con:
        rows = con.execute(f"SELECT verdict, count(*) FROM read_parquet('{fleet}/*.parquet') GROUP BY ALL").fetchall()
    assert rows == [("ok", 7)]


@pytest.mark.parametrize("mode", ["strict", "lenient"])
@pytest.mark.parametrize("fast", [True, False])
def test_an_integer_past_the_digit_limit_reads_as_javascript_reads_it(fast: bool, mode: str) -> None:
    """Inside data it is a number like any other; as seq it is Infinity, out of line; as a time,
    no safe integer. Never "unparsable", never an escaping error, both reader paths alike."""
    reading = Reading.of(mode=mode)

    def report(*lines: str) -> dict[str, object]:
        return verify_log(SessionLog("big.jsonl", reading, log(*lines), fast=fast)).to_json()

    ok = report(f'{{"type":"goal/change","seq":0,"time":1,"data":{{"n":[{BIG},-{BIG}]}}}}')
    assert (ok["verdict"], ok["events"], ok["formatFindings"]) == ("ok", 1, [])
    gap = report(f'{{"type":"goal/change","seq":{BIG},"time":1,"data":{{}}}}')
    assert [f["message"].split(";")[0] for f in gap["formatFindings"]] == [  # type: ignore[attr-defined]
        "seq gap at line 2 (expected 0, got Infinity)"
    ]
    late = report(f'{{"type":"goal/change","seq":0,"time":{BIG},"data":{{}}}}')
    assert [f["code"] for f in late["formatFindings"]] == ["format.envelope"]  # type: ignore[attr-defined]
    assert "time must be a safe integer, got Infinity" in str(late["formatFindings"])


def test_a_cron_field_past_the_digit_limit_is_out_of_range() -> None:
    with pytest.raises(CronSyntaxError, match="is outside 0-59"):
        parse_cron(f"{BIG} * * * *")
    assert parse_cron("0000000000000000000000000005 * * * *").minutes == (5,)


DEEP = 40_000


def test_a_report_parses_with_json_loads_whatever_the_seed_length_holds(tmp_path: Path) -> None:
    """A seedLength nested 40,000 levels deep is echoed by its type: the JSON report still parses."""
    header = HEADER.replace('"delegationDepth"', '"seedLength":' + "[" * DEEP + "]" * DEEP + ',"delegationDepth"')
    path = tmp_path / "deep.session.jsonl"
    path.write_text(header + "\n")
    done = CliRunner().invoke(main, ["verify", "--format", "json", str(path)])
    (report,) = json.loads(done.stdout)
    assert report["seedLength"] == "an array too large to echo"
    assert report["verdict"] == "corrupt"


def test_the_report_draws_a_schedule_change_nested_past_any_recursion_limit(tmp_path: Path) -> None:
    from replay.tools.sessionview import session_view

    data = '{"version":1,"operation":"create","schedule":' + "[" * DEEP + "]" * DEEP + "}"
    path = tmp_path / "deep.session.jsonl"
    path.write_bytes(log(f'{{"type":"schedule/change","seq":0,"time":1,"data":{data}}}'))
    view = session_view(str(path), 0)
    (mark,) = [m for lane in view["lanes"] for m in lane["marks"]]
    assert mark[0] == "violation" and mark[4].startswith('{"type":"schedule/change"')


# --- the command line: a clear error and its documented status, never a traceback exiting 1 ----------


def test_a_nul_byte_in_a_path_list_is_a_usage_error(tmp_path: Path) -> None:
    listed = tmp_path / "list.txt"
    listed.write_bytes(b"a\0b\n")
    done = CliRunner().invoke(main, ["verify", "--files-from", str(listed)])
    assert done.exit_code == 2 and "NUL byte" in done.output


def test_an_unknown_scheduler_scheme_is_a_usage_error(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="the dask extra (schedlog[dask]) is not installed")
    (tmp_path / "s.session.jsonl").write_bytes(clean("hostile-test/fleet"))
    done = CliRunner().invoke(main, ["fleet", str(tmp_path), "--output", str(tmp_path / "o"), "--scheduler", "x://y"])
    assert done.exit_code == 2 and "--scheduler" in done.output
    assert not (tmp_path / "o").exists()  # refused before anything is written


@pytest.mark.parametrize("error", [ValueError("a bug"), RuntimeError("a bug")])
def test_an_internal_error_exits_with_its_own_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: Exception
) -> None:
    from replay.audit import auditrun
    from replay.exitstatus import INTERNAL_ERROR

    def broken(*args: object, **kwargs: object) -> None:
        raise error

    monkeypatch.setattr(auditrun, "verify_paths", broken)
    (tmp_path / "s.session.jsonl").write_bytes(clean("hostile-test/internal"))
    done = CliRunner().invoke(main, ["verify", str(tmp_path)])
    assert done.exit_code == INTERNAL_ERROR == 70
    assert "internal error" in done.output and "a bug" in done.output


# --- past the defect, and Zstandard bombs ----------------------------------------------------------

TURN_ENDS = [
    '{"type":"turn/end","seq":5,"time":1,"data":{}}',
    '{"type":"turn\\/end","seq":5,"time":1,"data":{}}',
    '{"type":"\\u0074urn/end","seq":5,"time":1,"data":{}}',
    '{"\\u0074ype":"turn\\u002fend","seq":5,"time":1,"data":{}}',
]


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("spelt", range(len(TURN_ENDS)))
def test_a_turn_end_past_the_defect_is_found_however_it_is_spelt(fast: bool, spelt: int) -> None:
    """Past the defect only a turn/end matters (it makes the log unloadable); the lines that
    may spell one are found by a byte scan, which must miss no spelling JSON allows."""
    filler = [f'{{"type":"goal/change","seq":{n},"time":1,"data":"\\\\ not it"}}' for n in range(2, 300)]
    data = log(
        '{"type":"goal/change","seq":0,"time":1,"data":{}}',
        '{"type":"goal/change","seq":7,"time":1,"data":{}}',
        *filler,
        TURN_ENDS[spelt],
    )
    report = verify_log(SessionLog("t.jsonl", Reading(), data, fast=fast)).to_json()
    (gap,) = report["formatFindings"]  # type: ignore[misc]
    assert gap["code"] == "format.seq-gap" and "cannot be loaded" in gap["message"]
    quiet = verify_log(SessionLog("t.jsonl", Reading(), data.replace(b"end", b"END"), fast=fast)).to_json()
    assert "dropped crash tail" in quiet["formatFindings"][0]["message"]  # type: ignore[index]


def zstd_log(body: bytes) -> bytes:
    import zstandard

    c = zstandard.ZstdCompressor(level=3)
    return c.compress((HEADER + "\n").encode()) + c.compress(body)


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_a_zstd_flood_of_blank_lines_is_read_at_the_cost_of_a_scan(mode: str) -> None:
    """4 MiB of newlines in a file of a few hundred bytes: strict refuses the first blank line
    and scans the rest in C; lenient skips them in bulk (was a minute of CPU)."""
    report = verify_bytes("flood.jsonl.zstd", zstd_log(b"\n" * (4 << 20)), Reading.of(mode=mode))
    codes = [f.code for f in report.findings]
    assert codes == (["format.zstd", "format.blank-line"] if mode == "strict" else [])


def test_zstd_plaintext_past_the_bound_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.logs import frames

    monkeypatch.setattr(frames, "ZSTD_FLOOR", 1 << 20)
    data = zstd_log(b'{"type":"goal/change","seq":0,"time":1,"data":{}}\n' + b" " * (2 << 20) + b"\n")
    assert frames.zstd_budget(len(data)) == 1 << 20
    report = verify_bytes("bomb.jsonl.zstd", data)
    (bound,) = [f for f in report.findings if f.code == "format.zstd.bound"]
    assert "schedlog's bound" in bound.message and bound.severity == "error"
    assert report.verdict == "corrupt"


def _many_events(n: int) -> bytes:
    return log(*(json.dumps({"type": "note", "seq": i, "time": i, "data": {"text": "x" * (i % 50)}}) for i in range(n)))


@pytest.mark.parametrize("chunk", [7, 64, 1000, 1 << 20])
@pytest.mark.parametrize("tail", [b"", b'{"type":"note","seq":40,"ti'])
def test_a_large_file_read_in_pieces_reads_as_the_whole_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, tail: bytes
) -> None:
    """A file past READ_CHUNK is read in pieces (lines cut anywhere between them) and gives the
    report the same bytes give read at once."""
    from replay.sources import bytesource

    data = _many_events(40) + tail
    path = tmp_path / "big.session.jsonl"
    path.write_bytes(data)
    monkeypatch.setattr(bytesource, "READ_CHUNK", chunk)
    assert isinstance(bytesource.load(str(path)), bytesource.FileSource) or chunk >= len(data)
    assert verify_path(str(path)).to_json() == verify_bytes(str(path), data).to_json()


def test_a_file_truncated_while_it_is_read_is_unreadable_not_a_crash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader never maps a log: a file cut short under it (SIGBUS for a mapped one, exit 135
    with no word) gives a verdict that says so."""
    from replay.sources import bytesource

    data = _many_events(2000)
    path = tmp_path / "shrinking.session.jsonl"
    path.write_bytes(data)
    monkeypatch.setattr(bytesource, "READ_CHUNK", 4096)
    log_file = SessionLog(str(path))
    _cut_while_reading(log_file.entries(), path, len(data) // 3)
    assert log_file.unreadable
    (finding,) = [f for f in log_file.findings if f.code == "format.unreadable"]
    assert f"shrank from {len(data):,} to " in finding.message


def test_a_zstd_file_truncated_while_it_is_read_is_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import zstandard

    from replay.sources import bytesource

    text = _many_events(200)
    head = text.index(b"\n") + 1
    compressor = zstandard.ZstdCompressor(level=1)
    data = compressor.compress(text[:head]) + compressor.compress(text[head:])
    path = tmp_path / "shrinking.session.jsonl.zstd"
    path.write_bytes(data)
    monkeypatch.setattr(bytesource, "READ_CHUNK", 64)
    source = bytesource.load(str(path))
    assert isinstance(source, bytesource.FileSource)
    _cut_while_reading(source.pieces(), path, len(data) // 2)
    assert source.shrunk
    source.close()
    monkeypatch.setattr(bytesource, "load", lambda _path: _shrinking(str(path), len(data)))
    report = verify_path(str(path))
    assert report.verdict == "unreadable"
    assert "shrank" in report.to_json()["formatFindings"][0]["message"]


def _cut_while_reading(reading: Iterator[object], path: Path, size: int) -> None:
    """Start `reading`, cut the file at `path` to `size` bytes, then read on to the end."""
    next(reading)
    with open(path, "r+b") as f:
        f.truncate(size)
    list(reading)


def _shrinking(path: str, size: int) -> object:
    """A FileSource that was opened when the file had `size` bytes (it has fewer now)."""
    from replay.sources import bytesource

    return bytesource.FileSource(open(path, "rb", buffering=0), size)


def test_a_dead_worker_is_said_and_exits_70_without_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from replay.audit import auditrun, fanout

    def dies(*args: object, **kwargs: object) -> object:
        raise fanout.WorkerDied(([str(tmp_path / "a.jsonl")], None))

    monkeypatch.setattr(auditrun, "verify_each", dies)
    (tmp_path / "a.jsonl").write_bytes(clean("hostile-test/dead-worker"))
    result = CliRunner().invoke(main, ["verify", "-j", "2", str(tmp_path)])
    assert result.exit_code == 70
    assert "Traceback" not in result.output
    assert f"schedlog: a worker process died while judging {tmp_path / 'a.jsonl'}" in result.output


@pytest.mark.parametrize("heard", [False, True])
def test_ctrl_c_while_the_command_line_loads_exits_130(monkeypatch: pytest.MonkeyPatch, heard: bool) -> None:
    """The console script (replay.entry:run, as pyproject names it) notes Ctrl-C from its start:
    a KeyboardInterrupt while the command line loads, or click's "Aborted!" (exit 1) once
    SIGINT was heard, exits 130 without a traceback."""
    import signal
    import tomllib

    import replay.cli
    from replay import entry, exitstatus

    pyproject = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())
    assert pyproject["project"]["scripts"]["schedlog"] == "replay.entry:run"

    def loading() -> None:
        if heard:
            exitstatus.SIGNALS.append(signal.SIGINT)
            raise SystemExit(1)
        raise KeyboardInterrupt

    monkeypatch.setattr(replay.cli, "main", loading)
    monkeypatch.setattr(exitstatus, "SIGNALS", [])
    monkeypatch.setattr(entry, "SIGNALS", exitstatus.SIGNALS)
    previous = signal.getsignal(signal.SIGINT)
    try:
        with pytest.raises(SystemExit) as exit:
            entry.run()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert exit.value.code == 130


@pytest.mark.parametrize(
    "first", [b"not a log\n", b"[1, 2]\n", b'{"no":"type"}\n', b'"text"\nmore text\n', b"\xff\xfe\n"]
)
def test_a_zstd_first_frame_without_a_log_is_unreadable_as_the_same_bytes_plain(first: bytes) -> None:
    """A first frame whose first line is no header and no event holds no session log, zstd or
    plain (it was CORRUPT as a malformed zstd log where the plain bytes were UNREADABLE)."""
    import zstandard

    text = first + log('{"type":"note","seq":0,"time":1,"data":{}}')
    frame = zstandard.ZstdCompressor().compress(text)
    plain, zstd = verify_bytes("x.jsonl", text), verify_bytes("x.jsonl.zstd", frame)
    assert (plain.verdict, zstd.verdict) == ("unreadable", "unreadable")
    # a header frame holding more than the header is a zstd log framed wrongly: a format defect
    assert verify_bytes("y.jsonl.zstd", zstandard.ZstdCompressor().compress(log())).verdict == "ok"
    two_lines = zstandard.ZstdCompressor().compress(log('{"type":"note","seq":0,"time":1,"data":{}}'))
    assert verify_bytes("z.jsonl.zstd", two_lines).verdict == "corrupt"


@pytest.mark.parametrize("fast", [True, False])
def test_deep_values_past_the_budget_stop_the_reading_with_their_own_finding(fast: bool) -> None:
    """Deep values (past the standard library's ~1,000 levels) within DEEP_BUDGET are read as
    JSON.parse reads them; past it, format.depth.bound, and nothing after it is read."""
    from replay.logs.logfile import DEEP_BUDGET

    def deep_note(seq: int, depth: int) -> str:
        return f'{{"type":"goal/change","seq":{seq},"time":1,"data":{"[" * depth + "]" * depth}}}'

    within = log(*(deep_note(i, 1_100) for i in range(DEEP_BUDGET // 3_000)))
    read = verify_log(SessionLog("t.jsonl", Reading(), within, fast=fast))
    assert (read.verdict, read.events, read.findings) == ("ok", DEEP_BUDGET // 3_000, ())
    past = log(deep_note(0, 10), deep_note(1, DEEP_BUDGET), deep_note(2, 10))
    report = verify_log(SessionLog("t.jsonl", Reading(), past, fast=fast))
    assert report.verdict == "corrupt" and [f.code for f in report.findings] == ["format.depth.bound"]
    assert report.events == 1


def test_deep_tool_arguments_count_against_the_same_budget() -> None:
    """A schedule_* call's arguments are JSON text the judge parses: deep ones are charged to the
    log's budget, and past it the reading stops the same way (not a RecursionError, not minutes)."""
    from replay.logs.logfile import DEEP_BUDGET

    deep = "[" * (DEEP_BUDGET // 4) + "]" * (DEEP_BUDGET // 4)
    events = [
        json.dumps({"type": "tool/call", "seq": i, "time": 1,
                    "data": {"turn": 1, "step": 1, "callId": f"c{i}", "name": "schedule_create", "arguments": deep}})
        for i in range(3)
    ]  # fmt: skip
    report = verify_bytes("t.jsonl", log(*events))
    bound = [f for f in report.findings if f.code == "format.depth.bound"]
    assert report.verdict == "corrupt" and len(bound) == 1 and report.events == 3
    one = verify_bytes("t.jsonl", log(events[0]))  # within the budget: read and judged
    assert not any(f.code == "format.depth.bound" for f in one.findings)


@pytest.mark.parametrize("seed", ["1e999", "-1e999", "[1e999]", '{"a":-1e999}'])
def test_a_seed_length_past_the_doubles_is_echoed_as_json(seed: str) -> None:
    """A header seedLength of 1e999 is Infinity to JavaScript; the JSON report echoed it as
    `Infinity`, which no strict JSON reader parses (found by the fuzzer)."""
    head = json.loads(HEADER)
    line = json.dumps(head)[:-1] + f',"seedLength":{seed}}}'
    report = verify_bytes("s.jsonl", (line + "\n").encode())

    def refuse(constant: str) -> object:
        raise ValueError(constant)

    from replay.cli.output import Format
    from replay.cli.output.reports import render

    assert json.loads(render([report], Format.JSON), parse_constant=refuse)[0]["seedLength"]
    assert json.loads(render([report], Format.JSONL), parse_constant=refuse)["seedLength"]
    assert "Infinity" in str(report.to_json()["seedLength"])
