"""The records stage's fast path: runs of lines decoded at once (fastruns.py), behind the exact
path's interface (records.py).

Where only schedule changes are asked for, most lines need no event of their own: a run is
decoded into light records, the committed-record checks are made on the run, and only the
events yielded are built (and, where someone hears the other records, a replay's stager, each
of theirs, as the exact path hands them over). Each line the decoder refuses, or whose
record it cannot vouch for (`fastruns.in_line`), is read the exact way, and the lines between go
on fast. The property tests in tests/test_fastpath.py hold the two paths to the same answers.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Generator, Iterator
from itertools import compress

from invariant.logshapes import ROW_TAGS
from replay.lines.chunks import decode_row
from replay.lines.jsonline import BeyondBound, located
from replay.logs.envelope import Record
from replay.logs.fastruns import decode_run, event_of, in_line, kinds_for, learn
from replay.logs.records import Entry, Records

_SLICE = 8192
"""Lines decoded ahead of the scan: past a defect nothing more is decoded (a crafted tail of
refused lines would cost a decode and a refusal each)."""
_NOTHING: frozenset[str] = frozenset()


def _utf8(line: bytes) -> bytes | None:
    """`line` when it is valid UTF-8 (an Entry's `raw`), else None."""
    if line.isascii():
        return line
    try:
        line.decode()
    except UnicodeDecodeError:
        return None
    return line


class FastRecords(Records):
    """The records stage reading runs of lines fast (a schedule-only read)."""

    def lines(self, lines: list[bytes], before: int) -> Iterator[Entry]:
        """The entries of `lines`, decoded fast a slice at a time; past a defect no more is decoded."""
        for start in range(0, len(lines), _SLICE):
            if self.scan.defect is not None:
                self.past_defect(lines[start:], before + start)
                return
            yield from self._slice(lines[start : start + _SLICE], before + start)

    def _slice(self, lines: list[bytes], before: int) -> Iterator[Entry]:
        records, refused = decode_run(lines)
        at, count = 0, len(records)
        while at < count:
            if self.scan.defect is not None:
                self.past_defect(lines[at:], before + at)
                return
            if records[at] is None:  # refused by the decoder: read exactly
                learn(lines[at])
                yield from super().lines(lines[at : at + 1], before + at)
                at += 1
                continue
            k = bisect_left(refused, at)
            end = refused[k] if k < len(refused) else count
            at += yield from self._window(records[at:end], lines[at:end], before + at)  # type: ignore[arg-type]
            if at < end:  # a record out of line: read exactly
                yield from super().lines(lines[at : at + 1], before + at)
                at += 1

    def _window(self, records: list[Record], lines: list[bytes], before: int) -> Generator[Entry, None, int]:
        """The entries of decoded `records` (line `before + 1` on) up to the first the fast
        decoder cannot vouch for (`fastruns.in_line`); returns how many were taken. Of those,
        the load checks read the checked types (fast where `loadfast` is sure), and the
        schedule changes, cutting markers and selected events are yielded (the selector screens
        the lines of its types for the whole window first, and is asked about those it keeps)."""
        select, budget = self.select, self.budget
        known = kinds_for(_NOTHING if select is None else select.types)
        roles = known.roles_cut if self.marks_cut else known.roles
        count, version = self.scan.event_count, self.version or 0
        kinds, starts, stop, checked, wanted, selected, guard = in_line(
            records, lines, count, not self.marks_cut, roles, self.surface, version
        )
        if guard is not None:
            self.unknown_at(starts[guard], self.at(before + guard + 1), known.tag_of[kinds[guard]])
        tag_of, message_ids, verdicts = known.tag_of, self.load_checks.message_ids, known.verdicts
        i = 0
        try:
            for i in checked:
                record = records[i]
                verdict = verdicts.get(kinds[i])
                found = None if verdict is None else verdict(record.data)  # type: ignore[attr-defined]
                if found is None:
                    self.check_load(event_of(record, lines[i], budget), self.at(before + i + 1))
                elif found:
                    message_ids[record.seq] = found
            if selected:
                assert select is not None
                tags = list(map(tag_of.__getitem__, map(kinds.__getitem__, selected)))
                selected = list(compress(selected, select.screen(tags, list(map(lines.__getitem__, selected)))))
                if selected:
                    wanted = sorted(wanted + selected)
            heard = 0  # the records before it went to `others` (when someone hears them)
            for i in wanted:
                kind = kinds[i]
                if kind is known.change:
                    event = event_of(records[i], lines[i], budget)
                elif kind is known.marker:
                    if not self.cuts(event := event_of(records[i], lines[i], budget), starts[i]):
                        continue
                else:
                    assert select is not None
                    tag = tag_of[kind]
                    if not (
                        select.by_bytes(tag, lines[i])
                        and select.by_event(tag, event := event_of(records[i], lines[i], budget))
                    ):
                        continue
                raw = _utf8(lines[i][:-1])
                if self.others is not None:
                    self._heard(lines, starts, heard, i, before)
                    heard = i + 1
                    raw = self.value_of(lines[i][:-1])[1]  # (its bytes where the exact path keeps them)
                self.scan.advance(starts[i] + 1)
                yield Entry(self.at(before + i + 1), starts[i], event, None, raw)
            if self.others is not None:
                self._heard(lines, starts, heard, stop, before)
        except BeyondBound as bound:  # (located at its record's line)
            raise located(bound, self.at(before + i + 1)) from None
        self.scan.advance(starts[stop])
        return stop

    def _heard(self, lines: list[bytes], starts: list[int], start: int, end: int, before: int) -> None:
        """Tell `others` of the committed records `start` to `end` of a window, as the exact path
        tells them (each line's JSON value, a packed row as its row)."""
        others = self.others
        assert others is not None
        for i in range(start, end):
            value, line = self.value_of(lines[i][:-1])
            assert type(value) is dict  # (a record the fast decoder vouched for is a JSON object)
            tag = value.get("type")
            if tag in ROW_TAGS:
                assert isinstance(tag, str)
                self.scan.advance(starts[i + 1])
                others(self.at(before + i + 1), starts[i], None, decode_row(value, tag), line)
            else:
                self.scan.advance(starts[i] + 1)
                others(self.at(before + i + 1), starts[i], value, None, line)
