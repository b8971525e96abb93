"""`replay`: session logs into an embedded DuckDB database, built in bulk and written atomically.

Worker processes make one streaming pass per session (the same reader and fold as `verify`) and
write staging files (`staging.py`); DuckDB loads them with its own readers. Each log record is
stored once, as written (`records`); the `events` view decodes it and expands packed chunk rows
on read. The database is built in a temporary file beside the target and renamed over
it only when complete, so an interrupted run leaves any earlier database untouched. Tables are
projections of the logs, never a second source of truth; re-running gives identical contents.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, closing, contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import IO, NamedTuple

import duckdb

from replay.atomic import folder_of, replace_folder
from replay.audit.fanout import Group, group_bytes, grouped, in_processes
from replay.cache.cached import Use, let_go, verified
from replay.duck.host import COLUMNS as HOST_COLUMNS
from replay.duck.host import INSTANTS as HOST_INSTANTS
from replay.duck.host import VIEW as HOST_VIEW
from replay.duck.host import VIEW_NAME as HOST_VIEW_NAME
from replay.duck.host import stage_rows as stage_host_rows
from replay.duck.increment import META, SOURCES, Plan, after_lines, holdings, meta_row, plan_for, removals
from replay.duck.loading import ParallelLoader
from replay.duck.query import is_database
from replay.duck.staging import SMALL_TABLES, StagedSession, stage_session, staged_name
from replay.judge.hoststore import cross_checked
from replay.judge.report import SessionReport
from replay.judge.verify import store_report
from replay.reading import DEFAULT_READING, EVERYTHING, Reading, Selection
from replay.sources import bytesource
from replay.sources.bytesource import Data
from replay.sources.discover import STDIN

_COLUMNS = {
    "sessions": {
        "session_key": "BIGINT", "path": "VARCHAR", "session_id": "VARCHAR", "header": "JSON",
        "headerless": "BOOLEAN", "created_at_ms": "BIGINT", "cwd": "VARCHAR", "parent_session": "VARCHAR",
        "seed_length": "BIGINT", "origin": "VARCHAR", "delegation_depth": "BIGINT", "event_count": "BIGINT",
        "schedule_event_count": "BIGINT", "verdict": "VARCHAR", "format_findings": "JSON",
        "violation_rule": "VARCHAR", "violation_index": "BIGINT", "violation_seq": "BIGINT",
        "violation_line": "BIGINT", "violation_pointer": "VARCHAR", "violation_message": "VARCHAR",
        "active_count": "BIGINT", "profile": "VARCHAR", "mode": "VARCHAR", "format_version": "BIGINT",
        "profile_source": "VARCHAR", "profile_evidence": "JSON", "profile_disagreement": "JSON", "generation": "BIGINT",
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
    "violation_related": {
        "session_key": "BIGINT", "role": "VARCHAR", "index": "BIGINT", "seq": "BIGINT", "line": "BIGINT",
        "pointer": "VARCHAR",
    },
}  # fmt: skip

# epoch milliseconds DuckDB can hold as TIMESTAMP
_TS_MIN, _TS_MAX = -9_214_748_364_800_000, 9_214_748_364_800_000


def _ts(ms: str) -> str:
    return f"CASE WHEN {ms} BETWEEN {_TS_MIN} AND {_TS_MAX} THEN epoch_ms(CAST({ms} AS BIGINT)) END"


def _instant(column: str) -> str:
    """A canonical instant string as TIMESTAMPTZ (NULL when absent or not an instant)."""
    return f"TRY_CAST({column} AS TIMESTAMPTZ)"


_RECORD_TABLE = (
    "session_key BIGINT, line BIGINT, idx BIGINT, seed_length BIGINT, packed BOOLEAN, type VARCHAR, "
    "time_ms BIGINT, offsets BIGINT[], record VARCHAR USING COMPRESSION zstd"
)
"""The record text is compressed with zstd (DuckDB would choose FSST, larger and slower to
write for text this long); the other columns keep DuckDB's own choice."""
_DESCRIPTION = {
    "s": "BIGINT", "l": "BIGINT", "i": "BIGINT", "p": "BOOLEAN", "type": "VARCHAR",
    "time": "BIGINT", "offsets": "VARCHAR",
}  # fmt: skip
_COPIED_COLUMNS = {**_DESCRIPTION, "raw": "VARCHAR"}
_CHANGE_COLUMNS = {"s": "BIGINT", "w": "BOOLEAN", "st": "VARCHAR", **_DESCRIPTION, "raw": "VARCHAR"}
"""A staged change: its session, its ledger row's owned and status (invariant.ledger), its
description and its record."""
_LINE_COLUMNS = {**_DESCRIPTION, "n": "BIGINT"}
_CHUNK_EVENT_TABLE = (
    "session_key BIGINT, idx BIGINT, line BIGINT, type VARCHAR, time BIGINT, data JSON USING COMPRESSION zstd"
)
"""As the records: the data text compressed with zstd."""
_CHUNK_EVENT_COLUMNS = {"s": "BIGINT", "l": "BIGINT", "i": "BIGINT", "type": "VARCHAR", "t": "VARCHAR", "d": "VARCHAR"}
"""A packed row's events as the reader expands them (`ChunkRow.events`): the row's session, line
and first index, their type, then their times and data, two JSON arrays in event order."""


