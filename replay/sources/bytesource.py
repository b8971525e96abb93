"""The bytes of a log (the reader's first layer): a small file read whole, a large one read in
pieces (never mapped: a file truncated while it is mapped kills the reader with SIGBUS), a
stream read in pieces and spooled past a bound, and a spool's mapped pages given back once
read. Input is only ever opened for reading; nothing here judges what the bytes hold."""

from __future__ import annotations

import errno
import mmap
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from typing import BinaryIO

from replay.sources.zstdframes import MAGIC, MAX_FRAME_TEXT

READ_CHUNK = 8 << 20
MAX_STREAM = MAX_FRAME_TEXT
"""The most bytes read from a stream that has no size to map (a pipe, stdin, a device; past
SPOOL_BYTES it is spooled to a temporary file): the reference reads a log into one Node Buffer,
whose bound a frame's text has too."""
SPOOL_BYTES = 64 << 20
"""A stream longer than this is spooled to an anonymous temporary file and mapped, not held."""
CAN_RELEASE = hasattr(mmap, "MADV_DONTNEED")  # not on Windows

Data = bytes | mmap.mmap
"""A log's bytes held for reading: in memory, or a mapped (spooled) file."""


class FileSource:
    """A regular file larger than READ_CHUNK, read in pieces of READ_CHUNK bytes up to the size
    it had when opened (what a writer appends later is not read, as a log is judged at one
    instant). `shrunk` tells, once read, that the file lost bytes under the reader: the bytes
    read are then no state the file was ever in. Close it (or use it as a context manager)."""

    def __init__(self, f: BinaryIO, size: int) -> None:
        self._file = f
        self.size = size
        self.read = 0
        self.reread = False
        """Whether a stretch was read again (`read_at`): bytes judged that the pieces did not give."""

    def __enter__(self) -> FileSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._file.close()

    def head(self, n: int) -> bytes:
        """The first `n` bytes (or fewer), without moving the reading position."""
        return os.pread(self._file.fileno(), n, 0)

    def read_at(self, start: int, end: int) -> bytes:
        """The bytes from `start` to `end`, read again (a long line, once its end is known)."""
        self.reread = True
        parts = []
        while start < end and (part := os.pread(self._file.fileno(), end - start, start)):
            parts.append(part)
            start += len(part)
        return b"".join(parts)

    def pieces(self, start: int = 0) -> Iterator[bytes]:
        """The file's bytes from `start`, READ_CHUNK at a time, until its opening size or EOF."""
        self._file.seek(start)
        self.read = start
        while self.read < self.size and (piece := self._file.read(min(READ_CHUNK, self.size - self.read))):
            self.read += len(piece)
            yield piece

    def whole(self) -> bytes:
        """All the file's bytes at once (a compressed file, whose frames are read out of order),
        each read asking for all that is left: one read, into one buffer, for any file the
        system reads in one call (2 GiB on Linux), not pieces held beside their join."""
        self._file.seek(0)
        parts = []
        while self.read < self.size and (part := self._file.read(self.size - self.read)):
            self.read += len(part)
            parts.append(part)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def spooled(self) -> Data:
        """All the file's bytes (`whole`), past SPOOL_BYTES copied to a temporary file (unlinked
        at once) and mapped: its pages are the system's file cache, not the reader's memory, and
        no writer can cut the copy short under the mapping (one could the log itself: SIGBUS).
        Where the copy cannot be made (a full disk), they are read into memory as `whole` reads."""
        return self.whole() if self.size <= SPOOL_BYTES else self._spool()

    def _spool(self) -> Data:
        """All the file's bytes copied to a temporary file (unlinked at once) and mapped (as
        `whole` reads them where the copy cannot be made)."""
        try:
            import tempfile  # (a stream's spool: most runs read files)

            with tempfile.TemporaryFile() as spool:
                for piece in self.pieces():
                    spool.write(piece)
                spool.flush()
                return mmap.mmap(spool.fileno(), 0, access=mmap.ACCESS_READ) if self.read else b""
        except OSError:
            self.read = 0
            return self.whole()

    @property
    def shrunk(self) -> bool:
        return self.read < self.size

    def shrink_message(self) -> str:
        return (
            f"the file shrank from {self.size:,} to {self.read:,} bytes while it was read "
            "(truncated or rewritten under the reader): not judged; read it again once it is still"
        )


class HeldTail:
    """The bytes of a log from `offset` on, held in memory, where a reading saved at `offset`
    goes on (a store's session grown since: replay.sources.sqlitestore): read as a FileSource is,
    from `offset` only. Nothing before it is held (nor asked for: a resumed read starts there,
    and such a log is never compressed)."""

    def __init__(self, offset: int, tail: bytes) -> None:
        self.offset = offset
        self._tail = tail
        self.size = offset + len(tail)
        self.read = offset
        self.reread = False

    def __enter__(self) -> HeldTail:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._tail = b""

    def head(self, n: int) -> bytes:
        """Nothing: the log's first bytes are not held (they are no Zstandard frame's)."""
        return b""

    def read_at(self, start: int, end: int) -> bytes:
        if start < self.offset:
            raise ValueError(f"bytes before {self.offset} are not held")
        self.reread = True
        return self._tail[start - self.offset : end - self.offset]

    def pieces(self, start: int = 0) -> Iterator[bytes]:
        if start != self.offset:
            raise ValueError(f"a held tail is read from {self.offset}, not {start}")
        self.read = self.size
        if self._tail:
            yield self._tail

    def spooled(self) -> Data:
        raise ValueError("a held tail is no compressed log's")

    shrunk = False

    def shrink_message(self) -> str:  # pragma: no cover (a held tail never shrinks)
        return ""


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
"""How a log is opened: for reading only, not inherited, no newline translation (as `open(path,
"rb")`, without the file object and its second fstat: most logs are small, and there are many)."""


