"""Judging logged `schedule_*` tool calls and results against the tool surfaces (pure).

A session's uses (a `tool/call` and its `tool/result`) are judged against one surface per
tool: among the surfaces the session's own uses point to (a tool only one surface has, keys
only one surface's arguments take, a view's `deliveryMode`, a seed task's
`scheduledAtLocal`), or all of them when nothing points, the one that finds the fewest
problems. A call is never faulted for the surface it was not made to.

The findings (RULES) are the transcript's, apart from the log's verdict: information where the
model sent a call its tool must refuse (the tool is right to refuse it), warnings where the tool
broke its contract.

A result the host marks as a failure (`isError`, or an `error` on the event) is no value of
the tool and is not judged; a call with no result (interrupted) is judged alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..findings import Finding, Severity
from ..jsvalue import shown
from ..shapes import Nested, ObjectShape, OneOf, Reject, Spec, object_problems
from .model import Tool
from .names import HOST, LOCAL, SEED, SEED_TARGETS, SURFACE_NAMES

SCHEDULE_TOOL_PREFIX = "schedule_"
RULES = {
    "tool.call.arguments": "(info) the arguments text is not one JSON object",
    "tool.call.params": "(info) the arguments break the tool's declared parameters (a list limit outside 1-500, ...)",
    "tool.call.refused": "(info) the tool's own checks refuse them (a title over 120, an edit with no change, ...)",
    "tool.call.accepted": "a call the tool must refuse got a value that is no refusal",
    "tool.result.json": "the result is not one text block holding JSON",
    "tool.result.shape": "the value is none the tool declares",
    "tool.result.code": "an error value whose code the tool does not declare",
    "tool.result.call": "the value contradicts its call (an id not echoed; a page's counts, order or filter)",
    "tool.result.log": "the value contradicts the `schedule/change` events the call appended (session-local)",
    "tool.surface.unknown": "(info) a `schedule_*` tool no surface has",
}
"""Each transcript rule and what breaking it means (README, "Tool transcripts")."""
MODEL_RULES = frozenset({"tool.call.arguments", "tool.call.params", "tool.call.refused", "tool.surface.unknown"})
"""Information: the model sent a call its tool refuses (or no surface knows the tool). The
other rules are warnings: the tool broke its own contract."""


@dataclass(frozen=True)
class Unparsed:
    """A text that is not what was expected (not JSON, not one text block): why."""

    reason: str


class _NoResult(Unparsed):
    """The one value saying a call has no result logged: pickled by its name, so that `is
    NO_RESULT` holds in a judge's state taken up again."""

    def __reduce__(self) -> str:
        return "NO_RESULT"


NO_RESULT = _NoResult("no result logged")


@dataclass(frozen=True)
class ToolUse:
    """One logged call of a `schedule_*` tool and its result."""

    name: str
    arguments: object
    """The parsed arguments (JSON.parse of the call's text), or Unparsed."""
    call_line: int | None = None
    result: object = NO_RESULT
    """The value of the result's one text block, Unparsed, or NO_RESULT."""
    host_failure: bool = False
    """The host marked the result a failure: no value of the tool."""
    result_line: int | None = None
    appended: tuple[object, ...] = ()
    """The `schedule/change` payloads logged between the call and its result."""
    call_index: int | None = None
    result_index: int | None = None
    result_pointer: str | None = None
    """Where in the result event its value's text is (`result_pointer`)."""


ARGUMENTS = "/data/arguments"
"""Where a `tool/call` holds its arguments text: every call finding points there."""


def is_error_value(value: object) -> bool:
    """A refusal: `{code, message}` (the shape every surface gives its error values)."""
    return isinstance(value, dict) and type(value.get("code")) is str and "message" in value


def is_success(value: object) -> bool:
    """A value that neither refuses nor reports a task missing, ended or changed."""
    return not isinstance(value, dict) or "code" not in value


def closest_problem(spec: Spec, value: object) -> str:
    """Why `value` is none of the alternatives, told by the one it comes nearest."""
    if isinstance(spec, OneOf):
        told = [closest_problem(option, value) for option in spec.options]
        fewest = min(told, key=lambda t: (t.count(";") + 1, len(t)))
        return fewest
    if isinstance(spec, Nested):
        problems = object_problems(value, spec.shape)
        return f"{spec.shape.title}: {'; '.join(problems)}" if problems else ""
    try:
        spec.check(value)
    except Reject as err:
        return err.message
    return ""


def _shape_problem(shape: ObjectShape, value: object) -> str | None:
    problems = object_problems(value, shape)
    return None if not problems else "; ".join(problems)


