"""Following files and folders as their logs are written (`schedlog watch`): which logs to look
at, and when (each look: follow.py).

The operating system says which files changed (watchfiles: inotify, FSEvents, ...; where its
events do not reach, a network file system say, watchfiles polls every `poll` seconds), and
only those are looked at: a folder of 1,000 logs costs what its appends cost. A change to the
folders themselves (a log created, removed, renamed) makes the walk be done again, so that a
new log is picked up with the generation rule `verify` applies (discover.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Collection, Generator, Iterable, Iterator
from dataclasses import dataclass, field

from replay.judge.verdicts import Verdict
from replay.live.follow import Kind, Look, WatchEvent, look
from replay.reading import Reading
from replay.sources.discover import LOG_SUFFIXES, STDIN, Skipped, discover, is_url
from replay.sources.sqlitenames import SESSION_SEPARATOR

DEBOUNCE_MS = 200
"""At most this long between a first change and its look, however busy the writer (watchfiles
gathers the changes that follow within `STEP_MS` of each other, up to this bound)."""
STEP_MS = 30
TICK_MS = 1000
"""How often the wait returns without a change (to see whether the run is idle, and let a
signal in)."""


@dataclass
class Watch:
    """The logs under `paths`, each with its last look."""

    paths: tuple[str, ...]
    reading: Reading
    skipped: Skipped | None = None
    looks: dict[str, Look] = field(default_factory=dict)
    """By the log's path as the walk names it."""
    names: dict[str, str] = field(default_factory=dict)
    """A log's absolute path (the operating system's events name it so) to the walk's name."""

    def folders(self) -> list[str]:
        """What to ask the operating system about: each folder given, and the folder of each file
        (an object store's URL is polled: it sends no events)."""
        local = [p for p in self.paths if not is_url(p)]
        return sorted({p if os.path.isdir(p) else os.path.dirname(os.path.abspath(p)) for p in local})

    def first(self) -> Iterator[WatchEvent]:
        """The first look at every log found."""
        yield from self._look_at(self._found())

    def again(self, changed: Collection[str] | None) -> tuple[list[WatchEvent], bool]:
        """Look again at the logs among `changed` (absolute paths the operating system named;
        None: every log), and at logs the walk finds anew: the events, and whether any log
        changed at all (its bytes or status)."""
        paths = set(self.looks) if changed is None else {self.names[p] for p in changed if p in self.names}
        paths |= {p for p, seen in self.looks.items() if seen.verdict is Verdict.UNREADABLE}  # watched again
        stores = set() if changed is None else {_store_file(p) for p in changed} - {None}
        paths |= {p for p in self.looks if SESSION_SEPARATOR in p and _store_of(p) in stores}
        named = {os.path.abspath(p) for p in self.paths}
        if (
            changed is None
            or stores & named
            or any(p not in self.names and (_may_be_log(p) or p in named) for p in changed)
        ):
            paths |= self._found() - set(self.looks)
        before = {p: self.looks.get(p) for p in paths}
        events = list(self._look_at(paths))
        return events, any(self.looks.get(p) is not before[p] for p in paths)

    def verdicts(self) -> list[Verdict]:
        return [v.verdict for v in self.looks.values() if v.verdict is not None]

    def _found(self) -> set[str]:
        return {p for p in discover(self.paths, skipped=self.skipped) if p != STDIN}  # a file named is followed

    def _look_at(self, paths: Iterable[str]) -> Iterator[WatchEvent]:
        for path in sorted(paths):
            now, events = look(path, self.looks.get(path), self.reading)
            if now is None:
                self.looks.pop(path, None)
                self.names.pop(os.path.abspath(path), None)
            else:
                self.looks[path] = now
                self.names[os.path.abspath(path)] = path
            yield from events


def _may_be_log(path: str) -> bool:
    return path.endswith(LOG_SUFFIXES)


STORE_WRITES = ("-wal", "-journal")
"""The files beside a SQLite store its writers write a commit to (its `-shm` is written by every
reader too, this watch's own among them: a change to it alone is no commit)."""


def _store_file(changed: str) -> str | None:
    """The store (absolute path) whose commit a changed file may be, None for a `-shm`."""
    if changed.endswith("-shm"):
        return None
    for suffix in STORE_WRITES:
        if changed.endswith(suffix):
            return changed.removesuffix(suffix)
    return changed


def _store_of(session: str) -> str:
    """The absolute path of the store a session name (`STORE#ID`) names."""
    return os.path.abspath(session.rpartition(SESSION_SEPARATOR)[0])


def follow(
    watch: Watch,
    tell: Callable[[WatchEvent], None],
    poll: float | None = None,
    idle: float | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Tell every event of the logs under `watch` as they are written, until `idle` seconds pass
    without a log changing (None: until interrupted). `poll`: look every that many seconds
    instead of asking the operating system (a network file system's changes reach no events)."""
    for event in watch.first():
        tell(event)
    last = clock()
    changes = _changes(watch, poll, idle)
    try:
        for batch in changes:
            events, changed = watch.again(batch)
            for event in events:
                tell(event)
            if changed:
                last = clock()
            if idle is not None and clock() - last >= idle:
                return
    finally:  # the file-event watcher let go here, whatever ends the run (not at the interpreter's exit)
        changes.close()


def _changes(watch: Watch, poll: float | None, idle: float | None) -> Generator[set[str] | None, None, None]:
    """Each time something may have changed: the absolute paths the operating system named
    (an empty set: nothing, the wait ran out), or None every `poll` seconds (look at every log)."""
    wait = TICK_MS if idle is None else max(50, min(TICK_MS, int(idle * 1000)))
    if poll is not None:
        due = time.monotonic() + poll
        while True:
            time.sleep(max(0.0, min(due - time.monotonic(), wait / 1000)))
            if time.monotonic() >= due:
                due = time.monotonic() + poll
                yield None
            else:
                yield set()
    import watchfiles

    for batch in watchfiles.watch(
        *watch.folders(),
        watch_filter=None,
        debounce=DEBOUNCE_MS,
        step=STEP_MS,
        rust_timeout=wait,
        yield_on_timeout=True,
    ):
        yield {os.path.abspath(p) for _, p in batch}


__all__ = ["Kind", "Watch", "WatchEvent", "follow"]
