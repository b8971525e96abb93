"""Shapes of the session-log container (session-log.md §4-§6): header, event, chunk rows.

The reader in `replay` checks records against these, and the JSON Schemas render them; rules
that span fields (row member counts, running times, seq contiguity) stay with the reader and
are listed in each schema's description.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from itertools import pairwise

from .jsvalue import MAX_SAFE_INTEGER, NegativeZero, safe_integer, shown
from .shapes import (
    AnyValue,
    ArrayOf,
    Boolean,
    Const,
    Enum,
    Field,
    IntegerIn,
    Nested,
    Number,
    ObjectShape,
    OneOf,
    SafeInt,
    Spec,
    Text,
    located_problems,
)

CURRENT_FORMAT_VERSION = 4
"""The format released builds write (formats.md §1)."""
FORMAT_VERSIONS = (0, 1, 2, 3, 4)
"""Every version a log may have and still be judged: 0..3 are read as they stand, as the
upstream reader reads them before migrating; a higher one is a log this toolkit cannot judge."""
SESSION_FORMAT_VERSION = 0
"""The version of the reference snapshot of chapters 1-4 (session-log.md)."""
MARKER_CUT_FROM = 2
"""From this version on the fork cut is the last inherited `session/end-seed` marker, headers
carry `isSeeded` and no `seedLength`, and there are no packed chunk rows (formats.md §3-§5)."""
SAFE = SafeInt(-MAX_SAFE_INTEGER)
NON_NEGATIVE = SafeInt(0)
RETIRED_HEADER_KEYS = ("sandboxMode", "approvalPolicy")
END_SEED = "session/end-seed"


def _f(name: str, spec: Spec, meaning: str, optional: bool = False) -> Field:
    return Field(name, spec, "format", meaning, optional)


def _header_shape(versions: tuple[int, ...]) -> ObjectShape:
    marked = versions[0] >= MARKER_CUT_FROM
    seeded = (
        _f("isSeeded", Boolean(), "The log starts with an inherited prefix, cut by a session/end-seed marker."),
        _f("delegationDepth", SafeInt(0, negative_zero=False), "0 for a top-level session, parent + 1 below."),
    )
    legacy = (
        _f("seedLength", NON_NEGATIVE, "Leading events inherited from the parent (expanded events).", optional=True),
    )
    return ObjectShape(
        f"SessionHeaderV{versions[0]}",
        "session header",
        (
            "First line of a v2-v4 session log: exactly these keys."
            if marked
            else "First line of a v0 or v1 session log. Unknown keys are dropped by the reader; retired policy "
            "keys are refused."
        ),
        (
            _f("type", Const("session"), "Tags the header line."),
            _f("version", IntegerIn(versions), "On-disk format version."),
            _f("id", Text(), "Session id (any text)."),
            _f("createdAt", SafeInt(0, negative_zero=False), "Unix epoch milliseconds of creation."),
            _f("cwd", Text(), "Working directory (an absolute path in a live log).", optional=True),
            _f("parentSession", Text(), "The session this one was forked or spawned from.", optional=True),
            *(() if marked else legacy),
            _f("origin", Const("subagent"), "Presentation metadata for subagent children.", optional=True),
            _f("agentPreset", Text(), "The agent preset the session runs.", optional=True),
            *(seeded if marked else seeded[1:]),
        ),
        closed=marked,
        forbidden=() if marked else RETIRED_HEADER_KEYS,
    )


HEADER_SHAPE_V0 = _header_shape((0, 1))
HEADER_SHAPE_V2 = _header_shape((2, 3, 4))
HEADER_SHAPES = {v: HEADER_SHAPE_V0 if v < MARKER_CUT_FROM else HEADER_SHAPE_V2 for v in FORMAT_VERSIONS}
HEADER_SHAPE = HEADER_SHAPE_V0
"""The header of the reference snapshot's logs (version 0)."""


