"""`sql` and `inspect`: questions asked of a replay database (opened read-only)."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import secrets
import signal
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path

import duckdb

from replay.terminal import printable

QUERY_FORMATS = ("table", "json", "csv")


class QueryError(ValueError):
    """The database cannot be opened or the query fails (a usage problem)."""


@dataclass(frozen=True)
class Result:
    columns: tuple[str, ...]
    rows: tuple[tuple[object, ...], ...]
    json_columns: frozenset[str] = frozenset()
    """Columns of DuckDB type JSON: their text is embedded as JSON in `--format json`."""


def _text(value: object) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            return value.strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"
        return value.isoformat(sep=" ", timespec="milliseconds")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False, default=_text)
    return str(value)


DUCKDB_MAGIC = b"DUCK"
"""Bytes 8-11 of every DuckDB database file."""


def is_database(db: Path) -> bool:
    """Whether the file starts as a DuckDB database does; raises OSError when it cannot be read."""
    with open(db, "rb") as f:
        return f.read(12)[8:12] == DUCKDB_MAGIC


def connect(db: Path) -> duckdb.DuckDBPyConnection:
    """Open a replay database read-only. Checked first: DuckDB opens some other files (a `.json`
    or `.csv` one) as an in-memory database over them, which it then refuses read-only."""
    if not db.is_file():
        raise QueryError(f"{db}: no such database (create one with `schedlog replay ... --db {db}`)")
    try:
        if not is_database(db):
            raise QueryError(f"{db}: not a DuckDB database (`schedlog replay LOGS --db FILE.duckdb` makes one)")
    except OSError as err:
        raise QueryError(f"{db}: cannot read: {err.strerror or err}") from None
    try:
        con = duckdb.connect(str(db), read_only=True)
    except duckdb.Error as err:
        raise QueryError(f"{db}: cannot open as a DuckDB database: {err}") from None
    con.execute("SET TimeZone = 'UTC'")
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
def query_rows(db: Path, query: str) -> Iterator[Rows]:
    """Run one query against a replay database; its rows are read while the context is open.

    Raises QueryError, on opening, on running, or while the rows are read.
    """
    con = connect(db)
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
        raise QueryError(str(err).strip()) from None
    columns = tuple(d[0] for d in description)
    json_columns = frozenset(d[0] for d in description if str(d[1]) == "JSON")
    return Rows(columns, json_columns, _batches(cursor) if columns else iter(()))


def _batches(cursor: duckdb.DuckDBPyConnection) -> Iterator[list[tuple[object, ...]]]:
    while True:
        try:
            batch = cursor.fetchmany(FETCH_ROWS)
        except duckdb.Error as err:  # a value can fail only as it is produced (a cast, say)
            raise QueryError(str(err).strip()) from None
        if not batch:
            return
        yield [tuple(row) for row in batch]


def _finite(value: object) -> object:
    """A value JSON can hold: an infinite or NaN double becomes null, as `JSON.stringify` writes it."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, list):
        return [_finite(v) for v in value]
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    return value


def _json_record(columns: Sequence[str], json_columns: frozenset[str], row: Sequence[object]) -> str:
    """One row as `json.dumps([record], indent=2)` writes it inside its array (indented by 2).

    A JSON column's value is nested as JSON. A value nested deeper than the standard library
    reads (a record JSON.parse read, say) is written as DuckDB gave it, spliced in where a
    placeholder stood.
    """
    spliced: dict[str, str] = {}

    def value(column: str, v: object) -> object:
        if column in json_columns and isinstance(v, str):
            try:
                return json.loads(v)
            except RecursionError:
                token = f"\x00deep-{secrets.token_hex(8)}\x00"
                spliced[json.dumps(token)] = v
                return token
        return _finite(v)

    record = {c: value(c, v) for c, v in zip(columns, row, strict=True)}
    text = json.dumps(record, ensure_ascii=False, indent=2, default=_text, allow_nan=False)
    text = "  " + text.replace("\n", "\n  ")  # JSON text holds a newline only between tokens
    for token, raw in spliced.items():
        text = text.replace(token, raw, 1)
    return text


def render_result(result: Result, fmt: str) -> str:
    rows = Rows(result.columns, result.json_columns, iter([list(result.rows)]))
    return "".join(render_chunks(rows, fmt))


def render_chunks(rows: Rows, fmt: str) -> Iterator[str]:
    """The rows rendered as `table`, `json` or `csv`, a piece at a time: `json` and `csv` are
    written as the rows arrive; a table must see every row to size its columns."""
    if fmt == "json":
        first = True
        for batch in rows.batches:
            for row in batch:
                yield ("[\n" if first else ",\n") + _json_record(rows.columns, rows.json_columns, row)
                first = False
        yield "[]\n" if first else "\n]\n"
    elif fmt == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(rows.columns)
        for batch in rows.batches:
            writer.writerows([["" if v is None else _text(v) for v in row] for row in batch])
            yield out.getvalue()
            out.seek(0)
            out.truncate()
        yield out.getvalue()
    else:
        yield from table_lines(rows.columns, [[_text(v) for v in row] for batch in rows.batches for row in batch])


def table_lines(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> Iterator[str]:
    """A plain aligned text table (one header line, a rule, one line per row), a line (newline
    included) at a time; a control character in a value is written as an escape
    (`report.printable`)."""
    columns = [printable(c) for c in columns]
    rows = [[printable(v) for v in row] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]
    yield "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip() + "\n"
    yield "  ".join("-" * w for w in widths) + "\n"
    for row in rows:
        yield "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() + "\n"


INSPECT_QUERIES = {
    "sessions by verdict": "SELECT verdict, count(*) AS sessions, sum(event_count) AS events, "
    "sum(schedule_event_count) AS schedule_events FROM sessions GROUP BY verdict ORDER BY verdict",
    "rules violated": "SELECT rule, count(*) AS sessions FROM violations "
    "GROUP BY rule ORDER BY sessions DESC, rule LIMIT 10",
    "format findings": "SELECT f->>'code' AS code, f->>'severity' AS severity, count(*) AS findings "
    "FROM (SELECT unnest(CAST(format_findings AS JSON[])) AS f FROM sessions) "
    "GROUP BY ALL ORDER BY findings DESC, code LIMIT 10",
    "active reminders": "SELECT s.path, a.id, a.kind, a.current_target AS target, a.prompt "
    "FROM active_schedules a JOIN sessions s USING (session_key) ORDER BY a.current_target, s.path, a.id LIMIT 20",
}


def inspect_db(db: Path) -> str:
    """A short human summary: sessions, verdicts, rules violated, findings, active reminders."""
    con = connect(db)
    try:
        with _ctrl_c_interrupts(con):
            present = {name for (name,) in _run(con, "SELECT table_name FROM information_schema.tables").rows}
            missing = sorted({"sessions", "violations", "active_schedules"} - present)
            if missing:
                raise QueryError(f"{db}: not a schedlog replay database (it has no {', '.join(missing)})")
            results = {title: _run(con, query) for title, query in INSPECT_QUERIES.items()}
    finally:
        con.close()
    sections = []
    for title, result in results.items():
        body = render_result(result, "table") if result.rows else "(none)\n"
        sections.append(f"{title}\n{body}")
    return "\n".join(sections)
