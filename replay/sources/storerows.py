"""The rows of a SQLite session store, decoded into the logical events they stand for
(sqlite-store.md): one row per event (layout 14), or a packed run of chunk events, data
compressed by Zstandard, and varint seq lists (layout 17). Each decoded event is written as the
JSONL line the file backend would hold for it, so that a session read from a store is judged by
the same reader and judge as a log file, line for line (a store session's line N is seq N - 2).

Nothing here touches the database: `decode_row` takes a row as `rows_query` selects it, its text
read as a bytearray and a BLOB as bytes (`TEXT`: so that a value tells its storage class by its
type, no `typeof` a column, and no text the file holds can fail to decode before the rules say
what it is), and gives its lines, or says why it does not decode (`RowDefect`), as the harness's
reader refuses it. The JSON of a row is read as `JSON.parse` reads it."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate, chain, compress, repeat

import msgspec
import zstandard

from invariant.jsvalue import MAX_SAFE_INTEGER
from replay.lines.chunks import ROW_TAGS, ChunkRow, RowError
from replay.lines.chunks import decode_row as decode_chunk_row
from replay.lines.deepjson import dumps
from replay.lines.jsonline import JsonLineError, Members, SafeInt, parse_json_line

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

TEXT = bytearray
"""The type SQLite text is read as while rows are read (the connection's `text_factory`): a
BLOB is read as bytes, so the two are told apart by type."""

Row = tuple[object, ...]
"""A row as `rows_query` selects it: seq, type, time, data, source_event_seqs, surface_op and
ignorable (NULL in layout 14)."""

ROW_COLUMNS = 7
"""A row's values (a row that cannot be read is a seq and its RowDefect: two)."""

TURN_END = b"turn/end"


class RowDefect(ValueError):
    """A row that does not decode into its events, as the harness's reader refuses it."""


def rows_query(layout: int) -> str:
    """The query of a session's rows after seq `?`, in seq order, as `decode_row` takes them."""
    return f"{_select(layout)} WHERE session_id = ? AND seq > ? ORDER BY seq"


def row_up_to_query(layout: int) -> str:
    """The query of a session's last row at or before seq `?` (the row holding that seq, where
    a packed row holds it), as `decode_row` takes it."""
    return f"{_select(layout)} WHERE session_id = ? AND seq <= ? ORDER BY seq DESC LIMIT 1"


def _select(layout: int) -> str:
    ignorable = "ignorable" if layout == LAYOUT_PACKED else "NULL"
    return f"SELECT seq, type, time, data, source_event_seqs, surface_op, {ignorable} FROM events"


@dataclass(frozen=True, slots=True)
class PackedLine:
    """A packed row given to the reader as the JSONL chunk row the file backend writes for it
    (session-log.md §6): one line standing for `members` events, read as a log file's row is,
    its members numbered by the lines they take in the session's logical log (each its own)."""

    line: bytes
    members: int


Decoded = bytes | list[bytes] | PackedLine
"""A row's lines: a scalar row's, a packed row's members' (or the packed row as one line)."""

Spans = list[tuple[int, int]]
"""Where lines stand for more than one event: (the line's index, the events it stands for),
a packed row given as one line (`PackedLine`)."""


def events_in(decoded: Decoded) -> int:
    """The events a row's lines stand for."""
    if isinstance(decoded, bytes):
        return 1
    return decoded.members if isinstance(decoded, PackedLine) else len(decoded)


def take(lines: list[bytes], spans: Spans, decoded: Decoded) -> int:
    """Add a row's lines to `lines` (a packed row given as one line: its index there and its
    members to `spans`); the events they stand for."""
    if isinstance(decoded, bytes):
        lines.append(decoded)
    elif isinstance(decoded, PackedLine):
        spans.append((len(lines), decoded.members))
        lines.append(decoded.line)
    else:
        lines += decoded
    return events_in(decoded)


def decode_row(layout: int, row: Row, packed: bool = False) -> Decoded:
    """The JSONL line of the event a scalar row stands for, or the lines of a packed row's
    members (with `packed`, where its data has the common shape, the row as one line: a
    `PackedLine`), in a store of `layout` (14 or 17); RowDefect saying why the harness's reader
    refuses the row. (Every row is decoded here, the checks in the order of the harness's
    reader; a well-formed scalar row costs its checks and one formatting.)"""
    seq, kind, time, data, seqs, op, ignorable = row
    if type(seq) is not int or not 0 <= seq <= MAX_SAFE_INTEGER:
        raise RowDefect(f"its seq is not a safe integer from 0 ({_what(seq)})")
    if type(time) is not int or not -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER:
        raise RowDefect(f"its time is not a safe integer ({_what(time)})")
    if type(kind) is not TEXT:
        raise RowDefect(f"its type is not text ({_storage(kind)})")
    if layout == LAYOUT_PACKED and ignorable == 0:
        if seqs is not None or op is not None:
            raise RowDefect("a packed row carries source_event_seqs or surface_op")
        return _packed(kind, seq, time, data, packed)
    if ignorable is not None and ignorable != 1:
        raise RowDefect(f"its ignorable column is neither NULL, 0 nor 1 ({_what(ignorable)})")
    text = data if type(data) is TEXT and len(data) <= VALUE_MAX else _data_text(layout, data, VALUE_MAX)
    _valid_json(text, "data")
    line = _HEAD % (_prefix(bytes(kind)), seq, time, _one_line(text))
    if seqs is not None:
        line += b',"sourceEventSeqs":' + _ENCODE(_seqs(layout, seqs))
    if op is not None:
        if type(op) is not TEXT:
            raise RowDefect(f"its surface_op is not JSON text ({_storage(op)})")
        _valid_json(op, "surface_op")
        line += b',"surfaceOp":' + _one_line(op)
    return line + _ENDS[ignorable]


_HEAD = b'%s%d,"time":%d,"data":%s'
"""A scalar event's line from its type (`_prefix`) to its data."""
_ENDS = {None: b"}", 1: b',"ignorable":true}'}
"""A scalar event's line's end, by its row's `ignorable` (NULL or 1)."""
_LINE = _HEAD + b"%s%s"


def quick_lines(layout: int, rows: list[Row], expected: int, packed: bool = False) -> tuple[list[bytes], Spans] | None:
    """The lines of `rows`, a run of a session's rows whose first must hold seq `expected`,
    where each row decodes and continues the seqs, else None (then they are walked one by one:
    `decode_row`); and where a packed row is one line (with `packed`: `decode_row`'s). The
    lines are `decode_row`'s; its checks are made a column at a time (in C: a scalar row costs
    no Python of its own but its seq list or op, where it has one), and packed rows and
    compressed data are decoded one by one."""
    if not rows or set(map(len, rows)) != {ROW_COLUMNS}:
        return ([], []) if not rows else None
    seqs, kinds, times, datas, lists, ops, marks = zip(*rows, strict=True)
    if set(map(type, seqs)) != {int} or set(map(type, times)) != {int} or set(map(type, kinds)) != {TEXT}:
        return None
    if min(times) < -MAX_SAFE_INTEGER or max(times) > MAX_SAFE_INTEGER or max(seqs) > MAX_SAFE_INTEGER:
        return None
    scalar = tuple(map(operator.and_, map(isinstance, datas, repeat(TEXT)), map(operator.ne, marks, repeat(0))))
    texts = list(compress(datas, scalar))
    held = [op for op in ops if op is not None]
    if not all(map(isinstance, held, repeat(TEXT))):
        return None
    joined = b"".join(chain(texts, held))
    if b"\n" in joined or b"\r" in joined or (texts and max(map(len, texts)) > VALUE_MAX):
        return None
    try:
        for _ in map(_RAW, chain(texts, held)):
            pass
        ends = list(map(_ENDS.__getitem__, compress(marks, scalar)))
        extras = _extras(layout, list(compress(lists, scalar)), list(compress(ops, scalar)))
    except (msgspec.DecodeError, KeyError, TypeError, RowDefect):
        return None
    prefixes = map(_prefix, map(bytes, compress(kinds, scalar)))
    columns = zip(prefixes, compress(seqs, scalar), compress(times, scalar), texts, extras, ends, strict=True)
    made = list(map(_LINE.__mod__, columns))
    if len(made) == len(rows):
        return (made, []) if list(seqs) == list(range(expected, expected + len(rows))) else None
    counts = [1] * len(rows)
    lines: list[bytes] = []
    spans: Spans = []
    taken = 0  # (the scalar rows' lines taken: before row k, k less the other rows before it)
    for others, k in enumerate(compress(range(len(rows)), map(operator.not_, scalar))):
        try:
            got = decode_row(layout, rows[k], packed)
        except RowDefect:
            return None
        lines += made[taken : k - others]
        taken = k - others
        counts[k] = take(lines, spans, got)
    lines += made[taken:]
    return (lines, spans) if list(seqs) == list(accumulate(counts[:-1], initial=expected)) else None


def _extras(layout: int, lists: list[object], ops: list[object]) -> list[bytes]:
    """The scalar rows' lines between their data and their ends (`_extra`), asked only of the
    rows that hold a seq list or an op (most hold neither)."""
    extras = [b""] * len(lists)
    for k in compress(
        range(len(lists)),
        map(operator.or_, map(operator.is_not, lists, repeat(None)), map(operator.is_not, ops, repeat(None))),
    ):
        extras[k] = _extra(layout, lists[k], ops[k])
    return extras


def _extra(layout: int, seqs: object, op: object) -> bytes:
    """A scalar row's line between its data and its end: its seq list and surface op (one of
    them at least), as `decode_row` writes them (the op checked already: JSON text on one line)."""
    extra = b"" if seqs is None else b',"sourceEventSeqs":' + _ENCODE(_seqs(layout, seqs))
    return extra if op is None else extra + b',"surfaceOp":' + op  # type: ignore[operator]


@lru_cache(maxsize=1024)
def _prefix(kind: bytes) -> bytes:
    """A scalar event's line up to its seq: its type as JSON (its bytes read as the harness's
    SQLite driver reads text, malformed UTF-8 as U+FFFD)."""
    return b'{"type":%s,"seq":' % _text(kind.decode("utf-8", "replace"))


class _TextRun(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    turn: SafeInt
    step: SafeInt
    index: SafeInt
    dt: list[SafeInt]
    members: Members = msgspec.field(name="texts")


class _ToolRun(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    turn: SafeInt
    step: SafeInt
    index: SafeInt
    dt: list[SafeInt]
    id: str
    members: Members = msgspec.field(name="args")
    name: str | msgspec.UnsetType = msgspec.UNSET


_RUNS: dict[bytes, Callable[[bytes | bytearray], _TextRun | _ToolRun]] = {
    b"text-chunks": msgspec.json.Decoder(_TextRun).decode,
    b"reasoning-chunks": msgspec.json.Decoder(_TextRun).decode,
    b"tool-call-chunks": msgspec.json.Decoder(_ToolRun).decode,
}
"""A packed row's data as its common shape holds it (integers, strings), by the row's type:
what does not decode so is read again by the exact reader (a number written 1.0, a lone
surrogate, a wrong shape)."""


def _common_run(kind: bytes, seq: int, time: int, text: bytes | bytearray) -> _TextRun | _ToolRun | None:
    """A packed row's data where it has the common shape and is surely within the bounds
    `chunks.decode_row` checks (its last seq and every running time safe integers: for the
    times, the extreme gaps repeated stay safe), else None (the exact reader decides)."""
    decode = _RUNS.get(kind)
    if decode is None:
        return None
    try:
        run = decode(text)
    except (msgspec.DecodeError, UnicodeError):
        return None
    count, dt = len(run.members), run.dt  # (its gaps, like turn, step and index, safe integers: checked)
    if len(dt) != count - 1 or seq + count - 1 > MAX_SAFE_INTEGER:
        return None
    if dt and (time + count * min(0, min(dt)) < -MAX_SAFE_INTEGER or time + count * max(0, max(dt)) > MAX_SAFE_INTEGER):
        return None
    return run


_ROW_LINE = b'{"type":"%s","seq0":%d,"time0":%d,"data":%s}'
"""A packed row as the chunk row a log file holds (its data as stored, on one line)."""


def _packed(kind: bytearray, seq: int, time: int, data: object, packed: bool) -> list[bytes] | PackedLine:
    """A packed run of chunk events (its data the JSONL row's, sqlite-store.md), expanded, or
    (`packed`, its data of the common shape) as the chunk row a log file holds."""
    tag = kind.decode("utf-8", "replace")
    if tag not in ROW_TAGS:
        raise RowDefect(f"a packed row's type {tag!r} is none of {', '.join(sorted(ROW_TAGS))}")
    text = _data_text(LAYOUT_PACKED, data, PACKED_DATA_MAX)
    quick = _quick_members(tag, seq, time, text, packed)
    if quick is not None:
        return quick
    value = _json(text, "data")
    try:
        row = decode_chunk_row({"type": tag, "seq0": seq, "time0": time, "data": value}, tag)
    except RowError as err:
        raise RowDefect(f"a malformed packed row: {err}") from None
    return list(_member_lines(row))


def _quick_members(
    tag: str, seq: int, time: int, text: bytes | bytearray, packed: bool
) -> list[bytes] | PackedLine | None:
    """The member lines of a packed row whose data has the common shape (integers, strings) and
    is within the bounds `chunks.decode_row` checks (`_common_run`), or (`packed`) the row as
    one line, its data as stored: the chunk row a log file holds, which the reader decodes by
    the same rules (`chunks.decode_row`) into the same members; None for any other row (read
    exactly)."""
    run = _common_run(tag.encode(), seq, time, text)
    if run is None:
        return None
    members = run.members
    if packed:
        return PackedLine(_ROW_LINE % (tag.encode(), seq, time, _one_line(text)), len(members))
    if isinstance(run, _ToolRun):
        named = b"" if run.name is msgspec.UNSET else b',"name":' + _ENCODE(run.name)
        chunk = b'"tool-call-delta","index":%d,"id":%s%s,"argumentsDelta":' % (run.index, _ENCODE(run.id), named)
    else:
        chunk = b'"%s","index":%d,"text":' % (_DELTAS[tag], run.index)
    middle = b',"data":{"turn":%d,"step":%d,"chunk":{"type":%s' % (run.turn, run.step, chunk)
    try:
        encoded = list(map(_ENCODE, members))
    except UnicodeEncodeError:
        return None
    head = b'{"type":"assistant/chunk","seq":%d,"time":%d' + middle.replace(b"%", b"%%") + b"%s}}}"
    times = accumulate(run.dt, initial=time)
    return list(map(head.__mod__, zip(range(seq, seq + len(members)), times, encoded, strict=True)))


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


def _data_text(layout: int, data: object, bound: int) -> bytes | bytearray:
    """A row's data as UTF-8 JSON text: text as stored, or (layout 17) a Zstandard frame's
    plaintext, its declared size checked against `bound` before it is decompressed."""
    if type(data) is not TEXT and type(data) is not bytes:
        raise RowDefect(f"its data is neither text nor a compressed frame ({_storage(data)})")
    if isinstance(data, TEXT):
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


def _valid_json(text: bytes | bytearray, column: str) -> None:
    """RowDefect unless `text` is one JSON value as `JSON.parse` reads it (checked by msgspec
    without building the value; what it refuses, the exact reader reads again)."""
    try:
        _RAW(text)
    except msgspec.DecodeError:
        _json(text, column)


_RAW = msgspec.json.Decoder(msgspec.Raw).decode


def _json(text: bytes | bytearray, column: str) -> object:
    try:
        return parse_json_line(bytes(text))
    except JsonLineError as err:
        raise RowDefect(f"its {column} is not JSON ({err})") from None


def _one_line(text: bytes | bytearray) -> bytes | bytearray:
    """JSON text on one line: a CR or LF in valid JSON is whitespace between tokens (a string
    holds them escaped), so a space stands for it without changing the value."""
    if b"\n" in text or b"\r" in text:
        return text.replace(b"\r", b" ").replace(b"\n", b" ")
    return text


def _seqs(layout: int, value: object) -> list[int]:
    """A row's source_event_seqs: a JSON array (layout 14) or a varint BLOB (layout 17)."""
    if layout == LAYOUT_PACKED:
        if type(value) is not bytes:
            raise RowDefect(f"its source_event_seqs is not a varint BLOB ({_storage(value)})")
        return varint_seqs(value)
    if type(value) is not TEXT:
        raise RowDefect(f"its source_event_seqs is not JSON text ({_storage(value)})")
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
    if raw.count(2, at) == len(raw) - at:  # (a run of seqs one apart, the common case)
        seqs = list(range(first, first + len(raw) - at + 1))
    else:
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


def _storage(value: object) -> str:
    """A value's SQLite storage class, as the message names it."""
    if type(value) is bytes:
        return "a BLOB"
    return {type(None): "NULL", TEXT: "text", int: "integer", float: "real"}.get(type(value), type(value).__name__)
