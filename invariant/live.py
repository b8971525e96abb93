"""Live validation of a candidate event (protocol.md §4): what the invariant companion checks.

A candidate `schedule/change` may be appended only if the log plus the candidate folds, and the
candidate passes today's calendar rules: a cron create must be a canonical-zoned, provably
infrequent rule whose target is a real occurrence; a cron dispatch must carry exactly the
current calendar decision. Existing logs are never judged this way (replay stays stable across
tzdata updates); only new appends are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from .changes import Change, CreateChange, CronRecord, DispatchChange, EveryRecord, decode_change
from .cron import CronRule, CronSyntaxError, frequency_ok, has_matching_date, parse_cron
from .errors import ScheduleLogError
from .folding import SCHEDULE_CHANGE, Folded, Folder, every_progression, fold
from .instant import MAX_MS, MIN_MS, MINUTE_MS, format_instant, parse_instant
from .jsvalue import safe_integer
from .occurrences import next_occurrence, resolve_occurrence
from .profiles import Profile, get_profile
from .zones import resolve_zone, zone_rules

if TYPE_CHECKING:  # (zoneinfo loads with the first zone's rules: invariant.zones)
    from zoneinfo import ZoneInfo


def _fail(rule: str, message: str, pointer: str) -> ScheduleLogError:
    return ScheduleLogError(rule, message, pointer=pointer)


def _rule_and_zone(record: CronRecord, stage: str, pointer: str) -> tuple[CronRule, str, ZoneInfo]:
    """The checks both live stages apply to a cron record's rule (protocol.md §4.2-4.3 step 1).

    Returns the parsed rule, the zone's canonical name and its rules.
    """
    try:
        rule = parse_cron(record.cron)
    except CronSyntaxError as err:
        raise _fail(f"{stage}.rule", str(err), f"{pointer}/cron") from None
    if not frequency_ok(rule):
        raise _fail(f"{stage}.frequency", f"{record.cron!r} can match less than five minutes apart", f"{pointer}/cron")
    canonical = resolve_zone(record.time_zone)
    if canonical is None:
        raise _fail(f"{stage}.zone-unknown", f"time zone {record.time_zone!r} is unknown", f"{pointer}/timeZone")
    if not has_matching_date(rule):
        raise _fail(f"{stage}.no-matching-date", f"{record.cron!r} matches no calendar date", f"{pointer}/cron")
    return rule, canonical, zone_rules(canonical)


def _accepted(record: CronRecord | EveryRecord, accepted_at_ms: object) -> tuple[int, int]:
    target = parse_instant(record.scheduled_at)
    accepted = safe_integer(accepted_at_ms)
    assert target is not None
    if accepted is None or not MIN_MS <= accepted <= MAX_MS or accepted < target:
        raise ScheduleLogError(
            "live.resolve.accepted",
            f"acceptedAt {accepted_at_ms!r} is not an instant at or after {record.scheduled_at}",
        )
    return target, accepted


def resolve_every(record: EveryRecord, accepted_at_ms: object) -> tuple[str, str | None]:
    """(occurrenceAt, next target or None) of an every record accepted at `accepted_at_ms`."""
    _, accepted = _accepted(record, accepted_at_ms)
    occurrence, following = every_progression(record, accepted)
    return occurrence, None if following is None else format_instant(following)


def resolve_cron(record: CronRecord, accepted_at_ms: object, *, ideal: bool = False) -> tuple[str, str | None]:
    """The current calendar decision for a cron record accepted at `accepted_at_ms` (§4.7).

    (occurrenceAt, nextScheduledAt or None). Evaluation failures are log errors.
    """
    target, accepted = _accepted(record, accepted_at_ms)
    canonical = resolve_zone(record.time_zone)
    if canonical is None:
        raise ScheduleLogError("live.resolve.zone", f"time zone {record.time_zone!r} is unknown")
    return _cron_decision(record.cron, canonical, target, accepted, ideal)


@lru_cache(maxsize=8192)
def _cron_decision(cron: str, canonical: str, target: int, accepted: int, ideal: bool) -> tuple[str, str | None]:
    """The decision for a rule, zone, target and acceptance instant.

    Remembered: records that share a rule, a zone and a target (created together, say) are
    resolved once per batch. A failure raises and is not remembered.
    """
    try:
        rule = parse_cron(cron)
    except CronSyntaxError as err:
        raise ScheduleLogError("live.resolve.rule", str(err)) from None
    return _decision(rule, zone_rules(canonical), target, accepted, ideal)


def _decision(rule: CronRule, zone: ZoneInfo, target: int, accepted: int, ideal: bool) -> tuple[str, str | None]:
    occurrence, following = resolve_occurrence(rule, zone, target, accepted, ideal=ideal)
    return format_instant(occurrence), None if following is None else format_instant(following)


def _live_cron_create(record: CronRecord, ideal: bool) -> None:
    pointer = "/data/schedule"
    rule, canonical, zone = _rule_and_zone(record, "live.cron.create", pointer)
    if canonical != record.time_zone:
        raise _fail(
            "live.cron.create.zone-alias",
            f"time zone {record.time_zone!r} is not canonical (expected {canonical!r})",
            f"{pointer}/timeZone",
        )
    target = parse_instant(record.scheduled_at)
    assert target is not None
    if next_occurrence(rule, zone, target - MINUTE_MS, ideal=ideal) != target:
        raise _fail(
            "live.cron.create.target",
            f"scheduledAt {record.scheduled_at} is not an occurrence of {record.cron!r} in {record.time_zone}",
            f"{pointer}/scheduledAt",
        )


def _live_cron_dispatch(record: CronRecord, change: DispatchChange, ideal: bool) -> None:
    rule, _, zone = _rule_and_zone(record, "live.cron.dispatch", "/data")
    target, accepted = _accepted(record, parse_instant(change.accepted_at or ""))
    occurrence, following = _decision(rule, zone, target, accepted, ideal)
    if change.occurrence_at != occurrence:
        raise _fail(
            "live.cron.dispatch.occurrence",
            f"occurrenceAt {change.occurrence_at} differs from the calendar decision {occurrence}",
            "/data/occurrenceAt",
        )
    if change.next_scheduled_at != following:
        expected = "absent" if following is None else following
        raise _fail(
            "live.cron.dispatch.next",
            f"nextScheduledAt {change.next_scheduled_at or 'absent'} differs from the calendar decision {expected}",
            "/data/nextScheduledAt",
        )


def _live_checks(change: Change, prior: Callable[[], Folded], index: int, ideal: bool) -> None:
    """Today's calendar rules for a decoded candidate at `index`; `prior` gives the log's fold."""
    try:
        if isinstance(change, CreateChange) and isinstance(change.record, CronRecord):
            _live_cron_create(change.record, ideal)
        elif isinstance(change, DispatchChange) and change.occurrence_at is not None:
            record = prior().find(change.id)
            if isinstance(record, CronRecord):
                _live_cron_dispatch(record, change, ideal)
    except ScheduleLogError as err:
        raise ScheduleLogError(err.rule, err.message, index=index, pointer=err.pointer) from None


def validate_live(
    events: Sequence[object],
    payload: object,
    seed_length: object = 0,
    profile: str | Profile = "calendar",
    *,
    ideal: bool = False,
) -> None:
    """The live checks of a candidate payload against the current log (protocol.md §4.1)."""
    try:
        change = decode_change(payload, profile)
    except ScheduleLogError as err:
        raise err.at(len(events), "/data") from None
    _live_checks(change, lambda: fold(events, seed_length, profile), len(events), ideal)


def candidate_event(events: Sequence[object], payload: object) -> dict[str, object]:
    """The envelope a candidate payload gets when appended after `events`."""
    return {"type": SCHEDULE_CHANGE, "seq": len(events), "time": 0, "data": payload}


def check_candidate(
    events: Sequence[object],
    candidate_payload: object,
    seed_length: object = 0,
    profile: str | Profile = "calendar",
    *,
    ideal: bool = False,
) -> Folded:
    """Accept or refuse appending `candidate_payload`: the fold first, then live validation
    where the profile's companion validates live (`Profile.live_validation`; the others only
    fold, so a candidate the seedLength covers is not read).

    Returns the fold including the candidate; raises ScheduleLogError (rules `decode.*` and
    `fold.*` from the fold stage, `live.*` from the live stage). The log is folded once: the
    live stage reads the state just before the candidate from the same pass.
    """
    profile = get_profile(profile)
    folder = Folder(seed_length, profile)
    folder.feed_all(events)
    prior = folder.snapshot()
    step = folder.feed(candidate_event(events, candidate_payload))
    folded = folder.finish()
    if not profile.live_validation:
        return folded
    if step is None:  # seedLength covers the candidate itself: judge it as validate_live does
        validate_live(events, candidate_payload, seed_length, profile, ideal=ideal)
    else:
        _live_checks(step.change, lambda: prior, len(events), ideal)
    return folded


def stage_of(error: ScheduleLogError) -> str:
    """`live` for calendar rejections, `fold` for everything the fold itself refuses."""
    return "live" if error.rule.startswith("live.") else "fold"
