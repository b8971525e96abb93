"""A session's report as the text output tells it: one line, then its findings, indented.

Kept apart from the output layer so that the verdict cache can keep what a report's text is
beside the report (replay.judge.held): a hit prints it without making the report again."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from invariant.jsvalue import shown
from replay.judge.verdicts import Verdict
from replay.terminal import printable

if TYPE_CHECKING:
    from invariant.findings import Finding
    from replay.judge.report import SessionReport


def _location(r: SessionReport) -> str:
    v = r.violation
    if v is not None and v.line is not None:
        return f"{r.path}:{v.line}"
    return r.path


PER_CODE = 10
"""The findings of one code the text output shows of a log (a 64 MB log can hold 66,543
warnings): the rest are counted on one line, as ruff and mypy sum up; every other output
format lists each finding the report holds."""


def _stands_for(f: Finding) -> int:
    """How many findings `f` stands for: those a reader's own cap counted (`more_findings`), else one."""
    from invariant.findings import MORE  # (a hit's text is printed with no finding's module loaded)

    if f.line is None and f.message.endswith(MORE):
        count = f.message[: -len(MORE)]
        if count.isdigit():
            return int(count)
    return 1


def text_line(r: SessionReport, per_code: int | None = PER_CODE) -> str:
    """One line per session, then one indented line per finding, at most `per_code` of a code
    (None: all), then how many more of each code there are."""
    who = f" [{r.session}]" if r.session else ""
    if r.verdict is Verdict.UNREADABLE:
        reason = next((f.message for f in r.findings if f.code == "format.unreadable"), "unreadable")
        return printable(f"UNREADABLE {r.path}: {reason}")
    if r.verdict is Verdict.UNSUPPORTED:
        unsupported = ("format.version.newer", "format.event.unknown")
        reason = next((f.message for f in r.findings if f.code in unsupported), "a newer format")
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
    told: Counter[str] = Counter()
    for f in r.findings:
        if f.code in ("format.unreadable", "format.version.newer"):
            continue
        told[f.code] += _stands_for(f)
        if per_code is not None and told[f.code] > per_code:
            continue
        where = f" line {f.line}" if f.line is not None else ""
        at = f" (at {f.pointer})" if f.pointer else ""
        lines.append(f"    {f.severity}{where}: {f.code}: {f.message}{at}")
    for code, count in told.items():
        if per_code is not None and count > per_code:
            more = f"{count - per_code:,} more {code}"
            lines.append(f"    ... {more} (--all-findings prints them)")
    return "\n".join(printable(line) for line in lines)
