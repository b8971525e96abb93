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
from .errors import CORRUPT_SCHEDULE_LOG, ScheduleInputError, ScheduleLogError
from .fold import SCHEDULE_CHANGE, Folded, Folder, Step, fold
from .framing import BatchItem, render_batch_framing, render_framing
from .ids import allocate_id
from .instant import GATE_MS, MAX_MS, MIN_MS, format_instant, parse_instant
from .presentation import Presentation, present
from .profiles import AFTER_ONLY, CALENDAR, PROFILES, Profile, get_profile
from .view import ScheduleView, schedule_view

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
    "decode_change",
    "fold",
    "format_instant",
    "get_profile",
    "parse_instant",
    "present",
    "record_from_json",
    "render_batch_framing",
    "render_framing",
    "schedule_view",
]
