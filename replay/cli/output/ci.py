"""Session reports for CI pipelines: GitHub workflow annotations (and a step summary), SARIF 2.1.0.

Both speak of the same problems: a session's violation (one per corrupt session) and each
finding of the log reader, located by file and line. Text from logs (prompts, ids, messages
quoting them) is untrusted: annotations escape what the workflow-command grammar gives meaning
to, the Markdown summary escapes what Markdown or HTML would read, and SARIF is JSON.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import quote

from invariant.findings import RelatedLocation, Severity
from replay.cli.output import json_document
from replay.judge.report import SessionReport
from replay.judge.verdicts import Verdict
from replay.terminal import printable

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT = "schedlogProblem/v1"
"""The partialFingerprints key: rule, file, session, seq and pointer (never the message)."""


@dataclass(frozen=True)
class Problem:
    """One thing to report: a violation or a reader finding, where it is."""

    report: SessionReport
    rule: str
    level: str
    """`error`, `warning` or `note` (SARIF's words; GitHub says `notice` for a note)."""
    message: str
    line: int | None
    seq: int | None = None
    index: int | None = None
    pointer: str = ""
    related: tuple[RelatedLocation, ...] = ()

    def fingerprint(self) -> str:
        parts = (self.rule, self.report.path, self.report.session or "", str(self.seq), self.pointer, str(self.line))
        return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:32]


LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def problems(reports: Sequence[SessionReport]) -> Iterator[Problem]:
    """Every violation and finding of the reports, in report order."""
    for r in reports:
        v = r.violation
        if v is not None:
            yield Problem(r, v.rule, "error", v.message, v.line, v.seq, v.index, v.pointer or "", v.related)
        for f in r.findings:
            yield Problem(r, f.code, LEVELS[f.severity], f.message, f.line, f.index, f.index, f.pointer or "")


# --- GitHub workflow commands ----------------------------------------------------------------------


def _data(text: str) -> str:
    """A workflow command's message: %, CR and LF escaped (the runner decodes them back)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    """A workflow command's property value: also `:` and `,`, which end it."""
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def github(reports: Sequence[SessionReport], summary: str) -> str:
    """One `::error` / `::warning` / `::notice` annotation per problem, then the summary line."""
    lines = []
    for p in problems(reports):
        at = f" (at {p.pointer})" if p.pointer else ""
        lines.append(annotation(p.level, p.report.path, p.line, p.rule, p.message + at + _see(p)))
        for x in p.related:  # each related event annotated where it is, pointing back
            if x.line is not None:
                lines.append(
                    annotation("note", p.report.path, x.line, p.rule, f"{x.meaning} (for the {p.rule} violation)")
                )
    return "".join(line + "\n" for line in lines) + printable(summary) + "\n"


def annotation(level: str, path: str, line: int | None, title: str, message: str) -> str:
    """One workflow command (`level` as SARIF says it: error, warning, note) for a file's line."""
    command = "notice" if level == "note" else level
    where = [f"file={_property(printable(path))}", *([f"line={line}"] if line is not None else [])]
    where.append(f"title={_property(title)}")
    return f"::{command} {','.join(where)}::{_data(printable(message))}"


def _see(p: Problem) -> str:
    """` (see line 7: the first create of this id)` for each related event."""
    return "".join(f" (see {x.where()}: {x.meaning})" for x in p.related)


_MARKDOWN = re.compile(r"[\\`*_{}\[\]<>&|~!]")


def _md(text: str) -> str:
    """Untrusted text as a Markdown table cell: one line, every character Markdown or HTML
    would read escaped."""
    flat = printable(text).replace("\n", " ")
    return _MARKDOWN.sub(lambda m: {"<": "&lt;", ">": "&gt;", "&": "&amp;", "|": "&#124;"}.get(m[0], "\\" + m[0]), flat)