def _quoted(path: Path) -> str:
    return path.as_posix().replace("'", "''")


def _listed(files: Sequence[Path]) -> str:
    return ", ".join(f"'{_quoted(f)}'" for f in files)


MEMORY_LIMIT = "256MB"
"""DuckDB's buffer pool while it loads (it spills to the staging directory beyond): its default,
80% of the machine's memory, let a 1 GB log's replay hold 1.3 GB of anonymous memory."""
MIN_LINE = 2 << 20
"""DuckDB's own default longest line; readers are given the staged lines' longest when larger."""


def _line_options(longest: int) -> str:
    """A line reader's bounds sized by the longest line it will read: DuckDB sizes its buffers by
    them (a 2 GiB bound made every reader ask for gigabytes, the whole log for one file)."""
    line = max(MIN_LINE, longest + 1)
    return f"max_line_size={line}, buffer_size={max(4 * MIN_LINE, 2 * line)}"


def _fields(files: Sequence[Path], columns: dict[str, str], *, lf_only: bool = False, longest: int = 0) -> str:
    """Staged US-separated fields (see `staging.py`), read without quoting or escapes; with
    `lf_only`, a line ends at LF alone."""
    typed = ", ".join(f"'{k}': '{v}'" for k, v in columns.items())
    new_line = "new_line='\\n', " if lf_only else ""
    return (
        f"read_csv([{_listed(files)}], delim='\x1f', quote='', escape='', header=false, auto_detect=false, "
        f"columns={{{typed}}}, {new_line}{_line_options(longest)})"
    )


def _log_lines(files: Sequence[Path], longest: int) -> str:
    """The lines of log files as written, each one field (no JSON text holds a raw US); direct
    staging has checked that DuckDB splits them so."""
    return _fields(files, {"raw": "VARCHAR"}, lf_only=True, longest=longest)


def insert_records(
    copied: Sequence[Path],
    direct: Sequence[tuple[Path, Path]],
    owned_from: Mapping[int, int | None],
    longest: int = 0,
    grown: Mapping[int, int] | None = None,
) -> str:
    """Append the committed records of staged sessions: one row per verbatim event or packed row.

    `copied` are staged files holding the records; `direct` pairs a log file with its staged
    line descriptions, one per line (a header's is skipped), joined by position. Each record's
    length guards the pairing: a log that changed since it was staged fails loudly. `owned_from`
    gives each session's seedLength (see `staging.owned_from`); `longest` bounds every line read;
    of a `grown` session (its key, the line of its last record held) only the records past it.

    A record is stored as the log wrote it, with the few fields the views need decoded beside it
    (by the stager, which has parsed the record already; DuckDB parses only a record whose type
    or time the stager left to it). The `events` view extracts a verbatim event's `data` on read;
    a packed row's events are the reader's own expansion (`chunk_events`, staged from
    `ChunkRow.events`): no rule of the format is written again in SQL.
    """
    described = ", ".join(_DESCRIPTION)
    parts = []
    if copied:
        parts.append(f"SELECT {described}, raw FROM {_fields(copied, _COPIED_COLUMNS, longest=longest)}")
    if direct:
        logs = _log_lines([log for log, _ in direct], longest)
        lines = _fields([lines for _, lines in direct], _LINE_COLUMNS, longest=longest)
        parts.append(
            f"SELECT {described}, CASE WHEN strlen(raw) = n THEN raw "
            "ELSE error('a session log changed while it was replayed') END AS raw "
            f"FROM {logs} POSITIONAL JOIN {lines} WHERE s IS NOT NULL"
        )
    first = min(owned_from)
    seeds = [owned_from.get(key) for key in range(first, max(owned_from) + 1)]  # looked up by position
    listed = ", ".join("NULL" if seed is None else str(seed) for seed in seeds)
    return f"""
    INSERT INTO records
    SELECT s, l, i, CAST([{listed}] AS BIGINT[])[s - {first - 1}], p,
           CASE WHEN type IS NOT NULL THEN type ELSE json_extract_string(raw, '$.type') END,
           CASE WHEN type IS NOT NULL THEN time ELSE TRY_CAST(json_extract(raw, '$.time') AS BIGINT) END,
           CASE WHEN p THEN from_json(offsets, '["BIGINT"]') END, raw
    FROM ({" UNION ALL ".join(parts)})
    WHERE {after_lines(dict(grown or {}))}
    """


