"""The lines of a plain log after its first line, read block by block into entries.

A plain log is JSONL: each committed record a line ending in LF. The lines come in blocks
(frames.plain_lines, split in C); a last line with no LF is a torn tail, the crash tail a
reader drops. The reading is saved at the last committed line (before a torn tail).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from replay.logs.frames import Block, Parts, Tail
from replay.logs.notes import Notes
from replay.logs.records import Entry, Records


@dataclass
class PlainLines:
    """The lines of one plain log (or of a Zstandard file's whole plaintext) read into records."""

    records: Records
    notes: Notes
    advance: Callable[[int], None]
    """Hear how many more of the file's bytes were read."""
    save: Callable[[int, int, int, bool], None] | None
    """Save the reading at a committed line (offset, line, 0, False); None: no state is saved."""
    lines: int = 1
    """LF-terminated lines read so far (a torn tail is not one)."""

    def entries(self, parts: Parts, at: int) -> Iterator[Entry]:
        """The entries of the blocks of `parts` (its first line read), the first at byte `at`."""
        for part in parts:
            if isinstance(part, Tail):
                self._save(at)
                self.notes.torn(self.lines + 1, part.size)
                return
            assert isinstance(part, Block)  # (the first line, Head or OnlyLine, comes first)
            yield from self.records.run(part.lines, self.lines, part.spans)
            self.lines += part.stands_for
            self.advance(part.size)
            at += part.size
        self._save(at)

    def _save(self, at: int) -> None:
        if self.save is not None:
            self.save(at, self.lines, 0, False)
