"""A conformance run (`conform`): text for people, JSON and JUnit for pipelines."""

from __future__ import annotations

import shlex
from xml.sax.saxutils import escape, quoteattr

from replay.cli.output import Format, json_document, json_text
from replay.conform.runner import Disagreement, Outcome
from replay.terminal import printable


def reproduction(line: str, command: str) -> str:
    """The shell line that puts one request to the implementation."""
    return f"printf '%s\\n' {shlex.quote(line)} | {command}"


def _disagreement_json(d: Disagreement, command: str) -> dict[str, object]:
    return {
        "name": d.name,
        "op": d.op,
        "request": d.line,
        "expected": d.expected,
        "actual": d.actual,
        "originalSize": d.original_size,
        "reproduce": reproduction(d.line, command),
    }


def to_json(outcome: Outcome) -> dict[str, object]:
    failure = outcome.failure
    return {
        "command": outcome.command,
        "status": ("protocol-error", "agree", "disagree")[[2, 0, 1].index(outcome.status)],
        "asked": dict(outcome.asked),
        "disagreeing": dict(outcome.differing),
        "disagreements": [_disagreement_json(d, outcome.command) for d in outcome.disagreements],
        "protocolError": None
        if failure is None
        else {"name": failure.name, "request": failure.line, "detail": failure.detail},
        "seconds": round(outcome.seconds, 3),
    }


def text(outcome: Outcome) -> str:
    lines = []
    for d in outcome.disagreements:
        lines += [
            f"DISAGREE {d.op} {d.name} (shrunk from {d.original_size} to {len(d.line)} characters)",
            f"  request:  {d.line}",
            f"  schedlog: {json_text(d.expected)}",
            f"  theirs:   {json_text(d.actual)}",
            f"  reproduce: {reproduction(d.line, outcome.command)}",
        ]
    if outcome.failure is not None:
        f = outcome.failure
        lines += [f"PROTOCOL ERROR during {f.name}: {f.detail}", f"  request: {f.line}"]
    total, differing = sum(outcome.asked.values()), sum(outcome.differing.values())
    per_op = ", ".join(f"{op} {n}" for op, n in sorted(outcome.differing.items()))
    shown = len(outcome.disagreements)
    summary = f"{total} case(s) asked in {outcome.seconds:.1f} s: {total - differing} agree, {differing} disagree"
    lines.append(summary + (f" ({per_op}; {shown} shown, shrunk)" if differing else ""))
    return "".join(printable(line) + "\n" for line in lines)


def junit(outcome: Outcome) -> str:
    """One testcase per operation: failures list its shrunk disagreements; a protocol error is an error."""
    ops = list(dict.fromkeys([*outcome.asked, *outcome.differing]))
    failures = sum(1 for op in ops if outcome.differing[op])
    errors = 1 if outcome.failure is not None else 0
    head = f'<testsuite name="schedlog conform" tests="{len(ops) + errors}" failures="{failures}" errors="{errors}"'
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<testsuites>", head + f' time="{outcome.seconds:.3f}">']
    for op in ops:
        out.append(f'  <testcase classname="schedlog.conform" name={quoteattr(op)}>')
        if outcome.differing[op]:
            shown = [d for d in outcome.disagreements if d.op == op]
            body = "\n".join(
                f"{d.line}\nschedlog: {json_text(d.expected)}\ntheirs: {json_text(d.actual)}" for d in shown
            )
            message = quoteattr(f"{outcome.differing[op]} of {outcome.asked[op]} case(s) disagree")
            out.append(f'    <failure type="disagreement" message={message}>{escape(printable(body))}</failure>')
        out.append("  </testcase>")
    if outcome.failure is not None:
        f = outcome.failure
        out.append(f'  <testcase classname="schedlog.conform" name={quoteattr("protocol")}>')
        detail = quoteattr(printable(f.detail))
        out.append(f'    <error type="protocol" message={detail}>{escape(printable(f.line))}</error>')
        out.append("  </testcase>")
    out += ["</testsuite>", "</testsuites>"]
    return "\n".join(out) + "\n"


def render(outcome: Outcome, fmt: Format) -> str:
    if fmt is Format.JSON:
        return json_document(to_json(outcome))
    if fmt is Format.JUNIT:
        return junit(outcome)
    return text(outcome)