def step_summary(reports: Sequence[SessionReport]) -> str:
    """The Markdown written to $GITHUB_STEP_SUMMARY: verdict counts, then each session not ok."""
    counts = {v: sum(1 for r in reports if r.verdict == v) for v in Verdict}
    out = ["### schedlog verify", "", "| verdict | sessions |", "|---|---:|"]
    out += [f"| {v.value} | {n} |" for v, n in counts.items() if n or v is Verdict.OK]
    bad = [r for r in reports if r.verdict is not Verdict.OK]
    if bad:
        out += ["", "| session log | verdict | rule | line | message |", "|---|---|---|---:|---|"]
        for r in bad:
            first = next(iter(p for p in problems([r]) if p.level == "error"), None)
            rule, line, message = ("", "", "") if first is None else (first.rule, first.line or "", first.message)
            out.append(f"| {_md(r.path)} | {r.verdict.value} | {_md(rule)} | {line} | {_md(message)} |")
    return "\n".join(out) + "\n\n"


# --- SARIF 2.1.0 ----------------------------------------------------------------------------------


def artifact_uri(path: str) -> str:
    """A path as a SARIF artifact URI: relative paths stay relative references, absolute ones
    become file: URIs; every character a URI cannot hold is percent-encoded."""
    encoded = quote(path.encode("utf-8", "surrogateescape"), safe="/")
    return f"file://{encoded}" if PurePosixPath(path).is_absolute() else encoded


def _rule_descriptor(rule: str, level: str) -> dict[str, object]:
    from replay.judge.rules import describe  # (its tables load only where a rule is described)

    text = describe(rule)
    return {
        "id": rule,
        "shortDescription": {"text": text.replace("`", "")},
        "fullDescription": {"text": text.replace("`", ""), "markdown": text},
        "defaultConfiguration": {"level": level},
    }


def _result(p: Problem, rule_index: int) -> dict[str, object]:
    region = {} if p.line is None else {"region": {"startLine": p.line}}
    location: dict[str, object] = {
        "physicalLocation": {"artifactLocation": {"uri": artifact_uri(p.report.path)}, **region}
    }
    if p.pointer:
        where = "" if p.index is None else f"event {p.index}"  # else the file's own value (a store)
        location["logicalLocations"] = [{"fullyQualifiedName": f"{where}{p.pointer}", "kind": "member"}]
    properties = {"session": p.report.session, "verdict": p.report.verdict.value, "index": p.index, "seq": p.seq}
    related = [
        {
            "id": n,
            "physicalLocation": {
                "artifactLocation": {"uri": artifact_uri(p.report.path)},
                **({} if x.line is None else {"region": {"startLine": x.line}}),
            },
            "message": {"text": x.meaning},
            "properties": {"role": x.role, **({} if x.index is None else {"index": x.index, "seq": x.seq})},
        }
        for n, x in enumerate(p.related)
    ]
    return {
        "ruleId": p.rule,
        "ruleIndex": rule_index,
        "level": p.level,
        "message": {"text": p.message},
        "locations": [location],
        **({"relatedLocations": related} if related else {}),
        "partialFingerprints": {FINGERPRINT: p.fingerprint()},
        "properties": {k: v for k, v in properties.items() if v is not None},
    }


def sarif_log(reports: Sequence[SessionReport], version: str) -> dict[str, object]:
    """The reports as one SARIF 2.1.0 log: one run, a rule descriptor per rule met."""
    found = list(problems(reports))
    rules: dict[str, int] = {}
    levels: dict[str, str] = {}
    for p in found:
        if p.rule not in rules:
            rules[p.rule], levels[p.rule] = len(rules), p.level
    driver = {
        "name": "schedlog",
        "version": version,
        "rules": [_rule_descriptor(rule, levels[rule]) for rule in rules],
    }
    run = {
        "tool": {"driver": driver},
        "columnKind": "utf16CodeUnits",
        "results": [_result(p, rules[p.rule]) for p in found],
        "properties": {"sessions": len(reports), "corrupt": sum(1 for r in reports if r.verdict is Verdict.CORRUPT)},
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def sarif(reports: Sequence[SessionReport], version: str) -> str:
    return json_document(sarif_log(reports, version))
