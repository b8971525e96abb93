"""Id allocation (protocol.md §5.1)."""

from __future__ import annotations

from .folding import Folded


def allocate_id(folded: Folded) -> str:
    """The next `schedule-N`: start at |seenIds| + 1, skip any N already taken.

    Membership is exact string equality (`schedule-01` does not take `schedule-1`), so ids are
    never reused within the owned slice.
    """
    seen = set(folded.seen_ids)
    n = len(seen) + 1
    while f"schedule-{n}" in seen:
        n += 1
    return f"schedule-{n}"
