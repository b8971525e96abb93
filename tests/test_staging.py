"""Replay staging: DuckDB reading plain logs directly gives what copying their records gives."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import duckdb
import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay.duck import build as duck
from replay.duck import staging
from replay.duck.build import TABLES, replay
from replay.duck.staging import stage_session
from replay.lines import deepjson
from replay.logs.logfile import SessionLog
from replay.sources.discover import discover

from .conftest import ROOT
from .sessionfiles import ev, text_row, write_session

SESSIONS = ROOT / "fixtures" / "sessions"
REMINDERS = SESSIONS / "valid" / "reminders.session.jsonl"


@pytest.fixture(autouse=True)
def _not_inline(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about direct and copied staging: no fixture is small enough to be inlined
    here (the tests of inline staging set their own bound)."""
    monkeypatch.setattr(staging, "INLINE_BYTES", 0)


def _contents(db: Path) -> dict[str, list[tuple[object, ...]]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in ("records", *TABLES)}


def _sources(paths: list[str], tmp_path: Path) -> dict[str, bool]:
    out = tmp_path / "stage"
    out.mkdir()
    return {p: stage_session(p, n, out).source is not None for n, p in enumerate(paths, 1)}


def test_fixtures_stage_directly_where_they_can(tmp_path: Path) -> None:
    direct = _sources(list(discover([str(SESSIONS)])), tmp_path)
    assert direct[str(REMINDERS)]
    assert not direct[str(SESSIONS / "corrupt" / "seq-gap.session.jsonl")]  # lines after the gap are no records
    assert sum(direct.values()) >= len(direct) - 2


def test_direct_copied_and_inline_staging_give_the_same_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inputs = list(discover([str(SESSIONS)]))
    replay(inputs, tmp_path / "direct.duckdb")
    monkeypatch.setattr(staging, "INLINE_BYTES", 1 << 20)
    replay(inputs, tmp_path / "inline.duckdb")
    monkeypatch.setattr(staging, "INLINE_BYTES", REMINDERS.stat().st_size)  # some inline, some not, one batch
    replay(inputs, tmp_path / "mixed.duckdb")
    monkeypatch.setattr(staging, "INLINE_BYTES", 0)
    monkeypatch.setattr(staging, "_may_read_directly", lambda path: False)
    assert not any(_sources(inputs, tmp_path).values())
    replay(inputs, tmp_path / "copied.duckdb")
    expected = _contents(tmp_path / "direct.duckdb")
    for name in ("inline", "mixed", "copied"):
        assert _contents(tmp_path / f"{name}.duckdb") == expected, name


def test_a_small_session_is_staged_inline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(staging, "INLINE_BYTES", REMINDERS.stat().st_size + 1)
    staged = stage_session(str(REMINDERS), 3, tmp_path)
    assert list(tmp_path.iterdir()) == [] and staged.source is None and staged.records is not None
    rows = staged.records.splitlines()
    assert len(rows) == len(REMINDERS.read_bytes().splitlines()) - 1  # every record, not the header
    assert all(row.startswith(b"3\x1f") for row in rows)
    monkeypatch.setattr(staging, "INLINE_BYTES", REMINDERS.stat().st_size)  # not smaller: staged directly
    assert stage_session(str(REMINDERS), 4, tmp_path).source is not None


