"""A session's report as a run holds it: what the text output, the summary and the exit status
need at hand, the report itself made on demand.

A verdict cache hit holds its report pickled: unpickling it (the findings, the fold) and loading
the modules of its values cost more than all the rest of a hit, and the text output, the summary
and the exit status need none of it. So an entry keeps the report's text beside it
(replay.judge.textline), and a run makes the report only for an output that reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from replay.judge.verdicts import Verdict

if TYPE_CHECKING:
    from replay.judge.report import SessionReport


@dataclass(frozen=True)
class Held:
    path: str
    verdict: Verdict
    read: str = ""
    """How the report was had where a verdict cache was asked (`cached.Use`), else ""."""
    read_why: str = ""
    """Why the cache's entry for the log was not trusted ("": it was, or there was none)."""
    store: bool = False
    told: str | None = None
    """The report's text (`textline.text_line`), where known."""
    made: SessionReport | None = None
    pickled: bytes = b""
    """The report, pickled (a cache hit's), where it is not `made`."""

    @classmethod
    def of(cls, report: SessionReport) -> Held:
        """`report`, held whole (its text made when asked)."""
        return cls(report.path, report.verdict, report.read, report.read_why, report.store, None, report)

    def report(self) -> SessionReport:
        """The report (this call's own copy where it was pickled), told how it was had."""
        if self.made is not None:
            return self.made
        import pickle

        made: SessionReport = pickle.loads(self.pickled)
        return replace(made, path=self.path, read=self.read, read_why=self.read_why)

    def text(self, every: bool = False) -> str:
        """The report's text (`textline.text_line`; `every`: with all its findings, not the
        first of each code, the text kept)."""
        if self.told is not None and not every:
            return self.told
        from replay.judge.textline import text_line

        return text_line(self.report(), None) if every else text_line(self.report())
