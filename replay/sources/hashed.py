"""A file's bytes hashed (xxh3-128) as the verdict cache and watch compare them: with no other
part of the reader loaded, as a cache hit checks a log's bytes and judges none of them; and the
hash a reader takes of the very bytes it reads (`Hashing`), so that what is stored or compared
later stands for the bytes judged, whatever the file holds by then."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import xxhash

if TYPE_CHECKING:
    from replay.sources.bytesource import Data, FileSource

PIECE = 1 << 20
"""The bytes a file is hashed by at a time."""


def fed(path: str, size: int, h: Any = None, start: int = 0) -> Any:
    """`h` (else a new xxh3-128) fed the file's bytes from `start` to `size`; None where fewer
    could be read (the file shrank). Raises OSError where the file cannot be opened."""
    h = xxhash.xxh3_128() if h is None else h
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        at = start
        while at < size and (piece := os.pread(fd, min(PIECE, size - at), at)):
            h.update(piece)
            at += len(piece)
    finally:
        os.close(fd)
    return h if at == size else None


class Hashing:
    """The hash of the bytes one read takes, in order: `state` stands for the file's bytes
    before `start` (where a resumed read goes on; 0 and a new state for a whole read). Once the
    read is done, `digest` is the hash of all the bytes judged and `committed` the state at the
    committed end (where the saved reading stands), both None where the read cannot vouch for
    its bytes (the file shrank, or changed between two reads of one line)."""

    def __init__(self, state: Any = None, start: int = 0) -> None:
        self.state = xxhash.xxh3_128() if state is None else state
        self.start = start
        self.digest: bytes | None = None
        self.committed: Any = None
        self._before: Any = None
        self._pieces: Iterator[bytes] | None = None

    def held(self, raw: Data, start: int, committed: int) -> None:
        """The hashes of bytes held whole (read once: the bytes judged) from `start` (0 where a
        resumed read went back to the file's start: its state is begun again)."""
        h = self.state
        if start != self.start:
            h.reset()
        view = memoryview(raw)
        h.update(view[start:committed])
        self.committed = h.copy()
        h.update(view[committed:])
        self.digest = h.digest()

    def pieces(self, source: FileSource) -> Iterator[bytes]:
        """A large file's pieces from `start`, each hashed as the reader takes it."""
        self._before, self._pieces = self.state.copy(), source.pieces(self.start)
        for piece in self._pieces:
            self.state.update(piece)
            yield piece

    def finish(self, path: str, source: FileSource, committed: int) -> None:
        """The hashes once `pieces` were read (what a read that ended early left is read too:
        its report does not depend on it). Where the committed end lies inside the bytes read,
        or a long line was read a second time, the file is hashed again from `start` and must
        give the same digest: else it changed under the reader, and nothing is vouched for."""
        if self._pieces is None:  # (no piece was read: nothing is vouched for)
            return
        for piece in self._pieces:
            self.state.update(piece)
        digest = self.state.digest()
        if committed == source.size and not source.reread:
            self.digest, self.committed = digest, self.state.copy()
            return
        try:
            at = fed(path, committed, self._before, self.start)
            again = None if at is None else fed(path, source.size, at.copy(), committed)
        except OSError:
            return
        if again is not None and again.digest() == digest:
            self.digest, self.committed = digest, at

    def lost(self) -> None:
        """The read cannot vouch for its bytes (the file shrank under it)."""
        self.digest = self.committed = None
