"""schedlog.invariant: the pure v1 `schedule/change` protocol policy.

No I/O, no clock, no database: decoding, the fold, projections and framing texts, exactly as
the reference implementation decides them. Host implementers import this package directly.
"""

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
from .fold import SCHEDULE_CHANGE, Folded, Folder, Step, fold
from .framing import BatchItem, render_batch_framing, render_framing
from .ids import allocate_id
from .instant import GATE_MS, MAX_MS, MIN_MS, format_instant, parse_instant
from .live import check_candidate, resolve_cron, resolve_every, validate_live
from .occurrences import cron_occurrences, next_occurrence, previous_through
from .presentation import Presentation, present
from .profiles import AFTER_ONLY, CALENDAR, PROFILES, Profile, get_profile
from .view import ScheduleView, schedule_view
from .zones import canonical_zone

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
