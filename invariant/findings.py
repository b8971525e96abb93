"""One finding type for every result: the reader's (the file, its envelopes, its load checks),
the Host store's, the transcript's, the deliveries' and the protocol's (the violation that makes
a session corrupt is a Finding too), each with its place (line, event index, JSON pointer) and
its related locations where it has them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"
    """The reference's reader (in the chosen mode) would refuse the log."""
    WARNING = "warning"
    """The reference tolerates it (a dropped crash tail, a placeholder cwd, ...)."""
    INFO = "info"
    """Worth knowing, no defect (other generations beside the file, reminders the Host delivered)."""


@dataclass(frozen=True)
class RelatedLocation:
    """An earlier event a violation's rule compared against, located in the file."""

    role: str
    """`first-create`, `create`, `ended`, `target`, `previous-batch`, `last-event`, `header`."""
    index: int | None
    seq: int | None
    line: int | None
    pointer: str

    def to_json(self) -> dict[str, object]:
        return {"role": self.role, "index": self.index, "seq": self.seq, "line": self.line, "pointer": self.pointer}

    @property
    def meaning(self) -> str:
        """The role in words."""
        return ROLES.get(self.role, self.role)

    def where(self) -> str:
        """`line 7 (event 9, /data/schedule/id)`, as much of it as is known."""
        inner = ", ".join(x for x in (None if self.index is None else f"event {self.index}", self.pointer) if x)
        if self.line is None:
            return inner or "the log"
        return f"line {self.line}" + (f" ({inner})" if inner else "")


ROLES = {
    "first-create": "the first create of this id",
    "create": "the create of this id",
    "ended": "the event that ended it",
    "target": "the event that set the record's current target",
    "previous-batch": "the previous recurring batch",
    "last-event": "the log's last event",
    "header": "the header's seedLength",
}
"""What each related event is to the violation."""


@dataclass(frozen=True)
class Finding:
    """A finding: a rule (`code`) broken, or a fact worth knowing, and where.

    `severity` is `error` when the reference (its reader in the chosen mode, or the Host opening
    its store) would refuse the input, `warning` when it tolerates it (a dropped crash tail, a
    tool breaking its contract, an undelivered reminder, ...), `info` for what is no defect.
    """

    code: str
    severity: Severity
    message: str
    line: int | None = None
    pointer: str | None = None
    """Where in the located thing (the event at `index`, else the file's JSON value: a Host
    store, a header) the finding is, as a JSON pointer (RFC 6901); None when it has no place."""
    index: int | None = None
    """The event the finding is about (= its seq), when it is about one."""
    related: tuple[RelatedLocation, ...] = ()
    """The earlier events its rule compared against (a protocol violation's)."""

    def at_line(self, line: int | None) -> Finding:
        """This finding located at `line` of its file (a copy; made directly for a plain Finding,
        as `dataclasses.replace` costs ten times as much, and a log may hold thousands)."""
        if type(self) is Finding:
            return Finding(self.code, self.severity, self.message, line, self.pointer, self.index, self.related)
        return replace(self, line=line)

    def to_json(self) -> dict[str, object]:
        found: dict[str, object] = {
            "code": self.code,
            "severity": self.severity,
            "line": self.line,
            "index": self.index,
            "pointer": self.pointer,
            "message": self.message,
        }
        if self.related:
            found["related"] = [r.to_json() for r in self.related]
        return found


@dataclass(frozen=True, kw_only=True)
class Violation(Finding):
    """The finding that makes a session corrupt: its first schedule-protocol violation (or the
    first rule a Host store breaks), located in the file, with the earlier events its rule
    compared against. `code` is the reference's error code (`corrupt_schedule_log`), `rule` the
    rule broken; always an error."""

    severity: Severity = Severity.ERROR
    rule: str = ""
    seq: int | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "rule": self.rule,
            "index": self.index,
            "seq": self.seq,
            "line": self.line,
            "pointer": self.pointer,
            "message": self.message,
            "related": [r.to_json() for r in self.related],
        }


MORE = " more findings of this code"


def more_findings(code: str, severity: Severity, more: int) -> Finding:
    """What stands for the findings of one code past a cap: they are counted, never dropped unsaid."""
    return Finding(code, severity, f"{more}{MORE}")
