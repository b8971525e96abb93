"""Output formats shared by the commands: text for people, JSON / JSONL / JUnit for machines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from xml.sax.saxutils import escape, quoteattr

from replay.audit.verify import SessionReport
from replay.terminal import printable

FORMATS = ("text", "json", "jsonl", "junit")


def _location(r: SessionReport) -> str:
    v = r.violation
    if v is not None and v.line is not None:
        return f"{r.path}:{v.line}"
    return r.path


def text_line(r: SessionReport) -> str:
    """One line per session, then one indented line per format finding."""
    who = f" [{r.session}]" if r.session else ""
    if r.verdict == "unreadable":
        reason = next((f.message for f in r.findings if f.code == "format.unreadable"), "unreadable")
        return printable(f"UNREADABLE {r.path}: {reason}")
    if r.violation is not None:
        v = r.violation
        where = f"event {v.index}" if v.index is not None else "log"
        head = f"CORRUPT    {_location(r)}{who}: {v.rule}: {v.message} ({where}{', ' + v.pointer if v.pointer else ''})"
    elif r.verdict == "corrupt":
        head = f"CORRUPT    {r.path}{who}: the log format is refused (see below)"
    else:
        active = 0 if r.folded is None else len(r.folded.active)
        head = (
            f"ok         {r.path}{who}: {r.events} events, {r.schedule_events} schedule, "
            f"seedLength {r.seed_length}, {active} active"
        )
    lines = [head]
    for f in r.findings:
        if f.code == "format.unreadable":
            continue
        where = f" line {f.line}" if f.line is not None else ""
        lines.append(f"    {f.severity}{where}: {f.code}: {f.message}")
    return "\n".join(printable(line) for line in lines)


def summary_line(reports: Sequence[SessionReport]) -> str:
    counts = {v: sum(1 for r in reports if r.verdict == v) for v in ("ok", "corrupt", "unreadable")}
    return (
        f"{len(reports)} session(s): {counts['ok']} ok, {counts['corrupt']} corrupt, {counts['unreadable']} unreadable"
    )


def render(reports: Sequence[SessionReport], fmt: str) -> str:
    """The whole output of `verify` in `fmt` (ends with a newline)."""
    if fmt == "json":
        return json.dumps([r.to_json() for r in reports], ensure_ascii=False, indent=2) + "\n"
    if fmt == "jsonl":
        return "".join(json.dumps(r.to_json(), ensure_ascii=False) + "\n" for r in reports)
    if fmt == "junit":
        return junit(reports)
    body = "".join(text_line(r) + "\n" for r in reports)
    return body + summary_line(reports) + "\n"


def junit(reports: Sequence[SessionReport]) -> str:
    """JUnit XML: one testcase per session; corrupt is a failure, unreadable an error."""
    failures = sum(1 for r in reports if r.verdict == "corrupt")
    errors = sum(1 for r in reports if r.verdict == "unreadable")
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuite name="schedlog verify" tests="{len(reports)}" failures="{failures}" errors="{errors}">',
    ]
    for r in reports:
        name = quoteattr(printable(r.path))
        out.append(f'  <testcase classname="schedlog.verify" name={name}>')
        detail = escape(text_line(r))
        if r.verdict == "corrupt":
            rule = r.violation.rule if r.violation else "format"
            message = quoteattr(text_line(r).splitlines()[0])
            out.append(f"    <failure type={quoteattr(rule)} message={message}>{detail}</failure>")
        elif r.verdict == "unreadable":
            out.append(f'    <error type="unreadable" message={quoteattr(text_line(r))}>{detail}</error>')
        out.append("  </testcase>")
    out.append("</testsuite>")
    return "\n".join(out) + "\n"
