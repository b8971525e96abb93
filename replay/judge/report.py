"""A session's report: its verdict and what it rests on (`verify.py` makes them).

Kept apart from the judge so that whoever only holds reports (the verdict cache's hits, the
output layer) imports the values, not the reader and the judge that made them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from invariant.findings import Finding, Violation
from invariant.folding import Folded
from invariant.jsvalue import echoed, safe_integer
from replay.judge.verdicts import Verdict
from replay.lines import deepjson

if TYPE_CHECKING:
    from invariant.detect import Detection
    from invariant.profiles import Profile


FINDING_LISTS = (
    ("logFindings", ("format.", "sqlite.")),
    ("transcriptFindings", ("tool.",)),
    ("deliveryFindings", ("delivery.",)),
    ("hostFindings", ("host.",)),
    ("scheduleFindings", ("",)),
)
"""The JSON report's finding lists, each named by what its findings are about, and the code
prefixes each takes (the first that matches): the log as stored (its framing, header,
envelopes and a store's rows), the transcript's schedule tool calls and results, the
reminders' delivery, the Host's task store and receipts, and the schedule's own events (what
their records, fold and live resolution show short of a violation). `formatFindings`, which held
them all, is kept beside them for one release (docs/verify.md)."""


def finding_lists(findings: tuple[Finding, ...]) -> dict[str, list[dict[str, object]]]:
    """Each finding, as JSON, in the list FINDING_LISTS names for its code, in report order."""
    lists: dict[str, list[dict[str, object]]] = {name: [] for name, _ in FINDING_LISTS}
    for finding in findings:
        name = next(name for name, prefixes in FINDING_LISTS if finding.code.startswith(prefixes))
        lists[name].append(finding.to_json())
    return lists


@dataclass(frozen=True)
class ProfileChoice:
    """Which profile judged a session, and why."""

    name: str
    source: str
    """`option` (the reading named it), `evidence` (the log's evidence left only it), or
    `undecided` (the evidence left several, or contradicts itself: the strictest was used)."""
    evidence: tuple[str, ...] = ()
    """The clues that point to it."""
    candidates: tuple[str, ...] = ()
    """The profiles the evidence left possible (undecided only)."""
    disagreement: tuple[tuple[str, Verdict], ...] = ()
    """Each other possible profile whose verdict on the schedule stream differs, with that verdict."""

    @classmethod
    def of(cls, profile: Profile, detection: Detection | None, others: Mapping[str, Verdict]) -> ProfileChoice:
        if detection is None:
            return cls(profile.name, "option")
        source = "evidence" if detection.decided else "undecided"
        candidates = () if detection.decided else detection.candidates
        return cls(profile.name, source, detection.evidence, candidates, tuple(others.items()))

    def to_json(self) -> dict[str, object]:
        return {
            "profile": self.name,
            "profileSource": self.source,
            "profileEvidence": list(self.evidence),
            "profileCandidates": list(self.candidates),
            "profileDisagreement": {name: verdict for name, verdict in self.disagreement},
        }


@dataclass(frozen=True)
class SessionReport:
    path: str
    session: str | None
    seed_length: object
    """The seedLength the session was judged with, as written (a header may hold any JSON value)."""
    events: int
    schedule_events: int
    verdict: Verdict
    violation: Violation | None
    findings: tuple[Finding, ...]
    folded: Folded | None
    format_version: int | None = None
    """The header's format version (None: headerless, or no readable version)."""
    profile: ProfileChoice | None = None
    generation: int | None = None
    """The version the file's canonical name identifies (`session.v4.jsonl.zstd`: 4), None for
    any other name."""
    store: bool = False
    """A Host task store (`schedule.json`), not a session log: `events` counts its tasks."""
    host_messages: tuple[str, ...] = ()
    """The ids of the reminder messages the Host delivered to this session (receipts name them)."""
    host_message_texts: tuple[str, ...] = ()
    """Those messages' texts, in the same order (they name the tasks delivered)."""
    read: str = field(default="", compare=False, repr=False)
    """How the report was had when a verdict cache was asked (replay.cache.cached.Use), and
    `read_why` why an entry of the cache was not trusted: neither is part of the report."""
    read_why: str = field(default="", compare=False, repr=False)
    store_tasks: Mapping[str, object] = field(default_factory=dict, compare=False, repr=False)
    """A store's tasks by row key, as read for its report (the cross-check with the session
    logs and the Host tables read them here: a store is read once per run)."""

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "session": self.session,
            "seedLength": echoed(self.seed_length),
            "events": self.events,
            "scheduleEvents": self.schedule_events,
            "verdict": self.verdict,
            "violation": None if self.violation is None else self.violation.to_json(),
            "formatFindings": [f.to_json() for f in self.findings],  # (every list below: kept for one release)
            **finding_lists(self.findings),
            "active": [] if self.folded is None else [r.to_json() for r in self.folded.active],
            "lastRecurringAcceptedAt": None if self.folded is None else self.folded.last_recurring_accepted_at,
            "formatVersion": self.format_version,
            "generation": self.generation,
            **(self.profile.to_json() if self.profile is not None else {}),
            **({"kind": "host-task-store"} if self.store else {}),
            **({"hostMessages": list(self.host_messages)} if self.host_messages else {}),
        }

    def row(self) -> dict[str, object]:
        """The report as one flat record, its columns named as the replay database's `sessions`
        (VERDICT_COLUMNS): what a fleet's verdict table holds."""
        v, p = self.violation, self.profile
        return {
            "path": self.path,
            "session_id": self.session,
            "verdict": self.verdict.value,
            "event_count": self.events,
            "schedule_event_count": self.schedule_events,
            "seed_length": safe_integer(self.seed_length),
            "violation_rule": None if v is None else v.rule,
            "violation_index": None if v is None else v.index,
            "violation_seq": None if v is None else v.seq,
            "violation_line": None if v is None else v.line,
            "violation_pointer": None if v is None else v.pointer,
            "violation_message": None if v is None else v.message,
            "format_findings": [f.to_json() for f in self.findings],
            "active_count": 0 if self.folded is None else len(self.folded.active),
            "format_version": self.format_version,
            "generation": self.generation,
            "profile": None if p is None else p.name,
            "profile_source": None if p is None else p.source,
            "profile_evidence": [] if p is None else list(p.evidence),
        }

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled (for a worker's result) with a written seedLength that is an object or array
        as its JSON text: pickle recurses into nested values, and a header's value may nest
        10,000 levels deep."""
        values = [getattr(self, name) for name in _REPORT_FIELDS]
        if isinstance(self.seed_length, dict | list):
            return _with_seed_text, (*values[:2], deepjson.dumps(self.seed_length, exact=True), *values[3:])
        return SessionReport, tuple(values)


_REPORT_FIELDS = tuple(f.name for f in fields(SessionReport))
"""The report's fields in order (what `__reduce__` pickles: `fields()` is made anew at each call)."""


def _with_seed_text(path: str, session: str | None, seed_text: str, *rest: Any) -> SessionReport:
    """A SessionReport pickled by `__reduce__` with its seedLength as JSON text."""
    return SessionReport(path, session, deepjson.parse(seed_text), *rest)
