"""A deployment's delivery-history bounds (host.md §5), apart from the store rules that judge
them: the command line and the reading options name them without loading those rules."""

from __future__ import annotations

from dataclasses import dataclass

from invariant.names import DAYS_MAX, RECORDS_MAX

__all__ = ["DAYS_MAX", "NO_RETENTION", "RECORDS_MAX", "Retention"]


@dataclass(frozen=True)
class Retention:
    """The deployment's delivery-history bounds, when the auditor knows them (host.md §5):
    `deliveryHistoryDays` (1..3650) and `deliveryHistoryRecords` (1..10000)."""

    days: int | None = None
    records: int | None = None

    def __post_init__(self) -> None:
        for name, value, top in (("days", self.days, DAYS_MAX), ("records", self.records, RECORDS_MAX)):
            if value is not None and (type(value) is not int or not 1 <= value <= top):
                raise ValueError(f"retention {name} must be None or a whole number 1..{top}, not {value!r}")


NO_RETENTION = Retention()
"""No bounds known: retention is not judged."""
