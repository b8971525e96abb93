"""A SQLite session store (`dsh-session-persistence-sqlite`, sqlite-store.md): every session of a
deployment in one database file, read as the harness reads a session from its rows, and given
to the judge as the JSONL log the file backend would hold for it.

A store is named by its path; one of its sessions by `STORE#SESSION_ID` (`session_name`). The
database is hostile input and is never written:

- it is opened read-only (`mode=ro`): no checkpoint, so a WAL database's `-wal` is read (its
  committed frames) and kept. SQLite's reader takes part in the `-shm` index, as every reader of
  a WAL database does; where the folder does not let it create one, a database with no `-wal`
  is opened `immutable` (nothing is missed), and one with a `-wal` but no `-shm` (its writer is
  gone) is read through a private copy of both (`Store.how` says which);
- triggers and views of the file never run (`trusted_schema` off), its schema cannot be written
  (defensive mode, where Python offers it: 3.12 on; `query_only` in every case), no extension
  loads (Python never enables loading), memory-mapped I/O is off;
- a value is never held past `storerows.VALUE_MAX` bytes (SQLite's length limit refuses it
  before reading it), and a compressed one is bounded by its frame's declared size first.

Each session is read inside one read transaction, so a writer appending meanwhile never tears
it. Its rows are decoded (replay.sources.storerows) and walked as the harness walks them: the last
row that decodes and holds a `turn/end` is the committed boundary; a row that does not decode,
or does not continue the seqs, at or before it is committed corruption (the session cannot be
loaded: `sqlite.row`), after it the start of a removable tail (dropped: `sqlite.tail`)."""

from __future__ import annotations

import os
import shutil
import sqlite3
import sys
import tempfile
import weakref
from collections.abc import Iterator
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path

import xxhash

from invariant.findings import Finding, Severity
from replay.lines.deepjson import dumps
from replay.sources.sqlitenames import (
    APPLICATION_ID,
    HEAD_BYTES,
    SESSION_SEPARATOR,
    application_id,
    is_sqlite,
    session_name,
    sniffed,
    split_name,
)
from replay.sources.storerows import (
    LAYOUT_PACKED,
    LAYOUTS,
    TEXT,
    TURN_END,
    VALUE_MAX,
    Decoded,
    Row,
    RowDefect,
    Spans,
    decode_row,
    events_in,
    quick_lines,
    row_up_to_query,
    rows_query,
    take,
)

TABLES = {
    "persistence_state": ("singleton", "store_id"),
    "sessions": (
        "id",
        "version",
        "created_at",
        "cwd",
        "parent_session",
        "seed_length",
        "origin",
        "delegation_depth",
        "agent_preset",
        "incarnation",
        "revision",
    ),
    "events": ("session_id", "seq", "type", "time", "data", "source_event_seqs", "surface_op"),
}
"""The tables both layouts hold, with the columns the reader reads (layout 17 adds `ignorable`)."""

HEADER_COLUMNS = (
    ("version", "version"),
    ("id", "id"),
    ("createdAt", "created_at"),
    ("cwd", "cwd"),
    ("parentSession", "parent_session"),
    ("seedLength", "seed_length"),
    ("origin", "origin"),
    ("delegationDepth", "delegation_depth"),
    ("agentPreset", "agent_preset"),
)
"""The session header's fields, in the order the file backend writes them, and their columns
(a NULL column is a field the header does not hold)."""


SQLITE_FAILURES = (sqlite3.Error, UnicodeDecodeError)
"""What SQLite raises on a damaged file: its errors, and a message it cannot decode (the damaged
schema's text quoted in it)."""


class StoreError(Exception):
    """A file that cannot be read as a session store: not SQLite, another application's
    database, a schema version or tables the harness's readers do not know, or damage SQLite
    reports before any session is read. The message says which."""


HELD_VERSIONS = (0, 1)
"""The header versions a store's `sessions` columns can hold (v2 on need `isSeeded`)."""


