"""One log followed as it is written (`schedlog watch`): what changed since it was last looked
at, read from where the last look stopped.

A log is append-only, so what a look judged stays the log's prefix while it grows: the next
look resumes the saved reading (replay/logs/readstate.py) and reads only the appended bytes.
A look trusts the prefix when the file is the same one (device and inode), no shorter than
what was committed, and its committed bytes, all of them, hash as the bytes the last look
judged (xxh3-128, the hash the reader took of the very bytes it read: a writer that rewrites
the file under a look is seen at the next). Anything else (a truncation, a replacement, an
edit in place anywhere in the committed bytes) is read again from the start and said as a
`reread`. Bytes past the committed end (a torn line, a torn final frame) are read again at
every look whose file status changed, whatever its size: a torn tail rewritten in place into a
whole line is judged.

A look judges the log as committed: a torn last line (no LF yet) or a torn final frame is a
write in progress, left for a later look (its finding is never told). What a look tells is the
difference between the log's findings now and those told before: new ones, and withdrawn ones
(a finding can wait for a later event: a reminder queued is delivered later), then its verdict
when it changed. So what has been told of a log since its last `reread` is, after every look,
what `verify` says of the log as committed.
"""

from __future__ import annotations

import errno
import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

import xxhash

from invariant.findings import Finding, Severity
from replay.judge.report import SessionReport
from replay.judge.verdicts import Verdict
from replay.logs.readstate import ReadState
from replay.reading import Reading
from replay.sources import inputs
from replay.sources.hashed import Hashing, fed
from replay.sources.sqlitenames import maybe_sqlite, split_name
from replay.sources.zstdframes import MAGIC

if TYPE_CHECKING:
    from replay.logs.logfile import SessionLog

TORN = frozenset({"format.torn-tail", "format.torn-frame"})
"""The findings of a write in progress: never told (the write is judged once it is whole)."""


class Kind(StrEnum):
    """What a watch event says of a log."""

    FINDING = "finding"
    WITHDRAWN = "withdrawn"
    """A finding told before that the log as it now stands no longer has."""
    VERDICT = "verdict"
    REREAD = "reread"
    """The log was truncated, replaced or edited: it is read from the start, and all it holds
    is told again."""
    GONE = "gone"


@dataclass(frozen=True)
class WatchEvent:
    path: str
    kind: Kind
    finding: Finding | None = None
    verdict: Verdict | None = None
    why: str = ""
    """For `reread`: what was seen."""


@dataclass(frozen=True)
class Look:
    """What the last look at a log saw and told."""

    status: tuple[int, int, int, int, int]
    """The file's device, inode, size, modification and change times (-1s: it could not be read)."""
    offset: int
    """The committed bytes: where the saved reading goes on."""
    hashed: Any
    """The xxh3-128 of the committed bytes as the look read them (None: the file changed under
    the reader, nothing is vouched for)."""
    saved: ReadState | None
    told: tuple[Finding, ...]
    verdict: Verdict | None
    """None: nothing judged yet (the file holds no whole line)."""


def told_of(report: SessionReport) -> tuple[Finding, ...]:
    """What a report says of a log as committed, as findings: its findings but a write in
    progress, after its protocol violation (as an error finding of its rule), as verify prints them."""
    found = tuple(f for f in report.findings if f.code not in TORN)
    v = report.violation
    if v is None:
        return found
    return (Finding(v.rule, Severity.ERROR, v.message, v.line, v.pointer, v.index, v.related), *found)


def look(path: str, before: Look | None, reading: Reading) -> tuple[Look | None, list[WatchEvent]]:
    """Look at the log at `path` again (`before`: the last look, None for the first): the new
    look, and the events it tells. A file that is gone gives None (and `gone` if it was seen)."""
    if inputs.replaced_whole(path):
        return _look_at_object(path, before, reading)
    if maybe_sqlite(path) and split_name(path) is not None:
        return _look_at_stored(path, before, reading)
    try:
        st = os.stat(path)
        status = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    except OSError:
        if not os.path.lexists(path):
            return None, [WatchEvent(path, Kind.GONE)] if before is not None else []
        status = (-1, -1, -1, -1, -1)  # there, and cannot be reached (a dangling link): judged unreadable
    if before is not None and status == before.status:
        return before, []
    events: list[WatchEvent] = []
    resume = hasher = None
    if before is not None and before.saved is not None:
        why, hasher = _changed(path, status, before)
        if why:
            events.append(WatchEvent(path, Kind.REREAD, why=why))
            before = None
        elif status[2] == before.offset:  # its status changed, not its bytes (none past the committed end)
            return replace(before, status=status), []
        else:
            resume = before.saved
    report, log = _judged(path, reading, resume, Hashing(hasher, 0 if resume is None else resume.offset))
    if report is None:  # no whole line yet: a log being started (or written again from its start)
        if before is not None and (before.told or before.verdict is not None):
            events.append(WatchEvent(path, Kind.REREAD, why="written again: it holds no whole line now"))
        return Look(status, 0, xxhash.xxh3_128(), None, (), None), events
    told = told_of(report)
    events += _retold(path, before, told, report.verdict)
    saved = log.saved
    offset = saved.offset if saved is not None else log.size
    assert log.hashing is not None
    return Look(status, offset, log.hashing.committed, saved, told, report.verdict), events


