"""The fast decoder over runs of lines (envelope.py types them): which records of a run are in
line, that is, committed exactly as the exact path would commit them, with no envelope the
log's version refuses. It decides nothing else: the first record it cannot vouch for, and every
line msgspec refuses, is read the exact way, and every judgement of what a record holds stays
with the reader (logfile.py) and the committed-record scan (committed.py)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from itertools import accumulate, compress, repeat
from operator import attrgetter, is_not, lt
from typing import Any, NamedTuple, cast

import msgspec
from msgspec import UNSET, Raw

from invariant import SCHEDULE_CHANGE
from invariant.jsvalue import MAX_SAFE_INTEGER
from invariant.logshapes import ASSISTANT_MESSAGE, END_SEED, EVENT_SHAPES
from invariant.readers import guarded
from invariant.sessionload import CHECKED_TYPES
from invariant.shapes import Reject, Spec
from invariant.surface import TOOL_RESULT, RestOf, Surface
from replay.lines.jsonline import BeyondBound, Deep, JsonLineError, parse_json_line
from replay.logs.envelope import (
    APPEND,
    GAP_BOUND,
    REGISTRY,
    ROW_CLASSES,
    Record,
    SurfaceEvent,
    TextRow,
    ToolRow,
    Verbatim,
    decode_line,
    decode_lines,
    raw_record,
)
from replay.logs.loadfast import NULL, VERDICTS, Verdict

DECODED_TOGETHER = 256
"""Lines decoded in one pass: a refused line costs its part a second pass, line by line."""
_SEQ = attrgetter("seq")
_SURFACE_OP = attrgetter("surfaceOp")
_CITED = attrgetter("sourceEventSeqs")
_TIME = attrgetter("time")
_DATA = attrgetter("data")
_MEMBERS = attrgetter("members")
_DT = attrgetter("dt")


def decode_run(lines: list[bytes]) -> tuple[list[Record | None], list[int]]:
    """The record of each line, None where the decoder refuses it: a part of lines in one pass
    where the decoder takes them all, else line by line; and where the refused lines are (so
    that nobody compares every record with None to find them)."""
    records: list[Record | None] = []
    refused: list[int] = []
    for k in range(0, len(lines), DECODED_TOGETHER):
        part = lines[k : k + DECODED_TOGETHER]
        try:
            records += decode_lines(part)
        except (msgspec.MsgspecError, RecursionError):
            decoded = list(map(_decoded, part))
            refused += (k + i for i, record in enumerate(decoded) if record is None)
            records += decoded
    return records, refused


def _decoded(line: bytes) -> Record | None:
    if not line or line.isspace():  # refused at once: no JSON value
        return None
    try:
        return decode_line(line)
    except (msgspec.MsgspecError, RecursionError):
        return None


def _not_deep(length: int) -> None:
    raise BeyondBound


def learn(line: bytes) -> None:
    """Make the event class of the type of a refused `line` when the decoder does not know it
    yet (most refusals are no unknown type: a new type is met once per process)."""
    try:
        value = parse_json_line(line, _not_deep)
    except (JsonLineError, BeyondBound):  # a deep line is read by the exact path only, never twice
        return
    tag = value.get("type") if isinstance(value, dict) else None
    if type(tag) is str:
        REGISTRY.event_class(tag)


ROW, SURFACE, CHECKED, WANTED, SELECTED, GUARDED = 1, 2, 4, 8, 16, 32
"""What the reader does with a record of a class (`Kinds.roles`), as bits: a packed row (its
size counts), a surface event (its metadata is judged), a type the load checks read, a record
to look at beside them (a schedule change, from v2 on a fork marker), and one of a type the
selector asks about (its bytes screened first, for a whole run at once), and a type the
611615650f reader's guard refuses (invariant.readers; an event the fast path decodes is never
marked ignorable: the decoder refuses the key)."""


class Run(NamedTuple):
    """Decoded records found in line: their classes, the event index each starts at (and the
    count after the last), how many of them are in line (the next is read exactly), and of
    those, where the load checks' types, the records to look at and those of selected types stand."""

    kinds: list[type]
    starts: list[int]
    stop: int
    checked: list[int]
    wanted: list[int]
    selected: list[int]
    guarded: int | None
    """The first record in line of a type the guard refuses (None: none)."""


