"""The rows of a SQLite session store, decoded into the logical events they stand for
(sqlite-store.md): one row per event (layout 14), or a packed run of chunk events, data
compressed by Zstandard, and varint seq lists (layout 17). Each decoded event is written as the
JSONL line the file backend would hold for it, so that a session read from a store is judged by
the same reader and judge as a log file, line for line (a store session's line N is seq N - 2).

Nothing here touches the database: `decode_row` takes a row's column values as SQLite returned
them, text and BLOBs alike as bytes (so that no text the file holds can fail to decode before
the rules say what it is) each with its storage class (`typeof`), and says what the row is, or
why it does not decode (`RowDefect`), as the harness's reader refuses it. The JSON of a row is
read as `JSON.parse` reads it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate

import msgspec
import zstandard

from invariant.jsvalue import MAX_SAFE_INTEGER
from replay.logs.chunks import ROW_TAGS, ChunkRow, RowError
from replay.logs.chunks import decode_row as decode_chunk_row
from replay.logs.deepjson import dumps
from replay.logs.jsonline import JsonLineError, parse_json_line

LAYOUT_ROWS = 14
"""One row per logical event, data as JSON text (the published package 0.0.1-rc.1)."""
LAYOUT_PACKED = 17
"""Packed chunk rows, compressed data, varint seq lists (the harness at 611615650f)."""
LAYOUTS = (LAYOUT_ROWS, LAYOUT_PACKED)

PACKED_DATA_MAX = 1 << 20
"""A packed row's data past this many UTF-8 bytes is refused before it is parsed (the writer
splits longer runs), compressed or not: for a compressed one, by its frame's declared size."""
VALUE_MAX = (1 << 29) - 24
"""The longest text the harness's JavaScript can hold (V8's string length bound, in UTF-16
units; a UTF-8 byte is at most one of them): a row value, or a compressed value's text, past it
cannot be read by the harness, and is refused here before it is held whole."""

VARINT_BYTES = 8
"""The most bytes of one varint (2^53 - 1 needs 8 groups of 7 bits)."""


class RowDefect(ValueError):
    """A row that does not decode into its events, as the harness's reader refuses it."""


@dataclass(frozen=True, slots=True)
class DecodedRow:
    """A row's logical events, each as its JSONL line (no LF), the first one's seq, and whether
    one of them is a `turn/end` (the harness's committed boundary)."""

    seq: int
    lines: tuple[bytes, ...]
    turn_end: bool


ROW_COLUMNS = (
    "seq, typeof(type), type, time, typeof(data), data, typeof(source_event_seqs), source_event_seqs, "
    "typeof(surface_op), surface_op"
)
"""The columns `decode_row` takes, as a query selects them (then `ignorable`, or NULL in layout
14): each value that may be text or a BLOB with its SQLite storage class, read as bytes."""

TEXT, BLOB, NULL = b"text", b"blob", b"null"


def rows_query(layout: int) -> str:
    """The query of a session's rows after seq `?`: each row's seq, its JSONL line where SQLite
    can write it (a scalar row of text JSON data on one line and no seq list: most rows;
    `json_valid` refuses all that `JSON.parse` refuses, and what it refuses the exact reader
    reads again), and whether it is a `turn/end`. The other rows are read by `row_query`."""
    ignorable = _ignorable(layout)
    safe = MAX_SAFE_INTEGER
    fast = (
        f"typeof(seq) = 'integer' AND seq BETWEEN 0 AND {safe} AND typeof(time) = 'integer' "
        f"AND time BETWEEN -{safe} AND {safe} AND typeof(type) = 'text' AND typeof(data) = 'text' "
        f"AND source_event_seqs IS NULL AND ({ignorable} IS NULL OR {ignorable} = 1) AND json_valid(data) "
        "AND (surface_op IS NULL OR (typeof(surface_op) = 'text' AND json_valid(surface_op))) "
        "AND instr(data, char(10)) = 0 AND instr(data, char(13)) = 0 "
        "AND (surface_op IS NULL OR (instr(surface_op, char(10)) = 0 AND instr(surface_op, char(13)) = 0))"
    )
    line = (
        "'{\"type\":' || json_quote(type) || ',\"seq\":' || seq || ',\"time\":' || time || ',\"data\":' || data"
        " || CASE WHEN surface_op IS NULL THEN '' ELSE ',\"surfaceOp\":' || surface_op END"
        f" || CASE WHEN {ignorable} = 1 THEN ',\"ignorable\":true' ELSE '' END || '}}'"
    )
    return (
        f"SELECT seq, CASE WHEN {fast} THEN {line} END, type = 'turn/end' FROM events "
        "WHERE session_id = ? AND seq > ? ORDER BY seq"
    )


