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

import pickle
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
    zstd: bool
    fields: tuple[object, ...]
    """The reader's SAVED_FIELDS at that line."""
    entries: tuple[object, ...]
    """The records the reader yielded before that line (logfile.Entry), in order: values no
    reader changes once yielded."""


def take(
    reader: object, offset: int, line: int, plaintext: int, zstd: bool, entries: list[object], more: bool
) -> ReadState | None:
    """The state of `reader` now. Where the reader reads on past this line (`more`: a torn
    final frame's records), its fields are copied whole (pickled and read back); else only the
    ones the end of a read still changes (the findings, their counts), the others being final.
    None where a value cannot be copied (one nested past pickle's recursion: such a log is read
    whole each time)."""
    values = tuple(getattr(reader, name) for name in SAVED_FIELDS)
    if more:
        try:
            values = pickle.loads(pickle.dumps(values, protocol=pickle.HIGHEST_PROTOCOL))
        except (RecursionError, pickle.PicklingError, TypeError, AttributeError):
            return None
    else:
        values = tuple(list(v) if type(v) is list else dict(v) if type(v) is dict else v for v in values)
    return ReadState(offset, line, plaintext, zstd, values, tuple(entries))


def restore(reader: object, state: ReadState) -> None:
    """Set `reader`'s SAVED_FIELDS to a copy of the values `state` holds (a state can be resumed
    from more than once, and the reader changes what it is given)."""
    for name, value in zip(
        SAVED_FIELDS, pickle.loads(pickle.dumps(state.fields, pickle.HIGHEST_PROTOCOL)), strict=True
    ):
        setattr(reader, name, value)
