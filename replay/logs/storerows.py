"""The rows of a SQLite session store, decoded into the logical events they stand for
(sqlite-store.md): one row per event (layout 14), or a packed run of chunk events, data
compressed by Zstandard, and varint seq lists (layout 17). Each decoded event is written as the
JSONL line the file backend would hold for it, so that a session read from a store is judged by
the same reader and judge as a log file, line for line (a store session's line N is seq N - 2).

Nothing here touches the database: `decode_row` takes a row's column values as SQLite returned
them, text as `Text` (its UTF-8 bytes, so that no text the file holds can fail to decode before
the rules say what it is) and a BLOB as `bytes`, and says what the row is, or why it does not
decode (`RowDefect`), as the harness's reader refuses it. The JSON of a row is read as
`JSON.parse` reads it."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass

import zstandard

from invariant.jsvalue import MAX_SAFE_INTEGER
from replay.logs.chunks import ROW_TAGS, RowError
from replay.logs.chunks import decode_row as decode_chunk_row
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


class Text(bytes):
    """A TEXT value's bytes (the connection's text factory), told apart from a BLOB's `bytes`."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class DecodedRow:
    """A row's logical events, each as its JSONL line (no LF), the first one's seq, and whether
    one of them is a `turn/end` (the harness's committed boundary)."""

    seq: int
    lines: tuple[bytes, ...]
    turn_end: bool


def decode_row(
    layout: int,
    seq: object,
    kind: object,
    time: object,
    data: object,
    source_event_seqs: object,
    surface_op: object,
    ignorable: object,
) -> DecodedRow:
    """The row's events (`layout` 14 or 17; `ignorable` is None in layout 14, which has no such
    column), or RowDefect saying why the harness's reader refuses it."""
    if type(seq) is not int or not 0 <= seq <= MAX_SAFE_INTEGER:
        raise RowDefect(f"its seq is not a safe integer from 0 ({_what(seq)})")
    if type(time) is not int or not -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER:
        raise RowDefect(f"its time is not a safe integer ({_what(time)})")
    if not isinstance(kind, Text):
        raise RowDefect(f"its type is not text ({_what(kind)})")
    tag = kind.decode("utf-8", "replace")
    if layout == LAYOUT_PACKED and ignorable == 0:
        if source_event_seqs is not None or surface_op is not None:
            raise RowDefect("a packed row carries source_event_seqs or surface_op")
        return _packed(tag, seq, time, data)
    if ignorable not in (None, 1):
        raise RowDefect(f"its ignorable column is neither NULL, 0 nor 1 ({_what(ignorable)})")
    text = _data_text(layout, data, VALUE_MAX)
    _json(text, "data")
    line = [b'{"type":', json.dumps(tag).encode(), b',"seq":', str(seq).encode(), b',"time":', str(time).encode()]
    line += [b',"data":', _one_line(text)]
    if source_event_seqs is not None:
        seqs = _seqs(layout, source_event_seqs)
        line += [b',"sourceEventSeqs":[', ",".join(map(str, seqs)).encode(), b"]"]
    if surface_op is not None:
        if not isinstance(surface_op, Text):
            raise RowDefect(f"its surface_op is not JSON text ({_what(surface_op)})")
        _json(surface_op, "surface_op")
        line += [b',"surfaceOp":', _one_line(surface_op)]
    if ignorable == 1:
        line.append(b',"ignorable":true')
    line.append(b"}")
    return DecodedRow(seq, (b"".join(line),), tag == "turn/end")


def _packed(tag: str, seq: int, time: int, data: object) -> DecodedRow:
    """A packed run of chunk events (its data the JSONL row's, sqlite-store.md), expanded."""
    if tag not in ROW_TAGS:
        raise RowDefect(f"a packed row's type {tag!r} is none of {', '.join(sorted(ROW_TAGS))}")
    text = _data_text(LAYOUT_PACKED, data, PACKED_DATA_MAX)
    value = _json(text, "data")
    try:
        row = decode_chunk_row({"type": tag, "seq0": seq, "time0": time, "data": value}, tag)
    except RowError as err:
        raise RowDefect(f"a malformed packed row: {err}") from None
    return DecodedRow(seq, tuple(_event_line(event) for event in row.events()), False)