def in_line(
    records: list[Record],
    lines: list[bytes],
    event_count: int,
    rows_allowed: bool,
    roles: dict[type, int],
    surface: Surface,
    version: int,
) -> Run:
    """How far `records` (none refused; decoded from `lines`) commit in line from `event_count`
    on: seq contiguity and row sizes checked for all at once; a row where rows are not allowed,
    or surface metadata the exact path must judge, stops the run. The surface steps of the
    records in line are applied to `surface`. Each record's role (`roles`, by class) is read in
    one pass, and only the records that have one are looked at again."""
    kinds = list(map(type, records))
    flags = list(map(roles.__getitem__, kinds))
    marked = list(compress(range(len(flags)), flags))
    rows = [i for i in marked if flags[i] & ROW]
    stop = len(records)
    sizes: list[int] | None = None
    if rows:
        sizes = [1] * stop
        _row_sizes(records, rows, sizes)
        starts = list(accumulate(sizes, initial=event_count))
    else:  # every record is one event
        starts = list(range(event_count, event_count + stop + 1))
    seqs = list(map(_SEQ, records))
    if seqs != starts[:-1] or (sizes is not None and min(sizes) < 0):
        out_of_line = zip(seqs, starts, sizes or repeat(1), strict=False)
        stop = next(i for i, (seq, at, n) in enumerate(out_of_line) if seq != at or n < 0)
    if rows and not rows_allowed:
        stop = min(stop, rows[0])
    at = [i for i in marked if flags[i] & SURFACE]
    if at:
        stop = _surface_in_line(records, lines, at, stop, surface, version)
    checked, wanted, selected = [], [], []
    guard = None
    for i in marked:  # one pass for the three lists
        flag = flags[i]
        if flag & CHECKED:
            checked.append(i)
        if flag & WANTED:
            wanted.append(i)
        elif flag & SELECTED:
            selected.append(i)
        if flag & GUARDED and guard is None:
            guard = i
    if stop < len(records):
        checked, wanted, selected = (found[: bisect_left(found, stop)] for found in (checked, wanted, selected))
    return Run(kinds, starts, stop, checked, wanted, selected, None if guard is None or guard >= stop else guard)


def _row_sizes(records: list[Record], rows: list[int], sizes: list[int]) -> None:
    """Set the member counts of the rows at `rows` in `sizes`: checked for all at once in C
    (each dt one gap shorter, every running time surely safe), else row by row (`_row_size`),
    where a row out of line gets -1 and stops the run at it."""
    found = [records[i] for i in rows]
    data = list(map(_DATA, found))
    members = list(map(len, map(_MEMBERS, data)))
    in_line = list(map(len, map(_DT, data))) == [n - 1 for n in members]
    if not in_line or max(map(abs, map(_TIME, found))) + max(members) * GAP_BOUND > MAX_SAFE_INTEGER:
        members = [_row_size(row) for row in found]  # type: ignore[arg-type]
    for i, n in zip(rows, members, strict=True):
        sizes[i] = n


def _row_size(row: TextRow | ToolRow) -> int:
    """A row's member count, or -1 (read exactly) when its dt or running times are out of line."""
    members, dt = len(row.data.members), len(row.data.dt)
    return members if dt == members - 1 and abs(row.time) + members * GAP_BOUND <= MAX_SAFE_INTEGER else -1