EVENTS_VIEW = f"""
CREATE VIEW events AS
WITH ev AS (
    SELECT session_key, idx, line, seed_length, type, time_ms, json_extract(record, '$.data') AS data
    FROM records WHERE NOT packed
    UNION ALL  -- a packed row's events, as the reader expanded them (staging.py)
    SELECT c.session_key, c.idx, c.line, r.seed_length, c.type, c.time AS time_ms, c.data
    FROM chunk_events c JOIN records r ON r.session_key = c.session_key AND r.line = c.line
)
SELECT session_key, idx, idx AS seq, line, type, time_ms, {_ts("time_ms")} AS time, idx >= seed_length AS owned,
       data
FROM ev
"""
"""Every event after chunk-row expansion, in the columns the README documents for `events`."""


def _ndjson(path: Path, columns: Mapping[str, str], longest: int = 0) -> str:
    """Staged JSON lines of these columns (none longer than `longest` bytes), as a table function."""
    typed = ", ".join(f"'{k}': '{v}'" for k, v in columns.items())
    return (
        f"read_json(['{_quoted(path)}'], columns={{{typed}}}, "
        f"format='newline_delimited', maximum_object_size={max(MIN_LINE, longest + 1)})"
    )


def _small(stage: Path, table: str, longest: int = 0) -> str:
    """The gathered rows of one of the small tables (sessions, schedules, ...), as a table function."""
    return _ndjson(stage / staged_name(table, GATHERED), _COLUMNS[table], longest)


def _host_tables(stores: Sequence[SessionReport], stage: Path, fresh: bool = True) -> Iterator[str]:
    """The Host tables of the stores' reports (their rows staged in `stage`), and their view:
    made again whole in an existing database (not `fresh`; a store is read whole every run)."""
    if not fresh:
        yield f"DROP VIEW {HOST_VIEW_NAME}"
        yield from (f"DROP TABLE {table}" for table in HOST_COLUMNS)
    files, longest = stage_host_rows(stores, stage)
    for table, columns in HOST_COLUMNS.items():
        select = ", ".join(f"{_instant(c)} AS {c}" if c in HOST_INSTANTS else c for c in columns)
        yield f"CREATE TABLE {table} AS SELECT {select} FROM {_ndjson(files[table], columns, longest)}"
    yield HOST_VIEW


def _changes(stage: Path, longest: int) -> str:
    """The gathered `schedule/change` records, as a subquery."""
    changes = _fields([stage / staged_name("changes", GATHERED)], _CHANGE_COLUMNS, longest=longest)
    return f"(SELECT s AS session_key, w AS owned, st AS status, l AS line, i AS idx, raw AS record FROM {changes})"


def _create() -> Iterator[str]:
    yield "SET TimeZone = 'UTC'"
    # One DuckDB thread: the staging workers keep the other cores busy, and measured on two cores
    # a second DuckDB thread only adds contention. Row groups are written as soon as they fill.
    yield "SET threads = 1"
    yield "SET write_buffer_row_group_count = 1"
    yield f"CREATE TABLE records ({_RECORD_TABLE})"
    yield SOURCES
    yield META


_CHANGE_PATHS = (
    "time", "data", "data.operation", "data.id", "data.schedule.id", "data.schedule.kind", "data.schedule.prompt",
    "data.schedule.afterSeconds", "data.schedule.everySeconds", "data.schedule.cron", "data.schedule.timeZone",
    "data.schedule.scheduledAt", "data.acceptedAt", "data.occurrenceAt", "data.nextScheduledAt",
)  # fmt: skip
"""The fields `schedule_changes` decodes, in the order its query indexes them (f[1] is time)."""


def _finish(
    stage: Path,
    longest: int,
    chunk_files: Sequence[Path] = (),
    fresh: bool = True,
    grown: Mapping[int, int] | None = None,
) -> Iterator[str]:
    """The tables derived from the small tables' rows gathered in `stage` and the chunk events
    of `chunk_files` (none longer than `longest` bytes), and the views: created (`fresh`), or
    their rows added to an existing database's (a `grown` session's chunk events past the last
    record held, as its records)."""
    gathered = stage / staged_name("chunk_events", GATHERED)
    chunks = _fields([gathered, *chunk_files], _CHUNK_EVENT_COLUMNS, longest=longest)
    if fresh:
        yield f"""CREATE TABLE chunk_events ({_CHUNK_EVENT_TABLE})"""
    yield f"""INSERT INTO chunk_events
    SELECT s, i + unnest(range(CAST(json_array_length(t) AS BIGINT))) AS idx, l, type,
           unnest(from_json(t, '["BIGINT"]')), unnest(from_json(d, '["JSON"]'))
    FROM {chunks} WHERE {after_lines(dict(grown or {}))}
    ORDER BY s, idx"""
    for table, select in _derived(stage, longest):
        yield f"CREATE TABLE {table} AS {select}" if fresh else f"INSERT INTO {table} {select}"
    if fresh:
        yield from _VIEWS


