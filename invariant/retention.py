"""A deployment's delivery-history bounds (host.md §5), apart from the store rules that judge
them: the command line and the reading options name them without loading those rules."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Retention:
    """The deployment's delivery-history bounds, when the auditor knows them (host.md §5):
    `deliveryHistoryDays` (1..3650) and `deliveryHistoryRecords` (1..10000)."""

    days: int | None = None
    records: int | None = None


NO_RETENTION = Retention()
"""No bounds known: retention is not judged."""
