"""The `schedule_*` tool transcript of a session: its calls and results, judged as each call is
answered (invariant.tools.judge.Uses), so that what is kept between two records is what is
live: the calls awaiting their results, the schedule changes logged since the first of them,
and the findings that may still be reported."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from invariant.findings import Finding
from invariant.tools.judge import (
    TOOL_CALL,
    ToolUse,
    Unparsed,
    Uses,
    result_call_id,
    result_pointer,
    result_text,
    schedule_call,
)
from invariant.tools.names import LOCAL
from replay.lines.jsonline import Deep, JsonLineError
from replay.lines.jsonline import parse_json_text as parse_text


def parse_json_text(text: object, deep: Deep | None = None) -> object:
    """JSON.parse of a call's arguments or a result's text, or Unparsed saying why not."""
    if type(text) is not str:
        return Unparsed(f"not a string but {type(text).__name__}")
    try:
        return parse_text(text, deep)
    except JsonLineError as err:
        return Unparsed(f"not JSON ({err})")


@dataclass
class Transcript:
    """The `schedule_*` uses of one session, judged in call order against `surface` (None: the
    one the calls point to; a log with schedule/change events points to the session-local
    tools). The calls before the fork cut (`owned_from`) were the parent's, and are judged
    there."""

    surface: str | None = None
    owned_from: int = 0
    uses: Uses = field(init=False)
    calls: int = 0
    """Calls read so far (a use's place in call order)."""
    open: dict[str, tuple[int, int, ToolUse]] = field(default_factory=dict)
    """The calls awaiting their results, by call id: place, event index, the use so far."""
    changes: list[tuple[int, object]] = field(default_factory=list)
    """The schedule changes logged while a call awaits its result (its result may tell of them)."""

    def __post_init__(self) -> None:
        self.uses = Uses(None if self.surface is None else (self.surface,))

    def cut(self, index: int) -> None:
        """The fork is cut at event `index` (a v2+ marker): every call before it is the parent's."""
        self.owned_from = index
        self.uses = Uses(self.uses.surfaces)

    def change(self, data: object, index: int) -> None:
        """Hear a `schedule/change` payload (a session-local call appends its own)."""
        if self.open:
            self.changes.append((index, data))

    def add(self, event: dict[str, object], line: int, index: int, deep: Deep | None = None) -> None:
        """Hear a `tool/call` or `tool/result` event the reader yielded (`deep` hears each deep
        JSON text parsed: jsonline.Deep, the log's budget)."""
        if event.get("type") == TOOL_CALL:
            call = schedule_call(event)
            if call is not None:
                call_id, name, arguments = call
                use = ToolUse(name, parse_json_text(arguments, deep), line, call_index=index)
                earlier = self.open.pop(call_id, None)
                if earlier is not None:  # a call id used again: the earlier call is never answered
                    self._judged(*earlier)
                self.open[call_id] = (self.calls, index, use)
                self.calls += 1
            return
        waiting = self.open.pop(result_call_id(event) or "", None)
        if waiting is None:
            return
        at, called, use = waiting
        text, failed = result_text(event)
        value = text if isinstance(text, Unparsed) else parse_json_text(text, deep)
        appended = tuple(data for n, data in self.changes if called < n < index)
        answered = replace(
            use,
            result=value,
            host_failure=failed,
            appended=appended,
            result_line=line,
            result_index=index,
            result_pointer=result_pointer(event),
        )
        self._judged(at, called, answered)
        if not self.open:
            self.changes.clear()

    def _judged(self, at: int, index: int, use: ToolUse) -> None:
        if index >= self.owned_from:
            self.uses.add(at, use)

    def findings(self, logged_changes: bool) -> list[Finding]:
        """The findings on the uses the session owns (the log read: the calls still awaiting
        their results have none)."""
        for at, index, use in sorted(self.open.values(), key=lambda waiting: waiting[0]):
            self._judged(at, index, use)
        self.open.clear()
        if not self.uses.any:  # most sessions call no schedule tool
            return []
        return self.uses.findings([LOCAL] if logged_changes else [])
