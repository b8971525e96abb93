"""Session reports (`verify`, `replay`): text for people, JSON / JSONL / CSV / JUnit for machines
(GitHub annotations and SARIF: `ci`)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from replay.cli.output import Format, json_document, json_line, json_text
from replay.judge.held import Held
from replay.judge.textline import text_line
from replay.judge.verdicts import VERDICT_COLUMNS, Verdict
from replay.terminal import printable

if TYPE_CHECKING:  # a cache hit's text output makes no report: the values load with the first one made
    from replay.judge.report import SessionReport


def summary_line(reports: Sequence[SessionReport | Held]) -> str:
    """The verdicts' counts, then how the reports were had where a verdict cache was asked."""
    return verdict_summary([r.verdict for r in reports]) + reads_told([r.read for r in reports])


def reads_told(reads: Sequence[str]) -> str:
    """`; 180 from cache, 20 resumed, 3 read whole` (how each report was had: `SessionReport.read`),
    or nothing where the verdict cache was not asked."""
    from replay.cache.cached import Use

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
    `quiet` leaves out the sessions that are ok, `hint` goes before the summary."""
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
    return text([Held.of(r) for r in reports], quiet, hint)


def text(held: Sequence[Held], quiet: bool = False, hint: str | None = None, every: bool = False) -> str:
    """The text output: a report's lines each (`quiet`: only those of the sessions that are not
    ok; `every`: all their findings, not the first of each code), `hint`, then the summary line."""
    body = "".join(h.text(every) + "\n" for h in held if not (quiet and h.verdict is Verdict.OK))
    return body + (printable(hint) + "\n" if hint else "") + summary_line(held) + "\n"


CSV_COLUMNS = tuple(VERDICT_COLUMNS)
"""One row per session: the verdict record (`SessionReport.row`), its columns named as the replay
database's `sessions` table and the Parquet verdict parts; JSON columns as JSON text."""


def csv_table(reports: Sequence[SessionReport], terminal: bool = False) -> str:
    """One row per session; on a terminal, control characters in values are escaped."""
    import csv

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

    from invariant.findings import Severity

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
        detail = escape(text_line(r, None))
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
