"""An event set aside: how `schedlog repair` takes an event out of a log without breaking its
`seq` contiguity or losing a byte (issue 68).

The event, at its own `seq` and `time`, is replaced by one of type SET_ASIDE_TYPE, a type no
reader knows, whose `data` holds the original whole (`event`: the value as parsed; `line`: the
line's text, where it did not parse) and why (`reason`, and `rule`: the rule or finding code
that required it). A reader whose guard refuses unknown types takes it when it carries
`ignorable: true` (611615650f on, formats v2-v4: `readers.Reader.ignorable`); a reader without
the guard takes any type, and its envelope has no `ignorable` key, so there it goes unmarked.
The schedule fold reads `schedule/change` events only: a set-aside event is history it skips.
A seq the log lacks, where its neighbours prove it, is filled by a set-aside event saying so
(`missing`). Undoing is mechanical: the line written back is `line`, or `event` as JSON.
"""

from __future__ import annotations

from collections.abc import Mapping

SET_ASIDE_TYPE = "schedlog/set-aside"
"""The type of an event set aside: no reader's known type, in schedlog's own namespace."""


def set_aside(
    seq: int, time: object, reason: str, rule: str, marked: bool, *, event: object = None, line: str | None = None
) -> dict[str, object]:
    """The event that takes the place of `event` (or of the unparsable `line`, or, with neither,
    of a missing seq) at `seq` and `time`, `marked` ignorable where its reader takes the key."""
    data: dict[str, object] = {}
    if line is not None:
        data["line"] = line
    elif event is not None:
        data["event"] = event
    else:
        data["missing"] = True
    data["reason"] = reason
    data["rule"] = rule
    out: dict[str, object] = {"type": SET_ASIDE_TYPE, "seq": seq, "time": time, "data": data}
    if marked:
        out["ignorable"] = True
    return out


def is_set_aside(event: object) -> bool:
    """Whether `event` is one `set_aside` made."""
    return isinstance(event, Mapping) and event.get("type") == SET_ASIDE_TYPE and isinstance(event.get("data"), Mapping)