def _derived(stage: Path, longest: int) -> Iterator[tuple[str, str]]:
    """Each table derived from the small tables' rows gathered in `stage`, and the query of its rows."""
    yield "sessions", f"SELECT * FROM {_small(stage, 'sessions', longest)} ORDER BY session_key"
    fields = ", ".join(f"'$.{path}'" for path in _CHANGE_PATHS)
    yield (
        "schedule_changes",
        f"""
    WITH e AS (  -- one parse per record: every field in one json_extract
        SELECT session_key, idx, idx AS seq, line, owned, status, TRY_CAST(f[1] AS BIGINT) AS time_ms, f
        FROM (SELECT *, json_extract(record, [{fields}]) AS f FROM {_changes(stage, longest)})
    )
    SELECT e.session_key, e.idx, e.seq, e.line, e.owned, e.status,
           e.time_ms, {_ts("e.time_ms")} AS time,
           f[3] ->> '$' AS operation,
           coalesce(f[4] ->> '$', f[5] ->> '$') AS id,
           f[6] ->> '$' AS kind,
           f[7] ->> '$' AS prompt,
           TRY_CAST(f[8] AS BIGINT) AS after_seconds,
           TRY_CAST(f[9] AS BIGINT) AS every_seconds,
           f[10] ->> '$' AS cron,
           f[11] ->> '$' AS time_zone,
           {_instant("f[12] ->> '$'")} AS scheduled_at,
           {_instant("f[13] ->> '$'")} AS accepted_at,
           {_instant("f[14] ->> '$'")} AS occurrence_at,
           {_instant("f[15] ->> '$'")} AS next_scheduled_at,
           f[2] AS data
    FROM e
    ORDER BY e.session_key, e.idx
    """,
    )
    yield (
        "schedules",
        f"""
    SELECT session_key, id, kind, prompt, after_seconds, every_seconds, cron, time_zone,
           created_index, created_seq, created_line, {_ts("created_time_ms")} AS created_time,
           {_instant("first_target")} AS first_target, {_instant("current_target")} AS current_target,
           ended_index, ended_seq, end_reason, dispatch_count
    FROM {_small(stage, "schedules", longest)} ORDER BY session_key, created_index
    """,
    )
    yield (
        "dispatches",
        f"""
    SELECT session_key, idx, seq, line, id, kind, shape, {_instant("target")} AS target,
           {_instant("occurrence_at")} AS occurrence_at, {_instant("accepted_at")} AS accepted_at,
           {_instant("next_target")} AS next_target, batch, {_ts("time_ms")} AS time
    FROM {_small(stage, "dispatches", longest)} ORDER BY session_key, idx
    """,
    )
    yield (
        "violations",
        f"""
    SELECT session_key, "index", seq, line, code, rule, pointer, message FROM {_small(stage, "violations", longest)}
    ORDER BY session_key""",
    )
    yield (
        "violation_related",
        f"""
    SELECT session_key, role, "index", seq, line, pointer FROM {_small(stage, "violation_related", longest)}
    ORDER BY session_key, line NULLS FIRST""",
    )


_VIEWS = (
    EVENTS_VIEW,
    "CREATE VIEW active_schedules AS SELECT * FROM schedules WHERE end_reason = 'active'",
    """
    CREATE VIEW timeline AS
    SELECT c.session_key, s.path, c.time, c.idx, c.seq, c.line, c.operation, c.id, c.kind, c.status,
           c.scheduled_at, c.occurrence_at, c.accepted_at, c.next_scheduled_at
    FROM schedule_changes c JOIN sessions s USING (session_key)
    ORDER BY c.session_key, c.time_ms, c.idx
    """,
    """
    CREATE VIEW batches AS
    SELECT session_key, batch, accepted_at, count(*) AS size, list(id ORDER BY idx) AS ids,
           min(idx) AS first_index, max(idx) AS last_index, min(occurrence_at) AS earliest_occurrence
    FROM dispatches WHERE batch IS NOT NULL
    GROUP BY session_key, batch, accepted_at
    ORDER BY session_key, batch
    """,
)
"""The views, made once with the tables."""


TABLES = (
    "sessions", "events", "schedule_changes", "schedules", "dispatches", "violations", "violation_related",
    "host_tasks", "host_deliveries", "host_findings",
)  # fmt: skip
PARTITIONED = ("events", "schedule_changes", "schedules", "dispatches")


