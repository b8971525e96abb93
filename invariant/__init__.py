"""schedlog.invariant: the pure v1 `schedule/change` protocol policy.

No I/O, no clock, no database: decoding, the fold, projections and framing texts, exactly as
the reference implementation decides them. Host implementers import this package directly.

Each name is loaded from its module when first used (PEP 562): a caller that needs one rule, or
the command line's `--help`, does not load the calendar engine. The names and their modules are
listed once, in `_HOMES`; the block for type checkers imports the same (a test holds them alike).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .exports import lazy_exports

if TYPE_CHECKING:
    from .changes import (
        AfterRecord,
        AtRecord,
        Change,
        CreateChange,
        CronRecord,
        DeleteChange,
        DispatchChange,
        EveryRecord,
        Record,
        decode_change,
        record_from_json,
    )
    from .create import create_record, select_kind
    from .cron import CronRule, canonical_cron, frequency_ok, has_matching_date, parse_cron
    from .errors import CORRUPT_SCHEDULE_LOG, ScheduleInputError, ScheduleLogError
    from .folding import SCHEDULE_CHANGE, Folded, Folder, Step, fold
    from .framing import BatchItem, render_batch_framing, render_framing
    from .ids import allocate_id
    from .instant import GATE_MS, MAX_MS, MIN_MS, format_instant, parse_instant
    from .live import check_candidate, resolve_cron, resolve_every, validate_live
    from .occurrences import cron_occurrences, next_occurrence, previous_through
    from .presentation import Presentation, present
    from .profiles import AFTER_ONLY, CALENDAR, PROFILES, Profile, get_profile
    from .view import ScheduleView, schedule_view
    from .zones import canonical_zone

_HOMES = {
    "changes": (
        "AfterRecord",
        "AtRecord",
        "Change",
        "CreateChange",
        "CronRecord",
        "DeleteChange",
        "DispatchChange",
        "EveryRecord",
        "Record",
        "decode_change",
        "record_from_json",
    ),
    "create": (
        "create_record",
        "select_kind",
    ),
    "cron": (
        "CronRule",
        "canonical_cron",
        "frequency_ok",
        "has_matching_date",
        "parse_cron",
    ),
    "errors": (
        "CORRUPT_SCHEDULE_LOG",
        "ScheduleInputError",
        "ScheduleLogError",
    ),
    "folding": (
        "SCHEDULE_CHANGE",
        "Folded",
        "Folder",
        "Step",
        "fold",
    ),
    "framing": (
        "BatchItem",
        "render_batch_framing",
        "render_framing",
    ),
    "ids": ("allocate_id",),
    "instant": (
        "GATE_MS",
        "MAX_MS",
        "MIN_MS",
        "format_instant",
        "parse_instant",
    ),
    "live": (
        "check_candidate",
        "resolve_cron",
        "resolve_every",
        "validate_live",
    ),
    "occurrences": (
        "cron_occurrences",
        "next_occurrence",
        "previous_through",
    ),
    "presentation": (
        "Presentation",
        "present",
    ),
    "profiles": (
        "AFTER_ONLY",
        "CALENDAR",
        "PROFILES",
        "Profile",
        "get_profile",
    ),
    "view": (
        "ScheduleView",
        "schedule_view",
    ),
    "zones": ("canonical_zone",),
}
"""Each public name, by the module that holds it."""
__getattr__, __dir__ = lazy_exports(__name__, _HOMES, globals())

__all__ = [
    "AFTER_ONLY",
    "CALENDAR",
    "CORRUPT_SCHEDULE_LOG",
    "GATE_MS",
    "MAX_MS",
    "MIN_MS",
    "PROFILES",
    "SCHEDULE_CHANGE",
    "AfterRecord",
    "AtRecord",
    "BatchItem",
    "Change",
    "CreateChange",
    "CronRecord",
    "CronRule",
    "DeleteChange",
    "DispatchChange",
    "EveryRecord",
    "Folded",
    "Folder",
    "Presentation",
    "Profile",
    "Record",
    "ScheduleInputError",
    "ScheduleLogError",
    "ScheduleView",
    "Step",
    "allocate_id",
    "canonical_cron",
    "canonical_zone",
    "check_candidate",
    "create_record",
    "cron_occurrences",
    "decode_change",
    "fold",
    "format_instant",
    "frequency_ok",
    "get_profile",
    "has_matching_date",
    "next_occurrence",
    "parse_cron",
    "parse_instant",
    "present",
    "previous_through",
    "record_from_json",
    "render_batch_framing",
    "render_framing",
    "resolve_cron",
    "resolve_every",
    "schedule_view",
    "select_kind",
    "validate_live",
]
