"""How the verdict cache decides, for one log, what of it must be read (issue 50).

An entry is keyed by what decides the report (schedlog's code, the reading's options) and by
the log's real path; it holds the file's identity (device, inode), the size judged and a hash
of those bytes (xxh3-128) taken as its reader read them (replay/sources/hashed.py: a file rewritten
under a run is never stored under its new bytes), where the saved reading stands, the names of
the session's other generations beside it, the report, and the reading saved at the last
committed line (replay/logs/readstate.py), sealed to its entry. Then:

- the same file, the same size, the same hash: the report from the cache (a stat match alone
  is no proof: an edit can keep size and mtime, so the bytes are always hashed);
- the same file, larger, its first bytes hashing as judged: it grew; the saved reading is
  resumed, and only the appended bytes are read;
- anything else (edited, truncated, replaced, another header, other generations beside it, an
  entry that does not check): read whole, saying why (`SessionReport.read_why`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import xxhash

from invariant.filenames import file_version
from replay.cache.cachestore import LIMIT, CacheProblem, Miss, VerdictStore
from replay.judge.held import Held
from replay.judge.verdicts import Verdict
from replay.reading import Reading
from replay.sources.discover import generations_beside
from replay.sources.hashed import Hashing, fed
from replay.sources.inputs import UNSIZED, Found, absolute, identity

if TYPE_CHECKING:  # the judge, the reader and the reports load on the first log the cache does not answer for
    from replay.judge.report import SessionReport
    from replay.judge.verify import Judgement
    from replay.logs.logfile import SessionLog
    from replay.sources.bytesource import Data


class Use(StrEnum):
    CACHED = "from cache"
    RESUMED = "resumed"
    WHOLE = "read whole"


class Judged(NamedTuple):
    """What an entry says first: which bytes were judged, and their report: pickled, with what
    the text output needs of it beside it (replay.judge.held). Stored as a plain tuple (`put`,
    `_judged`) of plain values, which marshal writes: every hit reads one."""

    device: int
    inode: int
    size: int
    digest: bytes
    offset: int
    """Where the saved reading stands (the committed end; -1: none was saved)."""
    beside: tuple[str, ...]
    path: str
    """The path the report was made for (its text names it)."""
    verdict: str
    told: str
    report: bytes


def _judged(got: object) -> Judged | Miss:
    """The entry's head read back as a Judged, or a Miss where it holds something else."""
    if isinstance(got, Miss):
        return got
    if type(got) is not tuple or len(got) != len(Judged._fields):
        return Miss("the cache entry holds something else")
    return Judged._make(got)