def _look_at_object(url: str, before: Look | None, reading: Reading) -> tuple[Look | None, list[WatchEvent]]:
    """`look` at an object, as the poll's listing gives it: the same ETag and size, nothing to
    read; another, the object read whole (an object is replaced, never appended to) and what its
    report says now told against what was told (`_retold`: new findings, withdrawn ones)."""
    from replay.sources import objects

    try:
        known = objects.info(url)
    except OSError as err:
        if err.errno == errno.ENOENT:
            return None, [WatchEvent(url, Kind.GONE)] if before is not None else []
        known = objects.ObjectInfo(url, -1, "")  # there, and cannot be asked about: judged unreadable
    status = (0, xxhash.xxh3_64_intdigest(known.tag.encode()), known.size, 0, 0)
    if before is not None and status == before.status and known.tag:
        return before, []
    report, _ = _judged(url, reading, None, None)
    if report is None:
        return Look(status, 0, xxhash.xxh3_128(), None, (), None), []
    told = told_of(report)
    return Look(status, 0, None, None, told, report.verdict), _retold(url, before, told, report.verdict)


def _look_at_stored(name: str, before: Look | None, reading: Reading) -> tuple[Look | None, list[WatchEvent]]:
    """`look` at a SQLite store's session: its state (store id, incarnation, revision: read
    without its rows) the same, nothing to read; a later revision of the same incarnation, only
    the rows after the last look's saved reading are read (`sqlitestore.grown`; all, where none
    was saved); another state, the session read whole. What its report says now is told against
    what was told. A session the store no longer holds (or a store that cannot be read) is gone
    once seen; one whose reading came out unreadable (its store damaged, or copied while a writer
    began) is read again at the next look, whatever its state."""
    from replay.sources.sqlitestore import session_state

    state = session_state(name)
    if state is None:
        return None, [WatchEvent(name, Kind.GONE)] if before is not None else []
    made, _, revision = state.rpartition(":")  # (the store file, its id and the incarnation; the revision)
    status = (0, xxhash.xxh3_64_intdigest(made.encode()), int(revision), 0, 0)
    if before is not None and status == before.status:
        return before, []
    events: list[WatchEvent] = []
    if before is not None and (status[1] != before.status[1] or status[2] < before.status[2]):
        events.append(WatchEvent(name, Kind.REREAD, why="made anew (another store, or another incarnation)"))
        before = None
    resume = None if before is None else before.saved  # (grown: only the rows after its saved reading are read)
    report, log = _judged(name, reading, resume, None, saving=True)
    if report is None:  # pragma: no cover (a store's session is never a log being started)
        return Look(status, 0, None, None, (), None), events
    told = told_of(report)
    if report.verdict is Verdict.UNREADABLE:  # (the store could not be read then: looked at again next time)
        status = (*status[:2], -1, 0, 0)
    look = Look(status, 0, None, log.saved, told, report.verdict)
    return look, events + _retold(name, before, told, report.verdict)


def _changed(path: str, status: tuple[int, int, int, int, int], before: Look) -> tuple[str, Any]:
    """Why the last look's reading cannot go on (empty: it can), and the hash of the committed
    bytes as they are now (the state the resumed read goes on with)."""
    if status[:2] != before.status[:2]:
        return "replaced (another file under its name)", None
    if status[2] < before.offset:
        return f"truncated ({status[2]:,} bytes, {before.offset:,} committed before)", None
    try:
        now = fed(path, before.offset)
    except OSError:
        now = None
    if now is None or before.hashed is None or now.digest() != before.hashed.digest():
        if status[2] == before.status[2]:
            return "written again in place (its size kept, its bytes changed)", None
        return "edited (its committed bytes changed)", None
    return "", now


def _judged(
    path: str, reading: Reading, resume: ReadState | None, hashing: Hashing | None, saving: bool = False
) -> tuple[SessionReport | None, SessionLog]:
    """The log's report as committed and the reading that made it (its state saved at its last
    committed line where `hashing`, with the hash of the bytes it judged, or `saving`); no report
    where the file holds no whole line yet (a plain log whose first line is still being written,
    or an empty file)."""
    from replay.judge.verify import verify_log
    from replay.logs.logfile import SessionLog

    log = SessionLog(path, reading, resume=resume, hashing=hashing, saving=saving or hashing is not None)
    if resume is None and _unstarted(path):
        return None, log
    return verify_log(log), log


def _unstarted(path: str) -> bool:
    """An empty file, or a plain one with no LF yet (its header is being written)."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
            if not head:
                return True
            if head.startswith(MAGIC):
                return False
            while b"\n" not in head:
                more = f.read(1 << 20)
                if not more:
                    return True
                head = more
    except OSError:
        return False  # the reader says why it cannot be read
    return False


def _retold(path: str, before: Look | None, told: tuple[Finding, ...], verdict: Verdict | None) -> list[WatchEvent]:
    """The events that take what was told (`before`) to what is now (`told`, `verdict`)."""
    was = Counter(before.told) if before is not None else Counter[Finding]()
    now = Counter(told)
    events = [WatchEvent(path, Kind.WITHDRAWN, finding=f) for f in _each(was - now, before.told if before else ())]
    events += [WatchEvent(path, Kind.FINDING, finding=f) for f in _each(now - was, told)]
    if verdict is not None and (before is None or before.verdict is not verdict):
        events.append(WatchEvent(path, Kind.VERDICT, verdict=verdict))
    return events


def _each(counts: Counter[Finding], order: Iterable[Finding]) -> list[Finding]:
    """The findings `counts` holds, in the order of `order` (the report's, line by line)."""
    left = Counter(counts)
    out = []
    for f in order:
        if left[f] > 0:
            left[f] -= 1
            out.append(f)
    return out
