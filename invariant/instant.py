"""Canonical UTC instants: `YYYY-MM-DDTHH:MM:SS.mmmZ`, years 0001-9999, epoch milliseconds.

The protocol stores every instant as the exact text `Date.prototype.toISOString` would give,
so a value is valid iff it parses strictly and formats back to the same string.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from functools import lru_cache

MIN_MS = -62135596800000
"""Epoch ms of 0001-01-01T00:00:00.000Z."""
MAX_MS = 253402300799999
"""Epoch ms of 9999-12-31T23:59:59.999Z."""
GATE_MS = 300_000
"""The shared recurring gate and minimum fixed-rate interval (300 s)."""
MINUTE_MS = 60_000

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_PATTERN = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})\.([0-9]{3})Z")


@lru_cache(maxsize=65536)
def parse_instant(text: str) -> int | None:
    """Epoch ms of a canonical instant string, or None when it is not canonical."""
    m = _PATTERN.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second, milli = (int(g) for g in m.groups())
    if year == 0 or hour > 23 or minute > 59 or second > 59:
        return None
    try:
        moment = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError:
        return None
    delta = moment - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1000 + milli


@lru_cache(maxsize=65536)
def format_instant(ms: int) -> str:
    """The canonical text of an epoch-ms instant within [MIN_MS, MAX_MS]."""
    if not MIN_MS <= ms <= MAX_MS:
        raise ValueError(f"instant {ms} is outside years 0001-9999")
    days, rest = divmod(ms, 86_400_000)
    minute, rest = divmod(rest, MINUTE_MS)
    if rest == 0:  # the usual instant: a whole minute
        return _day_text(days) + _MINUTE_TEXT[minute] + "00.000Z"
    second, milli = divmod(rest, 1000)
    return f"{_day_text(days)}{_MINUTE_TEXT[minute]}{second:02d}.{milli:03d}Z"


@lru_cache(maxsize=4096)
def _day_text(days: int) -> str:
    """`YYYY-MM-DDT` of a day counted from 1970-01-01; remembered, as instants share their days."""
    day = date.fromordinal(days + _EPOCH_ORDINAL)
    return f"{day.year:04d}-{day.month:02d}-{day.day:02d}T"


_MINUTE_TEXT = tuple(f"{hour:02d}:{minute:02d}:" for hour in range(24) for minute in range(60))
"""`HH:MM:` of each minute of a day."""


def gate_instant(last_recurring_accepted_at: str | None) -> int | None:
    """The earliest instant a new recurring batch may be accepted: the last batch + 300 s.

    None before any batch. May exceed MAX_MS (the gate is then exhausted, protocol.md §3.8).
    """
    if last_recurring_accepted_at is None:
        return None
    last = parse_instant(last_recurring_accepted_at)
    if last is None:
        raise ValueError(f"{last_recurring_accepted_at!r} is not a canonical instant")
    return last + GATE_MS


def is_whole_minute(ms: int) -> bool:
    """True when the instant has zero seconds and milliseconds."""
    return ms % MINUTE_MS == 0