def row_query(layout: int) -> str:
    """The query of one row (session id, seq) as `decode_row` takes it."""
    return f"SELECT {ROW_COLUMNS}, {_ignorable(layout)} FROM events WHERE session_id = ? AND seq = ?"


def _ignorable(layout: int) -> str:
    """The `ignorable` column as a query selects it: layout 14 has none (NULL: a scalar row)."""
    return "ignorable" if layout == LAYOUT_PACKED else "NULL"


def decode_row(layout: int, row: tuple[object, ...]) -> DecodedRow:
    """The events of `row` (ROW_COLUMNS, then `ignorable`) in a store of `layout` (14 or 17),
    or RowDefect saying why the harness's reader refuses it."""
    seq, kind_is, kind, time, data_is, data, seqs_are, seqs, op_is, op, ignorable = row
    if type(seq) is not int or not 0 <= seq <= MAX_SAFE_INTEGER:
        raise RowDefect(f"its seq is not a safe integer from 0 ({_what(seq)})")
    if type(time) is not int or not -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER:
        raise RowDefect(f"its time is not a safe integer ({_what(time)})")
    if kind_is != TEXT or not isinstance(kind, bytes):
        raise RowDefect(f"its type is not text ({_name(kind_is)})")
    tag = kind.decode("utf-8", "replace")
    if layout == LAYOUT_PACKED and ignorable == 0:
        if seqs_are != NULL or op_is != NULL:
            raise RowDefect("a packed row carries source_event_seqs or surface_op")
        return _packed(tag, seq, time, data_is, data)
    if ignorable not in (None, 1):
        raise RowDefect(f"its ignorable column is neither NULL, 0 nor 1 ({_what(ignorable)})")
    text = _data_text(layout, data_is, data, VALUE_MAX)
    _valid_json(text, "data")
    line = [b'{"type":', _text(tag), b',"seq":', b"%d" % seq, b',"time":', b"%d" % time, b',"data":', _one_line(text)]
    if seqs_are != NULL:
        listed = _seqs(layout, seqs_are, seqs)
        line += [b',"sourceEventSeqs":[', b",".join(b"%d" % s for s in listed), b"]"]
    if op_is != NULL:
        if op_is != TEXT or not isinstance(op, bytes):
            raise RowDefect(f"its surface_op is not JSON text ({_name(op_is)})")
        _valid_json(op, "surface_op")
        line += [b',"surfaceOp":', _one_line(op)]
    if ignorable == 1:
        line.append(b',"ignorable":true')
    line.append(b"}")
    return DecodedRow(seq, (b"".join(line),), tag == "turn/end")


def _packed(tag: str, seq: int, time: int, data_is: object, data: object) -> DecodedRow:
    """A packed run of chunk events (its data the JSONL row's, sqlite-store.md), expanded."""
    if tag not in ROW_TAGS:
        raise RowDefect(f"a packed row's type {tag!r} is none of {', '.join(sorted(ROW_TAGS))}")
    text = _data_text(LAYOUT_PACKED, data_is, data, PACKED_DATA_MAX)
    value = _json(text, "data")
    try:
        row = decode_chunk_row({"type": tag, "seq0": seq, "time0": time, "data": value}, tag)
    except RowError as err:
        raise RowDefect(f"a malformed packed row: {err}") from None
    return DecodedRow(seq, tuple(_member_lines(row)), False)


