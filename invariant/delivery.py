"""The due decision (owner.md §5.4; protocol.md §5.3): what a correct live owner does at `now`.

Pure: a fold and one clock sample in, one decision out. Due one-shots win, one per decision,
earliest target first (ties by create order). Otherwise every due recurring record forms one
batch when the shared 300 s gate is open, each resolved at `now`. Otherwise wait for the earliest
future target, or for the gate while a recurring record is overdue behind it.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from .changes import ONE_SHOT_KINDS, CreateChange, CronRecord, DispatchChange, EveryRecord, Record
from .errors import ScheduleLogError
from .folding import Folded, Step
from .framing import render_batch_framing, render_framing
from .instant import MAX_MS, MIN_MS, format_instant, gate_instant, parse_instant
from .live import resolve_cron, resolve_every
from .profiles import Profile

CronResolver = Callable[[CronRecord, int], tuple[str, str | None]]
"""(record, acceptedAt ms) -> (occurrenceAt, nextScheduledAt or None); may raise."""


class DecisionError(Exception):
    """The decision cannot be made now (calendar resolution failed, clock out of range)."""


@dataclass(frozen=True)
class OneShotDue:
    record: Record

    def changes(self) -> tuple[DispatchChange, ...]:
        return (DispatchChange(self.record.id),)

    def framing(self, profile: str | Profile = "calendar") -> str:
        return render_framing(self.record, profile)


class BatchMember(NamedTuple):
    """A due recurring record and its decision (a named tuple: one is made per batch member)."""

    record: Record
    occurrence_at: str
    next_target: str | None


@dataclass(frozen=True)
class BatchDue:
    accepted_at: str
    members: tuple[BatchMember, ...]

    def changes(self) -> tuple[DispatchChange, ...]:
        out = []
        for m in self.members:
            if isinstance(m.record, EveryRecord):
                out.append(DispatchChange(m.record.id, accepted_at=self.accepted_at))
            else:
                out.append(
                    DispatchChange(m.record.id, m.occurrence_at, self.accepted_at, next_scheduled_at=m.next_target)
                )
        return tuple(out)

    def framing(self, profile: str | Profile = "calendar") -> str:
        return render_batch_framing([(m.record, m.occurrence_at) for m in self.members], profile)


@dataclass(frozen=True)
class Wait:
    target: int | None
    """Epoch ms to wake at, or None when nothing is scheduled."""


Decision = OneShotDue | BatchDue | Wait


def target_of(record: Record) -> int:
    """A record's `scheduledAt` in epoch ms (a decoded record's is always canonical)."""
    ms = parse_instant(record.scheduled_at)
    assert ms is not None
    return ms


def _batch(records: Sequence[Record], now: int, cron_resolver: CronResolver) -> BatchDue:
    """Every due recurring record, in batch order, resolved at `now` (acceptedAt)."""
    if not MIN_MS <= now <= MAX_MS:
        raise DecisionError(f"the clock {now} is outside years 0001-9999")
    members = []
    for record in records:
        try:
            if isinstance(record, EveryRecord):
                occurrence, following = resolve_every(record, now)
            else:
                assert isinstance(record, CronRecord)
                occurrence, following = cron_resolver(record, now)
        except (ScheduleLogError, ValueError) as err:
            raise DecisionError(f"cannot resolve {record.id!r} at {now}: {err}") from None
        members.append(BatchMember(record, occurrence, following))
    return BatchDue(format_instant(now), tuple(members))


def decide(folded: Folded, now: int, cron_resolver: CronResolver = resolve_cron) -> Decision:
    """The decision at `now` (epoch ms); raise DecisionError when a resolution fails."""
    ordered = list(enumerate(folded.active))
    one_shots = [(r, target_of(r), n) for n, r in ordered if r.kind in ONE_SHOT_KINDS]
    recurring = [(r, target_of(r), n) for n, r in ordered if r.kind not in ONE_SHOT_KINDS]
    due = sorted((t, n, r) for r, t, n in one_shots if t <= now)
    if due:
        return OneShotDue(due[0][2])
    batch = sorted((t, n, r) for r, t, n in recurring if t <= now)
    gate = gate_instant(folded.last_recurring_accepted_at)
    if batch and (gate is None or now >= gate):
        return _batch([record for _, _, record in batch], now, cron_resolver)
    candidates = [t for _, t, _ in one_shots if t > now]
    if batch:
        assert gate is not None
        candidates.append(gate)
    else:
        candidates += [t for _, t, _ in recurring if t > now]
    return Wait(min(candidates) if candidates else None)


class Agenda:
    """Active records indexed by (target, create order), kept up to date from fold steps.

    For an owner that decides often over many records: `Agenda.decide` then costs O(k log n)
    for k due records instead of O(n). It returns exactly what the function `decide` returns.
    """

    def __init__(self) -> None:
        self._one_shots: list[tuple[int, int, str]] = []
        self._recurring: list[tuple[int, int, str]] = []
        self._current: dict[str, tuple[int, int, str]] = {}
        """Each active record's live heap entry; any other entry for its id is stale."""
        self._order = 0

    def apply(self, step: Step) -> None:
        """Follow one applied change (a create, delete or dispatch)."""
        change = step.change
        if isinstance(change, CreateChange):
            self._order += 1
            self._push(change.record, self._order)
        elif step.after is None:
            self._current.pop(change.id, None)
        else:
            self._push(step.after, self._current[change.id][1])

    def _push(self, record: Record, order: int) -> None:
        entry = (target_of(record), order, record.id)
        self._current[record.id] = entry
        heapq.heappush(self._one_shots if record.kind in ONE_SHOT_KINDS else self._recurring, entry)

    def _top(self, heap: list[tuple[int, int, str]]) -> tuple[int, int, str] | None:
        while heap and self._current.get(heap[0][2]) is not heap[0]:
            heapq.heappop(heap)  # stale: the record moved or ended
        return heap[0] if heap else None

    def _due(self, heap: list[tuple[int, int, str]], now: int) -> list[str]:
        """Ids of the live entries due at `now`, in (target, create order) order.

        Read without popping: the entries <= now of a heap form a subtree at its root, so a walk
        from the root that stops at later entries visits exactly them (and their stale peers).
        """
        current = self._current
        found = []
        size = len(heap)
        stack = [0] if size and heap[0][0] <= now else []
        while stack:
            i = stack.pop()
            entry = heap[i]
            if current.get(entry[2]) is entry:
                found.append(entry)
            for child in (2 * i + 1, 2 * i + 2):
                if child < size and heap[child][0] <= now:
                    stack.append(child)
        found.sort()
        return [entry[2] for entry in found]

    def decide(
        self,
        records: Mapping[str, Record],
        last_recurring_accepted_at: str | None,
        exhausted: bool,
        now: int,
        cron_resolver: CronResolver = resolve_cron,
    ) -> Decision:
        """`decide` over the indexed fold: `records` by id, the gate, and gate exhaustion."""
        one_shot = self._top(self._one_shots)
        if one_shot is not None and one_shot[0] <= now:
            return OneShotDue(records[one_shot[2]])
        due = [] if exhausted else [records[i] for i in self._due(self._recurring, now)]
        gate = gate_instant(last_recurring_accepted_at)
        if due and (gate is None or now >= gate):
            return _batch(due, now, cron_resolver)
        candidates = [] if one_shot is None else [one_shot[0]]
        if due:
            assert gate is not None
            candidates.append(gate)
        elif not exhausted and (top := self._top(self._recurring)) is not None:
            candidates.append(top[0])
        return Wait(min(candidates) if candidates else None)
