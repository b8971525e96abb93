"""`schedlog replay` into DuckDB, `sql` and `inspect`."""

from __future__ import annotations

import io
import json
import math
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from replay.audit import fanout
from replay.cli import main
from replay.cli import running as cli
from replay.cli.output import ROW_FORMATS
from replay.cli.output import rows as row_output
from replay.duck import build as duck
from replay.duck import query, staging
from replay.duck.build import TABLES, TargetError, replay
from replay.duck.staging import StagedSession
from replay.lines import deepjson
from replay.logs.logfile import SessionLog
from replay.reading import Reading
from replay.sources.discover import discover

from .conftest import REAL_LOGS, ROOT, requires_real_logs

SESSIONS = ROOT / "fixtures" / "sessions"
EXPECTED = json.loads((SESSIONS / "expected.json").read_text())


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def run_catching(*args: str) -> tuple[int, str]:
    """Like `run`, for commands that end with a usage error (output includes the message)."""
    result = CliRunner().invoke(main, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def fixtures_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("db") / "fixtures.duckdb"
    replay(list(discover([str(SESSIONS)])), db)
    return db


def of(path: object) -> str:
    """SQL condition selecting one session by path."""
    return f"session_key = (SELECT session_key FROM sessions WHERE path = '{path}')"


def q(db: Path, sql: str) -> list[tuple[object, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        con.execute("SET TimeZone = 'UTC'")
        return con.execute(sql).fetchall()


def test_counts_match_the_reader(fixtures_db: Path) -> None:
    paths = list(discover([str(SESSIONS)]))
    rows = dict(q(fixtures_db, "SELECT path, event_count FROM sessions"))  # type: ignore[arg-type]
    assert len(rows) == len(paths)
    for path in paths:
        log = SessionLog(path)
        entries = list(log.entries())
        assert rows[path] == log.event_count
        counted = q(fixtures_db, f"SELECT count(*) FROM events JOIN sessions USING (session_key) WHERE path = '{path}'")
        assert counted == [(log.event_count,)]
        schedule = sum(1 for e in entries if e.event is not None and e.event.get("type") == "schedule/change")
        changes = q(
            fixtures_db,
            f"SELECT count(*) FROM schedule_changes JOIN sessions USING (session_key) WHERE path = '{path}'",
        )
        assert changes == [(schedule,)]
        stored = q(fixtures_db, f"SELECT line, idx, packed FROM records WHERE {of(path)} ORDER BY line")
        assert stored == [(e.line, e.event_index, e.row is not None) for e in entries]


def test_owned_events_start_at_the_seed_length(fixtures_db: Path) -> None:
    """Every event and schedule change is owned from the session's seedLength on (a fork child
    inherits its first events), as the records are staged before the seedLength is known."""
    for path in discover([str(SESSIONS)]):
        log = SessionLog(path)
        list(log.entries())
        seed = log.seed_length
        if type(seed) is not int or seed < 0:
            continue
        owned = q(fixtures_db, f"SELECT idx, owned FROM events WHERE {of(path)} ORDER BY idx")
        assert owned == [(n, n >= seed) for n in range(log.event_count)], path
        changes = q(fixtures_db, f"SELECT idx, owned FROM schedule_changes WHERE {of(path)} ORDER BY idx")
        assert all(flag == (n >= seed) for n, flag in changes), path
    child = str(SESSIONS / "valid" / "fork-child.session.jsonl")
    assert q(fixtures_db, f"SELECT count(*) FILTER (NOT owned), count(*) FROM events WHERE {of(child)}") == [(13, 27)]


def test_a_seed_length_written_as_a_float_is_the_same_number(tmp_path: Path) -> None:
    """JSON has one number type: the reference (and the fold) read seedLength 13.0 as 13."""
    child = (SESSIONS / "valid" / "fork-child.session.jsonl").read_bytes()
    assert b'"seedLength":13,' in child
    log = tmp_path / "float-seed.session.jsonl"
    log.write_bytes(child.replace(b'"seedLength":13,', b'"seedLength":13.0,'))
    db = tmp_path / "f.duckdb"
    replay([str(log)], db)
    assert q(db, "SELECT seed_length, verdict FROM sessions") == [(13, "ok")]
    assert q(db, "SELECT count(*) FILTER (NOT owned), count(*) FILTER (owned) FROM events") == [(13, 14)]


@pytest.mark.parametrize("name", sorted(n for n, e in EXPECTED.items() if e.get("rule")))
def test_corrupt_fixture_has_exactly_one_violation_row(fixtures_db: Path, name: str) -> None:
    path = str(SESSIONS / name)
    rows = q(
        fixtures_db,
        f"SELECT index, seq, line, rule, code FROM violations WHERE {of(path)}",
    )
    e = EXPECTED[name]
    assert rows == [(e["index"], e["index"], e["line"], e["rule"], "corrupt_schedule_log")]
    status = q(
        fixtures_db,
        f"SELECT status FROM schedule_changes WHERE {of(path)} AND idx = {e['index']}",
    )
    assert status == [("violation",)]


def test_valid_fixtures_have_no_violation_rows(fixtures_db: Path) -> None:
    assert q(
        fixtures_db, "SELECT count(*) FROM violations v JOIN sessions s USING (session_key) WHERE s.verdict = 'ok'"
    ) == [(0,)]


def test_typed_columns(fixtures_db: Path) -> None:
    types = {
        (t, c): d
        for t in ("events", "schedule_changes", "schedules", "dispatches")
        for c, d, *_ in q(fixtures_db, f"DESCRIBE {t}")
    }
    assert types[("events", "time")] == "TIMESTAMP" and types[("events", "time_ms")] == "BIGINT"
    assert types[("events", "data")] == "JSON" and types[("events", "owned")] == "BOOLEAN"
    for column in ("scheduled_at", "accepted_at", "occurrence_at", "next_scheduled_at"):
        assert types[("schedule_changes", column)] == "TIMESTAMP WITH TIME ZONE"
    assert types[("schedules", "current_target")] == "TIMESTAMP WITH TIME ZONE"
    assert types[("dispatches", "accepted_at")] == "TIMESTAMP WITH TIME ZONE"


def test_schedule_life_cycle_and_views(fixtures_db: Path) -> None:
    path = str(SESSIONS / "valid/reminders.session.jsonl")
    rows = q(
        fixtures_db,
        f"SELECT id, kind, end_reason, dispatch_count FROM schedules WHERE {of(path)} ORDER BY created_index",
    )
    assert rows == [
        ("schedule-1", "after", "dispatched", 1),
        ("schedule-2", "every", "deleted", 1),
        ("schedule-3", "cron", "active", 0),
    ]
    active = q(fixtures_db, f"SELECT id FROM active_schedules JOIN sessions USING (session_key) WHERE path = '{path}'")
    assert active == [("schedule-3",)]
    batch = q(fixtures_db, f"SELECT size, ids FROM batches JOIN sessions USING (session_key) WHERE path = '{path}'")
    assert batch == [(1, ["schedule-2"])]
    timeline = q(fixtures_db, f"SELECT operation, id FROM timeline WHERE path = '{path}'")
    assert [op for op, _ in timeline] == ["create", "create", "create", "dispatch", "dispatch", "delete"]
    gate = str(SESSIONS / "corrupt/gate-too-soon.session.jsonl")
    unknown = q(
        fixtures_db,
        f"SELECT DISTINCT end_reason FROM schedules JOIN sessions USING (session_key) WHERE path = '{gate}'",
    )
    assert unknown == [("unknown",)]


def test_fork_child_owns_only_its_suffix(fixtures_db: Path) -> None:
    path = str(SESSIONS / "valid/fork-child.session.jsonl")
    rows = q(
        fixtures_db,
        f"SELECT status, count(*) FROM schedule_changes WHERE {of(path)} GROUP BY ALL ORDER BY 1",
    )
    assert rows == [("applied", 1), ("inherited", 1)]


def test_fixture_events_expand_exactly_like_the_reader(fixtures_db: Path) -> None:
    """The `events` view decodes stored records and expands packed rows as the reader does."""
    packed = 0
    for path in discover([str(SESSIONS)]):
        log = SessionLog(path)
        entries = list(log.entries())
        packed += sum(1 for e in entries if e.row is not None)
        expected = [(e["seq"], e["type"], e["time"], e["data"]) for entry in entries for e in entry.events()]
        got = q(fixtures_db, f"SELECT idx, type, time_ms, data FROM events WHERE {of(path)} ORDER BY idx")
        assert [(i, t, ms, json.loads(d)) for i, t, ms, d in got] == expected, path  # type: ignore[arg-type]
    assert packed > 0  # the fixtures hold packed chunk rows


def test_types_and_times_the_stager_leaves_to_duckdb(tmp_path: Path) -> None:
    """Records whose type is not plain ASCII or whose time is not an integer are decoded by DuckDB."""
    header = '{"type":"session","version":0,"id":"odd","createdAt":1785931200000,"cwd":"/srv","delegationDepth":0}'
    lines = [
        '{"type":"turn/start","seq":0,"time":1785931200050,"data":{"turn":1}}',
        r'{"type":"caf\u00e9/ping","seq":1,"time":1785931200060,"data":{}}',
        r'{"type":"tab\there","seq":2,"time":1785931200070,"data":{}}',
        '{"type":"turn/end","seq":3,"time":1785931200080.0,"data":{"turn":1}}',
        '{"type":"far","seq":4,"time":1e30,"data":{}}',
        '{"type":"x","seq":5,"time":1785931200090,\t"data":{}}',  # tab whitespace: re-dumped
    ]
    log = tmp_path / "odd.session.jsonl"
    log.write_text("\n".join([header, *lines]) + "\n")
    db = tmp_path / "odd.duckdb"
    replay([str(log)], db)
    got = q(db, "SELECT idx, type, time_ms FROM events ORDER BY idx")
    assert got == [
        (0, "turn/start", 1785931200050),
        (1, "caf\u00e9/ping", 1785931200060),
        (2, "tab\there", 1785931200070),
        (3, "turn/end", 1785931200080),
        (4, "far", None),  # beyond BIGINT: no time, as before
        (5, "x", 1785931200090),
    ]


@requires_real_logs
def test_real_logs_expand_exactly_like_the_reader(tmp_path: Path) -> None:
    db = tmp_path / "real.duckdb"
    paths = sorted(str(p) for p in REAL_LOGS.glob("*.jsonl"))
    reports = replay(paths, db).reports
    assert q(db, "SELECT count(*) FROM sessions") == [(len(paths),)]
    for report in reports:
        log = SessionLog(report.path)
        expected = [(e["seq"], e["type"], e["time"], e["data"]) for entry in log.entries() for e in entry.events()]
        got = q(
            db,
            f"SELECT idx, type, time_ms, data FROM events WHERE {of(report.path)} ORDER BY idx",
        )
        assert [(i, t, ms, json.loads(d)) for i, t, ms, d in got] == expected, report.path  # type: ignore[arg-type]


def _contents(db: Path) -> dict[str, list[tuple[object, ...]]]:
    return {t: q(db, f"SELECT * FROM {t} ORDER BY ALL") for t in (*TABLES, "active_schedules", "batches")}


def test_replaying_twice_gives_identical_contents(tmp_path: Path) -> None:
    inputs = list(discover([str(SESSIONS)]))
    replay(inputs, tmp_path / "a.duckdb")
    replay(inputs, tmp_path / "b.duckdb", jobs=2)
    assert _contents(tmp_path / "a.duckdb") == _contents(tmp_path / "b.duckdb")


def test_no_temporary_files_are_left(tmp_path: Path) -> None:
    replay(list(discover([str(SESSIONS)])), tmp_path / "x.duckdb")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.duckdb"]


@pytest.fixture(scope="module")
def big_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(ROOT))
    from bench.corpus import build

    directory = tmp_path_factory.mktemp("big")
    build(directory, total_mb=60, sessions=6)
    return directory


def _children(pid: int) -> list[int]:
    """The child processes of `pid`, from each of its threads (a thread may end meanwhile)."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            found += [int(c) for c in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_an_interrupted_replay_leaves_the_earlier_database_untouched(
    tmp_path: Path, big_corpus: Path, sig: signal.Signals
) -> None:
    db = tmp_path / "kept.duckdb"
    replay(list(discover([str(SESSIONS)])), db)
    before = db.read_bytes()
    exe = Path(sys.executable).with_name("schedlog")
    proc = subprocess.Popen(
        [str(exe), "replay", str(big_corpus), "--db", str(db)],
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(
            signal.SIGINT, signal.SIG_DFL
        ),  # Ctrl-C acts even if this runs in the background
    )
    deadline = time.monotonic() + 30
    while not list(tmp_path.glob(".kept.duckdb.*.tmp")):  # the new database is being built
        assert proc.poll() is None and time.monotonic() < deadline, "the replay ended before it could be interrupted"
        time.sleep(0.01)
    time.sleep(0.2)
    assert proc.poll() is None, "the replay ended before it could be interrupted"
    workers = _children(proc.pid)
    assert workers, "staging runs in worker processes"
    os.kill(proc.pid, sig)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers):  # workers end with their parent, even one killed outright
        assert time.monotonic() < deadline, "a staging worker outlived the replay"
        time.sleep(0.05)
    assert db.read_bytes() == before
    assert q(db, "SELECT count(*) FROM sessions") == [(len(EXPECTED),)]
    if sig != signal.SIGKILL:  # a clean exit removes its temporary files
        assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.duckdb"]
        assert b"Traceback" not in (proc.stderr.read() if proc.stderr else b"")
    if sig == signal.SIGINT:  # Ctrl-C: 130 as shells report it, never 1 (violations found)
        assert proc.returncode == 130


def test_parquet_export_reads_back(tmp_path: Path) -> None:
    out = tmp_path / "pq"
    replay(list(discover([str(SESSIONS)])), tmp_path / "p.duckdb", parquet=out)
    assert (out / "sessions.parquet").is_file() and (out / "events").is_dir()
    with duckdb.connect() as con:
        n = con.execute(
            f"SELECT count(*) FROM read_parquet('{out}/events/*/*.parquet', hive_partitioning = true)"
        ).fetchone()
        keys = con.execute(
            f"SELECT count(DISTINCT session_key) FROM read_parquet('{out}/events/*/*.parquet', hive_partitioning=1)"
        ).fetchone()
    assert n == q(tmp_path / "p.duckdb", "SELECT count(*) FROM events")[0]
    assert keys == (len(EXPECTED),)


def test_replay_cli_exit_codes_and_summary(tmp_path: Path) -> None:
    code, out = run("replay", str(SESSIONS / "valid"), "--db", str(tmp_path / "v.duckdb"))
    assert code == 0 and "3 session(s): 3 ok" in out
    code, out = run("replay", str(SESSIONS), "--db", str(tmp_path / "all.duckdb"))
    assert code == 1 and (tmp_path / "all.duckdb").is_file()
    (tmp_path / "empty.jsonl").write_bytes(b"")
    code, _ = run("replay", str(tmp_path / "empty.jsonl"), "--db", str(tmp_path / "e.duckdb"))
    assert code == 2 and (tmp_path / "e.duckdb").is_file()


def test_sql_formats(fixtures_db: Path) -> None:
    query = 'SELECT rule, "index" FROM violations ORDER BY rule'
    code, table = run("sql", str(fixtures_db), query)
    assert code == 0 and table.splitlines()[0].split() == ["rule", "index"]
    _, as_json = run("sql", str(fixtures_db), query, "--format", "json")
    assert json.loads(as_json)[0] == {"rule": "decode.cron.canonical", "index": 9}
    _, as_csv = run("sql", str(fixtures_db), query, "--format", "csv")
    assert as_csv.splitlines()[:2] == ["rule,index", "decode.cron.canonical,9"]


@pytest.mark.parametrize("query", ["SELEC 1", "SELECT * FROM nowhere", "DROP TABLE events", "", "-- nothing"])
def test_sql_errors_are_usage_errors(fixtures_db: Path, query: str) -> None:
    result = CliRunner().invoke(main, ["sql", str(fixtures_db), query])
    assert result.exit_code == 2 and (result.exception is None or isinstance(result.exception, SystemExit))
    assert "Traceback" not in result.output


def test_sql_json_holds_no_infinity(fixtures_db: Path) -> None:
    """JSON has no Infinity or NaN: such doubles are written null, as JSON.stringify writes them."""
    query = "SELECT 'inf'::DOUBLE AS i, ['nan'::DOUBLE, 1.5] AS l, {'x': '-inf'::DOUBLE} AS s"
    code, out = run("sql", str(fixtures_db), query, "--format", "json")
    assert code == 0 and json.loads(out) == [{"i": None, "l": [None, 1.5], "s": {"x": None}}]


def test_sql_json_writes_values_nested_deeper_than_python_reads(tmp_path: Path) -> None:
    """A record JSON.parse read at any depth comes out of `--format json` as written, nested."""
    depth = 3000
    db = tmp_path / "deep.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute(f"CREATE TABLE t AS SELECT '{'[' * depth}1{']' * depth}'::JSON AS j, {{'a': 1}}::JSON AS k")
    code, out = run("sql", str(db), "SELECT j, k FROM t", "--format", "json")
    assert code == 0
    value = deepjson.parse(out)
    assert isinstance(value, list) and len(value) == 1 and isinstance(value[0], dict)
    assert value[0]["k"] == {"a": 1} and deepjson.dumps(value[0]["j"]) == "[" * depth + "1" + "]" * depth


@pytest.mark.parametrize("fmt", ["text", "json", "csv"])
def test_sql_results_longer_than_one_fetch_are_whole(fixtures_db: Path, fmt: str) -> None:
    """Rows are fetched and written FETCH_ROWS at a time: the output is the whole result, written
    exactly as the plain renderings of the same rows."""
    rows = query.FETCH_ROWS * 2 + 7
    sql = f"SELECT i, 'v' || i AS s, CASE WHEN i % 3 = 0 THEN NULL ELSE i / 2 END AS h FROM range({rows}) t(i)"
    code, out = run("sql", str(fixtures_db), sql, "--format", fmt)
    records = [{"i": i, "s": f"v{i}", "h": None if i % 3 == 0 else i / 2} for i in range(rows)]
    assert code == 0
    if fmt == "json":
        assert out == json.dumps(records, indent=2) + "\n"
    elif fmt == "csv":
        lines = [f"{r['i']},{r['s']},{'' if r['h'] is None else r['h']}" for r in records]
        assert out.splitlines() == ["i,s,h", *lines]
    else:
        last = records[-1]
        assert len(out.splitlines()) == rows + 2
        assert out.splitlines()[-1].split() == [
            str(last["i"]),
            last["s"],
            "NULL" if last["h"] is None else str(last["h"]),
        ]


@given(
    st.lists(st.tuples(st.integers(), st.text(), st.none() | st.floats(allow_nan=True)), max_size=12),
    st.lists(st.integers(1, 5), max_size=12),
)
def test_rendering_in_batches_is_rendering_at_once(rows: list[tuple[object, ...]], cuts: list[int]) -> None:
    batches, rest = [], list(rows)
    for cut in cuts:
        batches.append(rest[:cut])
        rest = rest[cut:]
    batches.append(rest)
    whole = query.Result(("a", "b", "c"), tuple(rows))
    for fmt in ROW_FORMATS:
        chunked = query.Rows(whole.columns, whole.json_columns, iter([b for b in batches if b]))  # as fetched
        assert "".join(row_output.render_chunks(chunked, fmt)) == row_output.render_result(whole, fmt)
        finite = [
            dict(zip("abc", (a, b, c if c is None or math.isfinite(c) else None), strict=True)) for a, b, c in rows
        ]
        if fmt == "json":
            assert json.loads(row_output.render_result(whole, fmt)) == finite
        if fmt == "jsonl":
            lines = row_output.render_result(whole, fmt).split("\n")  # one record a line (NEL is no line end)
            assert lines.pop() == "" and [json.loads(line) for line in lines] == finite


def test_sql_tables_show_control_characters_as_escapes(tmp_path: Path) -> None:
    """A table is for people: a value's newline or terminal sequence cannot break its rows or
    drive the terminal (JSON and CSV keep values exact)."""
    db = tmp_path / "c.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE t AS SELECT 'a' || chr(10) || 'b' || chr(27) || '[2J' AS v")
    code, out = run("sql", str(db), "SELECT v FROM t")
    assert code == 0 and out.splitlines() == ["v", "-------------", "a\\x0ab\\x1b[2J"]
    _, as_json = run("sql", str(db), "SELECT v FROM t", "--format", "json")
    assert json.loads(as_json) == [{"v": "a\nb\x1b[2J"}]


def test_inspect_refuses_a_database_replay_did_not_write(tmp_path: Path) -> None:
    duckdb.connect(str(tmp_path / "other.duckdb")).close()
    code, out = run_catching("inspect", str(tmp_path / "other.duckdb"))
    assert code == 2 and "not a schedlog replay database" in out


@pytest.mark.parametrize("name", ["log.jsonl", "rows.csv", "x.json", "notes.txt", "empty.duckdb"])
@pytest.mark.parametrize("command", ["sql", "inspect"])
def test_sql_and_inspect_say_a_file_is_not_a_database(tmp_path: Path, name: str, command: str) -> None:
    """DuckDB opens a `.json` or `.csv` file as an in-memory database over it, then refuses that
    read-only ("Cannot launch in-memory database"); the file's first bytes tell it first."""
    path = tmp_path / name
    path.write_bytes(b"" if name.startswith("empty") else (SESSIONS / "valid" / "reminders.session.jsonl").read_bytes())
    code, out = run_catching(command, str(path), *(["SELECT 1"] if command == "sql" else []))
    assert code == 2 and f"{path}: not a DuckDB database" in out


@pytest.mark.slow
def test_ctrl_c_during_a_query_exits_130(fixtures_db: Path) -> None:
    """One Ctrl-C stops a long query: DuckDB may not notice the signal itself, and answers the
    interrupt with a RuntimeError, not KeyboardInterrupt. The CLI reports it as an interrupt
    (130), with no traceback."""
    exe = Path(sys.executable).with_name("schedlog")
    proc = subprocess.Popen(
        [str(exe), "sql", str(fixtures_db), "SELECT sum(a.range * 2) FROM range(100000000000) a"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(1.5)  # the query is running (it would take minutes)
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)  # once: DuckDB alone ignores it about a third of the time
    try:
        _, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert b"Traceback" not in err and b"Aborted!" in err


def test_sql_and_inspect_on_a_missing_database(tmp_path: Path) -> None:
    assert run("sql", str(tmp_path / "no.duckdb"), "SELECT 1")[0] == 2
    assert run("inspect", str(tmp_path / "no.duckdb"))[0] == 2
    (tmp_path / "junk.duckdb").write_bytes(b"not a database")
    assert run("inspect", str(tmp_path / "junk.duckdb"))[0] == 2


def test_inspect_summarizes(fixtures_db: Path) -> None:
    code, out = run("inspect", str(fixtures_db))
    assert code == 0
    for heading in ("sessions by verdict", "rules violated", "format findings", "active reminders"):
        assert heading in out
    assert "fold.gate" in out and "schedule-3" in out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("command", "label"), [("verify", "reading"), ("replay", "replaying")])
def test_large_inputs_on_a_terminal_show_a_byte_progress_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, label: str
) -> None:
    db = ["--db", str(tmp_path / "p.duckdb"), "--rebuild"]  # (built anew each time; one taking changes below)
    args = [command, str(SESSIONS / "valid")] + (db if command == "replay" else [])
    args += ["--cache-dir", str(tmp_path / "cache")] if command == "verify" else []  # (read whole, then from the cache)
    quiet = run(*args)
    terminal = _Terminal()
    monkeypatch.setattr(cli, "PROGRESS_BYTES", 1)
    monkeypatch.setattr(
        cli, "sys", types.SimpleNamespace(stderr=terminal, stdout=sys.stdout, stdin=sys.stdin, exit=sys.exit)
    )
    again = run(*args)  # the bar goes to stderr only; verdicts and exit code are unchanged
    assert again == quiet or again == (
        quiet[0],
        quiet[1]
        .replace("0 from cache, 0 resumed, 3 read whole", "3 from cache, 0 resumed, 0 read whole")
        .replace(".duckdb\n", ".duckdb (built anew)\n"),  # (an earlier one replaced)
    )
    assert label in terminal.getvalue() and "100%" in terminal.getvalue()
    if command == "replay":
        terminal.seek(0)
        terminal.truncate(0)
        assert run(*args[:-1])[0] == quiet[0]  # into the database as it is: the logs kept are told too
        assert "100%" in terminal.getvalue()


def test_staging_tasks_number_their_sessions_in_input_order(tmp_path: Path) -> None:
    files = []
    for n, size in enumerate([10, 2 << 20, 10, 10]):
        path = tmp_path / f"f{n}"
        path.write_bytes(b"x" * size)
        files.append(str(path))
    groups = list(fanout.grouped(files))
    assert [[(Path(p).name, size) for p, size in g] for g in groups] == [
        [("f0", 10)],
        [("f1", 2 << 20)],
        [("f2", 10), ("f3", 10)],
    ]
    stage = tmp_path / "stage"
    stage.mkdir()
    with duck._staged(groups, stage, Reading(), 1, [("<stdin>", b"")], None) as staged:  # stdin takes key 1
        keyed = [(key, Path(session.report.path).name, size) for key, size, session in staged]
    assert keyed == [(1, "<stdin>", 0), (2, "f0", 10), (3, "f1", 2 << 20), (4, "f2", 10), (5, "f3", 10)]


@pytest.mark.parametrize("jobs", [1, 2])
def test_staging_runs_only_a_few_sessions_ahead_of_ingest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    """Disk stays bounded: the stager may not stage the whole corpus's records while DuckDB ingests.

    (The small per-session tables stay staged until the end: they are loaded in one go.)"""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    source = (SESSIONS / "valid" / "reminders.session.jsonl").read_bytes()
    for n in range(12):
        (corpus / f"s{n:02d}.jsonl").write_bytes(source)
    staged_counts: list[int] = []
    ingest = duck._ingest

    def slow_ingest(
        con: duckdb.DuckDBPyConnection, stage: Path, batch: list[tuple[int, StagedSession]], grown: object = None
    ) -> None:
        time.sleep(0.05)  # DuckDB slower than staging, as on large corpora
        staged_counts.append(len([*stage.glob("records-*"), *stage.glob("lines-*")]))
        ingest(con, stage, batch, grown)  # type: ignore[arg-type]

    monkeypatch.setattr(staging, "INLINE_BYTES", 0)  # staged in files (inline records wait in memory)
    monkeypatch.setattr(fanout, "GROUP_FILES", 1)  # one session per staging task
    monkeypatch.setattr(duck, "batch_limit", lambda first, remaining: 1)  # ingest every session on its own
    monkeypatch.setattr(duck, "BATCH_BYTES", 1)  # and stage no more than one batch ahead
    monkeypatch.setattr(duck, "_ingest", slow_ingest)
    reports = replay(list(discover([str(corpus)])), tmp_path / "b.duckdb", jobs=jobs).reports
    assert [r.verdict for r in reports] == ["ok"] * 12
    assert len(staged_counts) == 12
    # the batches loading, a task per staging worker, one queued
    assert max(staged_counts) <= duck.LOADERS + jobs + 1


@given(st.booleans(), st.integers(min_value=0, max_value=1 << 40))
def test_batch_limits_shrink_toward_the_end(first: bool, remaining: int) -> None:
    limit = duck.batch_limit(first, remaining)
    if first:
        assert limit == duck.FIRST_BATCH_BYTES
    else:
        assert duck.LAST_BATCH_BYTES <= limit <= duck.BATCH_BYTES
        assert limit == duck.BATCH_BYTES or limit == duck.LAST_BATCH_BYTES or limit == remaining // 4
        assert duck.batch_limit(first, remaining // 2) <= limit  # less input left, smaller batches


def test_replay_will_not_replace_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    """A mistyped --db naming a log (or any other file) leaves it as it was: a usage error."""
    log = tmp_path / "s.session.jsonl"
    log.write_bytes((SESSIONS / "valid" / "reminders.session.jsonl").read_bytes())
    before = log.read_bytes()
    code, out = run_catching("replay", str(log), "--db", str(log))
    assert code == 2 and "not a DuckDB database" in out
    assert log.read_bytes() == before
    with pytest.raises(TargetError):
        replay([str(log)], log)
    assert log.read_bytes() == before
    assert run_catching("replay", str(log), "--db", str(tmp_path / "x.duckdb"))[0] == 0
    assert (
        run_catching("replay", str(log), "--db", str(tmp_path / "x.duckdb"))[0] == 0
    )  # an earlier database is replaced


def test_parquet_export_will_not_replace_a_directory_it_did_not_write(tmp_path: Path) -> None:
    """The export swaps the whole directory: one holding anything else is left alone (exit 2)."""
    log = str(SESSIONS / "valid" / "reminders.session.jsonl")
    mine = tmp_path / "work"
    (mine / "notes").mkdir(parents=True)
    (mine / "notes" / "todo.txt").write_text("keep me")
    code, out = run_catching("replay", log, "--db", str(tmp_path / "x.duckdb"), "--parquet", str(mine))
    assert code == 2 and "did not write" in out
    assert (mine / "notes" / "todo.txt").read_text() == "keep me"
    assert not (tmp_path / "x.duckdb").exists()
    export = tmp_path / "export"
    for _ in range(2):  # an earlier export is replaced
        assert run_catching("replay", log, "--db", str(tmp_path / "x.duckdb"), "--parquet", str(export))[0] == 0
    assert (export / "sessions.parquet").is_file()
