"""The dispatch receipt projection (protocol.md §5.4; profiles.md §3.3).

A display helper, not a validator: it applies no gate, no exhaustion and no id-reuse check
beyond "nearest create wins", so it can answer for a log whose full fold is corrupt.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

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
from .errors import ScheduleLogError
from .folding import (
    SCHEDULE_CHANGE,
    SHAPES_FOR_KIND,
    Folder,
    check_seed_bound,
    check_seed_length,
    cron_progression,
    event_type,
    every_progression,
)
from .instant import format_instant, parse_instant
from .jsvalue import safe_integer
from .profiles import Profile, get_profile

END_SEED = "session/end-seed"


@dataclass(frozen=True)
class Presentation:
    """Which reminder a dispatch delivered, and which occurrence."""

    schedule_id: str
    prompt: str
    occurrence_at: str
    delivery_mode: str | None = None
    """Only the after-only revision returns `session-local` here."""

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "scheduleId": self.schedule_id,
            "prompt": self.prompt,
            "occurrenceAt": self.occurrence_at,
        }
        if self.delivery_mode is not None:
            out["deliveryMode"] = self.delivery_mode
        return out


def _decode_at(events: Sequence[object], index: int, profile: Profile) -> Change:
    event = events[index]
    assert isinstance(event, Mapping)
    try:
        return decode_change(event.get("data"), profile)
    except ScheduleLogError as err:
        raise err.at(index, "/data") from None


def _advance(record: Record, change: DispatchChange) -> tuple[str, Record | None]:
    """Apply one dispatch to `record` with the fold's shape matrix and arithmetic (no gate)."""
    if change.shape not in SHAPES_FOR_KIND[record.kind]:
        raise ScheduleLogError(
            "fold.dispatch.kind-shape", f"a {change.shape} dispatch cannot apply to {record.kind} record"
        )
    if record.kind in ONE_SHOT_KINDS:
        return record.scheduled_at, None
    assert change.accepted_at is not None
    accepted = parse_instant(change.accepted_at)
    assert accepted is not None
    if isinstance(record, EveryRecord):
        occurrence, following = every_progression(record, accepted)
    else:
        assert isinstance(record, CronRecord)
        occurrence, following = cron_progression(record, change, accepted)
    return occurrence, (None if following is None else with_target(record, format_instant(following)))


def present(
    events: Sequence[object], dispatch_seq: object, seed_length: object = 0, profile: str | Profile = "calendar"
) -> Presentation | None:
    """Receipt for the dispatch at `dispatch_seq`, None for a non-dispatch, or ScheduleLogError."""
    prof = get_profile(profile)
    d = safe_integer(dispatch_seq)
    if d is None or d < 0:
        raise ScheduleLogError("present.seq", f"dispatchSeq {dispatch_seq!r} is not a non-negative safe integer")
    seed = check_seed_length(seed_length)
    check_seed_bound(seed, len(events))
    if d >= len(events):
        raise ScheduleLogError("present.seq", f"there is no event {d}")
    event = events[d]
    if not isinstance(event, Mapping) or event.get("seq") != d or type(event.get("seq")) is bool:
        raise ScheduleLogError("present.seq", f"event {d} does not carry seq {d}", index=d, pointer="/seq")
    if event_type(event) != SCHEDULE_CHANGE:
        return None
    change = _decode_at(events, d, prof)
    if not isinstance(change, DispatchChange):
        return None
    if prof.name == "after-only":
        return _present_after_only(events, d, seed, change, prof)
    start = 0 if d < seed else seed
    decoded: dict[int, Change] = {d: change}
    create_at = None
    for i in range(d - 1, start - 1, -1):
        if event_type(events[i]) != SCHEDULE_CHANGE:
            continue
        c = decoded[i] = _decode_at(events, i, prof)
        if isinstance(c, CreateChange) and c.record.id == change.id:
            create_at = i
            break
    if create_at is None:
        raise ScheduleLogError(
            "present.inactive",
            f"no create of {change.id!r} precedes dispatch {d} in its segment",
            index=d,
            pointer="/data/id",
        )
    first = decoded[create_at]
    assert isinstance(first, CreateChange)
    record: Record | None = first.record
    for i in range(create_at + 1, d + 1):
        step = decoded.get(i)
        if step is None or isinstance(step, CreateChange) or step.id != change.id:
            continue
        c = step
        if record is None:
            raise ScheduleLogError(
                "present.inactive", f"{c.operation} of {change.id!r} after it ended", index=i, pointer="/data/id"
            )
        if isinstance(c, DeleteChange):
            record = None
            continue
        try:
            occurrence, record = _advance(record, c)
        except ScheduleLogError as err:
            raise err.at(i, "/data") from None
        if i == d:
            return Presentation(first.record.id, first.record.prompt, occurrence)
    raise AssertionError("unreachable: the dispatch at d is applied in the loop")


def _present_after_only(
    events: Sequence[object], d: int, seed: int, change: DispatchChange, prof: Profile
) -> Presentation:
    start = seed
    if d < seed:
        start = 0
        for i in range(d - 1, -1, -1):
            if event_type(events[i]) == END_SEED:
                start = i + 1
                break
    folder = Folder(start, prof)
    folder.feed_all(events[:d])
    record = folder.active.get(change.id)
    if record is None:
        raise ScheduleLogError(
            "present.inactive", f"{change.id!r} is not active before dispatch {d}", index=d, pointer="/data/id"
        )
    return Presentation(record.id, record.prompt, record.scheduled_at, "session-local")
