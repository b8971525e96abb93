"""Atomic output: write beside the target, then rename over it, so readers never see a partial file."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path


def _umask() -> int:
    """The process umask, read without changing it where Linux tells it (/proc), else by the
    set-and-restore dance."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def publish(tmp: Path | str, path: Path) -> None:
    """Rename the finished `tmp` over `path`, with the mode a plain `open()` would have given
    `path`: the replaced file's, or 0666 less the umask (a temporary file is made 0600)."""
    try:
        mode = os.stat(path).st_mode & 0o7777
    except OSError:
        mode = 0o666 & ~_umask()
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def folder_of(path: Path) -> Path:
    """The folder an output at `path` goes into; FileNotFoundError when it does not exist:
    schedlog creates no folders but the one an option names (a mistyped path must not leave a
    tree of folders behind)."""
    folder = path.parent
    if not folder.is_dir():
        raise FileNotFoundError(
            errno.ENOENT, f"its folder {folder} does not exist (schedlog creates no folders)", str(path)
        )
    return folder


def replace_folder(fresh: Path, target: Path) -> None:
    """Put the folder `fresh` (made beside `target`) in `target`'s place: an earlier folder there
    is renamed aside first, then removed, so that a reader never meets a half-written one. It
    takes the mode a plain `mkdir` would have given `target`: the replaced folder's, or 0777
    less the umask (a temporary folder is made 0700, which no reader but its owner may open)."""
    try:
        mode = os.stat(target).st_mode & 0o7777
    except OSError:
        mode = 0o777 & ~_umask()
    os.chmod(fresh, mode)
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        target.rename(old)
    fresh.rename(target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_atomic(path: Path, data: bytes) -> None:
    """Replace `path` with `data` in one rename (its folder must exist: `folder_of`)."""
    write_atomic_chunks(path, (data,))


def write_atomic_new(path: Path, data: bytes) -> None:
    """`write_atomic` where nothing is at `path`: the finished file is linked there, which fails
    (FileExistsError) when something is, however late it came, so that no file is replaced."""
    tmp = _written_beside(path, (data,))
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        os.link(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def write_atomic_chunks(path: Path, chunks: Iterable[bytes]) -> None:
    """`write_atomic` of the concatenated `chunks`, written as they come (never all in memory)."""
    tmp = _written_beside(path, chunks)
    try:
        publish(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _written_beside(path: Path, chunks: Iterable[bytes]) -> str:
    """A temporary file beside `path` holding the concatenated `chunks`, flushed to the disk
    (removed again where writing it fails): what an atomic write then puts in place."""
    folder_of(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb", buffering=1 << 20) as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp
