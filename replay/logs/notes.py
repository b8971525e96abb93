"""The findings of one log's reading, as they are found (the reader's every stage adds to them).

Past _PER_CODE findings of one code, the rest are counted and told once the log is read
(`findings.more_findings`): a log of a million bad lines is told in a few lines, not a million.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from invariant.findings import Finding, Severity, more_findings

_PER_CODE = 20


@dataclass(frozen=True)
class NotesState:
    """The findings of a reading saved at a committed line (readstate.py)."""

    findings: tuple[Finding, ...]
    counts: tuple[tuple[str, int], ...]
    rejected: bool
    unreadable: bool


@dataclass
class Notes:
    """The findings of one log so far, and what they make of it."""

    strict: bool
    """The persistence reader's rules (strict mode), else the fixture reader's."""
    findings: list[Finding] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    rejected: bool = False
    """The reference's reader (in this mode) would refuse to load this log."""
    unreadable: bool = False
    """Nothing could be read as a session log (I/O error, empty file, not JSONL)."""

    def find(
        self,
        code: str,
        severity: Severity,
        message: str,
        line: int | None = None,
        pointer: str | None = None,
        index: int | None = None,
    ) -> None:
        """Note a finding (past _PER_CODE of its code, only counted); an error refuses the log."""
        n = self.counts.get(code, 0) + 1
        self.counts[code] = n
        if n <= _PER_CODE:
            self.findings.append(Finding(code, severity, message, line, pointer, index))
        if severity is Severity.ERROR:
            self.rejected = True

    def strict_problem(
        self, code: str, message: str, line: int, pointer: str | None = None, index: int | None = None
    ) -> None:
        """A rule the strict reader refuses a log for and the lenient one tolerates."""
        self.find(code, Severity.ERROR if self.strict else Severity.WARNING, message, line, pointer, index)

    def cannot_read(self, message: str, line: int | None = None) -> None:
        """The file holds no session log to read (an I/O error, an empty file, not JSONL)."""
        self.unreadable = True
        self.find("format.unreadable", Severity.ERROR, message, line)

    def torn(self, line_no: int, size: int) -> None:
        """A last line with no LF: the crash tail a reader drops."""
        message = f"line {line_no} has no terminating LF; its {size} bytes are dropped"
        self.find("format.torn-tail", Severity.WARNING, message, line_no)

    def close(self) -> None:
        """Tell how many findings of each code were only counted (once the log is read)."""
        for code, n in self.counts.items():
            if n > _PER_CODE:
                severity = next(f.severity for f in self.findings if f.code == code)
                self.findings.append(more_findings(code, severity, n - _PER_CODE))

    def saved(self) -> NotesState:
        return NotesState(tuple(self.findings), tuple(self.counts.items()), self.rejected, self.unreadable)

    def resume(self, state: NotesState) -> None:
        self.findings, self.counts = list(state.findings), dict(state.counts)
        self.rejected, self.unreadable = state.rejected, state.unreadable
