"""The verdict cache's store: one SQLite file in the cache folder, an entry per log and reading.

SQLite gives what the cache must be: written atomically (a transaction is whole or absent, so
a killed run leaves no half entry), shared by runs at once (its locks; WAL lets readers go on
beside a writer), and bounded (least recently used entries are deleted past `limit` bytes).
Each entry's blob carries its own checksum and the code fingerprint it was made by: a blob that
does not check, does not read back, or comes from other code is not trusted (`Miss.why`). An
entry's head (what every hit reads: plain values) is written with `marshal`, which reads back
in a third of pickle's time and is loaded with the interpreter; its rest (the saved reading, read
only to resume) is pickled.

Anything wrong with the folder or the file (cannot be created, read-only, not a database) is
a `CacheProblem`: the run goes on without the cache, warned once. The cache is trusted as the
user's own files are: its checksums catch damage, not someone who can write the cache folder.
"""

from __future__ import annotations

import marshal
import os
import sqlite3
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import xxhash

DB_NAME = "verdicts.sqlite"
LIMIT = 1 << 30
"""The bytes of entries kept by default (`$SCHEDLOG_CACHE_LIMIT_MB` sets another bound)."""
_SCHEMA = 3
_COLUMNS = ("key", "path", "used", "size", "head", "rest")
_FLUSH_EVERY = 256
_AHEAD = 500
"""Keys per query of `read_ahead` (below SQLite's bound on a statement's parameters)."""
_MAPPED = 1 << 30
"""The bytes of the database SQLite reads through a memory map (at most: it maps the file's size)."""
_LOCK_SAID = 1.0
"""Seconds a write waits for another run's lock before the wait is said on standard error."""
_LOCK_WAIT = 10.0
"""Seconds a write then waits for the lock at most: past them its entries are given up (said)."""
_TOUCH_AFTER = 3600 * 10**9
"""An entry read is marked used again only when its mark is older than this (an hour): the
order the least recently used are evicted in needs no finer clock, and most reads write nothing."""


def _say(text: str) -> None:
    """A line on standard error (the cache's own news: the run's output is never touched)."""
    print(text, file=sys.stderr, flush=True)


def _is_locked(err: sqlite3.OperationalError) -> bool:
    return "locked" in str(err) or "busy" in str(err)


class CacheProblem(Exception):
    """The cache folder or file cannot be used: the run goes on without the cache."""


@dataclass(frozen=True)
class Miss:
    """No entry to trust, and why (said with `-v`); `why` is empty when there was none."""

    why: str = ""


@dataclass(frozen=True)
class CacheInfo:
    folder: str
    entries: int
    bytes: int
    limit: int
    file_bytes: int


COMPRESSED_FROM = 1 << 16
"""A rest pickled to more bytes than this is stored compressed (Zstandard): a saved reading
holds the conversation's live surface, its ids and kept lines, which compress about twelvefold;
a small one is stored as it is (compressing it would cost more than it saves)."""


def _dumps(value: object, column: str) -> bytes:
    """`value` as its column writes it: a head by marshal; the rest pickled, behind one byte
    saying whether it is compressed (`COMPRESSED_FROM`)."""
    if column == "head":
        return marshal.dumps(value)  # type: ignore[arg-type]  # (one it cannot write: ValueError, `put`)
    import pickle

    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    if len(data) <= COMPRESSED_FROM:
        return b"P" + data
    import zstandard

    return b"Z" + zstandard.ZstdCompressor(level=3).compress(data)


def _loads(data: bytes, column: str) -> object:
    """A value of `column` read back (`_dumps`; its checksum checked first)."""
    if column == "head":
        return marshal.loads(data)
    import pickle

    if data[:1] == b"Z":
        import zstandard

        return pickle.loads(zstandard.ZstdDecompressor().decompress(data[1:]))
    if data[:1] != b"P":
        raise ValueError("a rest neither pickled nor compressed")
    return pickle.loads(data[1:])


def _binding(key: str, head: bytes) -> bytes:
    """What seals an entry's rest to its entry: the key's hash and the head's checksum (a rest
    moved from another entry, or left from an older write of this one, does not check)."""
    return xxhash.xxh3_128_digest(key.encode()) + head[:16]


def _sealed(fingerprint: str, value: object, column: str, binding: bytes = b"") -> bytes:
    """`value` written by `column`'s codec after the fingerprint of the code that made it (its
    length, then it: checked before the value is read back, as another version's classes may
    not unpickle) and the `binding` to its entry (a rest's, `_binding`), behind their checksum."""
    made_by = fingerprint.encode()
    payload = len(made_by).to_bytes(2, "big") + made_by + binding + _dumps(value, column)
    return xxhash.xxh3_128_digest(payload) + payload