def tool_finding(rule: str, message: str, use: ToolUse, on_result: bool) -> Finding:
    """A finding on the call (at its arguments) or on the result (at its value's text):
    information for MODEL_RULES, else a warning."""
    severity = Severity.INFO if rule in MODEL_RULES else Severity.WARNING
    if on_result:
        return Finding(rule, severity, message, use.result_line, use.result_pointer, use.result_index)
    return Finding(rule, severity, message, use.call_line, ARGUMENTS, use.call_index)


def judge_use(tool: Tool, use: ToolUse) -> list[Finding]:
    """Every finding on one use, judged against `tool`."""
    where = f"{use.name} ({tool.surface})"
    found: list[Finding] = []

    def finding(rule: str, message: str, on_result: bool) -> None:
        found.append(tool_finding(rule, f"{where}: {message}", use, on_result))

    args, refused = use.arguments, False
    if not isinstance(args, dict):
        reason = args.reason if isinstance(args, Unparsed) else f"got {shown(args)}"
        finding("tool.call.arguments", f"the arguments are not one JSON object: {reason}", False)
        refused = True
    elif (problem := _shape_problem(tool.params, args)) is not None:
        finding("tool.call.params", f"the host refuses these arguments: {problem}", False)
        refused = True
    elif (refusal := tool.refusal(args)) is not None:
        code, why = refusal
        finding("tool.call.refused", f"the tool's own checks refuse these arguments with {code}: {why}", False)
        refused = True
    value = use.result
    if value is NO_RESULT or use.host_failure:
        return found
    if isinstance(value, Unparsed):
        finding("tool.result.json", f"the result is not one text block of JSON: {value.reason}", True)
        return found
    declared = value.get("code") if isinstance(value, dict) and is_error_value(value) else None
    if declared is not None and declared not in tool.codes:
        finding("tool.result.code", f"error code {declared!r} is not declared by the tool", True)
        return found
    if problem := closest_problem(tool.result, value):
        finding("tool.result.shape", f"the value is none the tool declares ({problem})", True)
        return found
    if refused and is_success(value):
        finding("tool.call.accepted", "arguments the tool must refuse got a value that is no refusal", True)
    elif not refused and isinstance(args, dict) and (told := tool.disagreement(args, value)) is not None:
        finding("tool.result.call", told, True)
    if isinstance(args, dict) and (told := tool.appended(args, value, use.appended)) is not None:
        finding("tool.result.log", told, True)
    return found


def _pointers(use: ToolUse) -> set[str]:
    """The surfaces this use alone points to (empty: it could be any)."""
    if use.name in ("schedule_view", "schedule_edit"):
        return {SEED}
    if use.name == "schedule_update":
        return {HOST}
    found: set[str] = {LOCAL} if use.appended else set()  # only session-local tools append changes
    args, value = use.arguments, use.result
    if isinstance(args, dict):
        if "rrule" in args or args.get("target") in SEED_TARGETS:
            found.add(SEED)
        if "daily" in args or "weekly" in args or (use.name == "schedule_create" and "title" in args):
            found.add(HOST if "rrule" not in args else SEED)
    views = value if isinstance(value, list) else [value]
    for view in views:
        if isinstance(view, dict):
            mode = view.get("deliveryMode")
            if mode == "host":
                found.add(HOST)
            elif mode == LOCAL:
                found.add(LOCAL)
            elif "scheduledAtLocal" in view or "shown" in view:
                found.add(SEED)
    return found


def surfaces_of(pointed: Iterable[str]) -> tuple[str, ...]:
    """The surfaces a session's uses (and evidence from the rest of its log) point to, in
    SURFACES order (all when none points)."""
    named = set(pointed)
    return tuple(s for s in SURFACE_NAMES if s in named) or SURFACE_NAMES


def judge_uses(
    uses: Sequence[ToolUse], surfaces: Sequence[str] | None = None, evidence: Iterable[str] = ()
) -> list[Finding]:
    """The findings on a session's uses, each judged against the surface (of `surfaces`, or
    those the uses and `evidence` point to) that finds the fewest problems with it. A log with
    `schedule/change` events is evidence of the session-local tools."""
    judged = Uses(None if surfaces is None else tuple(surfaces))
    for at, use in enumerate(uses):
        judged.add(at, use)
    return judged.findings(evidence)


_Judged = list[Finding] | tuple[tuple[str, list[Finding]], ...]
"""A use's findings where they are final, else its findings against each surface that has its tool."""


