"""The bytes of any input a command names: a file, a pipe or a device (bytesource.py), or an
object in a store (objects.py), each read the way its kind is read, behind one set of calls:
its bytes (`load`, `once`, `opened`), and what stands for them without reading them all
(`identity`, `digest`, `absolute`: what the verdict cache keys and checks an input by). Only
here is an input's kind told apart (and a SQLite store's session, whose bytes the reader makes
from the store's rows: replay.logs.logfile)."""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, NamedTuple

from replay.sources.discover import is_url
from replay.sources.hashed import fed
from replay.sources.sqlitenames import maybe_sqlite

if TYPE_CHECKING:  # (the readers load when an input is read: the cache's checks need none of them)
    from replay.sources.bytesource import Data, FileSource


def load(path: str) -> Data | FileSource:
    """The bytes of the input at `path` (bytesource.load; an object's: objects.load). Raises OSError."""
    if is_url(path):
        from replay.sources import objects  # (fsspec loads for the first URL)

        return objects.load(path)
    from replay.sources import bytesource

    return bytesource.load(path)


def once(path: str) -> Data | OSError | None:
    """What must be read of `path` before anyone looks at it, read now (bytesource.once: a pipe's
    bytes; objects.once: a small object's, one request a sniff and the reader share), or the
    error reading gave; None where it is read later, as usual."""
    if is_url(path):
        from replay.sources import objects

        return objects.once(path)
    from replay.sources import bytesource

    return bytesource.once(path)


def opened(path: str, data: Data | OSError | None = None) -> Data | FileSource | str:
    """The bytes of the log at `path` (`load`), or `data` when given (a stream already read, or
    the error reading it gave); else why it cannot be read (a finding's message, never a raise)."""
    from replay.sources.bytesource import listing_error

    try:
        raw = load(path) if data is None else data
        if isinstance(raw, OSError):
            raise raw
    except IsADirectoryError:  # a directory a walk could not list (discover names it)
        return f"cannot list the directory: {listing_error(path)}"
    except OSError as err:
        return f"cannot read: {err.strerror or err}"
    except MemoryError:
        return "cannot read: not enough memory to hold the stream"
    return raw


class Found(NamedTuple):
    """The file (or object, or a SQLite store's session) a path names, as its status (or its
    store's listing, or its `sessions` row) gives it."""

    device: int
    inode: int
    size: int
    """Its bytes (UNSIZED for a store's session: its JSONL log is made when it is read)."""
    tag: bytes
    """An object's ETag (or generation), or a store session's (store id, incarnation, revision):
    it stands for the bytes, none of which are read; b"" for a file (its bytes are hashed)."""


UNSIZED = -1
"""The size of an input whose bytes are known only once read (a SQLite store's session)."""


def identity(path: str) -> Found | None:
    """The regular file at `path` (or the object at its URL, as the store lists it, reading none
    of it); None for anything else (a pipe, a device, a path that cannot be read, an object the
    store says nothing of or gives no ETag: read, never cached)."""
    if is_url(path):
        from replay.sources import objects

        try:
            known = objects.info(path)
        except OSError:
            return None
        return Found(0, 0, known.size, known.tag.encode()) if known.tag else None
    if maybe_sqlite(path):
        from replay.sources.sqlitestore import session_state  # (the store's reader loads for a store's session)

        if (state := session_state(path)) is not None:  # (else no file has the name: none, as for a file)
            return Found(0, 0, UNSIZED, state.encode())
    try:
        st = os.stat(path)
    except OSError:
        return None
    return Found(st.st_dev, st.st_ino, st.st_size, b"") if stat.S_ISREG(st.st_mode) else None


def digest(path: str, size: int) -> str | None:
    """The xxh3-128 of the file's first `size` bytes (hex), or None where fewer could be read;
    an object's ETag (its store's word for its bytes, none read) where it has `size` bytes; a
    store's session's state (`identity`, UNSIZED: none of its rows read) where asked of UNSIZED."""
    if is_url(path) or size == UNSIZED:
        found = identity(path)
        return None if found is None or found.size != size else word_for(found)
    try:
        h = fed(path, size)
    except OSError:
        return None
    return None if h is None else str(h.hexdigest())


def word_for(found: Found) -> str:
    """What `digest` says of an input whose bytes are not hashed: an object's ETag, a store's
    session's state."""
    return ("etag:" if found.size != UNSIZED else "") + found.tag.decode()


def replaced_whole(path: str) -> bool:
    """Whether the input at `path` is replaced whole, never appended to, and each look at its
    bytes is a request (an object in a store: watched by its ETag, sniffed by its name only);
    else it is a file, read and grown in place."""
    return is_url(path)


def absolute(path: str) -> str:
    """The name an input is known by whatever the working folder: a file's absolute path, an
    object's URL as given."""
    return path if is_url(path) else os.path.abspath(path)
