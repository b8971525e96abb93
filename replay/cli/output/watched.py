"""What `schedlog watch` prints of each event (replay/live/follow.py): a line for people
(coloured on a terminal), a JSON object per line, or a GitHub workflow command."""

from __future__ import annotations

from collections.abc import Sequence

import click

from invariant.findings import Severity
from replay.cli.output import Format, json_line
from replay.judge.verdicts import Verdict
from replay.live.follow import Kind, WatchEvent
from replay.terminal import printable

_COLOURS = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.INFO: "blue"}
_VERDICT_COLOURS = {
    Verdict.OK: "green",
    Verdict.CORRUPT: "red",
    Verdict.UNREADABLE: "red",
    Verdict.UNSUPPORTED: "yellow",
}


def event_json(e: WatchEvent) -> dict[str, object]:
    """The event as `--format json` writes it: `path`, `event`, then what the event says."""
    out: dict[str, object] = {"path": e.path, "event": e.kind.value}
    if e.finding is not None:
        f = e.finding
        out |= {"code": f.code, "severity": f.severity.value, "line": f.line, "message": f.message}
        if f.pointer:
            out["pointer"] = f.pointer
    if e.verdict is not None:
        out["verdict"] = e.verdict.value
    if e.why:
        out["why"] = e.why
    return out


def event_text(e: WatchEvent, colour: bool = False) -> str:
    """One line: `PATH:LINE: severity code: message` for a finding, `PATH: VERDICT` for a verdict."""

    def styled(text: str, fg: str) -> str:
        return click.style(text, fg=fg, bold=True) if colour else text

    path = printable(e.path)
    if e.finding is not None:
        f = e.finding
        where = f"{path}:{f.line}" if f.line is not None else path
        at = f" (at {f.pointer})" if f.pointer else ""
        if e.kind is Kind.WITHDRAWN:
            return f"{where}: {styled('withdrawn', 'cyan')} {f.code}: {printable(f.message)}{at}"
        return f"{where}: {styled(f.severity.value, _COLOURS[f.severity])} {f.code}: {printable(f.message)}{at}"
    if e.verdict is not None:
        word = e.verdict.value if e.verdict is Verdict.OK else e.verdict.value.upper()
        return f"{path}: {styled(word, _VERDICT_COLOURS[e.verdict])}"
    if e.kind is Kind.REREAD:
        return f"{path}: {styled('read again', 'cyan')}: {printable(e.why)}"
    return f"{path}: {styled('gone', 'cyan')}"


def event_github(e: WatchEvent) -> str | None:
    """A finding or a verdict other than ok as a workflow command (None: nothing for CI)."""
    from replay.cli.output.ci import LEVELS, annotation

    f = e.finding
    if e.kind is Kind.FINDING and f is not None:
        at = f" (at {f.pointer})" if f.pointer else ""
        return annotation(LEVELS[f.severity], e.path, f.line, f.code, f.message + at)
    if e.kind is Kind.VERDICT and e.verdict is not None and e.verdict is not Verdict.OK:
        return annotation("error", e.path, None, f"verdict {e.verdict.value}", f"the log is {e.verdict.value}")
    return None


def render_event(e: WatchEvent, fmt: Format, colour: bool = False) -> str:
    """The event as `fmt` prints it, with its newline ('' for nothing)."""
    if fmt is Format.JSON:
        return json_line(event_json(e))
    if fmt is Format.GITHUB:
        line = event_github(e)
        return "" if line is None else line + "\n"
    return event_text(e, colour) + "\n"


def watch_summary(verdicts: Sequence[Verdict], events: int) -> str:
    """`N log(s) watched: a ok, b corrupt, c unreadable; E event(s)`."""
    counts = {v: sum(1 for x in verdicts if x is v) for v in Verdict}
    told = ", ".join(f"{counts[v]} {v.value}" for v in Verdict if counts[v] or v is not Verdict.UNSUPPORTED)
    return f"{len(verdicts)} log(s) watched: {told}; {events} event(s)"
