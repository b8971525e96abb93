"""One finding type for every result that is not the log's one protocol violation: the reader's
(the file, its envelopes, its load checks), the Host store's, the transcript's and the
deliveries', each with its place (line, event index, JSON pointer) where it has one."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Severity(StrEnum):
    ERROR = "error"
    """The reference's reader (in the chosen mode) would refuse the log."""
    WARNING = "warning"
    """The reference tolerates it (a dropped crash tail, a placeholder cwd, ...)."""
    INFO = "info"
    """Worth knowing, no defect (other generations beside the file, reminders the Host delivered)."""


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

    def to_json(self) -> dict[str, object]:
        return {
            "code": self.code,
            "severity": self.severity,
            "line": self.line,
            "index": self.index,
            "pointer": self.pointer,
            "message": self.message,
        }


def more_findings(code: str, severity: Severity, more: int) -> Finding:
    """What stands for the findings of one code past a cap: they are counted, never dropped unsaid."""
    return Finding(code, severity, f"{more} more findings of this code")
