"""The events the judge asks the reader for beside the schedule changes (a `logfile.Selector`):
those that may bear profile clues (invariant.detect) and the `schedule_*` tool calls with their
results (invariant.tools.judge). Asked by bytes first: most events of these types are about
something else, and their data is never decoded."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate, compress, count, repeat
from operator import add, eq

from invariant.detect import CLUE_TYPES, NEEDLES, REQUEST_HEADER
from invariant.tools.judge import TOOL_CALL, TOOL_RESULT, TOOL_TYPES, result_call_id, schedule_call

# `by_bytes` and `screen` scan for `schedule`/`SCHEDULE REMINDER` before the needles themselves,
# in lines that need not be UTF-8 (an ASCII needle is in a line's bytes exactly when it is in its text)
_LOWER, _UPPER = b"schedule", b"SCHEDULE REMINDER"
"""Every needle holds one of them (the longer, the faster a scan for it)."""
assert all(_LOWER in needle or _UPPER in needle for needle in NEEDLES)
assert all(needle.isascii() for needle in NEEDLES)
_PLAIN_ID = re.compile(r"[A-Za-z0-9_.:-]+")
"""A call id every JSON writer spells as itself."""
_TYPES = CLUE_TYPES | TOOL_TYPES


@dataclass
class TellingEvents:
    """The judge's selector over one log (it remembers the calls awaiting their results)."""

    _tools_read: bool = False
    _open_calls: dict[str, bytes] = field(default_factory=dict)
    """The `schedule_*` calls selected and not yet answered, each with the bytes its result's
    line must hold (empty: an id whose escaping may vary, so every result is read)."""

    @property
    def types(self) -> frozenset[str]:
        return _TYPES

    def by_bytes(self, tag: str, line: bytes) -> bool:
        """A tool call's line holds `schedule_`, a result's the id of an open call; an event of
        CLUE_TYPES holds a needle (of the request headers only the log's first: the tools of a
        session are registered once). Every needle is ASCII (a call id with another character
        asks every result), so a line need not be UTF-8 to be asked about."""
        if tag in TOOL_TYPES:
            if tag == TOOL_CALL:
                return b"schedule_" in line
            return any(needle in line for needle in self._open_calls.values())
        if tag == REQUEST_HEADER:
            if self._tools_read:
                return False
            self._tools_read = True
        # each needle holds `schedule` or `SCHEDULE REMINDER`, which most messages lack: two scans, not four
        return (_LOWER in line or _UPPER in line) and any(needle in line for needle in NEEDLES)

    def screen(self, tags: list[str], lines: list[bytes]) -> list[bool]:
        """`by_bytes`'s bound for a run, found in C: of the request headers only the log's first
        can tell (the others, large, are not scanned); another line holding neither `schedule`
        nor `SCHEDULE REMINDER` holds no needle and no `schedule_` call (`_mentions`); a result
        may answer a call only if one is open or a call of the run may open one. It changes
        nothing: `by_bytes` decides on the lines it keeps."""
        heads = _where(tags, REQUEST_HEADER) if REQUEST_HEADER in tags else []
        if heads:
            lines = list(lines)
            for k in heads:
                lines[k] = b""
        told = _mentions(lines)
        may_open = TOOL_CALL in tags and any(told)
        if heads and not self._tools_read:
            told[heads[0]] = True
        if self._open_calls or may_open:
            for k in _where(tags, TOOL_RESULT):
                told[k] = True
        return told

    def by_event(self, tag: str, event: dict[str, object]) -> bool:
        """A `schedule_*` call (now open), or the result of an open one (now answered); every
        clue-bearing event whose bytes told."""
        if tag == TOOL_CALL:
            call = schedule_call(event)
            if call is None:
                return False
            plain = _PLAIN_ID.fullmatch(call[0]) is not None
            self._open_calls[call[0]] = b'"' + call[0].encode() + b'"' if plain else b""
            return True
        if tag in TOOL_TYPES:
            answered = result_call_id(event)
            return answered is not None and self._open_calls.pop(answered, None) is not None
        return True


def _where(tags: list[str], tag: str) -> list[int]:
    """The positions of `tag` in `tags`."""
    return list(compress(range(len(tags)), map(eq, tags, repeat(tag))))


def _mentions(lines: list[bytes]) -> list[bool]:
    """Which lines hold `_LOWER` or `_UPPER`: the lines joined are scanned once for each, and a
    hit's line found by bisection on where the lines end (a line once told is skipped)."""
    told = [False] * len(lines)
    joined = b"\n".join(lines)
    ends: list[int] | None = None
    for needle in (_LOWER, _UPPER):
        at = joined.find(needle)
        while at >= 0:
            if ends is None:  # each line's end in `joined`, its separator included
                ends = list(map(add, accumulate(map(len, lines)), count(1)))
            k = bisect_right(ends, at)
            told[k] = True
            at = joined.find(needle, ends[k])
    return told