def stored_session(path: str, first: int = 0, packed: bool = False) -> SessionRows | str | None:
    """What `path` holds when it names a store's session (`STORE#ID`) or a SQLite file: the
    session as the harness reads it (from seq `first` on, where a reading saved at the committed
    `turn/end` before it goes on: `Store.read`; with `packed`, its packed rows as the chunk rows
    a log file holds, `SessionRows.spans`); a string saying why it cannot be read as one (a
    store refused whole, no such session, a header no column holds, a SQLite file named whole);
    None for any other input (a log)."""
    named = split_name(path)
    if named is None:
        if not sniffed(path):
            return None
        try:
            with Store(path) as store:
                count = len(store.sessions())
        except StoreError as err:
            return str(err)
        return f"a session store of {count} sessions: name one as {path}{SESSION_SEPARATOR}SESSION_ID"
    store_path, session_id = named
    try:
        rows = open_store(store_path).read(session_id, first, packed)
    except StoreError as err:
        _let_go(store_path)
        return str(err)
    if rows is None:
        return f"the store holds no session {session_id!r}"
    if type(rows.version) is int and rows.version not in HELD_VERSIONS:
        return (
            f"the store holds a format-v{rows.version} session, whose header (isSeeded) no column of a session "
            "store holds: the harness's reader refuses to read it back"
        )
    return rows


def session_state(path: str) -> str | None:
    """What a store's session (`STORE#ID`) stands for, read without its rows: the store file
    (device and inode: a store restored or replaced is another), the store's id, and the
    session's incarnation and revision, which every write to the session moves; None when the
    store or the session cannot be read (a read of it says why)."""
    named = split_name(path)
    if named is None:
        return None
    try:
        status = os.stat(named[0])
        store = open_store(named[0])
        found = store.state_of(named[1])
    except (OSError, StoreError):
        _let_go(named[0])
        return None
    if found is None:
        return None
    made = f"{status.st_dev}:{status.st_ino}:{store.store_id}:{found.incarnation}:{found.header}"
    return f"sqlite:{made}:{found.revision}"


def grown(before: str, now: str) -> bool:
    """Whether the session state `now` (`session_state`) is the state `before` written on: the
    same store file, store id, incarnation and header, a later revision. The harness writes a
    session within an incarnation only by appending rows (a row is never written again), and by
    deleting a removable tail (rows that do not decode or continue the seqs, after its last
    `turn/end`): the rows of `before` that all decode and continue the seqs are still the
    session's, and a reading saved after them goes on (`Store.read`'s `first`; a reading that
    met a store finding is not saved, `SessionLog._save`)."""
    made_before, _, revision_before = before.rpartition(":")
    made_now, _, revision_now = now.rpartition(":")
    if not made_before.startswith("sqlite:") or made_before != made_now:
        return False
    return revision_before.isdigit() and revision_now.isdigit() and int(revision_now) > int(revision_before)


OPEN_STORES = 4
"""Stores a process keeps open between the readings of their sessions (the most recent)."""
_OPEN: dict[str, tuple[object, Store]] = {}


def open_store(path: str) -> Store:
    """The store at `path`, opened once a process for the readings of its sessions (each still
    its own read transaction): opened anew where the file is another (its device, inode), in
    another process (a connection never crosses a fork), or read through a copy (which would
    not see later writes). StoreError where it cannot be read as a store."""
    real = os.path.abspath(path)
    try:
        status = os.stat(real)
    except OSError as err:
        raise StoreError(f"cannot read {path}: {err.strerror or err}") from None
    key = (os.getpid(), status.st_dev, status.st_ino)
    held = _OPEN.pop(real, None)
    if held is not None:
        if held[0] == key + _unchanging(held[1], status):
            _OPEN[real] = held  # (the most recent last)
            return held[1]
        held[1].close()
    store = Store(path)
    if store.how != "a private copy":
        _OPEN[real] = (key + _unchanging(store, status), store)
        while len(_OPEN) > OPEN_STORES:
            _OPEN.pop(next(iter(_OPEN)))[1].close()
    return store


def _let_go(path: str) -> None:
    """Close the store at `path` if it is held open: a reading that failed (a damaged file) is
    never followed by one on the same connection, whose state the failure may have left (each
    reading of a damaged store is then the same)."""
    held = _OPEN.pop(os.path.abspath(path), None)
    if held is not None:
        held[1].close()


