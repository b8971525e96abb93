"""Shapes of the session-log container (session-log.md §4-§6): header, event, chunk rows.

The reader in `replay` checks records against these, and the JSON Schemas render them; rules
that span fields (row member counts, running times, seq contiguity) stay with the reader and
are listed in each schema's description.
"""

from __future__ import annotations

from .jsvalue import MAX_SAFE_INTEGER, is_number, shown
from .shapes import (
    AnyValue,
    ArrayOf,
    Const,
    Enum,
    Field,
    Nested,
    Number,
    ObjectShape,
    OneOf,
    SafeInt,
    Spec,
    Text,
    object_problems,
)

SESSION_FORMAT_VERSION = 0
SAFE = SafeInt(-MAX_SAFE_INTEGER)
NON_NEGATIVE = SafeInt(0)
RETIRED_HEADER_KEYS = ("sandboxMode", "approvalPolicy")


def _f(name: str, spec: Spec, meaning: str, optional: bool = False) -> Field:
    return Field(name, spec, "format", meaning, optional)


HEADER_SHAPE = ObjectShape(
    "SessionHeader",
    "session header",
    "First line of a session log. Unknown keys are dropped by the reader; retired policy keys are refused.",
    (
        _f("type", Const("session"), "Tags the header line."),
        _f("version", Const(SESSION_FORMAT_VERSION), "On-disk format version: only 0 exists."),
        _f("id", Text(), "Session id (any text)."),
        _f("createdAt", SafeInt(0, negative_zero=False), "Unix epoch milliseconds of creation."),
        _f("cwd", Text(), "Working directory (an absolute path in a live log).", optional=True),
        _f("parentSession", Text(), "The session this one was forked or spawned from.", optional=True),
        _f("seedLength", NON_NEGATIVE, "Leading events inherited from the parent (expanded events).", optional=True),
        _f("origin", Const("subagent"), "Presentation metadata for subagent children.", optional=True),
        _f("delegationDepth", SafeInt(0, negative_zero=False), "0 for a top-level session, parent + 1 below."),
    ),
    closed=False,
    forbidden=RETIRED_HEADER_KEYS,
)


def header_problems(header: dict[str, object]) -> tuple[list[str], list[str], str | None]:
    """(shape problems, retired keys, unsupported version) in the reference's order (§4.2).

    The shape check only asks for a numeric version; a number other than 0 is reported
    separately, as the reference does.
    """
    shape = []
    for problem in object_problems(header, HEADER_SHAPE):
        if problem.startswith("carries retired key"):
            continue
        if problem.startswith("version ") and is_number(header.get("version")):
            continue
        shape.append(f"header {problem}")
    retired = [k for k in RETIRED_HEADER_KEYS if k in header]
    version = header.get("version")
    unsupported = None
    if not shape and is_number(version) and version != SESSION_FORMAT_VERSION:
        unsupported = (
            f"unsupported session format version {shown(version)}; only v{SESSION_FORMAT_VERSION} is supported"
        )
    return shape, retired, unsupported


REPLACE_OP = ObjectShape(
    "ReplaceOp",
    "surface replace",
    "Replaces the surface nodes start..end.",
    (
        _f("op", Const("replace"), "A replacement."),
        _f("start", NON_NEGATIVE, "First shadowed surface seq."),
        _f("end", NON_NEGATIVE, "Last shadowed surface seq."),
    ),
)
EVENT_SHAPE = ObjectShape(
    "SessionEvent",
    "session event",
    "One event line; its seq equals its index in the expanded log.",
    (
        _f("type", Text(), "Event type; unknown types are legal."),
        _f("seq", NON_NEGATIVE, "0-based position in the expanded event list."),
        _f("time", SAFE, "Epoch ms of the append (not monotonic)."),
        _f("data", AnyValue(), "The payload; typed by `type`."),
        _f("sourceEventSeqs", ArrayOf(NON_NEGATIVE), "Earlier events cited (surface types only).", optional=True),
        _f(
            "surfaceOp",
            OneOf((Const("append"), Nested(REPLACE_OP))),
            "How a surface event changes the conversation surface.",
            optional=True,
        ),
    ),
)

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