@cache
def fingerprint() -> str:
    """What made the entries: schedlog's code and data (every file of its two packages, named
    with its size and modification time, as Python's own bytecode cache trusts a source: reading
    them all cost a hit run a tenth of its time), Python's version and the tz rules' (tzdata's
    IANA release). An entry made by anything else is not trusted."""
    import tzdata  # type: ignore[import-untyped]  # (no stubs: IANA_VERSION is a str)

    h = xxhash.xxh3_128()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for package in ("invariant", "replay"):
        for name, st in _sources(os.path.join(root, package), package):
            h.update(f"{name}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return f"{h.hexdigest()}:{sys.version.split()[0]}:{tzdata.IANA_VERSION}"


def _sources(folder: str, name: str) -> list[tuple[str, os.stat_result]]:
    """The .py and .json files under `folder` (named `name`), by their names under it, in order."""
    found = []
    with os.scandir(folder) as it:
        for item in it:
            under = f"{name}/{item.name}"
            if item.is_dir() and item.name != "__pycache__":
                found.extend(_sources(item.path, under))
            elif item.name.endswith((".py", ".json")) and item.is_file():
                found.append((under, item.stat()))
    return sorted(found, key=lambda pair: pair[0])


_STORES: dict[tuple[Path, int], VerdictStore | None] = {}
"""The stores this process opened, by folder and process id (a forked worker must not use its
parent's connection: it opens its own)."""


def store_in(folder: Path) -> VerdictStore | None:
    """This process's store of the cache in `folder` (opened once; None where it cannot be:
    whoever opened it first in the run said why, `usable`)."""
    at = (folder, os.getpid())
    if at not in _STORES:
        usable(folder)
    return _STORES[at]


def usable(folder: Path) -> str:
    """Why the cache in `folder` cannot be used ("": it can, and this process holds it open
    for the run)."""
    store, problem = open_store(folder)
    _STORES[(folder, os.getpid())] = store
    return problem


def let_go(folder: Path | None, close: bool) -> None:
    """Commit this process's writes to the store in `folder` (none: no cache was asked); with
    `close`, close and forget it (the run is over: the next opens the cache as it then is)."""
    at = None if folder is None else (folder, os.getpid())
    store = None if at is None else _STORES.get(at)
    if store is not None:
        store.close() if close else store.flush()
    if close and at is not None:
        _STORES.pop(at, None)


def open_store(folder: Path) -> tuple[VerdictStore | None, str]:
    """The store in `folder`, or None and why it cannot be used (the run goes on without it)."""
    try:
        return VerdictStore(folder, fingerprint(), _limit()), ""
    except CacheProblem as err:
        return None, str(err)


def _limit() -> int:
    text = os.environ.get("SCHEDLOG_CACHE_LIMIT_MB", "")
    return int(text) << 20 if text.isdigit() else LIMIT


def default_folder() -> Path:
    """`$SCHEDLOG_CACHE_DIR`, else the platform's user cache folder's `schedlog/verdicts`."""
    named = os.environ.get("SCHEDLOG_CACHE_DIR")
    if named:
        return Path(named)
    import platformdirs

    return Path(platformdirs.user_cache_dir("schedlog")) / "verdicts"


def reading_key(reading: Reading) -> str:
    """The reading's options that decide a report, as text."""
    profile = None if reading.profile is None else reading.profile.name
    return repr(
        (
            profile,
            reading.mode.value,
            reading.seed_length,
            reading.ideal,
            reading.now,
            reading.retention,
            reading.tool_surface,
            reading.selection,
        )
    )


def beside(path: str) -> tuple[str, ...]:
    """The other generations beside a file whose name identifies one (their names decide a finding)."""
    return tuple(generations_beside(path)) if file_version(os.path.basename(path)) is not None else ()


@dataclass
class Consulted:
    """What the cache says of one regular file (or object) before it is read: the entry trusted
    for the file's first `judged.size` bytes (`hashed`: the hash of its first `judged.offset` of
    them, where its saved reading goes on), or why none is."""

    path: str
    real: str
    """The absolute path (or URL) the entry is keyed by (and names)."""
    key: str
    found: Found
    judged: Judged | None
    hashed: Any
    why: str

    @property
    def unchanged(self) -> bool:
        """The entry stands for the input whole (a store's session: trusted by its tag alone;
        another tag, its rows grown: `_why_not`)."""
        if self.judged is None:
            return False
        if self.found.size == UNSIZED:
            return self.found.tag == self.judged.digest
        return self.found.size == self.judged.size


def located(path: str, options: str) -> tuple[str, str]:
    """The absolute path of the file at `path` (an object's URL as given), and the key of its
    entry read with `options`."""
    real = absolute(path)
    return real, entry_key(real, options)


def entry_key(real: str, options: str) -> str:
    """The key of the entry of the file at absolute path `real` read with the options `options`
    (`reading_key`)."""
    return xxhash.xxh3_128_hexdigest(options.encode() + b"\0" + os.fsencode(real))


def consult(path: str, reading: Reading, store: VerdictStore, where: tuple[str, str] | None = None) -> Consulted | None:
    """What the cache holds of the file at `path` read with `reading` (`where`: its absolute
    path and its entry's key, where known), checked against its bytes; None for anything but a regular file (a pipe, a
    device, a path that cannot be read: the reader says what it is, and nothing is cached)."""
    found = identity(path)
    if found is None:
        return None
    real, key = where or located(path, reading_key(reading))
    got = _judged(store.get(key))
    if isinstance(got, Miss):
        return Consulted(path, real, key, found, None, None, got.why)
    why, hashed = _why_not(got, found, path)
    return Consulted(path, real, key, found, None if why else got, hashed, why)


def current_size(path: str) -> int | None:
    """The bytes the file (or object) at `path` holds now, None where it is none to cache (`_found`)."""
    found = identity(path)
    return None if found is None else found.size


def reader(
    consulted: Consulted,
    reading: Reading,
    store: VerdictStore,
    progress: Any = None,
    held: Data | OSError | None = None,
) -> tuple[SessionLog, Use]:
    """The log to judge, and how: resumed from the entry's saved reading where the file is the
    one judged, unchanged (its torn tail read again, if any) or grown; else read whole (from
    `held`, its bytes where they were read already: a small object's)."""
    from replay.logs.logfile import SessionLog
    from replay.logs.readstate import ReadState

    c = consulted
    if c.judged is not None:
        rest = store.get(c.key, "rest")
        if isinstance(rest, ReadState) and rest.offset == c.judged.offset and rest.judge is not None:
            use = Use.CACHED if c.unchanged else Use.RESUMED
            resumed = None if c.found.tag else Hashing(c.hashed, rest.offset)  # (a store's session: by its state)
            return SessionLog(c.path, reading, progress=progress, resume=rest, hashing=resumed, saving=True), use
        c.why = rest.why if isinstance(rest, Miss) and rest.why else "its reading could not be saved"
        c.judged = c.hashed = None
    hashing = None if c.found.tag else Hashing()  # (an object stands for its bytes by its ETag)
    saving = _resumable(c.found)
    return SessionLog(c.path, reading, held, progress=progress, hashing=hashing, saving=saving), Use.WHOLE


def remember(consulted: Consulted, store: VerdictStore, log: SessionLog, report: SessionReport, use: Use) -> Held:
    """`report`, saying how it was had, its entry written where the log was read (an unreadable
    one is not kept: it is read whole each time, and is small or a read that failed)."""
    c = consulted
    if use is Use.RESUMED and log.resume is None:  # (a store's rows did not go on from the saved reading)
        use, c.why = Use.WHOLE, "what was added does not go on from where its reading was saved"
    held = Held.of(replace(report, read=use, read_why=c.why))
    if use is not Use.CACHED and report.verdict is not Verdict.UNREADABLE and log.size:
        f = c.found
        digest = f.tag or (None if log.hashing is None else log.hashing.digest)  # (the very bytes judged)
        pickled = _pickled(report)
        if digest is not None and pickled is not None and (not f.tag or f.size in (UNSIZED, log.size)):
            saved = log.saved if _resumable(f) else None
            judged = Judged(
                f.device, f.inode, log.size, digest, -1 if saved is None else saved.offset, beside(c.path),
                report.path, report.verdict.value, held.text(), pickled,
            )  # fmt: skip
            store.put(c.key, c.real, tuple(judged), saved)  # (a plain tuple: see Judged)
    return held


def _resumable(found: Found) -> bool:
    """Whether a reading of the input is saved to go on from: a file's or a store session's
    (appended to), not an object's (replaced whole, never appended to)."""
    return not found.tag or found.size == UNSIZED


def _pickled(report: SessionReport) -> bytes | None:
    """`report` pickled, or None where it cannot be (nested past pickle's recursion: not cached).
    Its path and how it was had are the hit's own (`Held.report`)."""
    import pickle  # (a hit never unpickles: its text was kept, `Held`)

    try:
        return pickle.dumps(report, protocol=pickle.HIGHEST_PROTOCOL)
    except (RecursionError, pickle.PicklingError, TypeError, AttributeError):
        return None


def verify_cached(
    path: str,
    reading: Reading,
    store: VerdictStore,
    progress: Any = None,
    where: tuple[str, str] | None = None,
) -> Held:
    """The report `verify_path` gives for the file at `path`: from the cache where the file is
    unchanged, resumed where it grew, else read whole (a Host task store is judged at `now`,
    never cached). The judge is loaded only for a log the cache does not answer for."""
    c = consult(path, reading, store, where)
    if c is not None and c.unchanged:
        assert c.judged is not None
        if progress is not None:
            progress(c.found.size)
        j = c.judged
        told = j.told if j.path == path else None  # (the text names the path it was made for)
        return Held(path, Verdict(j.verdict), read=Use.CACHED, told=told, pickled=j.report)
    from replay.judge.verify import store_report, verify_log, verify_path

    if c is None:
        return Held.of(replace(verify_path(path, reading, progress=progress), read=Use.WHOLE))
    from replay.sources.inputs import once

    held = once(path) if c.judged is None else None  # (an object's one request: the sniff and the read share it)
    if c.judged is None and (task_store := store_report(path, reading, held)) is not None:
        return Held.of(replace(task_store, read=Use.WHOLE))
    log, use = reader(c, reading, store, progress, held)
    return remember(c, store, log, verify_log(log), use)


def verified_each(paths: Sequence[str], reading: Reading, cache: Path | None, progress: Any = None) -> Iterator[Held]:
    """`verified` of each of `paths` in order, held (a hit's report is made only when asked for),
    the cache's entries for them fetched a window of logs at a time (`VerdictStore.read_ahead`)."""
    store = None if cache is None else store_in(cache)
    if store is None:
        yield from (Held.of(verified(path, reading, None, progress)) for path in paths)
        return
    options = reading_key(reading)
    for at in range(0, len(paths), _WINDOW):
        window = paths[at : at + _WINDOW]
        places = [located(path, options) for path in window]
        store.read_ahead([key for _, key in places])
        for path, where in zip(window, places, strict=True):
            yield verify_cached(path, reading, store, progress, where)


_WINDOW = 1000
"""Logs whose entries are fetched together (a window's heads are held in memory at once)."""


def verified(path: str, reading: Reading, cache: Path | None, progress: Any = None) -> SessionReport:
    """`verify_path`, through the verdict cache in folder `cache` when given (`verify_cached`)."""
    store = None if cache is None else store_in(cache)
    if store is None:
        from replay.judge.verify import verify_path

        return verify_path(path, reading, progress=progress)
    return verify_cached(path, reading, store, progress).report()


def judged(
    path: str, reading: Reading, cache: Path | None = None, progress: Any = None
) -> tuple[SessionReport, Judgement]:
    """`judge_log` of the log at `path` (the report and the judgement behind it, for the
    stories and pictures told of a session), its entry in the verdict cache in folder `cache`
    (when given) written anew: the judgement holds every change's step, which no saved state
    keeps, so the log is read whole."""
    from replay.judge.verify import judge_log
    from replay.logs.logfile import SessionLog

    store = None if cache is None else store_in(cache)
    c = None if store is None else consult(path, reading, store)
    if store is None or c is None:
        return judge_log(SessionLog(path, reading, progress=progress), keep=True)
    c.judged = c.hashed = None
    log, use = reader(c, reading, store, progress)
    report, judgement = judge_log(log, keep=True)
    return remember(c, store, log, report, use).report(), judgement


def _stored_why_not(saved: Judged, state: str) -> str:
    """Why `saved` does not stand for a store's session in `state` (sqlitestore.session_state;
    empty: it does, whole or for the rows up to its saved reading, which goes on: `grown`)."""
    from replay.sources.sqlitestore import grown

    before = saved.digest.decode(errors="replace")
    if state == before:
        return ""
    if not grown(before, state):
        return "the session changed since it was judged (made anew, or another store)"
    return "" if saved.offset >= 0 else "the session grew, and no reading of it was saved to go on from"


def _why_not(saved: Judged, found: Found, path: str) -> tuple[str, Any]:
    """Why `saved` does not stand for the file (empty: it does, for its first `saved.size`
    bytes), and the hash of its first `saved.offset` (to go on with from the saved reading). An object stands
    for its bytes by its ETag: the same ETag and size, the same bytes (none are read); a SQLite
    store's session by its (store id, incarnation, revision), which every write to it moves."""
    if found.size == UNSIZED:
        return _stored_why_not(saved, found.tag.decode()), None
    if found.tag:
        if found.tag != saved.digest or found.size != saved.size:
            return "the object changed since it was judged (another ETag)", None
        return ("the session's generations beside it changed", None) if beside(path) != saved.beside else ("", None)
    if (saved.device, saved.inode) != (found.device, found.inode):
        return "the file was replaced since it was judged (another inode)", None
    if found.size < saved.size:
        return f"the file is shorter than when judged ({found.size:,} < {saved.size:,} bytes): truncated", None
    if beside(path) != saved.beside:
        return "the session's generations beside it changed", None
    at = max(saved.offset, 0)
    h = fed(path, at)
    resumed = None if h is None else h.copy()  # (the state where the saved reading goes on)
    if h is None or fed(path, saved.size, h, at) is None or h.digest() != saved.digest:
        return f"its first {saved.size:,} bytes changed since they were judged (edited in place)", None
    return "", resumed