def format_version(header: dict[str, object]) -> int | None:
    """The header's version when it is one this toolkit reads or knows to be newer: a
    non-negative safe integer, not -0 (the upstream catalog's support decision); else None."""
    version = header.get("version")
    if isinstance(version, NegativeZero):
        return None
    n = safe_integer(version)
    return n if n is not None and n >= 0 else None


def header_problems(header: dict[str, object]) -> tuple[list[tuple[str, str]], list[str], str | None]:
    """(shape problems, each with its JSON pointer; retired keys; unsupported version) in the
    reference's order.

    The version is decided first (formats.md §1): not a non-negative safe integer is a shape
    problem; above the current version, the log is one this toolkit cannot judge (`unsupported`)
    and nothing else is checked; otherwise the header must have its version's shape (§3).
    """
    version = format_version(header)
    if version is None:
        shown_version = shown(header.get("version"))
        return [("/version", f"header version must be a non-negative safe integer, got {shown_version}")], [], None
    if version > CURRENT_FORMAT_VERSION:
        return [], [], f"stored session uses newer format v{version}; schedlog reads v0-v{CURRENT_FORMAT_VERSION}"
    shape = [(pointer, f"header {p}") for pointer, p in located_problems(header, HEADER_SHAPES[version])]
    retired = [k for k in RETIRED_HEADER_KEYS if k in header]
    if version < MARKER_CUT_FROM:
        shape = [(pointer, p) for pointer, p in shape if not p.startswith("header carries retired key")]
    else:
        retired = []  # no key beyond the v2 shape's: a retired one is an unexpected key
    return shape, retired, None


ASSISTANT_MESSAGE = "assistant/message"
SURFACE_TYPES = frozenset({"user/message", ASSISTANT_MESSAGE, "tool/result"})
"""The event types that carry surface metadata (`sourceEventSeqs`, `surfaceOp`; session-log.md
§5.1): every other type is log-only and does not."""
_SURFACE_NAMES = ", ".join(sorted(SURFACE_TYPES))


def appended(tag: str, seq: int, time: int, data: object) -> dict[str, object]:
    """An event as the harness appends it: `{type, seq, time, data}`, and on a surface type the
    `surfaceOp: "append"` it must carry (the session package refuses one without)."""
    event: dict[str, object] = {"type": tag, "seq": seq, "time": time, "data": data}
    if tag in SURFACE_TYPES:
        event["surfaceOp"] = "append"
    return event


REPLACE_OP = ObjectShape(
    "ReplaceOp",
    "surface replace",
    "Replaces the surface nodes start..end (formats v0-v2).",
    (
        _f("op", Const("replace"), "A replacement."),
        _f("start", NON_NEGATIVE, "First shadowed surface seq."),
        _f("end", NON_NEGATIVE, "Last shadowed surface seq."),
    ),
)
REPLACE_OP_V3 = ObjectShape(
    "ReplaceOpV3",
    "surface replace",
    "Replaces the surface nodes startSeq..endSeq (formats v3 and v4).",
    (
        _f("op", Const("replace"), "A replacement."),
        _f("startSeq", NON_NEGATIVE, "First shadowed surface seq."),
        _f("endSeq", NON_NEGATIVE, "Last shadowed surface seq."),
    ),
)
SEQ_RANGE = ArrayOf(NON_NEGATIVE, 2, max_items=2, description="A run of consecutive seqs [start, end].")


IGNORABLE = "The event may be skipped by a reader that does not know its type."
IGNORABLE_V0 = (
    f"{IGNORABLE} Taken by the readers from 611615650f on (the fixed-rate profile's); the earlier ones "
    "(0d8e8baabe's, the after-only revision's) refuse the key (invariant.readers)."
)