StageTask = tuple[Group, tuple[int, ...], str, Reading]
"""Consecutive session files staged by one worker call, their session keys, the staging
directory, and how to read them."""


def _stage_size(task: StageTask) -> int:
    return group_bytes(task[0])


def _stage_group(task: StageTask) -> list[StagedSession]:
    group, keys, out, reading = task
    return [stage_session(path, key, Path(out), reading) for (path, _), key in zip(group, keys, strict=True)]


ROW_GROUP_SIZE = 2048
"""Rows per row group. The records table has few, large rows (108 k rows, 2 KB each, per 200 MB of
logs): DuckDB's default of 122,880 would write it as one row group on one thread, and a loader
compresses and writes each row group once it is full, the partial ones only when it commits. Row
groups of about 4 MB keep that work flowing during the load (at 8192 rows, committing took 90 ms
of the tail after the last session; at 2048, 15 ms)."""

BATCH_BYTES = 16 << 20
"""Staged input ingested per INSERT: large enough for bulk loading, small enough to bound disk."""
LOADERS = 2
"""Batches loading at once, each on its own connection and core (see `loading.py`). The derived
tables are built while the last batches load, unless one of them is larger than BATCH_BYTES (a
session is never split: one log of a gigabyte is one batch): two large inserts at once outgrew
DuckDB's MEMORY_LIMIT (a 1 GB log's records beside its chunk events), so they take turns."""
FIRST_BATCH_BYTES = 1 << 20
LAST_BATCH_BYTES = 1 << 20


def overlaps(batches: Sequence[int]) -> bool:
    """Whether the derived tables may be built while the last batches (their input bytes, in
    submission order) load: not when one of the LOADERS that may still be loading is larger
    than BATCH_BYTES (see LOADERS)."""
    return max(batches[-LOADERS:], default=0) <= BATCH_BYTES