def _checked(blob: bytes, fingerprint: str, column: str, binding: bytes = b"") -> object:
    """The value `blob` holds, or a Miss saying why it is not trusted."""
    if len(blob) < 18:
        return Miss("the cache entry is truncated")
    digest, payload = blob[:16], blob[16:]
    if xxhash.xxh3_128_digest(payload) != digest:
        return Miss("the cache entry does not match its checksum (damaged or cut short)")
    made_by = fingerprint.encode()
    if payload[2 : 2 + len(made_by)] != made_by or int.from_bytes(payload[:2], "big") != len(made_by):
        return Miss("the cache entry was written by another version of schedlog")
    start = 2 + len(made_by)
    if payload[start : start + len(binding)] != binding:
        return Miss("the cache entry's saved reading belongs to another entry")
    try:
        return _loads(payload[start + len(binding) :], column)
    except Exception as err:  # a damaged value raises anything: it is simply not trusted
        return Miss(f"the cache entry does not read back ({type(err).__name__})")


class VerdictStore:
    """The entries of one cache folder, read and written by one process (each worker opens
    its own). Writes are kept and committed together (`flush`), every _FLUSH_EVERY puts and at
    `close`."""

    def __init__(self, folder: Path, fingerprint: str, limit: int = LIMIT) -> None:
        self.folder, self.fingerprint, self.limit = folder, fingerprint, limit
        self._pending: list[tuple[str, bytes, int, int, bytes, bytes]] = []
        self._used: list[tuple[int, str]] = []
        self._ahead: dict[str, tuple[bytes, int]] = {}
        self._given_up = False
        try:
            folder.mkdir(parents=True, exist_ok=True)
            self._db = _connect(folder / DB_NAME)
        except (OSError, sqlite3.Error) as err:
            raise CacheProblem(f"the cache folder {folder} cannot be used ({err}): running without the cache") from None

    def get(self, key: str, column: str = "head") -> object:
        """The value stored under `key` in `column` (`head`: what is read first; `rest`: what
        is read only when the head says it is needed, trusted only if sealed with this key and
        the head stored beside it now), or a Miss. A row holding anything else than the blobs
        and the integer this class writes (NULL, text: a damaged or foreign row) is a Miss."""
        assert column in ("head", "rest")
        row: tuple[object, ...] | None = self._ahead.pop(key, None) if column == "head" else None
        try:
            if row is None:
                query = "SELECT head, used FROM entries" if column == "head" else "SELECT rest, used, head FROM entries"
                row = self._db.execute(f"{query} WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as err:
            return Miss(f"the cache cannot be read ({err})")
        if row is None:
            return Miss()
        blob, used, head = row[0], row[1], row[2] if column == "rest" else b""
        if type(blob) is not bytes or type(used) is not int or type(head) is not bytes:
            return Miss("the cache entry is damaged (a column holds what schedlog never writes)")
        value = _checked(blob, self.fingerprint, column, _binding(key, head) if column == "rest" else b"")
        now = time.time_ns()
        if not isinstance(value, Miss) and now - used > _TOUCH_AFTER:
            self._used.append((now, key))
        return value

    def read_ahead(self, keys: Sequence[str]) -> None:
        """Fetch the heads of `keys` now, in a few queries (`get` takes each from them once):
        one query per log costs a lock and a status call of the file each, as much as the
        rest of an unchanged log's check. Nothing is fetched where the cache cannot be read
        (`get` says why)."""
        for at in range(0, len(keys), _AHEAD):
            batch = keys[at : at + _AHEAD]
            marks = ", ".join("?" * len(batch))
            try:
                rows = self._db.execute(f"SELECT key, head, used FROM entries WHERE key IN ({marks})", batch)
                self._ahead.update((key, (head, used)) for key, head, used in rows)
            except sqlite3.Error:
                return

    def put(self, key: str, path: str, head: object, rest: object) -> bool:
        """Keep `head` and `rest` under `key` (committed at the next flush); False where they
        cannot be pickled (a value nested past pickle's recursion: that log is not cached)."""
        import pickle  # (written on a miss only: a hit reads heads, which marshal wrote)

        try:
            first = _sealed(self.fingerprint, head, "head")
            second = _sealed(self.fingerprint, rest, "rest", _binding(key, first))
        except (RecursionError, ValueError, TypeError, AttributeError, pickle.PicklingError):
            return False
        self._pending.append((key, os.fsencode(path), time.time_ns(), len(first) + len(second), first, second))
        if len(self._pending) >= _FLUSH_EVERY:
            self.flush()
        return True

    def flush(self) -> None:
        """Commit the kept writes in one transaction, then delete the least recently used
        entries past the limit. A write that fails (a full disk, a lock held too long) loses
        only those entries: they are read whole next time. A lock another run holds is waited
        for only `_LOCK_WAIT` seconds, and said on standard error (`_locked`)."""
        pending, used = self._pending, self._used
        self._pending, self._used = [], []
        if not pending and not used:
            return
        for wait in (_LOCK_SAID, _LOCK_WAIT):
            try:
                with self._db:
                    self._db.execute(f"PRAGMA busy_timeout = {int(wait * 1000)}")
                    self._db.executemany("UPDATE entries SET used = ? WHERE key = ?", used)
                    self._db.executemany("INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?, ?)", pending)
                    total = self._db.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()[0]
                    if total > self.limit:
                        self._evict(total)
                return
            except sqlite3.OperationalError as err:
                if not _is_locked(err) or not self._locked(len(pending), wait is _LOCK_WAIT):
                    return
            except sqlite3.Error:
                return

    def _locked(self, count: int, gave_up: bool) -> bool:
        """Say that another run holds the cache's lock: that this run waits for it (the first
        time: whether to wait), or that it gave up and `count` entries were not written. A run
        that gave up once waits no more: its later writes are tried once, and lost if locked."""
        if gave_up or self._given_up:
            self._given_up = True
            _say(
                f"schedlog: warning: the verdict cache's lock is still held by another run: {count:,} entries "
                "not written (those logs are read whole next time)"
            )
            return False
        _say(
            f"schedlog: the verdict cache is locked by another run (one hung while writing?): waiting up to "
            f"{_LOCK_WAIT:.0f} s to write {count:,} entries"
        )
        return True

    def _evict(self, total: int) -> None:
        """Delete the least recently used entries until the rest fit in 90% of the limit."""
        goal, dropped = self.limit * 9 // 10, []
        for key, size in self._db.execute("SELECT key, size FROM entries ORDER BY used"):
            if total <= goal:
                break
            dropped.append((key,))
            total -= size
        self._db.executemany("DELETE FROM entries WHERE key = ?", dropped)

    def close(self) -> None:
        self.flush()
        self._db.close()

    def info(self) -> CacheInfo:
        count, total = self._db.execute("SELECT COUNT(*), COALESCE(SUM(size), 0) FROM entries").fetchone()
        on_disk = sum(p.stat().st_size for p in self.folder.glob(DB_NAME + "*") if p.is_file())
        return CacheInfo(str(self.folder), count, total, self.limit, on_disk)

    def clear(self) -> int:
        """Delete every entry; how many there were."""
        with self._db:
            count = self._db.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
            self._db.execute("DELETE FROM entries")
        self._db.execute("VACUUM")
        return int(count)


def _connect(path: Path) -> sqlite3.Connection:
    """The cache database at `path`, made if absent. A file that is not one of ours (garbage,
    another schema, a database without our table or with another under its name) is replaced:
    it holds nothing but entries that can be made again. A lock held too long or a file that
    cannot be written is an OperationalError (the caller's CacheProblem), never a reason to
    replace the file."""
    for attempt in (1, 2):
        db = sqlite3.connect(path, timeout=_LOCK_WAIT)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")  # atomic, not durable: a lost entry is read again
            db.execute(f"PRAGMA mmap_size={_MAPPED}")  # a hit's entry read without a copy: 8 µs a log to 5
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version == 0:
                with db:
                    db.execute(
                        "CREATE TABLE IF NOT EXISTS entries "
                        "(key TEXT PRIMARY KEY, path BLOB, used INTEGER, size INTEGER, head BLOB, rest BLOB)"
                    )
                    db.execute(f"PRAGMA user_version = {_SCHEMA}")
            elif version != _SCHEMA:
                raise _NotOurs
            columns = [row[1] for row in db.execute("PRAGMA table_info(entries)")]
            if columns != list(_COLUMNS):  # (no table at all, or another one under its name)
                raise _NotOurs
            return db
        except sqlite3.OperationalError:
            db.close()
            raise
        except sqlite3.DatabaseError:
            db.close()
            if attempt == 2:
                raise
            for stale in path.parent.glob(path.name + "*"):
                os.unlink(stale)
    raise AssertionError("unreachable")


class _NotOurs(sqlite3.DatabaseError):
    """A database of another schema in the cache's place."""
