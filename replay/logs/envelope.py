"""The fast decoding of a run of committed JSONL records: typed envelopes, no payload objects.

The lines of a run are decoded by msgspec calls driven from C (`decode_lines`) into records
typed by their `type` tag: a packed row (session-log.md §6.2) has its data decoded and checked
by the row shape in the same pass, and an event keeps its `data` as the raw bytes msgspec
checked (valid JSON, never built into objects). Most records of a log are no schedule change,
so most payloads are never materialised; the reader decodes a payload exactly only where it
needs it. Each line is decoded alone, so a line holds exactly one value, as for `JSON.parse`.

This decoder is an accelerator, never a judge: it accepts a record only when the reader's
exact path would accept it with the same envelope, and refuses the rest (the exact path then
reads the line): an unknown key, a float where an integer is written (`1.0`), a time outside
the safe integers, a row gap beyond ±2^31 (its running times are then checked exactly), a
value nested deeper than msgspec reads, a lone surrogate escape, invalid UTF-8 in a decoded
string. The reader refuses in turn what the envelope rules of the log's version refuse
(`SessionLog._window`). The property tests in tests/test_fastpath.py hold the fast and exact
paths to the same entries, findings and verdicts.

Event classes are made per `type` as tags are met (msgspec dispatches on a tag, and the event
vocabulary is open), up to MAX_EVENT_TYPES per process; past that an unknown type's line is
read exactly. The types the session layer's load checks read most (loadfast.DATA_SHAPES) have
their data typed in the same pass, so a message is decoded once: their class keeps no raw data,
which `raw_record` decodes again from the line for the few events the reader decodes exactly.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Union

import msgspec
from msgspec import UNSET, Meta, Raw, UnsetType, field

from invariant.jsvalue import MAX_SAFE_INTEGER
from invariant.logshapes import ROW_TAGS, SURFACE_TYPES
from replay.lines.jsonline import Members, SafeInt
from replay.logs.loadfast import DATA_SHAPES

MAX_EVENT_TYPES = 512
GAP_BOUND = 2**31
"""The largest row gap the fast path takes: with it, a row's running times stay safe whenever
|time0| + members * GAP_BOUND does (anything else is summed exactly)."""

Gap = Annotated[int, Meta(ge=-GAP_BOUND, le=GAP_BOUND)]


class TextRowData(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A text or reasoning row's data: exactly turn, step, index, dt and texts."""

    turn: int | float
    step: int | float
    index: int | float
    dt: list[Gap]
    members: Members = field(name="texts")


class ToolRowData(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A tool-call row's data: exactly turn, step, index, id, [name,] dt and args."""

    turn: int | float
    step: int | float
    index: int | float
    id: str
    dt: list[Gap]
    members: Members = field(name="args")
    name: str | UnsetType = UNSET


class Record(msgspec.Struct, tag_field="type", forbid_unknown_fields=True, gc=False):
    """A record as the fast path reads it; `seq` and `time` name a row's seq0 and time0.

    Records (like row data) are untracked by the garbage collector (`gc=False`): decoded from
    JSON they cannot form cycles, and tracking 600k of them cost 6% of a verify run.
    """

    seq: int
    time: int


Cited = Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER)]


class Verbatim(Record):
    """A verbatim event: type, seq, time and data (an Event or a SurfaceEvent)."""

    time: SafeInt
    data: Raw


class Event(Verbatim):
    """A verbatim event of a log-only type: it carries no surface metadata (a line that does is
    refused, and read exactly)."""

    sourceEventSeqs: ClassVar[UnsetType] = UNSET  # no field: read alike with a surface event's
    surfaceOp: ClassVar[UnsetType] = UNSET


class SurfaceEvent(Verbatim):
    """A verbatim event of a surface type (logshapes.SURFACE_TYPES), with the surface metadata
    the harness writes on messages: `sourceEventSeqs` as plain seqs (a v2+ `[start, end]` run is
    refused) and `surfaceOp` kept raw (`"append"`, or a replace whose spelling depends on the
    format version: the reader checks it, and the v2+ citation rules, for a whole run at once)."""

    sourceEventSeqs: list[Cited] | UnsetType = UNSET
    surfaceOp: Raw | UnsetType = UNSET