def _unchanging(store: Store, status: os.stat_result) -> tuple[int, ...]:
    """What must not have changed for a store read `immutable` to be read on: SQLite trusts
    such a file never to change, so its size and time count, and whether a writer has begun
    (its `-wal`: then the store is opened through it)."""
    if store.how != "immutable":
        return ()
    return (status.st_size, status.st_mtime_ns, os.path.exists(store.path + "-wal"))


def store_sessions(path: str) -> list[str] | None:
    """The names of the sessions the store at `path` holds (`STORE#ID`, oldest first), or None
    when `path` is no store that can be read (judged whole, it says why)."""
    try:
        with Store(path) as store:
            return [session_name(path, s.id) for s in store.sessions()]
    except StoreError:
        return None


@dataclass(frozen=True)
class StoredSession:
    """A `sessions` row: the session's id and the state its (incarnation, revision) names."""

    id: str
    incarnation: str
    revision: int
    header: str = ""
    """A digest of the header its columns hold (`state_of`; unchanged within an incarnation)."""


@dataclass(frozen=True)
class SessionRows:
    """One session as the harness's reader reads it from the rows: its JSONL log (header and
    the committed prefix's events, one line each), its format version, and what only a store
    can have wrong (`sqlite.*` findings). `refused`: committed corruption (the harness cannot
    load the session)."""

    log: bytes
    version: object
    findings: tuple[Finding, ...]
    refused: bool
    events: int
    first: int = 0
    """The seq the log starts at: 0, the whole log from its header line; else the lines of the
    events from that seq on (a reading saved before it goes on)."""
    spans: tuple[tuple[int, int], ...] = ()
    """The packed rows given as one line each (read `packed`): each one's line in `log` (0 is
    the header line) and the events it stands for, in order."""