def _data_text(layout: int, data: object, bound: int) -> bytes:
    """A row's data as UTF-8 JSON text: text as stored, or (layout 17) a Zstandard frame's
    plaintext, its declared size checked against `bound` before it is decompressed."""
    if isinstance(data, Text):
        if len(data) > bound:
            raise RowDefect(f"its data holds {len(data):,} bytes, past the {bound:,} the reader takes")
        return data
    if type(data) is not bytes:
        raise RowDefect(f"its data is neither text nor a compressed frame ({_what(data)})")
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


def _seqs(layout: int, value: object) -> list[int]:
    """A row's source_event_seqs: a JSON array (layout 14) or a varint BLOB (layout 17)."""
    if layout == LAYOUT_PACKED:
        if type(value) is not bytes:
            raise RowDefect(f"its source_event_seqs is not a varint BLOB ({_what(value)})")
        return varint_seqs(value)
    if not isinstance(value, Text):
        raise RowDefect(f"its source_event_seqs is not JSON text ({_what(value)})")
    seqs = _json(value, "source_event_seqs")
    if not isinstance(seqs, list) or not all(type(s) is int and 0 <= s <= MAX_SAFE_INTEGER for s in seqs):
        raise RowDefect("its source_event_seqs is not an array of seqs")
    return seqs


def varint_seqs(raw: bytes) -> list[int]:
    """The seqs of a varint list: the first an unsigned LEB128 varint, each next one a ZigZag
    delta from the one before; RowDefect for a truncated, non-canonical or oversized varint, or
    a seq outside 0..2^53 - 1."""
    seqs: list[int] = []
    for k, value in enumerate(_varints(raw)):
        seq = value if k == 0 else seqs[-1] + ((value >> 1) ^ -(value & 1))
        if not 0 <= seq <= MAX_SAFE_INTEGER:
            raise RowDefect(f"its source_event_seqs decodes to seq {seq}, outside 0..2^53 - 1")
        seqs.append(seq)
    return seqs


def _varints(raw: bytes) -> Iterator[int]:
    at = 0
    while at < len(raw):
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
        yield value


def _event_line(event: dict[str, object]) -> bytes:
    """An expanded chunk event as its JSONL line, in the reference's key order, each value as
    JSON.parse would read it back (a number past a double's range as one that overflows)."""
    data = event["data"]
    assert isinstance(data, dict)
    chunk = data["chunk"]
    assert isinstance(chunk, dict)
    inner = ",".join(f"{json.dumps(k)}:{json_scalar(v)}" for k, v in chunk.items())
    return (
        f'{{"type":"assistant/chunk","seq":{event["seq"]},"time":{event["time"]},'
        f'"data":{{"turn":{json_scalar(data["turn"])},"step":{json_scalar(data["step"])},"chunk":{{{inner}}}}}}}'
    ).encode()


def json_scalar(value: object) -> str:
    """A string or number as JSON text that `JSON.parse` reads back as the same value (a double
    past the range as a literal that overflows to it)."""
    if isinstance(value, str):
        return json.dumps(value)  # (ASCII escapes: a lone surrogate the row held stays one)
    if isinstance(value, float) and not math.isfinite(value):
        return "1e400" if value > 0 else "-1e400"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) else str(value)
    raise TypeError(f"a chunk holds {value!r}")  # pragma: no cover (decode_chunk_row checked them)


def _what(value: object) -> str:
    if isinstance(value, Text):
        return "text"
    if isinstance(value, bytes):
        return f"a BLOB of {len(value)} bytes"
    return "NULL" if value is None else type(value).__name__
