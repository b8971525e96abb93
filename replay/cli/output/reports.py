"""Session reports (`verify`, `replay`): text for people, JSON / JSONL / CSV / JUnit for machines
(GitHub annotations and SARIF: `ci`)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from invariant.findings import Severity
from invariant.jsvalue import shown
from replay.audit.report import VERDICT_COLUMNS, SessionReport, Verdict
from replay.cli.output import Format, json_document, json_line, json_text
from replay.terminal import printable


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
        head = f"CORRUPT    {r.path}{who}: the log format is refused (see below)"
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


def summary_line(reports: Sequence[SessionReport]) -> str:
    """The verdicts' counts, then how the reports were had where a verdict cache was asked."""
    return verdict_summary([r.verdict for r in reports]) + reads_told([r.read for r in reports])


def reads_told(reads: Sequence[str]) -> str:
    """`; 180 from cache, 20 resumed, 3 read whole` (how each report was had: `SessionReport.read`),
    or nothing where the verdict cache was not asked."""
    from replay.audit.cached import Use

    counts = [sum(1 for r in reads if r == use) for use in Use]
    if not any(counts):
        return ""
    return "; " + ", ".join(f"{n} {use.value}" for use, n in zip(Use, counts, strict=True))


def verdict_summary(verdicts: Sequence[str]) -> str:
    """`N session(s): a ok, b corrupt, c unreadable[, d unsupported]`."""
    counts = {v: sum(1 for x in verdicts if x == v) for v in Verdict}
    text = (
        f"{len(verdicts)} session(s): {counts[Verdict.OK]} ok, {counts[Verdict.CORRUPT]} corrupt, "
        f"{counts[Verdict.UNREADABLE]} unreadable"
    )
    return text + (f", {counts[Verdict.UNSUPPORTED]} unsupported" if counts[Verdict.UNSUPPORTED] else "")


def installed_version(name: str) -> str:
    """The installed version of the distribution `name` ("unknown" where it is not installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class Run:
    """When and how long the run that judged the reports ran, and which schedlog ran it."""

    started: datetime
    seconds: float
    version: str = ""
    """schedlog's version ("": the installed one, looked up where an output names it: `tool`)."""

    @property
    def tool(self) -> str:
        return self.version or installed_version("schedlog")

    @classmethod
    def unknown(cls) -> Run:
        return cls(datetime.fromtimestamp(0, UTC), 0.0, "unknown")


def render(
    reports: Sequence[SessionReport],
    fmt: Format,
    summary: str | None = None,
    terminal: bool = False,
    run: Run | None = None,
    quiet: bool = False,
    hint: str | None = None,
) -> str:
    """The reports in `fmt` (ends with a newline). Text ends with the summary line, or with
    `summary` when given (replay's, which names the database) in place of the per-session lines;
    `quiet` leaves out the sessions without a problem (ok, no warning), `hint` goes before the
    summary."""
    run = run or Run.unknown()
    if fmt in (Format.GITHUB, Format.SARIF):
        from replay.cli.output import ci  # (hashes and URL quoting: only CI outputs load them)

        if fmt is Format.GITHUB:
            return ci.github(reports, summary or summary_line(reports))
        return ci.sarif(reports, run.tool)
    if fmt is Format.JSON:
        return json_document([r.to_json() for r in reports])
    if fmt is Format.JSONL:
        return "".join(json_line(r.to_json()) for r in reports)
    if fmt is Format.CSV:
        return csv_table(reports, terminal)
    if fmt is Format.JUNIT:
        return junit(reports, run)
    if summary is not None:
        return printable(summary) + "\n"
    shown_reports = [r for r in reports if not (quiet and _untroubled(r))]
    body = "".join(text_line(r) + "\n" for r in shown_reports)
    return body + (printable(hint) + "\n" if hint else "") + summary_line(reports) + "\n"