class Store:
    """An open session store (read-only). `layout` is its `user_version` (14 or 17),
    `store_id` its immutable id."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.how = "read-only"
        """How the database is read: `read-only`, `immutable` (its main file alone: a WAL
        database with no `-wal`) or `a private copy` (of it and its `-wal`)."""
        self._copy: str | None = None
        self._db = self._open()
        try:
            self.layout, self.store_id = self._schema()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()
        if self._copy is not None:
            shutil.rmtree(self._copy, ignore_errors=True)
            self._copy = None

    # --- opening ---------------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        """A read-only connection that creates no file beside the database (see the module's
        docstring): a rollback-journal database or a WAL one whose `-wal` and `-shm` exist is
        opened `mode=ro`; a WAL database with no `-wal` holds everything in its main file and is
        opened `immutable` (read again `mode=ro` should a writer start meanwhile: `read`); one
        with a `-wal` but no `-shm` (its writer gone) is read through a private copy."""
        try:
            with open(self.path, "rb") as f:
                head = f.read(HEAD_BYTES)
        except OSError as err:
            raise StoreError(f"cannot read {self.path}: {err.strerror or err}") from None
        if not is_sqlite(head):
            raise StoreError(f"{self.path} is not a SQLite database")
        if application_id(head) != APPLICATION_ID:
            raise StoreError(
                f"{self.path} is a SQLite database but not a session store "
                f"(application id {application_id(head)}, not {APPLICATION_ID} DSHP)"
            )
        self._wal_mode = head[18:20] == b"\x02\x02"
        return self._connection()

    def _connection(self) -> sqlite3.Connection:
        if self._wal_mode and not os.path.exists(self.path + "-wal"):
            self.how, mode = "immutable", "immutable=1"
        elif self._wal_mode and not os.path.exists(self.path + "-shm"):
            return self._private_copy()
        else:
            self.how, mode = "read-only", "mode=ro"
        db = _connected(self.path, mode)
        try:
            db.execute("SELECT count(*) FROM sqlite_schema").fetchone()
        except SQLITE_FAILURES as err:
            db.close()
            if not isinstance(err, sqlite3.OperationalError) or not self._wal_mode or "unable to open" not in str(err):
                raise StoreError(f"cannot open {self.path}: {err}") from None
            return self._private_copy()  # (a -shm it may not read)
        return db

    def _private_copy(self) -> sqlite3.Connection:
        """The database and its `-wal` copied into a private folder and opened there: SQLite
        cannot read a WAL database's `-wal` without a `-shm` it may create."""
        self._copy = tempfile.mkdtemp(prefix="schedlog-store-")
        weakref.finalize(self, shutil.rmtree, self._copy, True)  # (removed however the store is let go)
        copy = os.path.join(self._copy, "store.db")
        try:
            shutil.copyfile(self.path, copy)
            shutil.copyfile(self.path + "-wal", copy + "-wal")
        except OSError as err:
            raise StoreError(f"cannot copy {self.path} and its -wal to read them: {err.strerror or err}") from None
        self.how = "a private copy"
        return _connected(copy, "mode=ro")

    def _schema(self) -> tuple[int, str]:
        try:
            application = self._db.execute("PRAGMA application_id").fetchone()[0]
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
            if application != APPLICATION_ID:
                raise StoreError(f"{self.path} is not a session store (application id {application})")
            if version not in LAYOUTS:
                raise StoreError(
                    f"{self.path} has schema version {version}, which no harness's session store has "
                    f"({' or '.join(map(str, LAYOUTS))})"
                )
            for table, columns in TABLES.items():
                name = table.encode()
                if name not in tables:
                    raise StoreError(f"{self.path} has no {table} table: it is not a session store")
                held = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
                wanted = columns + (("ignorable",) if table == "events" and version == LAYOUT_PACKED else ())
                missing = [c for c in wanted if c.encode() not in held]
                if missing:
                    raise StoreError(f"{self.path}: the {table} table has no {', '.join(missing)} column")
            state = self._db.execute("SELECT store_id FROM persistence_state WHERE singleton = 1").fetchone()
        except SQLITE_FAILURES as err:
            raise StoreError(f"{self.path}: the database cannot be read ({err})") from None
        if state is None or not isinstance(state[0], bytes):
            raise StoreError(f"{self.path} has no store id (persistence_state is empty)")
        return version, state[0].decode("utf-8", "replace")

    # --- reading ---------------------------------------------------------------------------------

    def sessions(self) -> list[StoredSession]:
        """The sessions the store holds, oldest first (then by id)."""
        try:
            rows = self._db.execute("SELECT id, incarnation, revision FROM sessions ORDER BY created_at, id").fetchall()
        except SQLITE_FAILURES as err:
            raise StoreError(f"{self.path}: its sessions cannot be listed ({err})") from None
        return [_stored(*row) for row in rows if isinstance(row[0], bytes)]

    def state_of(self, session_id: str) -> StoredSession | None:
        """The session's `sessions` row (its incarnation, revision and header), None when there
        is none."""
        columns = ", ".join(c for _, c in HEADER_COLUMNS)
        try:
            row = self._db.execute(
                f"SELECT id, incarnation, revision, {columns} FROM sessions WHERE id = ?", (session_id,)
            )
            found = row.fetchone()
        except SQLITE_FAILURES as err:
            raise StoreError(f"{self.path}: its sessions cannot be read ({err})") from None
        if found is None:
            return None
        header = _header_line(dict(zip((f for f, _ in HEADER_COLUMNS), found[3:], strict=True)))
        return replace(_stored(*found[:3]), header=xxhash.xxh3_64_hexdigest(header))

    def read(self, session_id: str, first: int = 0, packed: bool = False) -> SessionRows | None:
        """The session `session_id` as the harness reads it, or None when the store holds no
        such session: from seq `first` on where the rows before it end with a row that decodes
        and holds seq `first - 1` last (where a reading was saved: `grown`), else whole
        (`SessionRows.first` says which); with `packed`, a packed row of the common shape as one
        line (`SessionRows.spans`). Its
        header row and its event rows are read in one read transaction (read again, joining the
        writer's `-shm`, when a writer began while the main file was read alone: its checkpoint
        could have torn that reading)."""
        read = self._read(session_id, first, packed)
        if self.how == "immutable" and os.path.exists(self.path + "-wal"):
            self._db.close()
            self._db = self._connection()
            read = self._read(session_id, first, packed)
        return read

    def _read(self, session_id: str, first: int, packed: bool) -> SessionRows | None:
        db = self._db
        try:
            db.execute("BEGIN")
            try:
                header = db.execute(
                    f"SELECT {', '.join(c for _, c in HEADER_COLUMNS)} FROM sessions WHERE id = ?", (session_id,)
                ).fetchone()
                if header is None:
                    return None
                fields = dict(zip((f for f, _ in HEADER_COLUMNS), header, strict=True))
                if first and not self._ends_at(session_id, first - 1):
                    first = 0
                batches = self._rows(session_id, first - 1 if first else None)
                return _walked(fields, self.layout, batches, first, packed)
            finally:
                db.execute("COMMIT")
        except SQLITE_FAILURES as err:
            raise StoreError(f"{session_name(self.path, session_id)}: its rows cannot be read ({err})") from None

    def _ends_at(self, session_id: str, seq: int) -> bool:
        """Whether the session's rows up to `seq` end with a row that decodes and holds `seq`
        last (where a reading of them was saved: the rows after it are what was appended)."""
        self._db.text_factory = TEXT
        try:
            row = self._db.execute(row_up_to_query(self.layout), (session_id, seq)).fetchone()
        except sqlite3.DataError:
            return False
        finally:
            self._db.text_factory = bytes
        if row is None:
            return False
        try:
            got = _decoded(self.layout, row)
        except RowDefect:
            return False
        return bool(row[0] + events_in(got) == seq + 1)

    def _rows(self, session_id: str, after: int | None = None) -> Iterator[list[Row | tuple[object, RowDefect]]]:
        """The session's event rows after seq `after` (None: all) in seq order (`rows_query`,
        text read as `TEXT`), in batches of `BATCH`; in place of a row holding a value too large
        to read, its seq and that defect (the rows after it are read one at a time, and go on
        after it)."""
        db, query = self._db, rows_query(self.layout)
        at: object = -(1 << 63) if after is None else after
        db.text_factory = TEXT
        try:
            cursor = db.execute(query, (session_id, at))
            try:
                while rows := cursor.fetchmany(BATCH):
                    yield rows
                    at = rows[-1][0]
                return
            except sqlite3.DataError:  # a value past SQLite's length limit, in the batch after `at`
                pass
            while True:
                row: Row | None = None
                try:
                    for row in db.execute(query, (session_id, at)):
                        yield [row]
                    return
                except sqlite3.DataError:
                    at = at if row is None else row[0]
                    big = db.execute(
                        "SELECT seq FROM events WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT 1",
                        (session_id, at),
                    ).fetchone()
                    if big is None or type(big[0]) not in (int, float):  # (the row that raised is there, with a seq)
                        return  # pragma: no cover
                    at = big[0]
                    yield [(at, RowDefect(f"a value past {VALUE_MAX:,} bytes, more than the harness can read"))]
        finally:
            db.text_factory = bytes