def _surface_in_line(
    records: list[Record], lines: list[bytes], at: list[int], stop: int, surface: Surface, version: int
) -> int:
    """The first of `records[:stop]` whose surface metadata the exact path must judge, else
    `stop`; the surface steps of the records before it applied to `surface`. Only the events of
    surface types carry metadata (a log-only event that does is refused by the decoder): those
    at `at` are looked at. The exact path judges citations of a later or repeated seq, or none
    on another type than assistant/message, no surfaceOp (logshapes.surface_problems), a replace
    spelt for another version, a step the surface fold refuses (invariant.surface), and every
    tool/result replacement (the exact path compares its data with the result's it replaces)."""
    at = at[: bisect_left(at, stop)]
    found = cast("list[SurfaceEvent]", list(map(records.__getitem__, at)))
    stop = _cited_in_line(at, found, stop)
    found = found[: bisect_left(at, stop)]
    ops = list(map(_SURFACE_OP, found))
    if UNSET in ops:
        k = ops.index(UNSET)
        found, ops, stop = found[:k], ops[:k], at[k]
    tool = REGISTRY.classes.get(TOOL_RESULT)
    done = 0  # the records of `found` whose steps are applied
    if ops.count(APPEND) < len(ops):  # replacements, each a step of its own
        for k, op in enumerate(ops):
            if op == APPEND:
                continue
            _append(surface, found[done:k], lines, at[done:k], tool)
            if type(found[k]) is tool or _replace_refused(surface, found[k], op, version):
                return at[k]
            done = k + 1
    _append(surface, found[done:], lines, at[done:], tool)
    return stop


def _cited_in_line(at: list[int], found: list[SurfaceEvent], stop: int) -> int:
    """The first record (of those at `at`) whose citations the exact path must judge, else
    `stop`: the usual run is checked at once (each non-empty list names earlier seqs, once each)."""
    cited = list(map(_CITED, found))
    present = list(compress(range(len(cited)), map(is_not, cited, repeat(UNSET))))
    lists = list(map(cited.__getitem__, present))
    if all(lists):
        own = list(map(_SEQ, map(found.__getitem__, present)))
        if all(map(lt, map(max, lists), own)) and list(map(len, map(set, lists))) == list(map(len, lists)):
            return stop
    assistant = REGISTRY.classes.get(ASSISTANT_MESSAGE)
    for k in present:
        record, seqs = found[k], cited[k]
        if (max(seqs) >= record.seq or len(set(seqs)) < len(seqs)) if seqs else type(record) is not assistant:
            return at[k]
    return stop


def _append(surface: Surface, found: list[SurfaceEvent], lines: list[bytes], at: list[int], tool: type | None) -> None:
    """Append steps, in order (`found` are the records at `at` of `lines`); each tool result
    with the bytes its data is read back from if a replacement names it (`_kept_result`)."""
    if found:
        results = [k for k, kind in enumerate(map(type, found)) if kind is tool]
        kept = [(found[k].seq, _kept_result(found[k], lines[at[k]])) for k in results]
        surface.appended(map(_SEQ, found), kept)


_CUT_FROM = 256
"""The content length past which a kept result's line is held with its content cut out (a
shorter one is held whole: cutting it would cost more than it saves)."""


def _kept_result(record: SurfaceEvent, line: bytes) -> RestOf:
    """How the surface gets a tool result's data back: parsed from its line with the result's
    content (the one part a replacement may change, and the large one) cut out to `null`, so a
    log's results are not all held; the whole line where the content is short, or not found
    once in it."""
    content = record.data.message.content  # type: ignore[attr-defined]
    kept = line
    if len(content) == 1 and len(raw := content[0].content) > _CUT_FROM and raw is not NULL:
        start = _found_once(line, raw)
        if start >= 0:
            kept = b"null".join((line[:start], line[start + len(raw) :]))
    return kept


_HEAD = 16
"""The first bytes of a content looked for first (`_found_once`)."""


def _found_once(line: bytes, raw: Raw) -> int:
    """Where `raw` (bytes of `line`) starts, when it occurs in it once; else -1.

    Any occurrence of raw starts with one of its head (its first bytes), and none starts past
    len(line) - len(raw). So raw at the first head, and no head again up to there, is raw found
    once: by one compare (memcmp) and a search of the few bytes after the content, where two
    searches for the whole of it compare it byte by byte (8% of verify's instructions on the
    synthetic corpus, 38% on its 4 MB sessions). Anything else is searched for whole."""
    head, last = memoryview(raw)[:_HEAD], len(line) - len(raw)
    start = line.find(head)
    if start >= 0 and line.startswith(raw, start) and line.find(head, start + 1, last + len(head)) < 0:
        return start
    start = line.find(raw)
    return start if start >= 0 and line.find(raw, start + 1) < 0 else -1