@dataclass
class Uses:
    """`judge_uses` fed one whole use at a time (its result read, or the log's end reached), in
    any order (`at`: its place among the calls), keeping only what may still be reported: the
    surfaces the uses point to, and of each use with a finding against some surface those
    findings, by surface (which surface judges it is known only once every use is read). A use
    every surface that has its tool accepts is judged then and there, and not kept."""

    surfaces: tuple[str, ...] | None = None
    """The surfaces to judge against (None: those the uses point to)."""
    pointed: set[str] = field(default_factory=set)
    held: list[tuple[int, _Judged]] = field(default_factory=list)
    any: bool = False
    """Whether any use was added."""

    def add(self, at: int, use: ToolUse) -> None:
        from .surfaces import SURFACES  # (built for a log that calls them: most call none)

        self.any = True
        self.pointed |= _pointers(use)
        per = tuple((s, judge_use(tools[use.name], use)) for s, tools in SURFACES.items() if use.name in tools)
        if self.surfaces is not None:
            found = _fewest(per, self.surfaces, False)
            if found is None:
                message = f"{use.name}: no tool surface of {', '.join(self.surfaces)} has this tool; not judged"
                found = [tool_finding("tool.surface.unknown", message, use, False)]
            if found:
                self.held.append((at, found))
        elif not per:
            message = f"{use.name}: no known tool surface has this tool; not judged"
            self.held.append((at, [tool_finding("tool.surface.unknown", message, use, False)]))
        elif any(found for _, found in per):
            self.held.append((at, per))

    def findings(self, evidence: Iterable[str] = ()) -> list[Finding]:
        """The findings of every use added, in call order."""
        candidates = self.surfaces if self.surfaces is not None else surfaces_of([*self.pointed, *evidence])
        found: list[Finding] = []
        for _, judged in sorted(self.held, key=lambda held: held[0]):
            if isinstance(judged, list):
                found += judged
            else:
                fewest = _fewest(judged, candidates, self.surfaces is None)
                assert fewest is not None  # (a surface has the tool: the fallback finds it)
                found += fewest
        return found


def _fewest(
    per: tuple[tuple[str, list[Finding]], ...], candidates: Sequence[str], guessed: bool
) -> list[Finding] | None:
    """The fewest findings against the candidate surfaces that have the tool, the first of equals
    in `candidates` order; where none has it and the candidates were a guess (`guessed`: the
    calls' own pointers), against any surface that has it; None where none does."""
    by = dict(per)
    judged = [by[s] for s in candidates if s in by]
    if guessed and not judged:
        judged = [found for _, found in per]
    return min(judged, key=len) if judged else None


# --- reading uses from session-log events (session-log.md §5.3) -------------------------------

TOOL_CALL = "tool/call"
TOOL_RESULT = "tool/result"
TOOL_TYPES = frozenset({TOOL_CALL, TOOL_RESULT})


def schedule_call(event: Mapping[str, object]) -> tuple[str, str, object] | None:
    """A `tool/call` of a `schedule_*` tool as (call id, tool name, arguments text), else None."""
    data = event.get("data")
    if event.get("type") != TOOL_CALL or not isinstance(data, dict):
        return None
    name, call = data.get("name"), data.get("callId")
    if type(name) is not str or not name.startswith(SCHEDULE_TOOL_PREFIX) or type(call) is not str:
        return None
    return call, name, data.get("arguments")


def result_call_id(event: Mapping[str, object]) -> str | None:
    """The call id a `tool/result` answers: its message's source (a legacy flat result names
    it in `callId`)."""
    data = event.get("data")
    if event.get("type") != TOOL_RESULT or not isinstance(data, dict):
        return None
    message = data.get("message")
    if isinstance(message, dict):
        source = message.get("source")
        call = source.get("callId") if isinstance(source, dict) else None
    else:
        call = data.get("callId")
    return call if type(call) is str else None


def result_pointer(event: Mapping[str, object]) -> str:
    """Where a `tool/result` holds its value's text: the first block of its message's
    tool-result block, or of a legacy flat result's content."""
    data = event.get("data")
    message = data.get("message") if isinstance(data, dict) else None
    return "/data/message/content/0/content/0/text" if isinstance(message, dict) else "/data/content/0/text"


def result_text(event: Mapping[str, object]) -> tuple[str | Unparsed, bool]:
    """The text of a `tool/result`'s one text block (or why there is none), and whether the
    host marked it a failure (`isError`, or an `error` on the event)."""
    data = event.get("data")
    if not isinstance(data, dict):
        return Unparsed("the result has no data object"), False
    message = data.get("message")
    if isinstance(message, dict):  # the tool-result block of the message
        blocks = message.get("content")
        block = blocks[0] if isinstance(blocks, list) and len(blocks) == 1 else None
        if not isinstance(block, dict):
            return Unparsed("the message is not one tool-result block"), "error" in data
    else:  # legacy flat {callId, content, isError}
        block = data
    failed = block.get("isError") is True or "error" in data
    content = block.get("content")
    if not isinstance(content, list) or len(content) != 1:
        return Unparsed("the content is not one block"), failed
    text = content[0].get("text") if isinstance(content[0], dict) and content[0].get("type") == "text" else None
    return (text if type(text) is str else Unparsed("the content is not one text block")), failed
