"""Loading calendar-examples.jsonl: clock samples may lie outside years 0001-9999."""

from __future__ import annotations

from typing import Any

from invariant import parse_instant

from .conftest import CONFORMANCE, load_jsonl

CYCLE_MS = 146_097 * 86_400_000  # one 400-year Gregorian cycle


def clock(value: str | None) -> int | None:
    """A `now` sample: null stands for NaN (None here); year 0000 is allowed for clocks."""
    if value is None:
        return None
    ms = parse_instant(value)
    if ms is None and value.startswith("0000-"):
        shifted = parse_instant("0400" + value[4:])
        assert shifted is not None
        return shifted - CYCLE_MS
    assert ms is not None, value
    return ms


def examples(kind: str) -> list[dict[str, Any]]:
    return [e for e in load_jsonl(CONFORMANCE / "calendar-examples.jsonl") if e["kind"] == kind]


def ident(e: dict[str, Any]) -> str:
    fields = [
        str(e.get(k)) for k in ("input", "cron", "time_zone", "after", "now", "scheduledAt", "acceptedAt") if k in e
    ]
    return "|".join(fields)[:80]
