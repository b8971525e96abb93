"""How SQLite session stores and their sessions are named and recognised, apart from their reader
(replay.sources.sqlitestore): a walk, the verdict cache and the commands ask of every input whether
it is a store, and a log must not pay for the store reader's imports to be told it is none."""

from __future__ import annotations

import os

from replay.sources.names import LOG_SUFFIXES

MAGIC = b"SQLite format 3\x00"
"""The first bytes of every SQLite database."""
APPLICATION_ID = 0x44534850
"""`PRAGMA application_id` of a session store: ASCII "DSHP" (its header's bytes 68-71, big-endian)."""
HEAD_BYTES = 100
"""A SQLite database's header: its magic, its journal mode (bytes 18-19: 2 in WAL mode) and its
application id (bytes 68-71, big-endian)."""
SESSION_SEPARATOR = "#"
"""What joins a store's path and a session id: `STORE#SESSION_ID` names one session of a store."""


def is_sqlite(head: bytes) -> bool:
    """Whether a file's first bytes are a SQLite database's."""
    return head.startswith(MAGIC)


def sniffed(path: str) -> bool:
    """Whether the file at `path` is a SQLite database (whatever its name); False when it
    cannot be read (its reader says why)."""
    return is_sqlite(_head(path, len(MAGIC)))


def _head(path: str, size: int) -> bytes:
    """The first `size` bytes of the file at `path` (fewer for a shorter file; none when it
    cannot be read)."""
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except OSError:
        return b""


def application_id(head: bytes) -> int:
    """The application id a SQLite database's header holds."""
    return int.from_bytes(head[68:72], "big")


def is_session_store(path: str) -> bool:
    """Whether the file at `path` says it is a session store: a SQLite database whose header
    holds the stores' application id (what a folder walk asks of each file it does not read as
    a log: another application's database is no input of schedlog's, and is passed over as a
    README is); False when it cannot be read."""
    head = _head(path, HEAD_BYTES)
    return is_sqlite(head) and len(head) == HEAD_BYTES and application_id(head) == APPLICATION_ID


def session_name(store: str, session_id: str) -> str:
    """How a store's session is named: `STORE#SESSION_ID`."""
    return f"{store}{SESSION_SEPARATOR}{session_id}"


def split_name(name: str) -> tuple[str, str] | None:
    """(store path, session id) when `name` names a store's session: `STORE#ID` where no file
    of that whole name exists and STORE is a SQLite database; None otherwise."""
    store, separator, session_id = name.rpartition(SESSION_SEPARATOR)
    if not separator or not store or not session_id or os.path.lexists(name):
        return None
    return (store, session_id) if sniffed(store) else None


def maybe_sqlite(path: str) -> bool:
    """Whether `path` may name a store or one of its sessions (cheap: no file is opened for a
    name a log has, nor for one without the separator that is no regular file)."""
    if path.endswith(LOG_SUFFIXES):
        return False
    return SESSION_SEPARATOR in path or (os.path.isfile(path) and sniffed(path))