def load(path: str) -> Data | FileSource:
    """The bytes of the file at `path`: a small file read whole (split later without a copy), a
    large one as a FileSource read in pieces, a pipe or device read as a stream
    (`read_stream`). Raises OSError (and IsADirectoryError for a directory)."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        status = os.fstat(fd)
        if stat.S_ISDIR(status.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), path)
        if not stat.S_ISREG(status.st_mode):  # a pipe (`verify <(zstdcat ...)`) has no size to map
            with os.fdopen(fd, "rb", buffering=0, closefd=False) as stream:
                return read_stream(stream)
        if status.st_size > READ_CHUNK:
            source = FileSource(os.fdopen(fd, "rb", buffering=0), status.st_size)  # it closes the file
            fd = -1
            return source
        return os.read(fd, status.st_size)
    finally:
        if fd >= 0:
            os.close(fd)


def framed(path: str) -> bool:
    """Whether the file at `path` starts as a Zstandard frame does (OSError where it cannot be read)."""
    with open(path, "rb") as f:
        return f.read(4) == MAGIC


def is_stream(path: str) -> bool:
    """Whether `path` is a pipe or a device: no regular file, no directory (and reachable)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def once(path: str) -> Data | OSError | None:
    """The bytes of the pipe or device at `path`, read now, or the error reading them gave; None
    for a regular file or a directory (read as usual, where asked) or a path that cannot be
    reached (its reader says why). A stream can be read once only (`<(zstdcat log.zst)` is a
    `/dev/fd` pipe whose bytes are gone once read): whoever looks at it first (a Host store's
    sniff, say) must hold it for whoever reads it next."""
    if not is_stream(path):
        return None
    try:
        held = load(path)
    except OSError as err:
        return err
    except MemoryError:
        return OSError(errno.ENOMEM, "not enough memory to hold the stream")
    assert not isinstance(held, FileSource)  # a stream is never one
    return held


def read_stream(f: BinaryIO) -> Data:
    """All of `f`, read in pieces: up to SPOOL_BYTES in memory, beyond that spooled to a
    temporary file (unlinked at once) and mapped, so memory stays bounded. Past MAX_STREAM bytes
    it raises OSError (EFBIG) at once, so an endless stream (`/dev/zero`, say) ends in a verdict
    without ever being held."""
    pieces: list[bytes] = []
    held = 0
    while piece := f.read(READ_CHUNK):
        held = _bounded(held + len(piece))
        pieces.append(piece)
        if held > SPOOL_BYTES:
            import tempfile  # (a stream's spool: most runs read files)

            with tempfile.TemporaryFile() as spool:
                spool.writelines(pieces)
                pieces.clear()
                while piece := f.read(READ_CHUNK):
                    held = _bounded(held + len(piece))
                    spool.write(piece)
                spool.flush()
                return mmap.mmap(spool.fileno(), 0, access=mmap.ACCESS_READ)  # the mapping outlives the file
    return b"".join(pieces)


def _bounded(held: int) -> int:
    if held > MAX_STREAM:
        raise OSError(errno.EFBIG, f"the stream holds more than {MAX_STREAM:,} bytes (save it to a file)")
    return held


def in_pieces(raw: Data, start: int = 0) -> Iterable[Data]:
    """A log's bytes from `start` as the plain reader takes them: in memory, whole (split later
    without a copy); a mapped spool READ_CHUNK at a time, each piece's pages given back once
    copied, so that a 2 GB line never counts 2 GB resident (a scan of the mapping for its LF
    would)."""
    if not isinstance(raw, mmap.mmap):
        return (raw[start:] if start else raw,)
    return _mapped_pieces(raw, start)


def _mapped_pieces(mapped: mmap.mmap, first: int) -> Iterator[bytes]:
    released = 0
    for start in range(first, len(mapped), READ_CHUNK):
        piece = mapped[start : start + READ_CHUNK]
        if CAN_RELEASE:
            released = release(mapped, released, start + len(piece))
        yield piece


def slicer(raw: Data) -> Callable[[int, int], bytes]:
    """`raw[start:end]` as bytes, for reading a stretch again (a long line); of a mapped spool,
    the stretch's whole pages are given back once copied."""
    if not isinstance(raw, mmap.mmap) or not CAN_RELEASE:
        return lambda start, end: bytes(raw[start:end])

    def mapped_slice(start: int, end: int) -> bytes:
        piece = raw[start:end]
        release(raw, -(-start // mmap.PAGESIZE) * mmap.PAGESIZE, end)  # the whole pages within
        return piece

    return mapped_slice


def release(mapped: mmap.mmap, start: int, upto: int) -> int:
    """Drop the mapped pages from `start` (page-aligned: what the last call returned) to before
    `upto` from this process's resident set, and return where the next call starts: a block
    once read is not read again, and a 1 GB log would otherwise count 1 GB resident (`time -v`)
    by its end. The pages stay in the page cache; the mapping stays valid."""
    whole = upto // mmap.PAGESIZE * mmap.PAGESIZE
    if whole > start:
        mapped.madvise(mmap.MADV_DONTNEED, start, whole - start)
    return max(start, whole)


def listing_error(path: str) -> str:
    """Why a directory cannot be listed (what listing it raises now)."""
    try:
        os.listdir(path)
    except OSError as err:
        return str(err.strerror or err)
    return "it was not listed when walked"
