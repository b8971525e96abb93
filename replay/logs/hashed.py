"""A file's bytes hashed (xxh3-128) as the verdict cache and watch compare them: with no other
part of the reader loaded, as a cache hit checks a log's bytes and judges none of them."""

from __future__ import annotations

import os
from typing import Any

import xxhash

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