@pytest.mark.parametrize(
    ("name", "change"),
    [
        ("crlf", lambda b: b.replace(b"\n", b"\r\n")),  # DuckDB's reader would end lines at CR
        ("bom", lambda b: b"\xef\xbb\xbf" + b),  # DuckDB's reader drops a byte-order mark
        ("torn", lambda b: b[:-5]),  # the last line has no LF: a crash tail, not a record
        ("blank", lambda b: b.replace(b"\n", b"\n\n", 3)),  # a blank line is no record
        ("tabs", lambda b: b.replace(b'","', b'",\t"')),  # tab whitespace stays as written
    ],
)
def test_logs_duckdb_would_split_differently_are_copied(
    tmp_path: Path, name: str, change: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / f"{name}.session.jsonl"
    log.write_bytes(change(REMINDERS.read_bytes()))  # type: ignore[operator]
    reader = SessionLog(str(log))
    expected = [(e.line, e.event_index) for e in reader.entries()]
    source = _sources([str(log)], tmp_path)[str(log)]
    assert source == (name == "tabs")
    db = tmp_path / "x.duckdb"
    replay([str(log)], db)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT line, idx FROM records ORDER BY line").fetchall() == expected
        assert con.execute("SELECT count(*) FROM events").fetchall() == [(reader.event_count,)]


def test_a_log_changed_after_staging_fails_loudly(tmp_path: Path) -> None:
    log = tmp_path / "live.session.jsonl"
    log.write_bytes(REMINDERS.read_bytes())
    stage = tmp_path / "stage"
    stage.mkdir()
    staged = stage_session(str(log), 1, stage)
    assert staged.source is not None
    log.write_bytes(REMINDERS.read_bytes().replace(b'"turn":1', b'"turn":10', 1))  # one line one byte longer
    con = duckdb.connect()
    con.execute(f"CREATE TABLE records ({duck._RECORD_TABLE})")
    with pytest.raises(duckdb.Error, match="changed while it was replayed"):
        duck._ingest(con, stage, [(1, staged)])


def test_a_log_growing_after_staging_loads_what_was_staged(tmp_path: Path) -> None:
    log = tmp_path / "live.session.jsonl"
    source = REMINDERS.read_bytes()
    log.write_bytes(source)
    stage = tmp_path / "stage"
    stage.mkdir()
    staged = stage_session(str(log), 1, stage)
    with log.open("ab") as f:  # the harness appends while the replay runs
        f.write(source.splitlines(keepends=True)[-1])
    con = duckdb.connect()
    con.execute(f"CREATE TABLE records ({duck._RECORD_TABLE})")
    duck._ingest(con, stage, [(1, staged)])
    assert con.execute("SELECT count(*) FROM records").fetchall() == [(len(source.splitlines()) - 1,)]


def test_a_changed_log_is_a_replay_failure_not_a_traceback(tmp_path: Path) -> None:
    """The CLI reports the loud failure as such (exit 2), leaving no database behind."""
    script = (
        "import sys; from replay import cli; from replay.duck import staging\n"
        "real = staging.stage_session\n"
        "def stage_then_change(path, *a, **k):\n"
        "    staged = real(path, *a, **k)\n"
        "    open(path, 'ab').close(); data = open(path, 'rb').read()\n"
        "    open(path, 'wb').write(data.replace(b'\"turn\":1', b'\"turn\":10', 1))\n"
        "    return staged\n"
        "staging.stage_session = stage_then_change; staging.INLINE_BYTES = 0  # staged directly\n"
        "from replay.duck import build; build.stage_session = stage_then_change\n"
        "cli.main(['replay', sys.argv[1], '--db', sys.argv[2], '--jobs', '1'])\n"
    )
    log = tmp_path / "live.session.jsonl"
    log.write_bytes(REMINDERS.read_bytes())
    db = tmp_path / "x.duckdb"
    result = subprocess.run(
        [sys.executable, "-c", script, str(log), str(db)], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert result.returncode == 2, result.stderr
    assert "replay failed" in result.stderr and "changed while it was replayed" in result.stderr
    assert "Traceback" not in result.stderr
    assert not db.exists()


def _with_lone_surrogates(tmp_path: Path) -> Path:
    """The reminders log with lone surrogates (JSON escapes) in its session id and first prompt."""
    data = REMINDERS.read_bytes()
    data = data.replace(b'"id":"a1b2c3d4-reminders"', b'"id":"a1b2\\udc00"', 1)
    data = data.replace(b'"prompt":"', b'"prompt":"\\ud800', 1)
    log = tmp_path / "surrogates.session.jsonl"
    log.write_bytes(data)
    return log


def test_lone_surrogates_are_staged_as_replacement_characters(tmp_path: Path) -> None:
    """A JavaScript string may hold a lone surrogate; DuckDB can hold neither it nor its JSON
    escape, so the database has U+FFFD in its place, and every table and view reads."""
    log = _with_lone_surrogates(tmp_path)
    (report,) = replay([str(log)], tmp_path / "x.duckdb").reports
    assert report.verdict == "ok"
    with duckdb.connect(str(tmp_path / "x.duckdb"), read_only=True) as con:
        assert con.execute("SELECT session_id, header ->> 'id' FROM sessions").fetchall() == [("a1b2\ufffd",) * 2]
        assert con.execute("SELECT count(*) FROM schedules WHERE prompt LIKE '\ufffd%'").fetchall() == [(1,)]
        assert con.execute("SELECT count(*) FROM schedule_changes WHERE prompt LIKE '\ufffd%'").fetchall() == [(1,)]
        assert con.execute("SELECT count(data) FROM events").fetchall() == [(report.events,)]
        for table in TABLES:
            con.execute(f"SELECT * FROM {table}").fetchall()


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_lone_surrogates_print_as_escapes(tmp_path: Path, fmt: str) -> None:
    """Printing a session id that has no UTF-8 form is no traceback; JSON output keeps its escape."""
    log = _with_lone_surrogates(tmp_path)
    result = subprocess.run(
        [sys.executable, "-c", "from replay.cli import main; main()", "verify", "--format", fmt, str(log)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "a1b2\\udc00" in result.stdout
    if fmt == "json":
        assert json.loads(result.stdout)[0]["session"] == "a1b2\udc00"


def test_a_file_name_with_undecodable_bytes_is_replayed(tmp_path: Path) -> None:
    """DuckDB cannot be given such a name, so the log is copied; its path is stored with U+FFFD."""
    log = tmp_path / os.fsdecode(b"bad\xff.session.jsonl")
    try:
        log.write_bytes(REMINDERS.read_bytes())
    except (OSError, UnicodeEncodeError):
        pytest.skip("this file system does not take undecodable file names")
    assert not staging._may_read_directly(str(log))
    (report,) = replay([str(log)], tmp_path / "x.duckdb").reports
    assert report.verdict == "ok"
    with duckdb.connect(str(tmp_path / "x.duckdb"), read_only=True) as con:
        (path,) = con.execute("SELECT path FROM sessions").fetchone() or ("",)
        assert path.endswith("bad\ufffd.session.jsonl")
        assert con.execute("SELECT count(*) FROM events").fetchall() == [(report.events,)]


def test_a_number_beyond_doubles_is_stored_as_null(tmp_path: Path) -> None:
    """JavaScript reads 1e400 as Infinity, which JSON.stringify writes as null; so does the database."""
    log = tmp_path / "big.session.jsonl"
    log.write_bytes(REMINDERS.read_bytes().replace(b'"data":{"turn":1}', b'"data":{"turn":1,"big":1e400}', 1))
    (report,) = replay([str(log)], tmp_path / "x.duckdb").reports
    assert report.verdict == "ok"
    with duckdb.connect(str(tmp_path / "x.duckdb"), read_only=True) as con:
        assert con.execute("SELECT data FROM events WHERE idx = 0").fetchall() == [('{"turn":1,"big":null}',)]


def test_a_staged_session_writes_its_lines_and_chunk_events_and_returns_its_small_rows(tmp_path: Path) -> None:
    """A session staged in files (not inline) writes its lines' descriptions (read directly) and,
    holding packed rows, their events (as large as the rows: not held in memory); the other
    small tables' rows are returned."""
    staged = stage_session(str(REMINDERS), 7, tmp_path)
    chunks = staging.staged_name("chunk_events", 7)
    assert sorted(p.name for p in tmp_path.iterdir()) == [chunks, staging.staged_name("lines", 7)]
    assert staged.chunk_events == str(tmp_path / chunks) and "chunk_events" not in staged.small
    assert set(staged.small) <= set(staging.SMALL_TABLES)
    sessions = [json.loads(row) for row in staged.small["sessions"].splitlines()]
    assert [(s["session_key"], s["verdict"]) for s in sessions] == [(7, "ok")]
    changes = staged.small["changes"].splitlines()
    assert len(changes) == staged.report.schedule_events
    assert {c.split(b"\x1f")[0] for c in changes} == {b"7"}


_FORK_CHILD = SESSIONS / "valid" / "fork-child.session.jsonl"
_STEP = b'{"type":"step/start","seq":1,"time":1785931200100,"data":{"turn":1,"step":1}}'
_BIG = 123456789012345678901234567890


@pytest.mark.parametrize(
    ("change", "created_at", "depth"),
    [
        ((b'"createdAt":1785931200000', b'"createdAt":true'), None, 0),  # a boolean is no number
        ((b'"createdAt":1785931200000', b'"createdAt":%d' % _BIG), None, 0),  # beyond 64 bits
        ((b'"delegationDepth":0', b'"delegationDepth":%d' % _BIG), 1785931200000, None),
        ((b'"createdAt":1785931200000', b'"createdAt":1785931200000.0'), 1785931200000, 0),  # the same number
        ((_STEP, _STEP[:-2] + b',"x":"\xff","big":%d}}' % _BIG), 1785931200000, 0),  # re-encoded record
        ((_STEP, _STEP[:-2] + b',"x":"\\ud800","inf":1e400}}'), 1785931200000, 0),
    ],
)
def test_odd_numbers_and_text_in_a_log_replay_without_failing(
    tmp_path: Path, change: tuple[bytes, bytes], created_at: int | None, depth: int | None
) -> None:
    """Every value a log can hold reaches DuckDB as JavaScript holds it (no traceback, no
    failed load): a header number column is NULL unless it is a safe integer."""
    source = _FORK_CHILD.read_bytes()
    assert change[0] in source
    log = tmp_path / "odd.session.jsonl"
    log.write_bytes(source.replace(change[0], change[1], 1))
    db = tmp_path / "odd.duckdb"
    replay([str(log)], db)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT created_at_ms, delegation_depth FROM sessions").fetchall() == [(created_at, depth)]
        assert con.execute("SELECT count(*) FROM events").fetchall() == [(27,)]
        record = con.execute("SELECT record FROM records WHERE line = 3").fetchone()
    assert record is not None
    stored = json.loads(record[0])
    if b"big" in change[1]:
        assert stored["data"]["big"] == float(_BIG) and stored["data"]["x"] == "\ufffd"
    if b"inf" in change[1]:
        assert stored["data"]["inf"] is None and stored["data"]["x"] == "\ufffd"  # JSON.stringify(Infinity)


@given(
    value=st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False)
        | st.text(st.characters(exclude_categories=[])),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=12,
    )
)
def test_staged_json_is_always_readable(value: object) -> None:
    """Whatever a log held, its staged JSON is UTF-8 JSON; values msgspec writes are unchanged."""
    out = staging._dumps(value)
    json.loads(out.decode("utf-8"))
    try:
        direct = msgspec.json.encode(value)
    except (TypeError, UnicodeEncodeError, RecursionError):
        return
    assert out == direct


@pytest.mark.parametrize("end", [b"\n", b"\r\n"])
@pytest.mark.parametrize("depth", [300, 5000])
def test_deeply_nested_records_replay_as_the_reference_reads_them(tmp_path: Path, depth: int, end: bytes) -> None:
    """JSON.parse has no nesting limit: a record nested deeper than msgspec reads or writes is
    still one event, stored as it was written (CR whitespace aside) or as JavaScript holds it."""
    header, first, *rest = _FORK_CHILD.read_bytes().split(b"\n")
    deep = b'{"type":"note/deep","seq":0,"time":1785931200000,"data":' + b"[" * depth + b"]" * depth + b"}"
    assert first.startswith(b'{"type":"turn/start","seq":0,')
    log = tmp_path / "deep.session.jsonl"
    log.write_bytes(b"\n".join([header, deep.replace(b":[", b": [", 1) + end.rstrip(b"\n"), *rest]))
    reader = SessionLog(str(log))
    list(reader.entries())
    assert reader.event_count == 27 and not reader.findings
    db = tmp_path / "deep.duckdb"
    replay([str(log)], db)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*), count(*) FILTER (owned) FROM events").fetchall() == [(27, 14)]
        stored = con.execute("SELECT record FROM records WHERE line = 2").fetchone()
    assert stored is not None
    if depth == 300:  # msgspec reads it: the bytes are kept, less the CR
        assert stored[0].encode() == deep.replace(b":[", b": [", 1)
    else:  # re-encoded: the same value (compared as text: == on nested lists recurses)
        assert deepjson.dumps(deepjson.parse(stored[0])) == deepjson.dumps(deepjson.parse(deep.decode()))


def test_the_header_s_placeholder_row_has_the_lines_columns() -> None:
    """DuckDB tolerated one field too many here (the seedLength column had left the rows)."""
    assert staging._SKIP.count(staging.SEP) == len(duck._LINE_COLUMNS) - 1


def _odd_rows_log(path: Path) -> list[dict[str, object]]:
    """A log of packed rows of every shape (one member, negative and safe-edge gaps, tool calls
    with and without a name, a reasoning row) between plain events; returns its events."""
    big = 2**53 - 1 - 10
    records: list[dict[str, object]] = [
        ev(0, time=5),
        text_row(1, ["only"], time0=-7),
        text_row(2, ["a", "b", "c"], dt=[-3, 10], time0=1_785_931_200_000),
        text_row(5, ["x", "y"], dt=[10], time0=big),
        {"type": "reasoning-chunks", "seq0": 7, "time0": 0, "data": {"turn": 2, "step": 3, "index": 1,
         "dt": [0], "texts": ["think", "ing"]}},
        {"type": "tool-call-chunks", "seq0": 9, "time0": 1, "data": {"turn": 2, "step": 3, "index": 0,
         "id": "call-1", "name": "schedule_create", "dt": [2], "args": ["{\"a\"", ":1}"]}},
        {"type": "tool-call-chunks", "seq0": 11, "time0": 4, "data": {"turn": 2, "step": 3, "index": 0,
         "id": "call-1", "dt": [], "args": ["!"]}},
        ev(12, "turn/end", {"turn": 2, "reason": {"kind": "completed"}}, time=9),
    ]  # fmt: skip
    write_session(path, records)
    log = SessionLog(str(path))
    return [event for entry in log.entries() for event in entry.events()]


@pytest.mark.parametrize("mode", ["direct", "copied", "inline"])
def test_packed_rows_of_every_shape_expand_as_the_reader_expands_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    expected = _odd_rows_log(tmp_path / "rows.session.jsonl")
    if mode == "copied":
        monkeypatch.setattr(staging, "_may_read_directly", lambda path: False)
    if mode == "inline":
        monkeypatch.setattr(staging, "INLINE_BYTES", 1 << 20)
    db = tmp_path / "rows.duckdb"
    replay([str(tmp_path / "rows.session.jsonl")], db)
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT idx, type, time_ms, data FROM events ORDER BY idx").fetchall()
    assert [(i, t, ms, json.loads(d)) for i, t, ms, d in rows] == [
        (e["seq"], e["type"], e["time"], e["data"]) for e in expected
    ]


def test_a_session_s_longest_line_is_its_longest_row_not_the_sum_of_its_rows(tmp_path: Path) -> None:
    """DuckDB sizes its line buffers by the longest line (build._line_options): the bound given
    for the gathered small rows is the longest row. The sum of a session's rows (a 1 GB log's
    chunk events summed to 750 MB) asked DuckDB for a 1.5 GiB buffer, past its memory limit."""
    rows = [text_row(n, ["some text"] * 8) for n in range(0, 8 * 200, 8)]
    log = write_session(tmp_path / "session.jsonl", rows)
    stage = tmp_path / "stage"
    stage.mkdir()
    staged = stage_session(str(log), 1, stage)
    assert staged.chunk_events is not None
    chunk_bytes = Path(staged.chunk_events).read_bytes()
    chunk_rows = chunk_bytes.splitlines(keepends=True)
    assert len(chunk_rows) == 200
    longest_line = max(len(line) for line in log.read_bytes().splitlines(keepends=True))
    assert max(map(len, chunk_rows)) <= staged.longest <= max(longest_line, *map(len, chunk_rows)) + 64
    gathered = duck._Gathered(stage)
    gathered.add(staged)
    gathered.close()
    assert gathered.longest == staged.longest < len(chunk_bytes) / 10


def test_the_derived_tables_wait_for_a_large_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The derived tables are built while the last batches load, unless one of them is large (a
    1 GB log's records and its chunk events at once outgrew DuckDB's memory limit): then they
    wait, and the database is the same."""
    assert duck.overlaps([1 << 20, 16 << 20]) and duck.overlaps([])
    assert not duck.overlaps([1 << 20, 1 << 30]) and duck.overlaps([1 << 30, 1 << 20, 1 << 20])
    rows = [text_row(n, ["some text"] * 8) for n in range(0, 8 * 200, 8)]
    log = write_session(tmp_path / "session.jsonl", rows)
    replay([str(log)], tmp_path / "overlapped.duckdb")
    waited: list[bool] = []
    real = duck.overlaps
    monkeypatch.setattr(duck, "BATCH_BYTES", 1024)
    monkeypatch.setattr(duck, "overlaps", lambda batches: waited.append(not real(batches)) or real(batches))
    replay([str(log)], tmp_path / "waited.duckdb")
    assert waited == [True]
    assert _contents(tmp_path / "waited.duckdb") == _contents(tmp_path / "overlapped.duckdb")
