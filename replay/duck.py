"""`replay`: session logs into an embedded DuckDB database, built in bulk and written atomically.

Python makes one streaming pass per session (the same reader and fold as `verify`) and writes
NDJSON staging files (`staging.py`); DuckDB loads them with its own JSON reader and expands packed
chunk rows in SQL. The database is built in a temporary file beside the target and renamed over
it only when complete, so an interrupted run leaves any earlier database untouched. Tables are
projections of the logs, never a second source of truth; re-running gives identical contents.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb

from .fanout import file_size, in_order, in_processes
from .staging import TABLE_FILES, stage_session, staged_name
from .verify import STDIN, SessionReport

ROW_TAGS_SQL = "('text-chunks', 'reasoning-chunks', 'tool-call-chunks')"

_COLUMNS = {
    "sessions": {
        "session_key": "BIGINT", "path": "VARCHAR", "session_id": "VARCHAR", "header": "JSON",
        "headerless": "BOOLEAN", "created_at_ms": "BIGINT", "cwd": "VARCHAR", "parent_session": "VARCHAR",
        "seed_length": "BIGINT", "origin": "VARCHAR", "delegation_depth": "BIGINT", "event_count": "BIGINT",
        "schedule_event_count": "BIGINT", "verdict": "VARCHAR", "format_findings": "JSON",
        "violation_rule": "VARCHAR", "violation_index": "BIGINT", "violation_line": "BIGINT",
        "violation_message": "VARCHAR", "profile": "VARCHAR", "mode": "VARCHAR",
    },
    "schedules": {
        "session_key": "BIGINT", "id": "VARCHAR", "kind": "VARCHAR", "prompt": "VARCHAR",
        "after_seconds": "BIGINT", "every_seconds": "BIGINT", "cron": "VARCHAR", "time_zone": "VARCHAR",
        "created_index": "BIGINT", "created_seq": "BIGINT", "created_line": "BIGINT", "created_time_ms": "BIGINT",
        "first_target": "VARCHAR", "current_target": "VARCHAR", "ended_index": "BIGINT", "ended_seq": "BIGINT",
        "end_reason": "VARCHAR", "dispatch_count": "BIGINT",
    },
    "dispatches": {
        "session_key": "BIGINT", "idx": "BIGINT", "seq": "BIGINT", "line": "BIGINT", "id": "VARCHAR",
        "kind": "VARCHAR", "shape": "VARCHAR", "target": "VARCHAR", "occurrence_at": "VARCHAR",
        "accepted_at": "VARCHAR", "next_target": "VARCHAR", "batch": "BIGINT", "time_ms": "BIGINT",
    },
    "violations": {
        "session_key": "BIGINT", "code": "VARCHAR", "rule": "VARCHAR", "index": "BIGINT", "seq": "BIGINT",
        "line": "BIGINT", "pointer": "VARCHAR", "message": "VARCHAR",
    },
}  # fmt: skip

# epoch milliseconds DuckDB can hold as TIMESTAMP
_TS_MIN, _TS_MAX = -9_214_748_364_800_000, 9_214_748_364_800_000


def _ts(ms: str) -> str:
    return f"CASE WHEN {ms} BETWEEN {_TS_MIN} AND {_TS_MAX} THEN epoch_ms(CAST({ms} AS BIGINT)) END"


def _instant(column: str) -> str:
    """A canonical instant string as TIMESTAMPTZ (NULL when absent or not an instant)."""
    return f"TRY_CAST({column} AS TIMESTAMPTZ)"


_EVENT_COLUMNS = (
    "session_key BIGINT, idx BIGINT, seq BIGINT, line BIGINT, type VARCHAR, time_ms BIGINT, "
    "time TIMESTAMP, owned BOOLEAN, data JSON"
)
_RECORD_COLUMNS = {
    "s": "BIGINT", "o": "BIGINT", "l": "BIGINT", "i": "BIGINT", "p": "BOOLEAN", "times": "VARCHAR",
    "raw": "VARCHAR",
}  # fmt: skip
_EVENT_PATHS = "['$.type', '$.time', '$.data']"
_ROW_PATHS = "['$.type', '$.data.turn', '$.data.step', '$.data.index', '$.data.id', '$.data.name', '$.data.texts', '$.data.args']"  # noqa: E501


def _listed(files: Sequence[Path]) -> str:
    return ", ".join("'" + f.as_posix().replace("'", "''") + "'" for f in files)


def _records(files: Sequence[Path]) -> str:
    columns = ", ".join(f"'{k}': '{v}'" for k, v in _RECORD_COLUMNS.items())
    return (
        f"read_csv([{_listed(files)}], delim='\\t', quote='', escape='', header=false, auto_detect=false, "
        f"columns={{{columns}}}, max_line_size=2147483647)"
    )


def insert_events(files: Sequence[Path]) -> str:
    """Append the events of staged sessions, packed rows expanded, in (session, index) order.

    A verbatim record unnests to one event and a row to one per member, so the stream keeps the
    staging order and no sort is needed. Row fields are decoded once per row, not per member.
    """
    return f"""
    INSERT INTO events
    WITH r AS (
        SELECT s, o, l, i, p, times,
               CASE WHEN p THEN json_extract(raw, {_ROW_PATHS}) ELSE json_extract(raw, {_EVENT_PATHS}) END AS f
        FROM {_records(files)}
    ), x AS (
        SELECT s, o, l, i, p, json_extract_string(f[1], '$') AS tag,
               CASE WHEN NOT p THEN TRY_CAST(f[2] AS BIGINT) END AS t,
               CASE WHEN NOT p THEN f[3] END AS d,
               CASE WHEN p THEN CAST(json(times) AS BIGINT[]) END AS times,
               CASE WHEN p THEN CAST(coalesce(f[7], f[8]) AS VARCHAR[]) END AS members,
               CASE WHEN p THEN f[2] END AS turn,
               CASE WHEN p THEN f[3] END AS step,
               CASE WHEN p THEN f[4] END AS ix,
               CASE WHEN p THEN json_extract_string(f[5], '$') END AS call_id,
               CASE WHEN p THEN json_extract_string(f[6], '$') END AS name
        FROM r
    ), m AS (
        SELECT *, unnest(range(CASE WHEN p THEN len(members) ELSE 1 END)) AS k FROM x
    ), ev AS (
        SELECT s, o, i + k AS idx, l,
               CASE WHEN p THEN 'assistant/chunk' ELSE tag END AS type,
               CASE WHEN p THEN times[k + 1] ELSE t END AS time_ms,
               CASE WHEN NOT p THEN d
                    WHEN tag = 'tool-call-chunks' AND name IS NULL THEN json_object('turn', turn, 'step', step,
                        'chunk', json_object('type', 'tool-call-delta', 'index', ix, 'id', call_id,
                                             'argumentsDelta', members[k + 1]))
                    WHEN tag = 'tool-call-chunks' THEN json_object('turn', turn, 'step', step,
                        'chunk', json_object('type', 'tool-call-delta', 'index', ix, 'id', call_id, 'name', name,
                                             'argumentsDelta', members[k + 1]))
                    ELSE json_object('turn', turn, 'step', step,
                        'chunk', json_object('type', CASE tag WHEN 'text-chunks' THEN 'text-delta'
                                                              ELSE 'reasoning-delta' END,
                                             'index', ix, 'text', members[k + 1]))
               END AS data
        FROM m
    )
    SELECT s, idx, idx, l, type, time_ms, {_ts("time_ms")}, idx >= o, data FROM ev
    """


def insert_small(table: str, files: Sequence[Path]) -> str:
    """Append staged rows of one of the small tables (sessions, schedules, ...)."""
    columns = ", ".join(f"'{k}': '{v}'" for k, v in _COLUMNS[table].items())
    source = (
        f"read_json([{_listed(files)}], columns={{{columns}}}, format='newline_delimited', "
        "maximum_object_size=1073741824)"
    )
    return f"INSERT INTO {table}_staged SELECT * FROM {source}"


def _create() -> Iterator[str]:
    yield "SET TimeZone = 'UTC'"
    yield "PRAGMA force_compression = 'zstd'"
    yield f"CREATE TABLE events ({_EVENT_COLUMNS})"
    for table in ("sessions", "schedules", "dispatches", "violations"):
        columns = ", ".join(f'"{k}" {v}' for k, v in _COLUMNS[table].items())
        yield f"CREATE TEMP TABLE {table}_staged ({columns})"


def _finish() -> Iterator[str]:
    yield "CREATE TABLE sessions AS SELECT * FROM sessions_staged ORDER BY session_key"
    yield f"""
    CREATE TABLE schedule_changes AS
    SELECT e.session_key, e.idx, e.seq, e.line, e.owned,
           CASE WHEN NOT coalesce(e.owned, false) THEN 'inherited'
                WHEN s.violation_index IS NULL OR e.idx < s.violation_index THEN 'applied'
                WHEN e.idx = s.violation_index THEN 'violation'
                ELSE 'unchecked' END AS status,
           e.time_ms, e.time,
           json_extract_string(e.data, '$.operation') AS operation,
           coalesce(json_extract_string(e.data, '$.id'), json_extract_string(e.data, '$.schedule.id')) AS id,
           json_extract_string(e.data, '$.schedule.kind') AS kind,
           json_extract_string(e.data, '$.schedule.prompt') AS prompt,
           TRY_CAST(json_extract(e.data, '$.schedule.afterSeconds') AS BIGINT) AS after_seconds,
           TRY_CAST(json_extract(e.data, '$.schedule.everySeconds') AS BIGINT) AS every_seconds,
           json_extract_string(e.data, '$.schedule.cron') AS cron,
           json_extract_string(e.data, '$.schedule.timeZone') AS time_zone,
           {_instant("json_extract_string(e.data, '$.schedule.scheduledAt')")} AS scheduled_at,
           {_instant("json_extract_string(e.data, '$.acceptedAt')")} AS accepted_at,
           {_instant("json_extract_string(e.data, '$.occurrenceAt')")} AS occurrence_at,
           {_instant("json_extract_string(e.data, '$.nextScheduledAt')")} AS next_scheduled_at,
           e.data
    FROM events e JOIN sessions s USING (session_key)
    WHERE e.type = 'schedule/change'
    ORDER BY e.session_key, e.idx
    """
    yield f"""
    CREATE TABLE schedules AS
    SELECT session_key, id, kind, prompt, after_seconds, every_seconds, cron, time_zone,
           created_index, created_seq, created_line, {_ts("created_time_ms")} AS created_time,
           {_instant("first_target")} AS first_target, {_instant("current_target")} AS current_target,
           ended_index, ended_seq, end_reason, dispatch_count
    FROM schedules_staged ORDER BY session_key, created_index
    """
    yield f"""
    CREATE TABLE dispatches AS
    SELECT session_key, idx, seq, line, id, kind, shape, {_instant("target")} AS target,
           {_instant("occurrence_at")} AS occurrence_at, {_instant("accepted_at")} AS accepted_at,
           {_instant("next_target")} AS next_target, batch, {_ts("time_ms")} AS time
    FROM dispatches_staged ORDER BY session_key, idx
    """
    yield """CREATE TABLE violations AS
    SELECT session_key, "index", seq, line, code, rule, pointer, message FROM violations_staged ORDER BY session_key"""
    yield "CREATE VIEW active_schedules AS SELECT * FROM schedules WHERE end_reason = 'active'"
    yield """
    CREATE VIEW timeline AS
    SELECT c.session_key, s.path, c.time, c.idx, c.seq, c.line, c.operation, c.id, c.kind, c.status,
           c.scheduled_at, c.occurrence_at, c.accepted_at, c.next_scheduled_at
    FROM schedule_changes c JOIN sessions s USING (session_key)
    ORDER BY c.session_key, c.time_ms, c.idx
    """
    yield """
    CREATE VIEW batches AS
    SELECT session_key, batch, accepted_at, count(*) AS size, list(id ORDER BY idx) AS ids,
           min(idx) AS first_index, max(idx) AS last_index, min(occurrence_at) AS earliest_occurrence
    FROM dispatches WHERE batch IS NOT NULL
    GROUP BY session_key, batch, accepted_at
    ORDER BY session_key, batch
    """


TABLES = ("sessions", "events", "schedule_changes", "schedules", "dispatches", "violations")
PARTITIONED = ("events", "schedule_changes", "schedules", "dispatches")


def _stage_one(args: tuple[str, int, str, str, str, int | None]) -> SessionReport:
    path, key, out, profile, mode, seed_length = args
    return stage_session(path, key, Path(out), profile, mode, seed_length)


BATCH_BYTES = 32 << 20
"""Staged input ingested per INSERT: large enough for bulk loading, small enough to bound disk."""


def _ingest(con: duckdb.DuckDBPyConnection, stage: Path, keys: Sequence[int]) -> None:
    """Load the staged sessions `keys` and delete their staging files."""
    files = {t: [stage / staged_name(t, k) for k in keys] for t in TABLE_FILES}
    con.execute(insert_events(files["records"]))
    for table in ("sessions", "schedules", "dispatches", "violations"):
        con.execute(insert_small(table, files[table]))
    for paths in files.values():
        for path in paths:
            path.unlink()


def _staged(
    paths: Sequence[str],
    stage: Path,
    profile: str,
    mode: str,
    seed_length: int | None,
    jobs: int,
    stdin: bytes | None,
    progress: Callable[[int], None] | None,
) -> Iterator[tuple[int, int, SessionReport]]:
    """(session key, input bytes, report) in input order, staged ahead by background workers.

    DuckDB releases the GIL while it ingests, so one staging thread overlaps with it; with
    --jobs N, N processes stage in parallel. They stage at most one batch (BATCH_BYTES of
    input) beyond the sessions awaited, so the staging directory stays bounded when DuckDB is
    the slower side.
    """
    files = [p for p in paths if p != STDIN]
    first_key = 1
    if stdin is not None:
        yield 1, len(stdin), stage_session("<stdin>", 1, stage, profile, mode, seed_length, data=stdin)
        first_key = 2
    tasks = [(p, first_key + n, str(stage), profile, mode, seed_length) for n, p in enumerate(files)]
    if jobs > 1:
        for task, report in in_processes(_stage_one, tasks, jobs, progress, BATCH_BYTES):
            yield task[1], file_size(task[0]), report
        return

    def stage_here(task: tuple[str, int, str, str, str, int | None]) -> SessionReport:
        path, key, _, _, _, seed = task
        return stage_session(path, key, stage, profile, mode, seed, progress=progress)

    with ThreadPoolExecutor(max_workers=1) as pool:
        for task, report in in_order(pool, stage_here, tasks, 1, BATCH_BYTES):
            yield task[1], file_size(task[0]), report


def _parquet(con: duckdb.DuckDBPyConnection, target: Path) -> None:
    """Each table as Parquet; the per-event tables hive-partitioned by session (atomic swap)."""
    target = target.resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    fresh = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for table in TABLES:
            out = (fresh / table).as_posix().replace("'", "''")
            if table in PARTITIONED:
                con.execute(f"COPY (SELECT * FROM {table}) TO '{out}' (FORMAT parquet, PARTITION_BY (session_key))")
            else:
                con.execute(f"COPY (SELECT * FROM {table}) TO '{out}.parquet' (FORMAT parquet)")
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            target.rename(old)
        fresh.rename(target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise


def replay(
    paths: Sequence[str],
    db: Path,
    *,
    profile: str = "calendar",
    mode: str = "strict",
    seed_length: int | None = None,
    jobs: int = 1,
    stdin: bytes | None = None,
    parquet: Path | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[SessionReport]:
    """Replay the sessions at `paths` into a new DuckDB database at `db`; return their reports."""
    db = db.resolve()
    db.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{db.name}.", suffix=".tmp", dir=db.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    tmp.unlink()  # DuckDB creates the file itself
    stage = Path(tempfile.mkdtemp(prefix=".schedlog-stage-", dir=db.parent))
    reports: list[SessionReport] = []
    try:
        con = duckdb.connect(str(tmp))
        try:
            for statement in _create():
                con.execute(statement)
            batch: list[int] = []
            pending = 0
            for key, size, report in _staged(paths, stage, profile, mode, seed_length, jobs, stdin, progress):
                reports.append(report)
                batch.append(key)
                pending += size
                if pending >= BATCH_BYTES:
                    _ingest(con, stage, batch)
                    batch, pending = [], 0
            if batch:
                _ingest(con, stage, batch)
            for statement in _finish():
                con.execute(statement)
            if parquet is not None:
                _parquet(con, parquet)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp, db)
        return reports
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)