def _untroubled(r: SessionReport) -> bool:
    """ok, with no finding above information (what --quiet leaves out)."""
    return r.verdict is Verdict.OK and all(f.severity is Severity.INFO for f in r.findings)


CSV_COLUMNS = tuple(VERDICT_COLUMNS)
"""One row per session: the verdict record (`SessionReport.row`), its columns named as the replay
database's `sessions` table and the Parquet verdict parts; JSON columns as JSON text."""


def csv_table(reports: Sequence[SessionReport], terminal: bool = False) -> str:
    """One row per session; on a terminal, control characters in values are escaped."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in reports:
        row = r.row()
        cells = [_cell(row[column], VERDICT_COLUMNS[column]) for column in CSV_COLUMNS]
        writer.writerow([printable(c) for c in cells] if terminal else cells)
    return out.getvalue()


def _cell(value: object, kind: str) -> str:
    if kind == "JSON":
        return json_text(value)
    return "" if value is None else str(value)


def _properties(r: SessionReport) -> list[str]:
    """What judged the session: format version, generation, profile and its evidence."""
    from xml.sax.saxutils import quoteattr

    found: dict[str, object] = {"formatVersion": r.format_version, "generation": r.generation}
    if r.profile is not None:
        found |= {"profile": r.profile.name, "profileSource": r.profile.source}
        found |= {"profileEvidence": "; ".join(r.profile.evidence)}
    lines = [
        f"      <property name={quoteattr(k)} value={quoteattr(printable(str(v)))}/>"
        for k, v in found.items()
        if v is not None and v != ""
    ]
    return ["    <properties>", *lines, "    </properties>"] if lines else []


def _line(r: SessionReport) -> int | None:
    """The line a session's testcase points at: its violation's, else its first finding's."""
    if r.violation is not None and r.violation.line is not None:
        return r.violation.line
    return next((f.line for f in r.findings if f.line is not None), None)


def junit(reports: Sequence[SessionReport], run: Run) -> str:
    """JUnit XML: a <testsuites> root, one testsuite, one testcase per session (with its file and
    line); corrupt is a failure, unreadable an error, a log too new to judge a skipped test."""
    from xml.sax.saxutils import escape, quoteattr

    failures = sum(1 for r in reports if r.verdict is Verdict.CORRUPT)
    errors = sum(1 for r in reports if r.verdict is Verdict.UNREADABLE)
    skipped = sum(1 for r in reports if r.verdict is Verdict.UNSUPPORTED)
    counts = f'tests="{len(reports)}" failures="{failures}" errors="{errors}" skipped="{skipped}"'
    when = run.started.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="seconds")
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<testsuites name="schedlog" {counts} time="{run.seconds:.3f}">',
        f'<testsuite name="schedlog verify" {counts} time="{run.seconds:.3f}" timestamp="{when}">',
    ]
    for r in reports:
        name = quoteattr(printable(r.path))
        line = _line(r)
        where = f" file={name}" + ("" if line is None else f' line="{line}"')
        out.append(f'  <testcase classname="schedlog.verify" name={name}{where}>')
        out.extend(_properties(r))
        detail = escape(text_line(r))
        if r.verdict is Verdict.CORRUPT:
            rule = (
                r.violation.rule
                if r.violation
                else next((f.code for f in r.findings if f.severity is Severity.ERROR), "format")
            )
            message = quoteattr(text_line(r).splitlines()[0])
            out.append(f"    <failure type={quoteattr(rule)} message={message}>{detail}</failure>")
        elif r.verdict is Verdict.UNREADABLE:
            out.append(f'    <error type="unreadable" message={quoteattr(text_line(r))}>{detail}</error>')
        elif r.verdict is Verdict.UNSUPPORTED:
            out.append(f"    <skipped message={quoteattr(text_line(r))}/>")
        out.append("  </testcase>")
    out += ["</testsuite>", "</testsuites>"]
    return "\n".join(out) + "\n"
