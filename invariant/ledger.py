"""The ledger of a session's schedule changes: one frozen row per change, made once from the
fold, that every read model reads (the replay database, `explain`, the session view and report,
`verify_bytes_with_changes`) instead of deriving the same facts again.

A row holds where the change is (index, line), whether the session owns it (at or after the
fork cut), its status, the recurring batch it belongs to, and the fold step it made. A batch is
a run of consecutive recurring (`every`/`cron`) dispatches sharing one `acceptedAt`, as the
fold's gate reads them (owner.md §5.8: the members of one batch share `acceptedAt`); a one-shot
dispatch between them belongs to no batch and splits none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from .changes import ONE_SHOT_KINDS, DispatchChange
from .folding import Step
from .jsvalue import safe_integer


class Status(StrEnum):
    INHERITED = "inherited"
    """Before the fork cut: the parent's, skipped by the fold."""
    APPLIED = "applied"
    VIOLATION = "violation"
    """The change the fold stopped at."""
    UNCHECKED = "unchecked"
    """After the violation: the fold never read it."""


@dataclass(frozen=True, slots=True)
class LedgerRow:
    index: int
    """The change's event index (= seq)."""
    line: int | None
    owned: bool | None
    """At or after the fork cut; None when the cut is no valid seedLength."""
    status: Status
    batch: int | None
    """The recurring batch (1, 2, ...) of an applied recurring dispatch, else None."""
    step: Step | None
    """What the fold made of it (None unless applied)."""


def owned_from(seed: object) -> int | None:
    """The index owned events start at: a valid seedLength as the fold reads it (a JavaScript
    number: 13.0 is 13), else None (unknown)."""
    index = safe_integer(seed)
    return index if index is not None and index >= 0 else None


def ledger(
    changes: Iterable[tuple[int, int | None, Step | None]], owned_from: int | None, violation: int | None
) -> tuple[LedgerRow, ...]:
    """The rows of the changes (index, line, fold step), in log order, of a log whose owned
    events start at `owned_from` (None: an invalid seedLength) and whose fold stopped at event
    `violation` (None: it did not)."""
    rows = []
    batch, last = 0, None
    for index, line, step in changes:
        owned = None if owned_from is None else index >= owned_from
        if not owned:
            status = Status.INHERITED
        elif violation is None or index < violation:
            status = Status.APPLIED
        else:
            status = Status.VIOLATION if index == violation else Status.UNCHECKED
        member = None
        if status is Status.APPLIED and step is not None and (accepted := recurring_acceptance(step)) is not None:
            if accepted != last:
                batch, last = batch + 1, accepted
            member = batch
        rows.append(LedgerRow(index, line, owned, status, member, step if status is Status.APPLIED else None))
    return tuple(rows)


def recurring_acceptance(step: Step) -> str | None:
    """The `acceptedAt` of a recurring record's dispatch, else None."""
    change = step.change
    if isinstance(change, DispatchChange) and step.before is not None and step.before.kind not in ONE_SHOT_KINDS:
        return change.accepted_at
    return None


def batches(rows: Iterable[LedgerRow]) -> list[tuple[int, str, list[LedgerRow]]]:
    """The recurring batches of a ledger: number, shared `acceptedAt`, members in log order."""
    found: dict[int, tuple[int, str, list[LedgerRow]]] = {}
    for row in rows:
        if row.batch is not None and row.step is not None:
            accepted = recurring_acceptance(row.step)
            assert accepted is not None
            found.setdefault(row.batch, (row.batch, accepted, []))[2].append(row)
    return list(found.values())
