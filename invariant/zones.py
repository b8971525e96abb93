"""Time-zone names and rules (calendar.md §3).

Names: the reference canonicalizes through its JavaScript engine's ICU data, whose canonical ids
keep legacy spellings (`Asia/Kolkata` -> `Asia/Calcutta`) and fold the whole UTC family to
`UTC`. That answer is pinned in `zones.json` (the spec's zones-icu.json: ICU 78.3), looked up
case-insensitively after the reference's shape gate.

Rules: always from the `tzdata` package, never the machine's own zoneinfo, so a verdict does not
depend on where it runs.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from . import systemv
from .errors import ScheduleInputError
from .jsvalue import is_trimmed_nonempty
from .shapes import ZONE_SHAPE

if TYPE_CHECKING:  # zoneinfo and importlib.resources load with the first zone asked for (a tenth of a judge's start-up)
    from zoneinfo import ZoneInfo


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    from importlib import resources

    data: dict[str, Any] = json.loads(resources.files(__package__).joinpath("zones.json").read_text("utf-8"))
    return data


def icu_version() -> str:
    """The ICU version whose zone canonicalization the table reflects."""
    return str(_table()["icu"])


def zone_shape_ok(name: object) -> bool:
    """The reference's gate before any lookup: `UTC` or an ASCII Area/Location name."""
    return type(name) is str and is_trimmed_nonempty(name) and (name == "UTC" or ZONE_SHAPE.fullmatch(name) is not None)


def resolve_zone(name: object) -> str | None:
    """The canonical name of a known zone (links and case resolved), or None."""
    return _resolve_name(name) if type(name) is str else None


@lru_cache(maxsize=4096)
def _resolve_name(name: str) -> str | None:
    """`resolve_zone` of a string, remembered: every cron resolution asks it again."""
    if not zone_shape_ok(name):
        return None
    canonical = _table()["names"].get(name.lower())
    return canonical if isinstance(canonical, str) else None


def canonical_zone(name: object) -> str:
    """Canonical zone name for tool input; raise ScheduleInputError `invalid_time_zone`."""
    canonical = resolve_zone(name)
    if canonical is None:
        raise ScheduleInputError("invalid_time_zone", f"{name!r} is not a known UTC or Area/Location time zone")
    return canonical


@lru_cache(maxsize=512)
def zone_rules(canonical: str) -> ZoneInfo:
    """The zone's rules from the tzdata package; the retired SystemV names, which no tzdata key
    carries, as ICU applies them (`systemv.py`)."""
    from importlib import resources
    from zoneinfo import ZoneInfo

    daylight = systemv.tzif(canonical)
    if daylight is not None:
        return ZoneInfo.from_file(systemv.TzifReader(daylight), key=canonical)
    key = systemv.fixed_rules_key(canonical) or canonical
    path = resources.files("tzdata.zoneinfo").joinpath(*key.split("/"))
    with path.open("rb") as f:
        return ZoneInfo.from_file(f, key=canonical)


def load_zone(name: object) -> ZoneInfo | None:
    """Rules for any resolvable name (an alias is fine), or None when the zone is unknown."""
    canonical = resolve_zone(name)
    return None if canonical is None else zone_rules(canonical)
