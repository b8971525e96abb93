"""Query results (`sql`, `inspect`): an aligned table for people, JSON / JSONL / CSV for machines."""

from __future__ import annotations

import csv
import io
import json
import math
import secrets
from collections.abc import Iterator, Mapping, Sequence
from datetime import date, datetime, timedelta

from replay.cli.output import Format
from replay.duck.query import Result, Rows
from replay.terminal import printable


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
    if isinstance(value, bytes):  # a BLOB, as DuckDB writes one: printable ASCII kept, other bytes \xHH
        return "".join(chr(b) if 0x20 <= b < 0x7F and b != 0x5C else f"\\x{b:02X}" for b in value)
    if isinstance(value, timedelta):  # an INTERVAL, as DuckDB writes one
        return _interval(value)
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return str(value)


def _interval(value: timedelta) -> str:
    days, rest = value.days, value.seconds
    parts = [f"{days} day{'' if abs(days) == 1 else 's'}"] if days else []
    if rest or value.microseconds or not days:
        clock = f"{rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}"
        parts.append(clock + (f".{value.microseconds:06d}" if value.microseconds else ""))
    return " ".join(parts)


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
    """One row as `json.dumps([record], indent=2)` writes it inside its array (indented by 2)."""
    text = _json_text(columns, json_columns, row, 2)
    return "  " + text.replace("\n", "\n  ")  # JSON text holds a newline only between tokens


def _json_line(columns: Sequence[str], json_columns: frozenset[str], row: Sequence[object]) -> str:
    """One row as one compact line of JSON."""
    return _json_text(columns, json_columns, row, None) + "\n"


def _json_text(columns: Sequence[str], json_columns: frozenset[str], row: Sequence[object], indent: int | None) -> str:
    """One row as a JSON object. A JSON column's value is nested as JSON. A value nested deeper
    than the standard library reads (a record JSON.parse read, say) is written as DuckDB gave
    it, spliced in where a placeholder stood."""
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
    text = json.dumps(record, ensure_ascii=False, indent=indent, default=_text, allow_nan=False)
    for token, raw in spliced.items():
        text = text.replace(token, raw, 1)
    return text


def render_result(result: Result, fmt: Format) -> str:
    return "".join(render_chunks(_rows(result), fmt))


def render_chunks(rows: Rows, fmt: Format, terminal: bool = False) -> Iterator[str]:
    """The rows rendered in `fmt`, a piece at a time: json, jsonl and csv are written as the rows
    arrive; a text table must see every row to size its columns."""
    if fmt is Format.JSONL:
        for batch in rows.batches:
            yield "".join(_json_line(rows.columns, rows.json_columns, row) for row in batch)
    elif fmt is Format.JSON:
        first = True
        for batch in rows.batches:
            for row in batch:
                yield ("[\n" if first else ",\n") + _json_record(rows.columns, rows.json_columns, row)
                first = False
        yield "[]\n" if first else "\n]\n"
    elif fmt is Format.CSV:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(rows.columns)
        for batch in rows.batches:
            cells = [["" if v is None else _text(v) for v in row] for row in batch]
            writer.writerows([[printable(c) for c in r] for r in cells] if terminal else cells)
            yield out.getvalue()
            out.seek(0)
            out.truncate()
        yield out.getvalue()
    else:
        yield from table_lines(rows.columns, [[_text(v) for v in row] for batch in rows.batches for row in batch])


def table_lines(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> Iterator[str]:
    """A plain aligned text table (one header line, a rule, one line per row), a line (newline
    included) at a time; a control character in a value is written as an escape
    (`printable`)."""
    columns = [printable(c) for c in columns]
    rows = [[printable(v) for v in row] for row in rows]
    widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]
    yield "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip() + "\n"
    yield "  ".join("-" * w for w in widths) + "\n"
    for row in rows:
        yield "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() + "\n"


def inspection_chunks(results: Mapping[str, Result], fmt: Format) -> Iterator[str]:
    """`inspect`'s summary: each question's title and its rows as a table (text), or one JSON
    object holding each question's rows as records (json)."""
    if fmt is Format.JSON:
        yield "{"
        for n, (title, result) in enumerate(results.items()):
            key = title.replace(" ", "_")  # a key as the tables' names are written
            yield ("\n" if n == 0 else ",\n") + f"  {json.dumps(key, ensure_ascii=False)}: "
            records = "".join(render_chunks(_rows(result), Format.JSON)).rstrip("\n")
            yield records.replace("\n", "\n  ")
        yield "\n}\n"
        return
    for n, (title, result) in enumerate(results.items()):
        body = render_result(result, Format.TEXT) if result.rows else "(none)\n"
        yield ("" if n == 0 else "\n") + f"{title}\n{body}"


def _rows(result: Result) -> Rows:
    return Rows(result.columns, result.json_columns, iter([list(result.rows)]))