def batch_limit(first: bool, remaining: int) -> int:
    """Input bytes to gather before the next batch loads: BATCH_BYTES, less at both ends.

    The first batch is small so that DuckDB starts while the staging is young; near the end
    batches shrink with the input left to stage (a quarter of it, at least LAST_BATCH_BYTES),
    so that little loading is left once the last session is staged.
    """
    if first:
        return FIRST_BATCH_BYTES
    return max(LAST_BATCH_BYTES, min(BATCH_BYTES, remaining // 4))


def _ingest(
    con: duckdb.DuckDBPyConnection,
    stage: Path,
    batch: Sequence[tuple[int, StagedSession]],
    grown: Mapping[int, int] | None = None,
) -> None:
    """Load the records of the staged sessions in `batch` (key, session) and delete their files
    (of a `grown` one, those past the last record held: `insert_records`).

    The inline records of the batch's small sessions are written to one file first (named
    after the batch's first key): DuckDB opens it once for them all.
    """
    inline = stage / staged_name("inline", batch[0][0])
    records = [staged.records for _, staged in batch if staged.records is not None]
    if records:
        with open(inline, "wb") as f:
            f.writelines(records)
    copied = [stage / staged_name("records", k) for k, s in batch if s.source is None and s.records is None]
    direct = [(Path(s.source), stage / staged_name("lines", k)) for k, s in batch if s.source is not None]
    try:
        longest = max(s.longest for _, s in batch)
        con.execute(
            insert_records(
                ([inline] if records else []) + copied, direct, {k: s.owned_from for k, s in batch}, longest, grown
            )
        )
    finally:
        inline.unlink(missing_ok=True)
    for key, _ in batch:
        for table in ("records", "lines"):
            (stage / staged_name(table, key)).unlink(missing_ok=True)  # one of the two was written, or none


GATHERED = 0
"""The key naming the gathered small-table files (session keys start at 1)."""


class _Gathered:
    """The small tables' rows of every session, appended to one file per table as sessions are
    staged: DuckDB opens each file it reads at a cost (about 1 ms), which for many small files
    would outweigh their rows; one file per table keeps the final load a few milliseconds."""

    def __init__(self, stage: Path) -> None:
        self.stack = ExitStack()
        self.files = {table: self._open(stage / staged_name(table, GATHERED)) for table in SMALL_TABLES}
        self.chunk_files: list[Path] = []
        """The chunk events of the sessions staged in files, each in its own (read with the
        gathered ones')."""
        self.longest = 0
        """The longest line gathered (each session's, `StagedSession.longest`). A bound made of
        the sum of a session's rows asked DuckDB for a 1.5 GiB buffer on a 1 GB log."""

    def _open(self, path: Path) -> IO[bytes]:
        return self.stack.enter_context(open(path, "wb"))

    def add(self, session: StagedSession) -> None:
        for table, rows in session.small.items():
            self.files[table].write(rows)
        self.longest = max(self.longest, session.longest)
        if session.chunk_events is not None:
            self.chunk_files.append(Path(session.chunk_events))

    def close(self) -> None:
        self.stack.close()


@contextmanager
def _staged(
    groups: Sequence[Group],
    stage: Path,
    reading: Reading,
    jobs: int,
    streams: Sequence[tuple[str, Data | OSError]],
    progress: Callable[[int], None] | None,
    keys: Mapping[str, int] | None = None,
) -> Iterator[Iterator[tuple[int, int, StagedSession]]]:
    """Gives (session key, input bytes, staged session) in input order (the `streams` read once,
    standard input's and the pipes', then the files' in `groups`), staged ahead by worker
    processes that are forked on entering: before
    DuckDB starts a thread, and so that the first session stages while DuckDB sets up.

    Staging runs in `jobs` processes (one by default), never in a thread beside DuckDB: DuckDB
    executing on this process's thread takes the GIL back between its tasks, so a busy Python
    thread here would throttle it. Workers stage at most one batch (BATCH_BYTES of input) beyond
    the sessions awaited, so the staging directory stays bounded when DuckDB is the slower side.
    Progress is reported per staging task (one file, or a group of small ones). The sessions are
    keyed 1 on in that order, or by `keys` (each input's, by its path: a replay into an existing
    database keeps the keys it holds).
    """
    if keys is None:
        order = [*(name for name, _ in streams), *(path for group in groups for path, _ in group)]
        keys = {path: n for n, path in enumerate(order, 1)}
    tasks = [(group, tuple(keys[path] for path, _ in group), str(stage), reading) for group in groups]
    with in_processes(_stage_group, tasks, max(1, jobs), progress, BATCH_BYTES, _stage_size) as staged:
        yield _after_streams(streams, stage, reading, staged, keys)


def _held_size(data: Data | OSError) -> int:
    """The bytes a stream read once holds (none where reading it failed)."""
    return 0 if isinstance(data, OSError) else len(data)


def _after_streams(
    streams: Sequence[tuple[str, Data | OSError]],
    stage: Path,
    reading: Reading,
    staged: Iterator[tuple[StageTask, list[StagedSession]]],
    keys: Mapping[str, int],
) -> Iterator[tuple[int, int, StagedSession]]:
    """The streams' sessions first (staged here: their bytes are held by this process), then the
    files' as the workers stage them."""
    for name, data in streams:
        yield keys[name], _held_size(data), stage_session(name, keys[name], stage, reading, data=data)
    for (group, group_keys, _, _), sessions in staged:
        for (_, size), key, session in zip(group, group_keys, sessions, strict=True):
            yield key, size, session


def _parquet(con: duckdb.DuckDBPyConnection, target: Path) -> None:
    """Each table as Parquet; the per-event tables hive-partitioned by session (atomic swap)."""
    target = target.resolve()
    folder_of(target)
    fresh = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        for table in TABLES:
            out = _quoted(fresh / table)
            if table in PARTITIONED:
                con.execute(f"COPY (SELECT * FROM {table}) TO '{out}' (FORMAT parquet, PARTITION_BY (session_key))")
            else:
                con.execute(f"COPY (SELECT * FROM {table}) TO '{out}.parquet' (FORMAT parquet)")
        replace_folder(fresh, target)
    except BaseException:
        shutil.rmtree(fresh, ignore_errors=True)
        raise


STAGE_PREFIX = ".schedlog-stage-"


def _owner_gone(name: str, prefix: str) -> bool:
    """Whether the process a leftover's name records (`<prefix><pid>.<random>`) has ended."""
    pid = name[len(prefix) :].split(".", 1)[0]
    if not pid.isdigit():
        return False  # not named by this version: not ours to judge
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, another user's
        return False
    return False


def remove_leftovers(db: Path) -> list[Path]:
    """Remove what an earlier replay into `db`'s directory left when it was killed outright
    (SIGKILL leaves no time to clean up): its temporary database (and WAL) and staging
    directories, only schedlog's own names, and only when the process that made them is gone."""
    removed = []
    for entry in db.parent.iterdir():
        own = entry.name.startswith(f".{db.name}.") and ".tmp" in entry.name
        prefix = f".{db.name}." if own else STAGE_PREFIX
        if (own or entry.name.startswith(STAGE_PREFIX)) and _owner_gone(entry.name, prefix):
            if entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)
            removed.append(entry)
    return removed


class TargetError(ValueError):
    """The database target exists and is not a DuckDB database: replay will not replace it."""


def check_target(db: Path) -> None:
    """Refuse to replace a file that is not a database (a mistyped `--db` naming a log, say);
    an earlier database is replaced, which is what re-running a replay means."""
    wal = Path(f"{db}.wal")  # moved aside with the database it goes with: it must be DuckDB's, a file
    if wal.is_symlink() or (wal.exists() and not wal.is_file()):
        raise TargetError(f"{wal} is not a file (DuckDB's write-ahead log is one); not writing {db} beside it")
    try:
        database = is_database(db)
    except FileNotFoundError:
        return
    except OSError as err:
        raise TargetError(f"{db}: cannot check the existing file: {err.strerror or err}") from None
    if not database:
        raise TargetError(f"{db} exists and is not a DuckDB database; not replacing it")


def _settle(db: Path) -> bool:
    """Make the earlier database at `db` one unit with its WAL before it is replaced: opened
    read-write once, DuckDB takes its lock (so a process that holds it open is found: TargetError)
    and folds a WAL its last writer left into it. Returns whether a WAL beside it is stale (it
    does not match the database: a crashed writer's, or another file's), to go with it."""
    if not db.exists():
        return False
    try:
        duckdb.connect(str(db)).close()
    except duckdb.IOException as err:
        if "lock" in str(err).lower():
            raise TargetError(f"{db} is open in another process; not replacing it ({err})") from None
        if Path(f"{db}.wal").exists():
            return True
        raise TargetError(f"{db}: cannot open the existing database: {err}") from None
    return False


def _replace(tmp: Path, db: Path) -> None:
    """Put the new database in place of the earlier one and its WAL, as one unit: a stale WAL is
    moved aside first (a new database beside it would not open), then removed."""
    stale = _settle(db)
    wal, aside = Path(f"{db}.wal"), tmp.with_name(tmp.name + ".stale-wal")
    if stale:
        os.replace(wal, aside)
    os.replace(tmp, db)
    aside.unlink(missing_ok=True)


def _parquet_names() -> set[str]:
    return {table if table in PARTITIONED else f"{table}.parquet" for table in TABLES}


def check_parquet_target(target: Path) -> None:
    """Refuse to replace a directory holding anything an export did not write: the export swaps
    the whole directory, and `--parquet ~/work` must not delete someone's work."""
    try:
        names = {entry.name for entry in os.scandir(target)}
    except FileNotFoundError:
        return
    except OSError as err:
        raise TargetError(f"{target}: cannot check the existing directory: {err.strerror or err}") from None
    foreign = sorted(names - _parquet_names())
    if foreign:
        raise TargetError(
            f"{target} holds files a Parquet export did not write ({', '.join(foreign[:3])}); not replacing it"
        )


def _load(
    staged: Iterator[tuple[int, int, StagedSession]],
    stage: Path,
    tmp: Path,
    remaining: int,
    parquet: Path | None,
    stores: Sequence[SessionReport] = (),
    meta: tuple[str, str] | None = None,
    plan: Plan | None = None,
    kept: Sequence[SessionReport] = (),
    selection: Selection = EVERYTHING,
) -> list[SessionReport]:
    """Build the database at `tmp` from the sessions as they are staged (`remaining` bytes of
    input in all), `meta` what made it; or, with a `plan`, change the copy of an existing one at
    `tmp` as it says (`increment.py`), `kept` the reports of the sessions it keeps. Return the
    staged sessions' reports, the stores' last."""
    reports: list[SessionReport] = []
    con = duckdb.connect()
    try:
        con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
        con.execute(f"SET temp_directory = '{_quoted(stage / 'spill')}'")
        con.execute(f"ATTACH '{_quoted(tmp)}' AS replay (ROW_GROUP_SIZE {ROW_GROUP_SIZE})")
        con.execute("USE replay")
        for statement in _create() if plan is None else ("SET TimeZone = 'UTC'", *removals(plan)):
            con.execute(statement)
        if plan is None:
            con.execute("INSERT INTO replay_meta VALUES (?, ?)", meta)
        grown = {} if plan is None else plan.grown
        with closing(_Gathered(stage)) as gathered:
            loader = ParallelLoader(con, LOADERS, ["USE replay"])
            try:
                batch: list[tuple[int, StagedSession]] = []
                pending = 0
                loading: list[int] = []  # the input bytes of the batches submitted, the last LOADERS may be loading
                sources: list[tuple[object, ...]] = []
                seeds: list[tuple[int | None, int]] = []
                for key, size, session in staged:
                    reports.append(session.report)
                    gathered.add(session)
                    sources.append((key, os.fsencode(session.report.path), *session.source_row))
                    if key in grown:  # its fork cut may have moved: its records held are owned from there
                        seeds.append((session.owned_from, key))
                    batch.append((key, session))
                    pending += size
                    remaining -= size
                    if pending >= batch_limit(len(reports) == len(batch), remaining):
                        loader.submit(partial(_ingest, stage=stage, batch=batch, grown=grown))
                        loading.append(pending)
                        batch, pending = [], 0
                if batch:
                    loader.submit(partial(_ingest, stage=stage, batch=batch, grown=grown))
                    loading.append(pending)
                committed = loader.finish()
                gathered.close()
                if not overlaps(loading):
                    committed.result()
                # the derived tables need no records: built while the last batches load and commit
                for statement in _finish(stage, gathered.longest, gathered.chunk_files, plan is None, grown):
                    con.execute(statement)
                if sources:
                    con.executemany("INSERT INTO sources VALUES (?, ?, ?, ?, ?)", sources)
                judged = cross_checked([*kept, *reports, *stores], selection)
                host_reports = [r for r in judged if r.store]
                for statement in _host_tables(host_reports, stage, fresh=plan is None):
                    con.execute(statement)
                reports = [*reports, *host_reports]
                committed.result()
                if seeds:
                    con.executemany("UPDATE records SET seed_length = ? WHERE session_key = ?", seeds)
            finally:
                loader.close()
        if parquet is not None:
            _parquet(con, parquet)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return reports


class Replayed(NamedTuple):
    """What a replay gives: the reports (the stores' last), and what changed in the database."""

    reports: list[SessionReport]
    changed: str


def replay(
    paths: Sequence[str],
    db: Path,
    *,
    reading: Reading = DEFAULT_READING,
    jobs: int = 1,
    stdin: Data | None = None,
    parquet: Path | None = None,
    progress: Callable[[int], None] | None = None,
    cache: Path | None = None,
    rebuild: bool = False,
) -> Replayed:
    """Replay the session logs at `paths` into a DuckDB database at `db`, and the Host task
    stores among them (each read once, for its report) into its Host tables; return their
    reports (the stores' last), and what changed in the database (`Plan.told`, or "built anew"
    in place of an earlier one; nothing where there was none).

    Where `db` is a replay database made by this schedlog with this reading, it is changed by
    what changed in the logs (`increment.py`; the reports of the logs it keeps from the verdict
    cache in folder `cache`, or read); else (or with `rebuild`) built anew. Either way the new
    database is made beside it and put in its place once complete.

    Raises TargetError when `db` exists and is not a DuckDB database, or `parquet` holds files an
    export did not write.
    """
    db = db.resolve()
    check_target(db)
    _settle(db)  # before any work: a database another process holds is refused at once
    if parquet is not None:
        check_parquet_target(parquet)
    existed = db.exists()
    holding = None if rebuild else holdings(db, reading)
    try:
        folder_of(db)
        remove_leftovers(db)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{db.name}.{os.getpid()}.", suffix=".tmp", dir=db.parent)
        os.close(fd)
        stage = Path(tempfile.mkdtemp(prefix=f"{STAGE_PREFIX}{os.getpid()}.", dir=db.parent))
    except OSError as err:  # a directory that cannot be written: nothing was made
        raise TargetError(f"cannot create the database in {db.parent}: {err.strerror or err}") from None
    tmp = Path(tmp_name)
    tmp.unlink()  # DuckDB creates the file itself
    held = {
        p: d for p in paths if p != STDIN and (d := bytesource.once(p)) is not None
    }  # pipes: read once (an object is read when its turn comes: a kept one never)
    stores = [report for p in paths if p != STDIN and (report := store_report(p, reading, held.get(p))) is not None]
    logs = [p for p in paths if p != STDIN and p not in {s.path for s in stores}]
    streams = [*([("<stdin>", stdin)] if stdin is not None else []), *((p, held[p]) for p in logs if p in held)]
    files = [p for p in logs if p not in held]
    try:
        plan, kept = None, {}
        if holding is not None:
            shutil.copyfile(db, tmp)  # changed as a copy: an interrupted run leaves the database as it was
            with closing(duckdb.connect(str(tmp), read_only=True)) as con:
                plan = plan_for(holding, files, [name for name, _ in streams], con)
            kept = {p: verified(p, reading, cache, progress) for p in plan.kept}
            files = [p for p in files if p not in kept]
        groups = list(grouped(files))  # reads each file's size once
        total = sum(group_bytes(group) for group in groups) + sum(_held_size(d) for _, d in streams)
        keys = None if plan is None else plan.keys
        with _staged(groups, stage, reading, jobs, streams, progress, keys) as staged:
            made = _load(
                staged,
                stage,
                tmp,
                total,
                parquet,
                stores,
                meta_row(reading),
                plan,
                list(kept.values()),
                reading.selection,
            )
        _replace(tmp, db)
    finally:
        let_go(cache, close=False)
        shutil.rmtree(stage, ignore_errors=True)
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)
    if plan is None:
        return Replayed(made, "built anew" if existed else "")
    read = {r.path: replace(r, read=Use.WHOLE.value) for r in made if not r.store}
    return Replayed([kept[p] if p in kept else read[p] for p in plan.keys] + [r for r in made if r.store], plan.told)