BATCH = 4096
"""Rows read and decoded together (`storerows.quick_lines`): enough that a batch's checks are
made in C, few enough that a session is never held twice over as rows and as lines."""


def _connected(path: str, opening: str) -> sqlite3.Connection:
    """A connection to the file at `path` that cannot change it and runs nothing of it."""
    uri = f"{Path(os.path.abspath(path)).as_uri()}?{opening}"
    db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    db.text_factory = bytes  # (no text fails to decode before the rules say what it is)
    db.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, VALUE_MAX)
    if sys.version_info >= (3, 12):
        db.setconfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, True)
        db.setconfig(sqlite3.SQLITE_DBCONFIG_TRUSTED_SCHEMA, False)
    for pragma in ("trusted_schema = OFF", "query_only = ON", "mmap_size = 0", "cell_size_check = ON"):
        db.execute(f"PRAGMA {pragma}")
    return db


def _stored(session_id: object, incarnation: object, revision: object) -> StoredSession:
    return StoredSession(_text(session_id), _text(incarnation), revision if type(revision) is int else -1)


def _text(value: object) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _walked(
    header: dict[str, object],
    layout: int,
    batches: Iterator[list[Row | tuple[object, RowDefect]]],
    first: int = 0,
    packed: bool = False,
) -> SessionRows:
    """The session's log as the harness loads it from its rows (sqlite-store.md): the committed
    prefix, and the row that ends it, if any, as committed corruption (a row from it on that
    decodes holds a `turn/end`) or a removable tail. A batch of rows that all decode and continue
    the seqs is read at once (`quick_lines`); any other is walked a row at a time. From seq
    `first` on (the rows before it are committed, the header line with them), where not 0; with
    `packed`, a packed row of the common shape as one line (`SessionRows.spans`)."""
    lines = [] if first else [_header_line(header)]
    spans: Spans = []
    expected = first
    for batch in batches:
        quick = quick_lines(layout, batch, expected, packed)
        if quick is not None:
            made, held = quick
            spans += ((len(lines) + k, members) for k, members in held)
            lines += made
            expected += len(made) + sum(members - 1 for _, members in held)
            continue
        rows = iter(batch)
        for row in rows:
            seq = row[0]
            rest = chain(rows, chain.from_iterable(batches))
            try:
                got = _decoded(layout, row, packed)
            except RowDefect as defect:
                ended = expected, first, spans
                return _ended(header, lines, ended, seq, str(defect), False, layout, rest)
            if seq != expected:
                why = f"its seq breaks contiguity (expected {expected})"
                return _ended(header, lines, (expected, first, spans), seq, why, row[1] == TURN_END, layout, rest)
            expected += take(lines, spans, got)
    return SessionRows(_joined(lines), header.get("version"), (), False, expected, first, tuple(spans))


