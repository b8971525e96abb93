"""The session layer's load checks, fast (invariant.sessionload holds the rules): the data
shapes the envelope decoder (envelope.py) types a checked event's data by, in the same pass as
its envelope, with only the few fields the checks read built and the large parts (message
content, tool lists) kept as raw bytes; and what a value of each shape surely passing looks like.

An accelerator, never a judge: each type's verdict (VERDICTS) answers True only for the current
shapes the rules plainly accept, with the message id to remember; anything else (a legacy shape to
upgrade, a refusal) is answered None, and the reader then runs the exact checks on the decoded
event. A value msgspec will not type refuses its line, which the reader then reads exactly: so
every field is optional (a legacy message has no id, a legacy tool result no message) and a
turn/end reason is kept as raw members (its kind decides which keys it may hold); only a field
of another JSON type than the harness writes (a malformed event) costs its line the fast path.
An absent string reads as empty, an absent object as one with nothing in it and an absent value
as `null`, so a verdict asks no field whether it is there: empty is never what surely loads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, Raw, UnsetType, field

from invariant.jsvalue import MAX_SAFE_INTEGER

NULL = Raw(b"null")
"""An absent JSON value, as the shapes read it: no array."""


class _Source(msgspec.Struct, gc=False):
    kind: str = ""
    provider: str = ""
    model: str = ""
    callId: str = ""


class _Block(msgspec.Struct, gc=False):
    type: str = ""
    toolCallId: object = UNSET
    content: Raw = NULL


class _Message(msgspec.Struct, gc=False):
    id: str = ""
    role: str = ""
    source: _Source = field(default_factory=_Source)
    content: Raw = NULL


class _ToolMessage(_Message):
    content: list[_Block] = field(default_factory=list)  # type: ignore[assignment]


class _Wrapped(msgspec.Struct, gc=False):
    message: _Message = field(default_factory=_Message)


class _WrappedTool(msgspec.Struct, gc=False):
    message: _ToolMessage = field(default_factory=_ToolMessage)


class _TurnEnd(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    turn: Annotated[int, Meta(ge=1, le=MAX_SAFE_INTEGER)]
    reason: dict[str, Raw]


class _Config(msgspec.Struct, gc=False):
    provider: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    reasoningEffort: object = UNSET
    maxTokens: object = UNSET


class _Header(msgspec.Struct, gc=False):
    config: _Config | UnsetType = UNSET
    adapterDefaults: dict[str, object] | UnsetType = UNSET


class _RequestHeader(msgspec.Struct, gc=False):
    header: _Header | UnsetType = UNSET
    reason: object = UNSET


class _TurnStart(msgspec.Struct, gc=False):
    turn: object = UNSET
    trigger: Raw | UnsetType = UNSET


_PLAIN_ENDS = frozenset({b'"completed"', b'"blocked"', b'"max-tokens"', b'"interrupted"', b'"disposed"', b'"aborted"'})
"""The turn/end reason kinds that load with no key beside `kind`, as their plain spelling."""
_ABORTED, _ERROR = b'"aborted"', b'"error"'
_LIST = ord("[")


def _is_array(raw: Raw) -> bool:
    """Whether raw JSON bytes are an array (the first byte: msgspec keeps a value unpadded, and
    never empty)."""
    return memoryview(raw)[0] == _LIST


def _message_id(message: _Message, role: str) -> str | None:
    """The id of a message of `role` in the current shape (a source, an id, an array content)."""
    good = message.source.kind and message.role == role and message.id and _is_array(message.content)
    return message.id if good else None


def _header_loads(header: _Header | UnsetType) -> bool:
    if isinstance(header, UnsetType) or isinstance(header.config, UnsetType):
        return False
    config = header.config
    if not config.provider or not config.model:
        return False
    effort = config.reasoningEffort
    if effort is not UNSET and (type(effort) is not str or not effort):
        return False
    defaults = header.adapterDefaults
    if isinstance(defaults, UnsetType):
        return True
    present = {"reasoningEffort": effort is not UNSET, "maxTokens": config.maxTokens is not UNSET}
    return all(present.get(key) is True and value is True for key, value in defaults.items())


Verdict = str | None
"""The message id to remember (empty for an event without one) when the event surely loads, None
when only the exact checks tell (no tuple: a verdict is asked of most events of a log)."""


def _user(user: _Message) -> Verdict:
    return _message_id(user, "user")


def _assistant(wrapped: _Wrapped) -> Verdict:
    """An assistant message in the current shape, from a model of a provider."""
    source = wrapped.message.source
    good = source.kind == "model" and source.provider and source.model
    return _message_id(wrapped.message, "assistant") if good else None


def _tool_result(wrapped: _WrappedTool) -> Verdict:
    """A tool result in the current shape: one tool-result block of the call its source names."""
    tool = wrapped.message
    call = tool.source.callId
    if not tool.id or tool.role != "user" or tool.source.kind != "tool" or not call or len(tool.content) != 1:
        return None
    block = tool.content[0]
    good = block.type == "tool-result" and _is_array(block.content) and block.toolCallId == call
    return tool.id if good else None


def _turn_end(end: _TurnEnd) -> Verdict:
    """A plain ending with its kind alone, an abort with its reason, an error with its error
    (sessionload._turn_end_refusal); a kind spelt with escapes is left to the exact check."""
    reason = end.reason
    kind = reason.get("kind")
    if kind is None:
        return None
    spelt = bytes(kind)
    if spelt in _PLAIN_ENDS and len(reason) == 1:
        return ""
    if (spelt == _ABORTED and "reason" in reason) or (spelt == _ERROR and "error" in reason):
        return ""
    return None


def _turn_start(start: _TurnStart) -> Verdict:
    return "" if start.trigger is UNSET else None


def _request_header(request: _RequestHeader) -> Verdict:
    return "" if request.reason != "fallback" and _header_loads(request.header) else None


DATA_SHAPES: dict[str, type] = {
    "user/message": _Message,
    "assistant/message": _Wrapped,
    "tool/result": _WrappedTool,
    "turn/end": _TurnEnd,
    "turn/start": _TurnStart,
    "request/header": _RequestHeader,
}
"""The data shape of each checked type the envelope decoder types (the others keep raw data)."""
VERDICTS: dict[str, Callable[[Any], Verdict]] = {
    "user/message": _user,
    "assistant/message": _assistant,
    "tool/result": _tool_result,
    "turn/end": _turn_end,
    "turn/start": _turn_start,
    "request/header": _request_header,
}
"""For each data shape, its Verdict: the message id to remember (empty for none) when a value of it
surely passes the load checks; None when only the exact checks can tell."""
assert VERDICTS.keys() == DATA_SHAPES.keys()
