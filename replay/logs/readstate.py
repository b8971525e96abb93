"""A session log's reading saved at its last committed line, to go on from once the log has grown.

A log is append-only: what a reader knew at a committed line (its header, its findings, the
records stage's state: the committed scan, the session layer's checks, the surface) and what
the judge made of the records before it (its state, `judge`) is still true of a log that grew
past it. So the reader saves those values at the last line it committed (a torn tail, a torn
final frame come after it, and are read again with what was appended), and a resumed read
restores them and reads only the bytes after `offset`, its records fed to the judge taken up
again: the same report as a cold read of the whole file, for what was appended. No record is
kept: the state is bounded by what is live.

A state is trusted only by whoever checked that the bytes before `offset` are the bytes it was
taken from (the verdict cache hashes them).
"""

from __future__ import annotations

from dataclasses import dataclass

from replay.logs.header import Header
from replay.logs.notes import NotesState
from replay.logs.records import RecordsState


@dataclass(frozen=True)
class ReadState:
    """A reading saved at a committed line: each stage's state, and where the bytes stand."""

    offset: int
    """The bytes of the file read and committed: where the next line (or frame) starts."""
    line: int
    """The number of the last line read (the header's is 1)."""
    plaintext: int
    """A Zstandard log's plaintext read up to `offset` (its share of the plaintext bound)."""
    head: Header
    notes: NotesState
    records: RecordsState
    judge: bytes | None = None
    """The state of whoever judged the records yielded before that line (`StateKeeper.save`),
    as bytes: None where none did (a state without it cannot be resumed to judge)."""
