"""What the judge reads of a session, wherever its records come from (issue 64): a
`RecordSource`. A JSONL log's bytes (a file, a stream, an object) are one, read by
`SessionLog` (logfile.py); a SQLite store's rows will be another. The judge (replay.judge.verify,
`judge_log`) sees only this: it never asks where the records came from."""

from __future__ import annotations

from collections.abc import Generator
from typing import Protocol

from invariant.findings import Finding
from invariant.readers import TypesSeen
from replay.logs.header import Header
from replay.logs.records import Entry, OtherRecords, Selector
from replay.reading import Reading


class StateKeeper(Protocol):
    """Whoever judges the records a reading yields, its state saved and restored with the
    reading's (`RecordSource.keeper`)."""

    def save(self) -> bytes | None:
        """The state now, as bytes (the records yielded so far judged); None where it cannot
        be saved (then neither is the reading)."""
        ...

    def restore(self, state: bytes) -> None:
        """Go on from a state `save` gave, taken at the line the reading resumes after."""
        ...


class RecordSource(Protocol):
    """A session's committed records, in order, and what its reading found of it."""

    path: str
    """The name it is reported under."""
    reading: Reading
    keeper: StateKeeper | None
    """Set by the judge before `entries`: its state is saved and restored with the reading's."""

    def entries(
        self, schedule_only: bool = False, others: OtherRecords | None = None, select: Selector | None = None
    ) -> Generator[Entry, None, None]:
        """The committed records (with `schedule_only`: the schedule changes, the cutting
        markers and what `select` wants; `others` hears the rest); findings are final once it
        is exhausted. A BeyondBound thrown in ends the reading there, said as a finding."""
        ...

    def charge_deep(self, length: int) -> None:
        """Charge a deep value the judge parses against the session's budget (jsonline.Deep)."""
        ...

    @property
    def head(self) -> Header:
        """What the session's header says (its version, the fork cut's kind, its id)."""
        ...

    @property
    def event_count(self) -> int: ...

    @property
    def findings(self) -> list[Finding]: ...

    @property
    def rejected(self) -> bool:
        """The reference's reader refuses the session (a finding says why)."""
        ...

    @property
    def unreadable(self) -> bool: ...

    @property
    def types_seen(self) -> TypesSeen:
        """The first committed event of a type the 611615650f reader's guard refuses, and the
        first marked ignorable (invariant.readers)."""
        ...

    @property
    def unframed(self) -> bool:
        """A Zstandard file not framed as the harness frames a log (its content judged as plain)."""
        ...
