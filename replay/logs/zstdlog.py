"""The lines of a Zstandard log after its header frame, read frame by frame into entries
(session-log.md §9.3).

The harness frames a log as it writes it: the header line alone in the first frame, then a
frame per append, each ending a record. So a complete frame holding a torn or invalid record is
a defect no crash explains (fatal), and only the final frame may be torn (a crash tail, dropped).
Runs of complete frames are decompressed together (frames.FrameBatch) and their lines read as
one run, a defect in one of them found back in its own frame.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass

from invariant.findings import Severity
from replay.logs.frames import FrameBatch, ZstdHead, frame_batches
from replay.logs.notes import Notes
from replay.logs.records import Entry, Records, frame_of
from replay.sources.bytesource import Data


@dataclass(frozen=True)
class ZstdFrames:
    """The frames of one Zstandard log read into the records stage."""

    records: Records
    notes: Notes
    save: Callable[[int, int, int, bool], None]
    """Save the reading at a committed line (offset, line, plaintext, more records past it)."""
    advance: Callable[[int], None]
    """Hear how many more of the file's bytes were read."""

    def entries(self, raw: Data, head: ZstdHead, line_no: int, at: int, plaintext: int) -> Iterator[Entry]:
        """The entries of the frames of `head` (its header frame read), line `line_no + 1` on,
        the frame at byte `at` on, `plaintext` bytes of it read before. The reading is saved
        before a torn final frame (its records read past it) and at the end."""
        saved = False
        for text in frame_batches(raw, head):
            if isinstance(text, FrameBatch):
                ended = yield from self._together(text, line_no)
                if ended is None:
                    return
                line_no, at, plaintext = ended, text.frames[-1].end, plaintext + len(text.text)
                continue
            frame = text.frame
            if not frame.complete:  # the torn final frame: the state is saved before it
                self.save(at, line_no, plaintext, True)
                saved = True
            self.advance(frame.end - frame.start)
            if text.bound:  # schedlog's limit, not a defect of the log: the log is not judged past it
                self.notes.find("format.zstd.bound", Severity.ERROR, f"frame at byte {frame.start}: {text.error}")
                return
            if text.error is not None:
                message = f"frame at byte {frame.start} does not decompress: {text.error}"
                self.notes.find("format.zstd", Severity.ERROR, message)
                return
            if not frame.complete:
                self.notes.find(
                    "format.torn-frame", Severity.WARNING, f"torn final frame at byte {frame.start} (crash tail)"
                )
            for lines in text.blocks(not self.notes.strict):
                yield from self.records.run(lines, line_no)
                line_no += len(lines)
            tail = text.tail
            if frame.complete and (tail or self.records.scan.defect is not None):
                self._torn_frame(frame.start, line_no + (1 if tail else 0))
                return
            if tail:
                self.notes.torn(line_no + 1, len(tail))
            if frame.complete:
                at, plaintext = frame.end, plaintext + len(text.text)
        if not saved:
            self.save(at, line_no, plaintext, False)

    def _together(self, batch: FrameBatch, before: int) -> Generator[Entry, None, int | None]:
        """The entries of complete frames that each end a record (`frames.FrameBatch`), line
        `before + 1` on; the number of their last line, or None where a defect in one of them
        ended the log: a defect inside a complete frame is fatal, and as when each frame is read
        alone, past it only its own frame's lines are scanned (`Records.past_defect`) and the
        frames after it are not read."""
        records = self.records
        records.batch = (batch, before)
        line_no = before
        try:
            for lines in batch.blocks(not self.notes.strict):
                yield from records.run(lines, line_no)
                line_no += len(lines)
        finally:
            records.batch = None
        first, defect = batch.frames[0], records.scan.defect
        if defect is None:
            self.advance(batch.frames[-1].end - first.start)
            return line_no
        k, last_line = frame_of(batch, before, defect.line)
        self.advance(batch.frames[k].end - first.start)
        self._torn_frame(batch.frames[k].start, last_line)
        return None

    def _torn_frame(self, start: int, line: int) -> None:
        """A complete frame holding a torn or invalid record: fatal (session-log.md §9.3)."""
        message = f"complete frame at byte {start} contains a torn or invalid JSONL record"
        self.notes.find("format.zstd", Severity.ERROR, message, line)