def _joined(lines: list[bytes]) -> bytes:
    """Lines as JSONL (none: no bytes)."""
    return b"\n".join(lines) + b"\n" if lines else b""


def _decoded(layout: int, row: Row | tuple[object, RowDefect], packed: bool = False) -> Decoded:
    """A row's lines (`decode_row`), or the defect `_rows` put in its place."""
    if len(row) == 2:
        assert isinstance(row[1], RowDefect)
        raise row[1]
    return decode_row(layout, row, packed)


def _ended(
    header: dict[str, object],
    lines: list[bytes],
    read: tuple[int, int, Spans],
    seq: object,
    why: str,
    turn_end: bool,
    layout: int,
    rest: Iterator[Row | tuple[object, RowDefect]],
) -> SessionRows:
    """The session whose rows stop continuing at `seq` (`why`): committed corruption where that
    row (`turn_end`: it decodes and holds a `turn/end`) or a later one that decodes holds a
    `turn/end`, else a removable tail. Only a later `turn/end` row is decoded."""
    count = 1
    for row in rest:
        count += 1
        if not turn_end and row[1] == TURN_END:
            try:
                _decoded(layout, row)
                turn_end = True
            except RowDefect:
                pass
    index = seq if type(seq) is int else None
    if turn_end:
        message = (
            f"invalid committed physical row at seq {seq}: {why}; a turn/end follows, so the session cannot be loaded"
        )
        finding = Finding("sqlite.row", Severity.ERROR, message, index=index)
    else:
        message = (
            f"rows from seq {seq} on ({count} of them) are a removable tail: {why}; the harness drops "
            "them when it loads the session (and deletes them when it may write)"
        )
        finding = Finding("sqlite.tail", Severity.WARNING, message, index=index)
    expected, first, spans = read  # (the seq expected next; the first the lines hold; the packed rows)
    return SessionRows(_joined(lines), header.get("version"), (finding,), turn_end, expected, first, tuple(spans))


def _header_line(header: dict[str, object]) -> bytes:
    """The session header as the file backend writes it: its fields in order, NULL ones left out."""
    parts = [b'{"type":"session"']
    for field, value in header.items():
        if value is None:
            continue
        encoded = dumps(_text(value) if isinstance(value, bytes) else value, exact=True).encode()
        parts.append(b',"' + field.encode() + b'":' + encoded)
    return b"".join(parts) + b"}"
