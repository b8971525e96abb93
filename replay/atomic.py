"""Atomic output: write beside the target, then rename over it, so readers never see a partial file."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one rename (the directory is created when missing)."""
    write_atomic_chunks(path, (data,))


def write_atomic_chunks(path: Path, chunks: Iterable[bytes]) -> None:
    """`write_atomic` of the concatenated `chunks`, written as they come (never all in memory)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
