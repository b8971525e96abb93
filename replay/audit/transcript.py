"""The `schedule_*` tool transcript of a session: its calls and results, gathered as the log
is read, judged by invariant.tools.judge."""

from __future__ import annotations

from dataclasses import replace

from invariant.findings import Finding
from invariant.jsvalue import safe_integer
from invariant.tools.judge import (
    TOOL_CALL,
    ToolUse,
    Unparsed,
    judge_uses,
    result_call_id,
    result_pointer,
    result_text,
    schedule_call,
)
from invariant.tools.names import LOCAL
from replay.logs.jsonline import Deep, JsonLineError
from replay.logs.jsonline import parse_json_text as parse_text


def parse_json_text(text: object, deep: Deep | None = None) -> object:
    """JSON.parse of a call's arguments or a result's text, or Unparsed saying why not."""
    if type(text) is not str:
        return Unparsed(f"not a string but {type(text).__name__}")
    try:
        return parse_text(text, deep)
    except JsonLineError as err:
        return Unparsed(f"not JSON ({err})")


class Transcript:
    """The `schedule_*` uses of one session, in call order."""

    def __init__(self, deep: Deep | None = None) -> None:
        """`deep` hears each deep JSON text parsed (jsonline.Deep: the log's budget)."""
        self._deep = deep
        self._uses: list[tuple[int, ToolUse]] = []
        self._open: dict[str, int] = {}
        self._changes: list[tuple[int, object]] = []

    def change(self, data: object, index: int) -> None:
        """Hear a `schedule/change` payload (a session-local call appends its own)."""
        if self._open:
            self._changes.append((index, data))

    def add(self, event: dict[str, object], line: int, index: int) -> None:
        """Hear a `tool/call` or `tool/result` event the reader yielded."""
        if event.get("type") == TOOL_CALL:
            call = schedule_call(event)
            if call is not None:
                call_id, name, arguments = call
                self._open[call_id] = len(self._uses)
                use = ToolUse(name, parse_json_text(arguments, self._deep), line, call_index=index)
                self._uses.append((index, use))
            return
        at = self._open.pop(result_call_id(event) or "", None)
        if at is None:
            return
        text, failed = result_text(event)
        value = text if isinstance(text, Unparsed) else parse_json_text(text, self._deep)
        called, use = self._uses[at]
        appended = tuple(data for n, data in self._changes if called < n < index)
        answered = replace(
            use,
            result=value,
            host_failure=failed,
            appended=appended,
            result_line=line,
            result_index=index,
            result_pointer=result_pointer(event),
        )
        self._uses[at] = (called, answered)
        if not self._open:
            self._changes.clear()

    def findings(self, seed: object, surface: str | None, logged_changes: bool) -> list[Finding]:
        """The findings on the uses the session owns (a fork child's inherited calls were its
        parent's, and are judged there), against `surface` (None: the one the calls point to;
        a log with schedule/change events points to the session-local tools)."""
        if not self._uses:  # most sessions call no schedule tool
            return []
        owned_from = safe_integer(seed) or 0
        uses = [use for index, use in self._uses if index >= owned_from]
        return judge_uses(uses, None if surface is None else [surface], evidence=[LOCAL] if logged_changes else [])