class TextRow(Record, tag="text-chunks"):
    seq: Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER)] = field(name="seq0")
    time: SafeInt = field(name="time0")
    data: TextRowData
    sourceEventSeqs: ClassVar[UnsetType] = UNSET  # no field (a row has no surface metadata): read
    surfaceOp: ClassVar[UnsetType] = UNSET  # alike with an event's, one attribute getter for a run


class ReasoningRow(TextRow, tag="reasoning-chunks"):
    pass


class ToolRow(Record, tag="tool-call-chunks"):
    seq: Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER)] = field(name="seq0")
    time: SafeInt = field(name="time0")
    data: ToolRowData
    sourceEventSeqs: ClassVar[UnsetType] = UNSET
    surfaceOp: ClassVar[UnsetType] = UNSET


APPEND = Raw(b'"append"')
"""The surfaceOp of an appended message, as the decoder keeps it."""
ROW_CLASSES = (TextRow, ReasoningRow, ToolRow)
assert tuple(c.__struct_config__.tag for c in ROW_CLASSES) == ROW_TAGS


class _Registry:
    """The event classes made so far, by tag, and the decoder of their union with the rows.

    Process-wide, so no log may change what it does for another: a class is kept only once the
    decoder of the union with it is made (a tag msgspec cannot take, such as one holding a lone
    surrogate, is never kept, and its lines are read the exact way, as every unknown type's)."""

    def __init__(self) -> None:
        self.classes: dict[str, type[Verbatim]] = {}
        self.decoder = _decoder(self.classes)
        self.raw_decoders: dict[type, msgspec.json.Decoder[Verbatim]] = {}
        """For each class with typed data, the decoder of its events with raw data."""
        self.surface: frozenset[type] = frozenset()
        """The classes made so far of the surface types (their events may carry surface metadata)."""

    def event_class(self, tag: str) -> type[Verbatim] | None:
        """The class of events tagged `tag` (made now if new), None past MAX_EVENT_TYPES or for
        a tag the decoder cannot take."""
        known = self.classes.get(tag)
        if known is not None or tag in ROW_TAGS or len(self.classes) >= MAX_EVENT_TYPES:
            return known
        name = f"Event{len(self.classes)}"
        shape = DATA_SHAPES.get(tag)
        base = SurfaceEvent if tag in SURFACE_TYPES else Event
        try:
            raw: type[Verbatim] = msgspec.defstruct(name, [], bases=(base,), tag=tag)  # type: ignore[assignment]
            made = raw
            if shape is not None:
                made = msgspec.defstruct(name, [("data", shape)], bases=(base,), tag=tag)  # type: ignore[assignment]
            classes = {**self.classes, tag: made}
            decoder = _decoder(classes)
        except (UnicodeError, TypeError, ValueError):  # a tag msgspec cannot encode or dispatch on
            return None
        if shape is not None:
            self.raw_decoders = {**self.raw_decoders, made: msgspec.json.Decoder(raw)}
        if base is SurfaceEvent:
            self.surface = self.surface | {made}
        self.classes, self.decoder = classes, decoder
        return made


def _decoder(classes: dict[str, type[Verbatim]]) -> msgspec.json.Decoder[Record]:
    members = (*ROW_CLASSES, *classes.values())
    return msgspec.json.Decoder(Union[members])  # noqa: UP007


REGISTRY = _Registry()


def decode_lines(lines: list[bytes]) -> list[Record]:
    """The records of `lines`, each line decoded on its own (so each is exactly one value), or
    msgspec.MsgspecError / RecursionError for the first line the decoder refuses."""
    return list(map(REGISTRY.decoder.decode, lines))


def decode_line(line: bytes) -> Record:
    """The record of one line, or msgspec.MsgspecError / RecursionError."""
    return REGISTRY.decoder.decode(line)


def raw_record(record: Verbatim, line: bytes) -> Verbatim:
    """`record` (decoded from `line`) with its data as raw bytes: itself, or for a class with
    typed data the line decoded again with raw data (it decoded once, so it decodes again)."""
    decoder = REGISTRY.raw_decoders.get(type(record))
    return record if decoder is None else decoder.decode(line)
