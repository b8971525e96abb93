"""The session layer's load checks, fast (invariant.sessionload holds the rules): an event's data
decoded by msgspec into the few fields the checks read, its large parts (message content, tool
lists) kept as raw bytes, never built into objects.

An accelerator, never a judge: `surely_loads` answers True only for the current shapes the
rules plainly accept, with the message id to remember; anything else (a legacy shape to
upgrade, a refusal, a value msgspec will not type) is answered None, and the reader then runs
the exact checks on the decoded event.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, Raw, UnsetType

from invariant.jsvalue import MAX_SAFE_INTEGER


class _Source(msgspec.Struct, gc=False):
    kind: str
    provider: str | UnsetType = UNSET
    model: str | UnsetType = UNSET
    callId: str | UnsetType = UNSET


class _Block(msgspec.Struct, gc=False):
    type: str
    toolCallId: object = UNSET
    content: Raw = Raw(b"")


class _Message(msgspec.Struct, gc=False):
    id: str
    role: str
    source: _Source
    content: Raw


class _ToolMessage(_Message):
    content: list[_Block]  # type: ignore[assignment]


class _Wrapped(msgspec.Struct, gc=False):
    message: _Message


class _WrappedTool(msgspec.Struct, gc=False):
    message: _ToolMessage


class _Reason(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    kind: str


class _TurnEnd(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    turn: Annotated[int, Meta(ge=1, le=MAX_SAFE_INTEGER)]
    reason: _Reason


class _Config(msgspec.Struct, gc=False):
    provider: str
    model: str
    reasoningEffort: object = UNSET
    maxTokens: object = UNSET


class _Header(msgspec.Struct, gc=False):
    config: _Config
    adapterDefaults: dict[str, object] | UnsetType = UNSET


class _RequestHeader(msgspec.Struct, gc=False):
    header: _Header
    reason: object = UNSET


class _TurnStart(msgspec.Struct, gc=False):
    turn: object = UNSET
    trigger: Raw | UnsetType = UNSET


_PLAIN_ENDS = frozenset({"completed", "blocked", "max-tokens", "interrupted", "disposed", "aborted"})


def _message_loads(message: _Message, role: str) -> bool:
    return (
        bool(message.id) and message.role == role and bool(message.source.kind) and bytes(message.content)[:1] == b"["
    )


def _header_loads(header: _Header) -> bool:
    config = header.config
    if not config.provider or not config.model:
        return False
    effort = config.reasoningEffort
    if effort is not UNSET and (type(effort) is not str or not effort):
        return False
    defaults = header.adapterDefaults
    if defaults is UNSET:
        return True
    present = {"reasoningEffort": effort is not UNSET, "maxTokens": config.maxTokens is not UNSET}
    return all(present.get(key) is True and value is True for key, value in defaults.items())


Verdict = tuple[bool, str | None] | None
"""(True, message id or None) when the event surely loads, None when only the exact checks tell."""


def _user(user: _Message) -> Verdict:
    return (True, user.id) if _message_loads(user, "user") else None


def _assistant(wrapped: _Wrapped) -> Verdict:
    assistant = wrapped.message
    source = assistant.source
    good = _message_loads(assistant, "assistant") and source.kind == "model"
    return (True, assistant.id) if good and source.provider and source.model else None


def _tool_result(wrapped: _WrappedTool) -> Verdict:
    tool = wrapped.message
    call = tool.source.callId
    if not tool.id or tool.role != "user" or tool.source.kind != "tool" or not call or len(tool.content) != 1:
        return None
    block = tool.content[0]
    good = block.type == "tool-result" and bytes(block.content)[:1] == b"[" and block.toolCallId == call
    return (True, tool.id) if good else None


def _turn_end(end: _TurnEnd) -> Verdict:
    return (True, None) if end.reason.kind in _PLAIN_ENDS else None


def _turn_start(start: _TurnStart) -> Verdict:
    return (True, None) if start.trigger is UNSET else None


def _request_header(request: _RequestHeader) -> Verdict:
    return (True, None) if request.reason != "fallback" and _header_loads(request.header) else None


_CHECKS: dict[str, tuple[type, Callable[[Any], Verdict]]] = {
    "user/message": (_Message, _user),
    "assistant/message": (_Wrapped, _assistant),
    "tool/result": (_WrappedTool, _tool_result),
    "turn/end": (_TurnEnd, _turn_end),
    "turn/start": (_TurnStart, _turn_start),
    "request/header": (_RequestHeader, _request_header),
}
"""Each checked type's data shape, and what a value of that shape surely passing looks like."""
_ONE: dict[str, msgspec.json.Decoder[Any]] = {tag: msgspec.json.Decoder(shape) for tag, (shape, _) in _CHECKS.items()}


def surely_loads(tag: str, data: Raw) -> Verdict:
    """(True, message id or None) when an event of type `tag` with these data bytes surely
    passes the load checks; None when only the exact checks can tell."""
    check = _CHECKS.get(tag)
    if check is None:
        return None
    try:
        return check[1](_ONE[tag].decode(data))
    except (msgspec.MsgspecError, RecursionError):
        return None
