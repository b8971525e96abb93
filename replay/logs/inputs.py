"""The bytes of any input a command names: a file, a pipe or a device (bytesource.py), or an
object in a store (objects.py), each read the way its kind is read, behind one pair of calls."""

from __future__ import annotations

from replay.logs import bytesource
from replay.logs.bytesource import Data, FileSource, listing_error
from replay.logs.discover import is_url


def load(path: str) -> Data | FileSource:
    """The bytes of the input at `path` (bytesource.load; an object's: objects.load). Raises OSError."""
    if is_url(path):
        from replay.logs import objects  # (fsspec loads for the first URL)

        return objects.load(path)
    return bytesource.load(path)


def once(path: str) -> Data | OSError | None:
    """What must be read of `path` before anyone looks at it, read now (bytesource.once: a pipe's
    bytes; objects.once: a small object's, one request a sniff and the reader share), or the
    error reading gave; None where it is read later, as usual."""
    if is_url(path):
        from replay.logs import objects

        return objects.once(path)
    return bytesource.once(path)


def opened(path: str, data: Data | OSError | None = None) -> Data | FileSource | str:
    """The bytes of the log at `path` (`load`), or `data` when given (a stream already read, or
    the error reading it gave); else why it cannot be read (a finding's message, never a raise)."""
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
