"""The fold: replay of a session's owned `schedule/change` events (protocol.md §3).

`fold(events, seed_length)` is pure and returns a frozen `Folded`. It is built on `Folder`,
an explicit step machine that the streaming log reader feeds one event at a time, so a log
larger than memory folds with the very same rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from .changes import (
    ONE_SHOT_KINDS,
    Change,
    CreateChange,
    CronRecord,
    DeleteChange,
    DispatchChange,
    EveryRecord,
    Record,
    decode_change,
    with_target,
)
from .errors import Related, ScheduleLogError
from .instant import GATE_MS, MAX_MS, format_instant, is_whole_minute, parse_instant
from .jsvalue import safe_integer, shown
from .profiles import Profile, get_profile

SCHEDULE_CHANGE = "schedule/change"

#: Which dispatch shapes each record kind accepts (protocol.md §3.2).
SHAPES_FOR_KIND = {
    "after": ("one-shot",),
    "at": ("one-shot",),
    "every": ("every",),
    "cron": ("cron", "cron-final"),
}


@dataclass(frozen=True)
class Folded:
    """Result of a fold: active records in create order, every id ever created, the gate."""

    active: tuple[Record, ...]
    seen_ids: tuple[str, ...]
    last_recurring_accepted_at: str | None = None

    def find(self, schedule_id: str) -> Record | None:
        for record in self.active:
            if record.id == schedule_id:
                return record
        return None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "active": [r.to_json() for r in self.active],
            "seenIds": list(self.seen_ids),
        }
        if self.last_recurring_accepted_at is not None:
            out["lastRecurringAcceptedAt"] = self.last_recurring_accepted_at
        return out


class Step(NamedTuple):
    """What one applied change did: the record before and after, and a dispatch's occurrence.

    Immutable like the changes; a named tuple because a fold makes one per schedule event (and
    the simulator one per dispatch it appends), and it is built three times faster than a
    frozen dataclass.
    """

    index: int  # type: ignore[assignment]  # the event's index; it hides tuple.index, unused here
    change: Change
    before: Record | None
    after: Record | None
    occurrence_at: str | None = None


def check_seed_length(seed_length: object) -> int:
    """seedLength must be a non-negative safe integer (the upper bound needs the log)."""
    n = safe_integer(seed_length)
    if n is None or n < 0:
        raise ScheduleLogError(
            "fold.seed.bounds",
            f"seedLength {shown(seed_length)} is not a non-negative safe integer",
            pointer="/seedLength",
        )
    return n


def check_seed_bound(seed_length: int, event_count: int) -> None:
    if seed_length > event_count:
        raise ScheduleLogError(
            "fold.seed.bounds",
            f"seedLength {seed_length} exceeds the log's {event_count} events",
            pointer="/seedLength",
        )


def event_type(event: object) -> object:
    if type(event) is dict:  # a decoded event: no abstract-class check
        return event.get("type")
    return event.get("type") if isinstance(event, Mapping) else None


class Folder:
    """The fold as a step machine. Feed every event of the log in order, then `finish()`.

    Events before `seed_length` are skipped undecoded (inherited prefix); owned
    `schedule/change` events are decoded and applied; the first violation raises
    ScheduleLogError anchored at the event's index.
    """

    def __init__(
        self,
        seed_length: object = 0,
        profile: str | Profile = "calendar",
        decode: Callable[[object, Profile], Change] = decode_change,
    ) -> None:
        """`decode` reads an owned change's payload: `decode_change`, or a faster reader that
        gives what it gives (replay's msgspec structs, `replay.judge.fastchanges`)."""
        self.seed_length = check_seed_length(seed_length)
        self.profile = get_profile(profile)
        self.decode = decode
        self.active: dict[str, Record] = {}
        self.seen: dict[str, int] = {}
        self.ended: dict[str, tuple[int, str]] = {}
        self.last: str | None = None
        self.last_ms = 0
        self.count = 0
        self.target_at: dict[str, tuple[int, str]] = {}
        """Where each active record's current target was set (event index, pointer): its create,
        or its last dispatch (an ended record's is dropped: only an active one is dispatched). A
        Related is made of it only for a violation (a log holds thousands of changes, and a rare
        violation)."""
        self.batch_at: int | None = None
        """The first dispatch of the last recurring batch."""

    def feed(self, event: object) -> Step | None:
        """Apply the next event of the log; return what it did (None when skipped)."""
        index = self.count
        self.count += 1
        if index < self.seed_length or event_type(event) != SCHEDULE_CHANGE:
            return None
        assert type(event) is dict or isinstance(event, Mapping)
        try:
            change = self.decode(event.get("data"), self.profile)
            return self._apply(index, change)
        except ScheduleLogError as err:
            raise err.at(index, "/data") from None

    def apply(self, change: Change) -> Step:
        """Apply the next, owned event of the log when its change is already decoded.

        Equivalent to `feed` of an event whose data is `change.to_json()` (a decoded value
        re-encodes to the same payload), without decoding it again.
        """
        index = self.count
        self.count += 1
        if index < self.seed_length:
            raise ValueError("apply() is for owned events")
        try:
            return self._apply(index, change)
        except ScheduleLogError as err:
            raise err.at(index, "/data") from None

    def skip(self, count: int) -> None:
        """Advance past `count` events known not to be `schedule/change` (packed chunk rows)."""
        self.count += count

    def feed_all(self, events: Iterable[object]) -> None:
        for event in events:
            self.feed(event)

    def _history(self, schedule_id: str) -> tuple[Related, ...]:
        """The create of an id that is no longer active, and the event that ended it."""
        if schedule_id not in self.ended:
            return ()
        created = Related("create", self.seen[schedule_id], "/data/schedule/id")
        return (created, Related("ended", self.ended[schedule_id][0], "/data/operation"))

    def _why_inactive(self, schedule_id: str) -> str:
        if schedule_id in self.ended:
            at, how = self.ended[schedule_id]
            return f"{how} at event {at}"
        return "never created in the owned log"

    def _apply(self, index: int, change: Change) -> Step:
        if isinstance(change, CreateChange):
            record = change.record
            if record.id in self.seen:
                raise ScheduleLogError(
                    "fold.create.reuse",
                    f"id {record.id!r} was already created at event {self.seen[record.id]}",
                    pointer="/schedule/id",
                    related=(Related("first-create", self.seen[record.id], "/data/schedule/id"),),
                )
            self.seen[record.id] = index
            self.active[record.id] = record
            self.target_at[record.id] = (index, "/data/schedule/scheduledAt")
            return Step(index, change, None, record)
        current = self.active.get(change.id)
        if current is None:
            rule = "fold.delete.inactive" if isinstance(change, DeleteChange) else "fold.dispatch.inactive"
            raise ScheduleLogError(
                rule,
                f"{change.operation} of id {change.id!r}, which is not active ({self._why_inactive(change.id)})",
                pointer="/id",
                related=self._history(change.id),
            )
        if isinstance(change, DeleteChange):
            del self.active[change.id], self.target_at[change.id]
            self.ended[change.id] = (index, "deleted")
            return Step(index, change, current, None)
        return self._dispatch(index, change, current)

    def _dispatch(self, index: int, change: DispatchChange, record: Record) -> Step:
        if change.shape not in SHAPES_FOR_KIND[record.kind]:
            raise ScheduleLogError(
                "fold.dispatch.kind-shape",
                f"a {change.shape} dispatch cannot apply to {record.kind} record {record.id!r}",
                related=(Related("create", self.seen[record.id], "/data/schedule/kind"),),
            )
        if record.kind in ONE_SHOT_KINDS:
            del self.active[record.id], self.target_at[record.id]
            self.ended[record.id] = (index, "dispatched")
            return Step(index, change, record, None, record.scheduled_at)
        accepted = change.accepted_at
        assert accepted is not None
        accepted_ms = parse_instant(accepted)
        assert accepted_ms is not None
        try:
            if isinstance(record, EveryRecord):
                occurrence, next_ms = every_progression(record, accepted_ms)
            else:
                assert isinstance(record, CronRecord)
                occurrence, next_ms = cron_progression(record, change, accepted_ms)
        except ScheduleLogError as err:
            raise err.with_related(Related("target", *self.target_at[record.id])) from None
        if self.profile.recurring_gate:
            self._gate(index, accepted, accepted_ms)
        if next_ms is None:
            del self.active[record.id], self.target_at[record.id]
            self.ended[record.id] = (index, "finished (no next target)")
            return Step(index, change, record, None, occurrence)
        moved = with_target(record, format_instant(next_ms))
        self.active[record.id] = moved
        where = "/data/acceptedAt" if isinstance(record, EveryRecord) else "/data/nextScheduledAt"
        self.target_at[record.id] = (index, where)
        return Step(index, change, record, moved, occurrence)

    def _gate(self, index: int, accepted: str, accepted_ms: int) -> None:
        if self.last is not None and accepted != self.last and accepted_ms - self.last_ms < GATE_MS:
            gap = accepted_ms - self.last_ms
            assert self.batch_at is not None
            raise ScheduleLogError(
                "fold.gate",
                f"recurring batch accepted at {accepted} is {gap} ms after the batch at "
                f"{self.last}; distinct batches must be >= {GATE_MS} ms apart",
                pointer="/acceptedAt",
                related=(Related("previous-batch", self.batch_at, "/data/acceptedAt"),),
            )
        if accepted != self.last:
            self.batch_at = index
        self.last = accepted
        self.last_ms = accepted_ms

    @property
    def gate_exhausted(self) -> bool:
        """No further batch fits before year 10000 (protocol.md §3.8)."""
        return self.last is not None and self.last_ms + GATE_MS > MAX_MS

    def snapshot(self) -> Folded:
        """The fold result as of now (gate exhaustion applied, as at the end of a fold)."""
        records: Iterable[Record] = self.active.values()
        if self.gate_exhausted:
            records = [r for r in records if r.kind in ONE_SHOT_KINDS]
        return Folded(tuple(records), tuple(self.seen), self.last)

    def check_bound(self, count: int | None = None) -> None:
        """seedLength must not exceed the events fed so far, or `count` (the end-of-log check);
        the log's last event is related to the violation."""
        count = self.count if count is None else count
        try:
            check_seed_bound(self.seed_length, count)
        except ScheduleLogError as err:
            raise err.with_related(*([Related("last-event", count - 1)] if count else [])) from None

    def finish(self) -> Folded:
        """Close the fold: check seedLength against the event count and return the result."""
        self.check_bound()
        return self.snapshot()


def every_progression(record: EveryRecord, accepted_ms: int) -> tuple[str, int | None]:
    """(occurrence, next target ms or None) of an every dispatch accepted at `accepted_ms`."""
    target = parse_instant(record.scheduled_at)
    assert target is not None
    if accepted_ms < target:
        raise ScheduleLogError(
            "fold.every.arith",
            f"acceptedAt {format_instant(accepted_ms)} is before the record's target {record.scheduled_at}",
            pointer="/acceptedAt",
        )
    interval = record.every_seconds * 1000
    occurrence = target + (accepted_ms - target) // interval * interval
    following = occurrence + interval
    return format_instant(occurrence), (following if following <= MAX_MS else None)


def _bad_progression(message: str, pointer: str) -> ScheduleLogError:
    return ScheduleLogError("fold.cron.progression", message, pointer=pointer)


def cron_progression(record: CronRecord, change: DispatchChange, accepted_ms: int) -> tuple[str, int | None]:
    target = parse_instant(record.scheduled_at)
    assert change.occurrence_at is not None
    occurrence = parse_instant(change.occurrence_at)
    assert target is not None and occurrence is not None

    if not is_whole_minute(occurrence):
        raise _bad_progression(f"occurrenceAt {change.occurrence_at} is not a whole minute", "/occurrenceAt")
    if occurrence < target:
        raise _bad_progression(
            f"occurrenceAt {change.occurrence_at} is before the record's target {record.scheduled_at}", "/occurrenceAt"
        )
    if occurrence > accepted_ms:
        raise _bad_progression(
            f"occurrenceAt {change.occurrence_at} is after acceptedAt {change.accepted_at}", "/occurrenceAt"
        )
    if change.next_scheduled_at is None:
        return change.occurrence_at, None
    following = parse_instant(change.next_scheduled_at)
    assert following is not None
    if not is_whole_minute(following):
        raise _bad_progression(f"nextScheduledAt {change.next_scheduled_at} is not a whole minute", "/nextScheduledAt")
    if following <= accepted_ms:
        raise _bad_progression(
            f"nextScheduledAt {change.next_scheduled_at} is not after acceptedAt {change.accepted_at}",
            "/nextScheduledAt",
        )
    return change.occurrence_at, following


def fold(events: Sequence[object], seed_length: object = 0, profile: str | Profile = "calendar") -> Folded:
    """Replay `events[seed_length:]` under `profile`; raise ScheduleLogError on corruption."""
    folder = Folder(seed_length, profile)
    folder.check_bound(len(events))
    folder.feed_all(events)
    return folder.finish()