def _member_lines(row: ChunkRow) -> Iterator[bytes]:
    """The JSONL lines of a packed row's members, as `ChunkRow.events` expands them (the
    reference's key order), written without a dict an event: what every member shares is
    encoded once."""
    data = row.data
    scalar = [dumps(data[k], exact=True).encode() for k in ("turn", "step", "index")]
    if row.tag == "tool-call-chunks":
        named = b',"name":' + _text(data["name"]) if "name" in data else b""
        chunk = b'"tool-call-delta","index":%s,"id":%s%s,"argumentsDelta":' % (scalar[2], _text(data["id"]), named)
    else:
        chunk = b'"%s","index":%s,"text":' % (_DELTAS[row.tag], scalar[2])
    middle = b',"data":{"turn":%s,"step":%s,"chunk":{"type":%s' % (scalar[0], scalar[1], chunk)
    for k, (member, time) in enumerate(zip(row.members, accumulate(row.dt, initial=row.time0), strict=False)):
        yield b'{"type":"assistant/chunk","seq":%d,"time":%d%s%s}}}' % (row.seq0 + k, time, middle, _text(member))


_DELTAS = {"text-chunks": b"text-delta", "reasoning-chunks": b"reasoning-delta"}


def _text(value: object) -> bytes:
    """A string as JSON (msgspec's, fast; for a lone surrogate, which has no UTF-8 form, its
    escape, as `deepjson.dumps` writes what `JSON.parse` reads back)."""
    try:
        return _ENCODE(value)
    except UnicodeEncodeError:
        return dumps(value, exact=True).encode()


def _data_text(layout: int, data_is: object, data: object, bound: int) -> bytes:
    """A row's data as UTF-8 JSON text: text as stored, or (layout 17) a Zstandard frame's
    plaintext, its declared size checked against `bound` before it is decompressed."""
    if not isinstance(data, bytes) or data_is not in (TEXT, BLOB):
        raise RowDefect(f"its data is neither text nor a compressed frame ({_name(data_is)})")
    if data_is == TEXT:
        if len(data) > bound:
            raise RowDefect(f"its data holds {len(data):,} bytes, past the {bound:,} the reader takes")
        return data
    if layout != LAYOUT_PACKED:
        raise RowDefect("its data is a BLOB, where layout 14 holds JSON text")
    text = _decompressed(data, bound)
    try:
        text.decode("utf-8")
    except UnicodeDecodeError as err:
        raise RowDefect(f"its decompressed data is not UTF-8 (byte {err.start})") from None
    return text


def _decompressed(frame: bytes, bound: int) -> bytes:
    try:
        params = zstandard.get_frame_parameters(frame)
    except zstandard.ZstdError as err:
        raise RowDefect(f"its compressed data is no Zstandard frame ({err})") from None
    declared = params.content_size
    if declared != zstandard.CONTENTSIZE_UNKNOWN and declared > bound:
        raise RowDefect(f"its compressed data declares {declared:,} bytes, past the {bound:,} the reader takes")
    try:
        reader = zstandard.ZstdDecompressor().decompressobj()
        text = reader.decompress(frame)
    except zstandard.ZstdError as err:
        raise RowDefect(f"its compressed data does not decompress ({err})") from None
    if not reader.eof:
        raise RowDefect("its compressed data is a truncated Zstandard frame")
    if reader.unused_data:
        raise RowDefect("its compressed data holds bytes after its Zstandard frame")
    if len(text) > bound or (declared != zstandard.CONTENTSIZE_UNKNOWN and len(text) != declared):
        raise RowDefect(f"its compressed data decompresses to {len(text):,} bytes, not the size it declares")
    return text


def _valid_json(text: bytes, column: str) -> None:
    """RowDefect unless `text` is one JSON value as `JSON.parse` reads it (checked by msgspec
    without building the value; what it refuses, the exact reader reads again)."""
    try:
        _RAW(text)
    except msgspec.DecodeError:
        _json(text, column)


