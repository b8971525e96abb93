"""The session layer's load checks (session-log.md §11.2 and §12): what makes the harness refuse
to load a log whose lines all parse, after it upgrades the legacy shapes older builds wrote.

The persistence coordinator, for each event in order: refuses the obsolete vocabulary
(`request/header-delta`, `mode/set`, a `request/header` of reason `fallback`); upgrades a
`turn/start` carrying `trigger`, a `turn/end` with a legacy reason, a `steering/message`, and a
message written before messages had ids, refusing a malformed legacy shape; then adopts the
event: a message event needs an identified message of its role and source (`assistant/message`:
a model source with provider and model; `tool/result`: a tool source and exactly one
`tool-result` block of that call), and a `request/header` a config naming provider and model,
a non-empty `reasoningEffort` when present, and `adapterDefaults` that only mark settings the
config has. Checked against `@deepseek-ai/dsh-session` (`adoptSessionEvent`) in the reference
tier.

`LoadChecks.refusal(event)` answers why an event would make the load fail (None: it loads),
keeping the message ids a surface replacement inherits.
"""

from __future__ import annotations

from collections.abc import Mapping

from .jsvalue import is_number, safe_integer

OBSOLETE_TYPES = frozenset({"request/header-delta", "mode/set"})
"""The obsolete vocabulary the import refuses (session-log.md §11.2): a log holding one is
corrupt, whatever reader loads it (from 611615650f on, before its unknown-type guard looks)."""
MESSAGE_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})
CHECKED_TYPES = frozenset(
    {*MESSAGE_TYPES, *OBSOLETE_TYPES, "request/header", "turn/start", "turn/end", "steering/message"}
)
"""The event types whose data the load checks read (every other type loads as its envelope does)."""
_TURN_END_PLAIN = frozenset({"completed", "blocked", "max-tokens", "interrupted"})
_FAILURE_OPTIONAL = ("status", "providerRetryAfterMs", "requestId")


def _record(value: object) -> dict[str, object] | None:
    return value if isinstance(value, dict) else None


def _only(record: Mapping[str, object], required: tuple[str, ...], optional: tuple[str, ...] = ()) -> bool:
    return all(k in required or k in optional for k in record) and all(k in record for k in required)


def _turn(value: object) -> bool:
    n = safe_integer(value)
    return n is not None and n >= 1


def _nonempty(value: object) -> bool:
    return type(value) is str and value != ""


def _legacy_error(reason: Mapping[str, object]) -> bool:
    """A legacy `error` turn ending: {kind, step, failure} or {kind, step, message[, code]}."""
    step = safe_integer(reason.get("step"))
    if step is None or step < 0:
        return False
    failure = _record(reason.get("failure"))
    if (
        failure is not None
        and _only(reason, ("kind", "step", "failure"))
        and _only(failure, ("message", "code"), _FAILURE_OPTIONAL)
        and type(failure["message"]) is str
        and type(failure["code"]) is str
        and ("status" not in failure or is_number(failure["status"]))
        and ("providerRetryAfterMs" not in failure or is_number(failure["providerRetryAfterMs"]))
        and ("requestId" not in failure or type(failure["requestId"]) is str)
    ):
        return True
    keys = ("kind", "step", "message") if "code" not in reason else ("kind", "step", "message", "code")
    return (
        _only(reason, keys)
        and type(reason.get("message")) is str
        and ("code" not in reason or type(reason["code"]) is str)
    )


def _turn_end_refusal(data: Mapping[str, object]) -> str | None:
    reason = _record(data.get("reason"))
    if (
        not _turn(data.get("turn"))
        or not _only(data, ("turn", "reason"))
        or reason is None
        or type(reason.get("kind")) is not str
    ):
        return "malformed turn/end"
    kind = reason["kind"]
    if kind in _TURN_END_PLAIN or kind == "disposed" or (kind == "aborted" and "reason" not in reason):
        return None if _only(reason, ("kind",)) else f"malformed turn/end reason {kind!r}"
    if kind == "error" and "error" not in reason and not _legacy_error(reason):
        return "malformed legacy turn/end error reason"
    return None


def _has_provider_model(value: object) -> bool:
    pair = _record(value)
    return pair is not None and _nonempty(pair.get("provider")) and _nonempty(pair.get("model"))


def _request_header_refusal(data: object) -> str | None:
    record = _record(data)
    header = _record(record.get("header")) if record is not None else None
    config = header.get("config") if header is not None else None
    if not _has_provider_model(config):
        return "request/header lacks provider/model"
    assert isinstance(config, dict) and header is not None
    effort = config.get("reasoningEffort")
    if "reasoningEffort" in config and not _nonempty(effort):
        return "request/header has an invalid reasoningEffort"
    if "adapterDefaults" in header:
        defaults = header["adapterDefaults"]
        if (
            not isinstance(defaults, dict)
            or any(k not in ("reasoningEffort", "maxTokens") or v is not True for k, v in defaults.items())
            or any(k not in config for k in defaults)
        ):
            return "request/header has invalid adapterDefaults"
    return None


