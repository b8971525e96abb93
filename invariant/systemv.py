"""The thirteen retired `SystemV/*` zones, as the reference's ICU applies them (calendar.md §3.6).

No tzdata key carries their rules any more. The seven without a DST suffix are fixed offsets
(`SystemV/EST5` is five hours behind UTC) and take the identical rules of `Etc/GMT+N`. The six
`…DT` zones add one hour from the last Sunday of April to the last Sunday of October, every year,
except that DST began on 6 January in 1974 and on 23 February in 1975 (the retired tzdata
`SystemV` rule, never updated for the 1987 and 2007 US changes). Those rules are written here as
a TZif file (RFC 8536) that `zoneinfo` reads like any other: one transition pair a year up to
1975, then a POSIX TZ rule for every later year.

Choice (the measurements give dates, not times of day): clocks change at 02:00 local time, as the
POSIX rule's default and the tzdata `SystemV` rule have it.
"""

from __future__ import annotations

import struct
from datetime import date, timedelta

FIXED_OFFSETS = {"AST4": 4, "EST5": 5, "CST6": 6, "MST7": 7, "PST8": 8, "YST9": 9, "HST10": 10}
"""Hours behind UTC of each fixed-offset name (the rules of `Etc/GMT+N`)."""
DAYLIGHT = {
    "AST4ADT": ("AST", 4, "ADT"),
    "EST5EDT": ("EST", 5, "EDT"),
    "CST6CDT": ("CST", 6, "CDT"),
    "MST7MDT": ("MST", 7, "MDT"),
    "PST8PDT": ("PST", 8, "PDT"),
    "YST9YDT": ("YST", 9, "YDT"),
}
"""Standard abbreviation, hours behind UTC, daylight abbreviation of each DST name."""
NAMES = tuple(f"SystemV/{n}" for n in (*FIXED_OFFSETS, *DAYLIGHT))

_LAST_LISTED_YEAR = 1975
"""Transitions are listed up to this year (the exceptions); the POSIX rule covers the rest."""
_EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
_CHANGE_AT_S = 2 * 3600
"""Local time of day of both changes."""


def fixed_rules_key(name: str) -> str | None:
    """The tzdata key with the rules of a fixed-offset SystemV name (`SystemV/EST5` -> `Etc/GMT+5`)."""
    hours = FIXED_OFFSETS.get(name.removeprefix("SystemV/")) if name.startswith("SystemV/") else None
    return None if hours is None else f"Etc/GMT+{hours}"


def _last_sunday(year: int, month: int, last_day: int) -> date:
    day = date(year, month, last_day)
    return day - timedelta(days=(day.weekday() - 6) % 7)


def dst_period(year: int) -> tuple[date, date]:
    """The local dates daylight time starts and ends in `year`."""
    start = {1974: date(1974, 1, 6), 1975: date(1975, 2, 23)}.get(year) or _last_sunday(year, 4, 30)
    return start, _last_sunday(year, 10, 31)


def _utc_seconds(day: date, local_seconds: int, utc_offset_s: int) -> int:
    return (day.toordinal() - _EPOCH_ORDINAL) * 86_400 + local_seconds - utc_offset_s


def tzif(name: str) -> bytes | None:
    """The TZif (version 2) data of a DST SystemV name, None for any other name."""
    rule = DAYLIGHT.get(name.removeprefix("SystemV/")) if name.startswith("SystemV/") else None
    if rule is None:
        return None
    std, hours, dst = rule
    standard, daylight = -hours * 3600, -(hours - 1) * 3600
    times: list[int] = []
    for year in range(1, _LAST_LISTED_YEAR + 1):
        start, end = dst_period(year)
        times.append(_utc_seconds(start, _CHANGE_AT_S, standard))
        times.append(_utc_seconds(end, _CHANGE_AT_S, daylight))
    kinds = [1, 0] * _LAST_LISTED_YEAR
    chars = f"{std}\0{dst}\0".encode("ascii")
    types = struct.pack(">lBB", standard, 0, 0) + struct.pack(">lBB", daylight, 1, len(std) + 1)
    v1 = _header(b"2", 0, 1, len(std) + 1) + struct.pack(">lBB", standard, 0, 0) + f"{std}\0".encode("ascii")
    v2 = (
        _header(b"2", len(times), 2, len(chars)) + struct.pack(f">{len(times)}q", *times) + bytes(kinds) + types + chars
    )
    footer = f"\n{std}{hours}{dst},M4.5.0,M10.5.0\n".encode("ascii")
    return v1 + v2 + footer


def _header(version: bytes, timecnt: int, typecnt: int, charcnt: int) -> bytes:
    """A TZif header: no UT/local or standard/wall indicators, no leap seconds."""
    return b"TZif" + version + b"\0" * 15 + struct.pack(">6l", 0, 0, 0, timecnt, typecnt, charcnt)


class TzifReader:
    """The read/seek interface `ZoneInfo.from_file` needs, over bytes in memory."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def read(self, size: int = -1) -> bytes:
        end = len(self.data) if size < 0 else self.pos + size
        chunk = self.data[self.pos : end]
        self.pos += len(chunk)
        return chunk

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset if whence == 0 else self.pos + offset if whence == 1 else len(self.data) + offset
        return self.pos