def _event_shape(name: str, meaning: str, replace: ObjectShape, marked: bool) -> ObjectShape:
    cited = OneOf((NON_NEGATIVE, SEQ_RANGE)) if marked else NON_NEGATIVE
    return ObjectShape(
        name,
        "session event",
        meaning,
        (
            _f("type", Text(), "Event type; unknown types are legal."),
            _f("seq", NON_NEGATIVE, "0-based position in the expanded event list."),
            _f("time", SAFE, "Epoch ms of the append (not monotonic)."),
            _f("data", AnyValue(), "The payload; typed by `type`."),
            _f("sourceEventSeqs", ArrayOf(cited), "Earlier events cited (surface types only).", optional=True),
            _f(
                "surfaceOp",
                OneOf((Const("append"), Nested(replace))),
                "How a surface event changes the conversation surface.",
                optional=True,
            ),
            _f("ignorable", Const(True), IGNORABLE if marked else IGNORABLE_V0, optional=True),
        ),
    )


EVENT_SHAPE = _event_shape(
    "SessionEvent", "One event line of a v0 or v1 log; its seq equals its index in the expanded log.", REPLACE_OP, False
)
EVENT_SHAPE_V2 = _event_shape(
    "SessionEventV2", "One event line of a v2 log (one event per line); its seq equals its index.", REPLACE_OP, True
)
EVENT_SHAPE_V3 = _event_shape(
    "SessionEventV3", "One event line of a v3 or v4 log (one event per line); its seq equals its index.",
    REPLACE_OP_V3, True,
)  # fmt: skip
EVENT_SHAPES = {0: EVENT_SHAPE, 1: EVENT_SHAPE, 2: EVENT_SHAPE_V2, 3: EVENT_SHAPE_V3, 4: EVENT_SHAPE_V3}
REPLACE_BOUNDS = {
    version: tuple(f.name for f in (REPLACE_OP if version < 3 else REPLACE_OP_V3).fields if f.name != "op")
    for version in EVENT_SHAPES
}
"""The keys a surface replacement names its first and last shadowed node by, in each version
(from the version's replace shape: v0-v2 `start`/`end`, v3+ `startSeq`/`endSeq`)."""


Run = tuple[int, int]
"""Consecutive seqs `(first, last)` a `sourceEventSeqs` names: a plain seq `n` is `(n, n)`."""


def cited_runs(value: object) -> list[Run] | None:
    """The runs a `sourceEventSeqs` names, in order (a v2+ `[start, end]` pair as written, a
    reversed one too: `surface_problems` refuses it), never expanded: a run may name 10^15
    seqs. None when it is not an array of safe integers and pairs of them."""
    if type(value) is not list:
        return None
    runs: list[Run] = []
    for item in value:
        if type(item) is list and len(item) == 2:
            start, end = safe_integer(item[0]), safe_integer(item[1])
            if start is None or end is None:
                return None
            runs.append((start, end))
        elif (n := safe_integer(item)) is not None:
            runs.append((n, n))
        else:
            return None
    return runs


def covered(runs: list[Run]) -> list[Run]:
    """The seqs `runs` name, as sorted runs that neither overlap nor touch (reversed ones name none)."""
    merged: list[Run] = []
    for start, end in sorted(r for r in runs if r[0] <= r[1]):
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def covers(merged: list[Run], seq: int) -> bool:
    """Whether the sorted, disjoint runs `merged` (`covered`) name `seq`."""
    k = bisect_right(merged, (seq, MAX_SAFE_INTEGER + 1)) - 1
    return k >= 0 and merged[k][0] <= seq <= merged[k][1]


def _repeats(runs: list[Run]) -> bool:
    """Whether any seq is named twice by `runs` (none reversed): two overlap once sorted."""
    ordered = sorted(runs)
    return any(later[0] <= earlier[1] for earlier, later in pairwise(ordered))


def missing_surface_op(tag: object) -> tuple[str, str]:
    """The problem of a surface event without `surfaceOp`, with its pointer."""
    return ("/surfaceOp", f"lacks surfaceOp (a {tag} event says how it enters the surface)")


