"""The management view of a record (protocol.md §5.2): list items and create results."""

from __future__ import annotations

from dataclasses import dataclass

from .changes import RECURRING_KINDS, Record
from .instant import MAX_MS, format_instant, gate_instant, parse_instant
from .profiles import Profile, get_profile

DELIVERY_MODE = "session-local"


@dataclass(frozen=True)
class ScheduleView:
    """A record plus `state`, `deliveryMode` and, when the gate holds it back, `deliveryNotBefore`."""

    record: Record
    state: str
    delivery_not_before: str | None = None
    delivery_mode: str = DELIVERY_MODE

    def to_json(self) -> dict[str, object]:
        out = self.record.to_json()
        out["state"] = self.state
        out["deliveryMode"] = self.delivery_mode
        if self.delivery_not_before is not None:
            out["deliveryNotBefore"] = self.delivery_not_before
        return out


def schedule_view(
    record: Record, now: int, last_recurring_accepted_at: str | None = None, profile: str | Profile = "calendar"
) -> ScheduleView:
    """View of `record` at `now` (epoch ms).

    `overdue` once now >= target. Under a profile with the recurring gate, an overdue
    every/cron record reports `deliveryNotBefore` = last batch + 300 s while that gate instant
    is still ahead and representable (the fixed-rate revision has no gate, so never).
    """
    target = parse_instant(record.scheduled_at)
    assert target is not None
    overdue = now >= target
    not_before = None
    gated = get_profile(profile).recurring_gate
    if gated and overdue and record.kind in RECURRING_KINDS and last_recurring_accepted_at is not None:
        gate = gate_instant(last_recurring_accepted_at)
        assert gate is not None
        if now < gate <= MAX_MS:
            not_before = format_instant(gate)
    return ScheduleView(record, "overdue" if overdue else "scheduled", not_before)
