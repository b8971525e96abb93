"""`sql` and `inspect`: questions asked of a replay database (opened read-only)."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import duckdb


class QueryError(ValueError):
    """The database cannot be opened or the query fails (a usage problem)."""


@dataclass(frozen=True)
class Result:
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]
    json_columns: frozenset[str] = frozenset()
    """Columns of DuckDB type JSON: their text is embedded as JSON in `--format json`."""


DUCKDB_MAGIC = b"DUCK"
"""Bytes 8-11 of every DuckDB database file."""


def is_database(db: Path) -> bool:
    """Whether the file starts as a DuckDB database does; raises OSError when it cannot be read."""
    with open(db, "rb") as f:
        return f.read(12)[8:12] == DUCKDB_MAGIC


SEALED = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}
"""A connection that sees the database alone: no other file read or written (COPY TO, read_text,
read_csv), no ATTACH, no INSTALL or LOAD from outside, and no SET that would undo it."""


def connect(db: Path, external_access: bool = False) -> duckdb.DuckDBPyConnection:
    """Open a replay database read-only, sealed (SEALED) unless `external_access`. Checked
    first: DuckDB opens some other files (a `.json` or `.csv` one) as an in-memory database
    over them, which it then refuses read-only."""
    if not db.is_file():
        raise QueryError(f"{db}: no such database (create one with `schedlog replay ... --db {db}`)")
    try:
        if not is_database(db):
            raise QueryError(f"{db}: not a DuckDB database (`schedlog replay LOGS --db FILE.duckdb` makes one)")
    except OSError as err:
        raise QueryError(f"{db}: cannot read: {err.strerror or err}") from None
    try:
        con = duckdb.connect(str(db), read_only=True, config={} if external_access else dict(SEALED))
    except duckdb.Error as err:
        raise QueryError(f"{db}: cannot open as a DuckDB database: {err}") from None
    con.execute("SET TimeZone = 'UTC'")
    if not external_access:
        con.execute("SET lock_configuration = true")  # no SET can undo the seal
    return con


@contextmanager
def _ctrl_c_interrupts(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Let Ctrl-C stop the query running on `con`.

    DuckDB notices SIGINT only at some points of a query (a long aggregate can ignore every
    Ctrl-C), so a thread woken by the signal interrupts the query itself. Python's C-level handler
    writes the signal's number to a wakeup pipe even while the main thread is inside DuckDB.
    Signals reach the main thread only, so elsewhere nothing is set up.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)

    def watch() -> None:
        while chunk := os.read(read_end, 512):  # empty once the write end is closed
            if signal.SIGINT in chunk:
                con.interrupt()

    watcher = threading.Thread(target=watch, name="ctrl-c", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        os.close(write_end)
        watcher.join()
        os.close(read_end)


@dataclass(frozen=True)
class Rows:
    """A query's columns and its rows, fetched a batch at a time while they are read."""

    columns: tuple[str, ...]
    json_columns: frozenset[str]
    batches: Iterator[list[tuple[object, ...]]]


FETCH_ROWS = 10_000
"""Rows fetched from DuckDB at a time: a result is rendered as it arrives, never held whole."""


@contextmanager
def query_rows(db: Path, query: str, external_access: bool = False) -> Iterator[Rows]:
    """Run one query against a replay database; its rows are read while the context is open.

    Raises QueryError, on opening, on running, or while the rows are read.
    """
    con = connect(db, external_access)
    try:
        with _ctrl_c_interrupts(con):
            yield _start(con, query)
    finally:
        con.close()


def _run(con: duckdb.DuckDBPyConnection, query: str) -> Result:
    """Run one query on `con`, every row read now."""
    rows = _start(con, query)
    return Result(rows.columns, tuple(row for batch in rows.batches for row in batch), rows.json_columns)


def _start(con: duckdb.DuckDBPyConnection, query: str) -> Rows:
    try:
        cursor = con.execute(query)
        if cursor is None:  # DuckDB runs nothing for a blank or comment-only query
            raise QueryError("the query holds no statement")
        description = cursor.description or []
    except duckdb.Error as err:
        raise QueryError(_hinted(str(err).strip())) from None
    columns = tuple(d[0] for d in description)
    json_columns = frozenset(d[0] for d in description if str(d[1]) == "JSON")
    return Rows(columns, json_columns, _batches(cursor) if columns else iter(()))


SEALED_HINT = (
    "the query sees the database alone (the connection is sealed); `schedlog sql --allow-external-access` "
    "lets it read other files too, such as `read_parquet('fleet-verdicts/**/*.parquet')`"
)


def _hinted(message: str) -> str:
    """DuckDB's message, and what lifts the seal where the seal refused the query."""
    if "operations are disabled by config" in message or "disabled by configuration" in message:
        return f"{message}\nhint: {SEALED_HINT}"
    return message


def _batches(cursor: duckdb.DuckDBPyConnection) -> Iterator[list[tuple[object, ...]]]:
    while True:
        try:
            batch = cursor.fetchmany(FETCH_ROWS)
        except duckdb.Error as err:  # a value can fail only as it is produced (a cast, say)
            raise QueryError(str(err).strip()) from None
        if not batch:
            return
        yield [tuple(row) for row in batch]


INSPECT_QUERIES = {  # (columns named as the tables name them; JSON keys are the titles in snake_case)
    "sessions by verdict": "SELECT verdict, count(*) AS sessions, sum(event_count) AS event_count, "
    "sum(schedule_event_count) AS schedule_event_count FROM sessions GROUP BY verdict ORDER BY verdict",
    "rules violated": "SELECT rule, count(*) AS sessions FROM violations "
    "GROUP BY rule ORDER BY sessions DESC, rule LIMIT 10",
    "format findings": "SELECT f->>'code' AS code, f->>'severity' AS severity, count(*) AS findings "
    "FROM (SELECT unnest(CAST(format_findings AS JSON[])) AS f FROM sessions) "
    "GROUP BY ALL ORDER BY findings DESC, code LIMIT 10",
    "active reminders": "SELECT s.path, a.id, a.kind, a.current_target, a.prompt "
    "FROM active_schedules a JOIN sessions s USING (session_key) ORDER BY a.current_target, s.path, a.id LIMIT 20",
}


def inspect_db(db: Path) -> dict[str, Result]:
    """A short summary, one result per question: sessions by verdict, rules violated, format
    findings, active reminders."""
    con = connect(db)
    try:
        with _ctrl_c_interrupts(con):
            present = {name for (name,) in _run(con, "SELECT table_name FROM information_schema.tables").rows}
            missing = sorted({"sessions", "violations", "active_schedules"} - present)
            if missing:
                raise QueryError(f"{db}: not a schedlog replay database (it has no {', '.join(missing)})")
            return {title: _run(con, query) for title, query in INSPECT_QUERIES.items()}
    finally:
        con.close()
