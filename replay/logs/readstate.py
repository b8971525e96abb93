"""A session log's reading saved at its last committed line, to go on from once the log has grown.

A log is append-only: what a reader knew at a committed line (its findings, the committed scan,
the session layer's checks, the surface, the records it yielded) is still true of a log that
grew past it. So the reader saves those values at the last line it committed (a torn tail, a torn
final frame come after it, and are read again with what was appended), and a resumed read
restores them, yields the saved records again and reads only the bytes after `offset`: the same
report as a cold read of the whole file, for a small fraction of its cost.

A state is trusted only by whoever checked that the bytes before `offset` are the bytes it was
taken from (the verdict cache hashes them).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

SAVED_FIELDS = (
    "header",
    "headerless",
    "findings",
    "rejected",
    "unreadable",
    "unsupported",
    "lines",
    "version",
    "header_size",
    "marker_cut",
    "_scan",
    "_counts",
    "_load_checks",
    "_surface",
    "_deep_left",
    "_select",
)
"""What a reader knows at a committed line that a later line may need (logfile.SessionLog's
fields): all of them values. The selector the records beside the schedule changes were asked
of remembers what it saw (the calls awaiting their results): a resumed read asks the saved one."""


@dataclass(frozen=True)
class ReadState:
    """A reading saved at a committed line."""

    offset: int
    """The bytes of the file read and committed: where the next line (or frame) starts."""
    line: int
    """The number of the last line read (the header's is 1)."""
    plaintext: int
    """A Zstandard log's plaintext read up to `offset` (its share of the plaintext bound)."""
    fields: tuple[object, ...]
    """The reader's SAVED_FIELDS at that line."""
    entries: tuple[object, ...]
    """The records the reader yielded before that line (logfile.Entry), in order: values no
    reader changes once yielded."""


def take(reader: object, offset: int, line: int, plaintext: int, entries: list[object], more: bool) -> ReadState:
    """The state of `reader` now. Where it reads more records past this line (`more`: a torn
    final frame's), every field is copied as deep as a reader changes it; else only the lists
    and dicts the end of a read still adds to (the findings, their counts per code)."""
    values = (getattr(reader, n) for n in SAVED_FIELDS)
    fields = tuple(_fresh(v) if more else v.copy() if type(v) is list or type(v) is dict else v for v in values)
    return ReadState(offset, line, plaintext, fields, tuple(entries))


def restore(reader: object, state: ReadState) -> None:
    """Set `reader`'s SAVED_FIELDS to copies of the values `state` holds (a state can be resumed
    from more than once, and the reader changes what it is given)."""
    for name, value in zip(SAVED_FIELDS, state.fields, strict=True):
        setattr(reader, name, _fresh(value))


def _fresh(value: object) -> object:
    """A copy of a field as deep as a reader changes it: a list or dict copied; an object (the
    committed scan, the surface, the load checks, the selector) copied with each list and dict
    it holds. What they hold deeper (events, findings, defects) no reader changes. (No deep
    copy: a header's value may nest past any recursion limit.)"""
    if type(value) is list or type(value) is dict:
        return value.copy()
    if not hasattr(value, "__dict__"):
        return value  # an int, a str, None, a frozen value
    fresh = copy.copy(value)
    for name, held in vars(value).items():
        if type(held) is list or type(held) is dict:
            object.__setattr__(fresh, name, held.copy())  # (past a frozen dataclass's guard too)
    return fresh
