"""A session's report as the text output tells it: one line, then its findings, indented.

Kept apart from the output layer so that the verdict cache can keep what a report's text is
beside the report (replay.audit.held): a hit prints it without making the report again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from invariant.jsvalue import shown
from replay.audit.verdicts import Verdict
from replay.terminal import printable

if TYPE_CHECKING:
    from replay.audit.report import SessionReport


def _location(r: SessionReport) -> str:
    v = r.violation
    if v is not None and v.line is not None:
        return f"{r.path}:{v.line}"
    return r.path


def text_line(r: SessionReport) -> str:
    """One line per session, then one indented line per format finding."""
    who = f" [{r.session}]" if r.session else ""
    if r.verdict is Verdict.UNREADABLE:
        reason = next((f.message for f in r.findings if f.code == "format.unreadable"), "unreadable")
        return printable(f"UNREADABLE {r.path}: {reason}")
    if r.verdict is Verdict.UNSUPPORTED:
        reason = next((f.message for f in r.findings if f.code == "format.version.newer"), "a newer format")
        return printable(f"UNSUPPORTED {r.path}{who}: {reason}")
    if r.violation is not None:
        v = r.violation
        where = f"event {v.index}" if v.index is not None else "store" if r.store else "log"
        head = f"CORRUPT    {_location(r)}{who}: {v.rule}: {v.message} ({where}{', ' + v.pointer if v.pointer else ''})"
    elif r.verdict is Verdict.CORRUPT:
        below = any(f.severity == "error" for f in r.findings)  # (a selection may have left them out)
        why = "see below" if below else "by findings the selection leaves out: --select/--ignore"
        head = f"CORRUPT    {r.path}{who}: the log format is refused ({why})"
    elif r.store:
        head = f"ok         {r.path}: Host task store, {r.events} task(s)"
    else:
        active = 0 if r.folded is None else len(r.folded.active)
        head = (
            f"ok         {r.path}{who}: {r.events} events, {r.schedule_events} schedule, "
            f"seedLength {shown(r.seed_length)}, {active} active"
        )
    lines = [head]
    if r.violation is not None:
        lines += [f"    related {x.where()}: {x.meaning}" for x in r.violation.related]
    if r.profile is not None and r.profile.disagreement:
        others = ", ".join(f"{name} finds it {verdict}" for name, verdict in r.profile.disagreement)
        lines.append(f"    note: the evidence does not decide the profile; judged by {r.profile.name}, but {others}")
    for f in r.findings:
        if f.code in ("format.unreadable", "format.version.newer"):
            continue
        where = f" line {f.line}" if f.line is not None else ""
        at = f" (at {f.pointer})" if f.pointer else ""
        lines.append(f"    {f.severity}{where}: {f.code}: {f.message}{at}")
    return "\n".join(printable(line) for line in lines)