def _message_refusal(kind: str, message: object) -> str | None:
    """assertMessageEventShape: the message an event of `kind` carries (already upgraded)."""
    record = _record(message)
    if record is None or not _nonempty(record.get("id")):
        return f"{kind} lacks an identified message"
    role = "assistant" if kind == "assistant/message" else "user"
    if record.get("role") != role:
        return f'{kind} message must have role "{role}"'
    source = _record(record.get("source"))
    if source is None or not _nonempty(source.get("kind")):
        return f"{kind} message has invalid source"
    content = record.get("content")
    if not isinstance(content, list):
        return f"{kind} message has invalid content"
    if kind == "assistant/message":
        return (
            None
            if source["kind"] == "model" and _has_provider_model(source)
            else f"{kind} message must have model source"
        )
    if kind != "tool/result":
        return None
    if source["kind"] != "tool" or not _nonempty(source.get("callId")):
        return f"{kind} message must have tool source"
    block = _record(content[0]) if len(content) == 1 else None
    if block is None or block.get("type") != "tool-result" or not isinstance(block.get("content"), list):
        return f"{kind} message must contain one tool-result block"
    return None if block.get("toolCallId") == source["callId"] else f"{kind} message has mismatched tool call ids"


class LoadChecks:
    """The load checks of one log, in event order (a surface replacement inherits the id of the
    message it replaces, so the ids seen so far are kept)."""

    def __init__(self) -> None:
        self.message_ids: dict[int, str] = {}

    def refusal(self, event: Mapping[str, object]) -> str | None:
        """Why the harness would refuse to load a log holding `event` (None: it loads)."""
        kind, data = event.get("type"), event.get("data")
        record = _record(data)
        if kind in OBSOLETE_TYPES:
            return f"obsolete {kind} event"
        if kind == "request/header" and (record is None or record.get("reason") == "fallback"):
            return 'obsolete request/header reason "fallback"' if record is not None else "request/header without data"
        if kind == "turn/start" and record is not None and "trigger" in record:
            trigger = _record(record["trigger"])
            if (
                not _turn(record.get("turn"))
                or not _only(record, ("turn", "trigger"))
                or trigger is None
                or not _nonempty(trigger.get("kind"))
            ):
                return "malformed legacy turn/start"
        if kind == "turn/end" and record is not None and (problem := _turn_end_refusal(record)) is not None:
            return problem
        if kind == "steering/message":
            if record is None:
                return "malformed legacy steering/message"
            wrapped = _record(record.get("message"))
            if (
                wrapped is not None
                and safe_integer(record.get("turn")) is not None
                and _only(record, ("turn", "message"))
            ):
                kind, record = "user/message", wrapped
            elif safe_integer(record.get("turn")) is None or not _only(record, ("turn", "content", "source")):
                return "malformed legacy steering/message"
            else:
                kind, record = "user/message", {**record, "id": "legacy", "role": "user"}
        if kind == "request/header":
            return _request_header_refusal(record)
        if kind not in MESSAGE_TYPES:
            return None
        message = self._upgraded(str(kind), record, event)
        problem = _message_refusal(str(kind), message)
        seq = safe_integer(event.get("seq"))
        found = message.get("id") if isinstance(message, dict) else None
        if problem is None and seq is not None and isinstance(found, str):
            self.message_ids[seq] = found
        return problem

    def _upgraded(self, kind: str, data: dict[str, object] | None, event: Mapping[str, object]) -> object:
        """The message an event carries once a pre-identity shape is upgraded (session-log.md §12)."""
        if data is None:
            return None
        if kind == "user/message":
            if "id" in data or "role" in data or "message" in data or "content" not in data or "source" not in data:
                return data
            return {**data, "id": "legacy", "role": "user"}
        if "message" in data:
            return data["message"]
        if kind == "assistant/message":
            if "content" not in data or "provenance" not in data:
                return None
            provenance = _record(data["provenance"]) or {}
            return {
                "id": "legacy",
                "role": "assistant",
                "content": data["content"],
                "source": {**provenance, "kind": "model"},
            }
        if not data.keys() >= LEGACY_RESULT_KEYS:
            return None
        op = _record(event.get("surfaceOp"))
        start = op.get("start") if op is not None and op.get("op") == "replace" else None
        message_id: str | None = "legacy"
        if isinstance(start, int | float) and not isinstance(start, bool):  # the replaced message's id
            message_id = self.message_ids.get(int(start)) if float(start).is_integer() else None
        return legacy_result_message(data, message_id)


LEGACY_RESULT_KEYS = frozenset({"callId", "content", "isError"})
"""The keys of a tool/result's data as builds before message ids wrote it (with no `message`)."""


def legacy_result_message(data: Mapping[str, object], message_id: object) -> dict[str, object]:
    """The message the load makes of a legacy tool/result's data (session-log.md §12): one
    tool-result block of its call, content and isError, from a tool source."""
    block = {
        "type": "tool-result",
        "toolCallId": data["callId"],
        "content": data["content"],
        "isError": data["isError"],
    }
    return {"id": message_id, "role": "user", "content": [block], "source": {"kind": "tool", "callId": data["callId"]}}