def surface_problems(event: Mapping[str, object], seq: int) -> list[tuple[str, str]]:
    """The surface metadata rules beyond the envelope's shape, each with its JSON pointer
    (session-log.md §5.1, every version; the session package's `surfaceOpOf` and
    `assertProvenance`): a log-only event carries neither `surfaceOp` nor `sourceEventSeqs`, a
    surface event always carries `surfaceOp` (the package refuses one without: it says how the
    event enters the surface); `sourceEventSeqs` is empty only on an `assistant/message`, and
    names earlier seqs, none twice (a v2+ `[start, end]` pair names the run, and a reversed pair
    is refused: the writer writes a run of three or more as `[start, end]`). Judged on the runs
    as written, never expanded, so a run of any length is judged alike."""
    tag = event.get("type")
    if tag not in SURFACE_TYPES:
        keys = [key for key in ("sourceEventSeqs", "surfaceOp") if key in event]
        return [(f"/{key}", f"{key} on a log-only event ({tag!r}): only {_SURFACE_NAMES} carry it") for key in keys]
    if "surfaceOp" not in event:
        return [missing_surface_op(tag)]
    if "sourceEventSeqs" not in event:
        return []
    runs = cited_runs(event["sourceEventSeqs"])
    if runs is None:
        return []  # the shape check reports it
    problems = []
    ordered = [(start, end) for start, end in runs if start <= end]
    if len(ordered) < len(runs):
        start, end = next((start, end) for start, end in runs if start > end)
        problems.append(f"sourceEventSeqs names a run [{start}, {end}] that ends before it starts")
    if not runs and tag != ASSISTANT_MESSAGE:
        problems.append("sourceEventSeqs is empty (only an assistant/message may cite nothing)")
    if any(end >= seq for _, end in ordered):
        problems.append("sourceEventSeqs names a seq that is not earlier than the event's own")
    if _repeats(ordered):
        problems.append("sourceEventSeqs names a seq twice")
    return [("/sourceEventSeqs", problem) for problem in problems]


ROW_TAGS = ("text-chunks", "reasoning-chunks", "tool-call-chunks")
_COMMON = (
    _f("turn", Number(), "Turn of every member."),
    _f("step", Number(), "Step of every member."),
    _f("index", Number(), "Content block index of every member."),
)
_DT = _f("dt", ArrayOf(SAFE), "Time gaps between consecutive members (members - 1 of them).")
TEXT_ROW_DATA = ObjectShape(
    "TextRowData",
    "text or reasoning row data",
    "Members are the delta texts, one per event.",
    (*_COMMON, _DT, _f("texts", ArrayOf(Text(), 1), "One text delta per member.")),
)
TOOL_ROW_DATA = ObjectShape(
    "ToolCallRowData",
    "tool-call row data",
    "Members are argument deltas of one tool call.",
    (
        *_COMMON,
        _f("id", Text(), "Tool-call id shared by all members."),
        _f("name", Text(), "Tool name, present when every member carried the same one.", optional=True),
        _DT,
        _f("args", ArrayOf(Text(), 1), "One argumentsDelta per member."),
    ),
)
ROW_DATA_SHAPES = {"text-chunks": TEXT_ROW_DATA, "reasoning-chunks": TEXT_ROW_DATA, "tool-call-chunks": TOOL_ROW_DATA}
ROW_SHAPE = ObjectShape(
    "ChunkRow",
    "packed chunk row",
    "One storage record standing for consecutive assistant/chunk events (member k has seq seq0 + k).",
    (
        _f("type", Enum(ROW_TAGS), "The row tag."),
        _f("seq0", NON_NEGATIVE, "seq of the first member."),
        _f("time0", SAFE, "time of the first member."),
        _f("data", AnyValue(), "Row data; its shape depends on the tag."),
    ),
)


def reminder_message(message_id: str, text: str) -> dict[str, object]:
    """The user message a reminder framing is queued and delivered as (`source` the schedule
    plugin's), as the live owner's follow-up writes it."""
    return {
        "id": message_id,
        "role": "user",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "plugin", "plugin": "tool-schedule"},
    }