_RAW = msgspec.json.Decoder(msgspec.Raw).decode


def _json(text: bytes, column: str) -> object:
    try:
        return parse_json_line(text)
    except JsonLineError as err:
        raise RowDefect(f"its {column} is not JSON ({err})") from None


def _one_line(text: bytes) -> bytes:
    """JSON text on one line: a CR or LF in valid JSON is whitespace between tokens (a string
    holds them escaped), so a space stands for it without changing the value."""
    if b"\n" in text or b"\r" in text:
        return text.replace(b"\r", b" ").replace(b"\n", b" ")
    return text


def _seqs(layout: int, stored_as: object, value: object) -> list[int]:
    """A row's source_event_seqs: a JSON array (layout 14) or a varint BLOB (layout 17)."""
    if layout == LAYOUT_PACKED:
        if stored_as != BLOB or not isinstance(value, bytes):
            raise RowDefect(f"its source_event_seqs is not a varint BLOB ({_name(stored_as)})")
        return varint_seqs(value)
    if stored_as != TEXT or not isinstance(value, bytes):
        raise RowDefect(f"its source_event_seqs is not JSON text ({_name(stored_as)})")
    seqs = _json(value, "source_event_seqs")
    if not isinstance(seqs, list) or not all(type(s) is int and 0 <= s <= MAX_SAFE_INTEGER for s in seqs):
        raise RowDefect("its source_event_seqs is not an array of seqs")
    return seqs


def varint_seqs(raw: bytes) -> list[int]:
    """The seqs of a varint list: the first an unsigned LEB128 varint, each next one a ZigZag
    delta from the one before; RowDefect for a truncated, non-canonical or oversized varint, or
    a seq outside 0..2^53 - 1. (Deltas of one byte each, the common case, are summed in C.)"""
    if not raw:
        return []
    first, at = _varint(raw, 0)
    rest = memoryview(raw)[at:]
    deltas = map(_ZIGZAG.__getitem__, rest) if max(rest, default=0) < 0x80 else map(_unzigzag, _varints(raw, at))
    seqs = list(accumulate(deltas, initial=first))
    low, high = min(seqs), max(seqs)
    if low < 0 or high > MAX_SAFE_INTEGER:
        raise RowDefect(f"its source_event_seqs decodes to seq {low if low < 0 else high}, outside 0..2^53 - 1")
    return seqs


def _unzigzag(value: int) -> int:
    return (value >> 1) ^ -(value & 1)


_ZIGZAG = [_unzigzag(v) for v in range(128)]
"""A one-byte ZigZag delta's value."""


def _varints(raw: bytes, at: int) -> Iterator[int]:
    """The varints of `raw` from `at` on."""
    while at < len(raw):
        value, at = _varint(raw, at)
        yield value


def _varint(raw: bytes, at: int) -> tuple[int, int]:
    """The varint at `at` and where the next one starts; RowDefect for a truncated, non-canonical
    or oversized one."""
    value = shift = 0
    for used in range(1, VARINT_BYTES + 1):
        if at >= len(raw):
            raise RowDefect("its source_event_seqs ends inside a varint")
        byte = raw[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            if byte == 0 and used > 1:
                raise RowDefect("its source_event_seqs holds a non-canonical varint (a last byte of 0)")
            break
    else:
        raise RowDefect(f"its source_event_seqs holds a varint of more than {VARINT_BYTES} bytes")
    if value > MAX_SAFE_INTEGER:
        raise RowDefect("its source_event_seqs holds a varint past 2^53 - 1")
    return value, at


_ENCODE = msgspec.json.Encoder().encode


def _what(value: object) -> str:
    return "NULL" if value is None else type(value).__name__


def _name(storage: object) -> str:
    """A SQLite storage class (`typeof`) as the message names it."""
    if storage == BLOB:
        return "a BLOB"
    if storage == NULL:
        return "NULL"
    return storage.decode() if isinstance(storage, bytes) else str(storage)
