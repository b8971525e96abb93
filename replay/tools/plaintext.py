"""A log held whole, as the tools that rewrite it hold it (shrink, repair): its plaintext (a
Zstandard log decompressed), at most a bound, or a SQLite store's session as its JSONL log."""

from __future__ import annotations

import os

import zstandard

from replay.logs.frames import ZSTD_MAGIC
from replay.sources.bytesource import Data


class NotHeld(ValueError):
    """The log cannot be held (the message says why)."""


def plaintext(path: str, held: Data | OSError | None, limit: int, tool: str) -> tuple[bytes, bool]:
    """The plaintext of the log at `path` (`held`: its bytes as `once` read them, None to open
    it read-only) and whether it was Zstandard; NotHeld past `limit` bytes (`tool` names who
    holds it) or where it cannot be read."""
    try:
        if held is None:
            with open(path, "rb") as f:
                if os.fstat(f.fileno()).st_size > limit:
                    raise NotHeld(too_large(limit, tool))
                data = f.read(limit + 1)
        elif isinstance(held, OSError):
            raise held
        else:
            data = bytes(held[: limit + 1])
    except OSError as err:
        raise NotHeld(f"cannot read: {err.strerror or err}") from None
    zstd = data[:4] == ZSTD_MAGIC
    if zstd:
        with zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True) as reader:
            try:
                data = reader.read(limit + 1)
            except zstandard.ZstdError as err:
                raise NotHeld(f"the Zstandard container is corrupt ({err})") from None
    if len(data) > limit:
        raise NotHeld(too_large(limit, tool))
    return data, zstd


def too_large(limit: int, tool: str) -> str:
    return (
        f"{tool} holds a log in memory and reads at most {limit:,} bytes of plaintext; this one holds more "
        f"(keep its first lines, `head -n`, and {tool} those)"
    )


def stored_log(path: str) -> bytes:
    """The JSONL log of the SQLite store's session at `path` (`store.db#ID`); NotHeld where the
    store's rows themselves are refused (sqlite.row: a JSONL log cannot hold that defect)."""
    from replay.sources.sqlitestore import SessionRows, stored_session

    stored = stored_session(path)
    if not isinstance(stored, SessionRows):
        raise NotHeld(f"the session cannot be read ({stored})")
    if stored.refused:
        raise NotHeld(
            "its defect is in the store's rows (sqlite.row), which a JSONL log cannot hold: the session's log "
            "is the rows before it"
        )
    return stored.log