def _replace_refused(surface: Surface, record: SurfaceEvent, op: Raw, version: int) -> bool:
    """Apply the replace step of `record`; True, with nothing applied, when its op is spelt for
    another version or the fold refuses it (the exact path then says why)."""
    try:
        value = parse_json_line(bytes(op))
        _SURFACE_SPECS[version].check(value)
    except (Reject, JsonLineError):
        return True
    step = {"type": record.__struct_config__.tag, "surfaceOp": value}
    if record.sourceEventSeqs is not UNSET:
        step["sourceEventSeqs"] = list(record.sourceEventSeqs)
    return bool(surface.step(step, record.seq, version))


_SURFACE_SPECS: dict[int, Spec] = {
    version: next(f.spec for f in shape.fields if f.name == "surfaceOp") for version, shape in EVENT_SHAPES.items()
}
"""The spec of `surfaceOp` in each version's event shape: the one envelope field the decoder
keeps raw (every other field it types as the shape has it, or refuses the line)."""


def event_of(record: Record, line: bytes, deep: Deep | None = None) -> dict[str, object]:
    """The event of a record fast-decoded from `line`, its data (and a replace surfaceOp)
    decoded exactly."""
    assert isinstance(record, Verbatim)
    tag = record.__struct_config__.tag
    record = raw_record(record, line)
    event = {"type": tag, "seq": record.seq, "time": record.time, "data": parse_json_line(bytes(record.data), deep)}
    if isinstance(record, SurfaceEvent):
        if record.sourceEventSeqs is not UNSET:
            event["sourceEventSeqs"] = list(record.sourceEventSeqs)
        if record.surfaceOp is not UNSET:
            op = record.surfaceOp
            event["surfaceOp"] = "append" if op == APPEND else parse_json_line(bytes(op), deep)
    return event


class Kinds(NamedTuple):
    """The record classes a run is sorted by, for the registry's classes so far."""

    size: int
    selected: frozenset[str]
    tag_of: dict[type, str]
    change: type | None
    marker: type | None
    verdicts: dict[type, Callable[[Any], Verdict]]
    """The load checks' verdict on the typed data of each class that has it (loadfast.VERDICTS)."""
    roles: dict[type, int]
    """The role of each class (ROW, SURFACE, CHECKED, WANTED: schedule changes, SELECTED: the
    selected types)..."""
    roles_cut: dict[type, int]
    """...and, from v2 on, when the fork markers are WANTED too."""


_KINDS: dict[frozenset[str], Kinds] = {}


def kinds_for(selected: frozenset[str]) -> Kinds:
    """The sorting classes for the `selected` event types, made again only when the registry has
    met a new type (per run they were made anew: a set per run, and a run per short session)."""
    classes = REGISTRY.classes
    known = _KINDS.get(selected)
    if known is not None and known.size == len(classes):
        return known
    change, marker = classes.get(SCHEDULE_CHANGE), classes.get(END_SEED)
    tag_of = {kind: tag for tag, kind in classes.items()}
    verdicts = {classes[tag]: verdict for tag, verdict in VERDICTS.items() if tag in classes}
    roles: dict[type, int] = dict.fromkeys(ROW_CLASSES, ROW)
    for tag, kind in classes.items():
        roles[kind] = (
            (SURFACE if kind in REGISTRY.surface else 0)
            | (CHECKED if tag in CHECKED_TYPES else 0)
            | (WANTED if tag == SCHEDULE_CHANGE else SELECTED if tag in selected else 0)
            | (GUARDED if guarded(tag, False) else 0)
        )
    roles_cut: dict[type, int] = roles if marker is None else {**roles, marker: roles[marker] & ~SELECTED | WANTED}
    made = Kinds(len(classes), selected, tag_of, change, marker, verdicts, roles, roles_cut)
    _KINDS[selected] = made
    return made
