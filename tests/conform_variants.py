"""schedlog's conformance server with one rule broken: `python -m tests.conform_variants NAME`.

Each variant is a divergence real ports make; the conformance runner must find each and shrink
it (tests/test_conform.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import invariant.conformance  # noqa: F401  (every module that binds a name below)
from invariant.cron import canonical_cron
from invariant.folding import Folded, check_seed_bound
from invariant.ids import allocate_id
from invariant.jsvalue import js_trim, safe_integer
from invariant.zones import canonical_zone


def _everywhere(original: Callable[..., Any], replacement: Callable[..., Any]) -> None:
    """Rebind every module of invariant that holds `original` (imported by name) to `replacement`."""
    for name, module in list(sys.modules.items()):
        if name == "invariant" or name.startswith("invariant."):
            for attr, value in list(vars(module).items()):
                if value is original:
                    setattr(module, attr, replacement)


def _go_trim(text: str) -> str:
    """Go's strings.TrimSpace (Unicode White_Space), not JavaScript's trim()."""
    return text.strip(
        " \t\n\v\f\r\x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000" + "".join(map(chr, range(0x2000, 0x200B)))
    )


def _any_integer(value: object) -> int | None:
    """Integers of any size (a 64-bit port), not JavaScript's safe integers."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _alias_kept(name: object) -> str:
    """The zone as given whenever it resolves: aliases are not canonicalized."""
    canonical_zone(name)
    assert isinstance(name, str)
    return name


def _cron_as_written(text: object) -> str:
    """The expression as written (whitespace collapsed): leading zeros and the like are kept."""
    canonical_cron(text)
    assert isinstance(text, str)
    return " ".join(text.split())


def _next_count(folded: Folded) -> str:
    """`schedule-(|seenIds|+1)` without skipping taken ids."""
    return f"schedule-{len(folded.seen_ids) + 1}"


def _no_seed_bound(seed_length: int, event_count: int) -> None:
    """seedLength may exceed the log."""


def _gate_off() -> None:
    """Recurring batches may come any time after each other (no 300 s gate)."""
    sys.modules["invariant.folding"].GATE_MS = 0  # type: ignore[attr-defined]


VARIANTS: dict[str, Callable[[], None]] = {
    "trim": lambda: _everywhere(js_trim, _go_trim),
    "safe-integers": lambda: _everywhere(safe_integer, _any_integer),
    "zone-alias": lambda: _everywhere(canonical_zone, _alias_kept),
    "gate": _gate_off,
    "cron-spelling": lambda: _everywhere(canonical_cron, _cron_as_written),
    "id-allocation": lambda: _everywhere(allocate_id, _next_count),
    "seed-bounds": lambda: _everywhere(check_seed_bound, _no_seed_bound),
}


if __name__ == "__main__":
    VARIANTS[sys.argv[1]]()
    from replay.conform.transport import serve

    serve(sys.stdin.buffer, sys.stdout.buffer)
