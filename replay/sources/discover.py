"""Which files an audit reads: the paths named, and the session logs found under directories
(and under an object store's prefixes: objects.py). The names a walk reads are names.py's."""

from __future__ import annotations

import os
import stat
import zlib
from collections.abc import Iterable, Iterator

from replay.sources.names import (
    LOG_SUFFIXES,
    OTHER_COMPRESSION,
    STDIN,
    STORE_NAME,
    Skipped,
    chosen,
    current_generations,
    generation,
    is_url,
    local_path,
)

__all__ = [
    "LOG_SUFFIXES",
    "OTHER_COMPRESSION",
    "STDIN",
    "STORE_NAME",
    "Skipped",
    "chosen",
    "current_generations",
    "discover",
    "generations_beside",
    "in_shard",
    "is_url",
    "local_path",
    "read_path_list",
]


def discover(paths: Iterable[str], stores: bool = False, skipped: Skipped | None = None) -> Iterator[str]:
    """Expand inputs: files as given, directories walked (sorted) for *.jsonl / *.jsonl.zstd.

    A walk skips what exists but is not a regular file, and tells `skipped` why: a named pipe
    found there (one named like a log, say) would wait for a writer forever. A dangling link is kept (it is reported
    unreadable); a pipe named on the command line is read, as asked. A file reached again (named
    twice, inside two walked folders, or through a link) is yielded once, where first reached:
    counted twice, one session would skew every total of a fleet audit. Of the generations of
    one session directory (`session.jsonl`, `session.v4.jsonl.zstd`, ...) a walk yields the one
    the runtime loads, the highest (formats.md §2); its report names the others. A directory
    the walk cannot list is yielded too, and read as unreadable: an audit never reads less than
    it was asked to without saying so. With `stores`, a walk also yields the Host task stores
    (`schedule.json`) it meets. A SQLite session store, named or met by a walk (recognised by its
    header, whatever its name: a walk takes only a database holding the stores' application
    id), stands for its sessions, each named `STORE#SESSION_ID`.
    """
    seen: set[object] = set()
    for given in paths:
        if is_url(given):  # an object, or a prefix listed as a folder is walked
            from replay.sources.objects import listed

            for url in listed(given, stores, skipped):
                if url not in seen:
                    seen.add(url)
                    yield url
            continue
        path = local_path(given)
        walked = path != STDIN and os.path.isdir(path)
        if walked:
            found, unlisted = _walk(path, stores, skipped)
            named = sorted(found) + sorted(unlisted)
        else:
            named = [path]
        for name in named:
            status = None
            if name == STDIN:
                identity: object = STDIN
            elif (status := _status(name)) is None:
                identity = os.path.abspath(name)  # a dangling link: known by its name
            elif walked and not stat.S_ISREG(status.st_mode) and not stat.S_ISDIR(status.st_mode):
                if skipped is not None:  # found by the walk, exists, and is no regular file (a pipe, say)
                    skipped(name, f"{_kind(status.st_mode)}, not a regular file: a walk opens only files")
                continue
            else:
                identity = (status.st_dev, status.st_ino)  # the file itself, whatever its name
            if identity not in seen:
                seen.add(identity)
                yield from _sessions_of(name, skipped) if _may_be_store(name, status) else (name,)


def _may_be_store(name: str, status: os.stat_result | None) -> bool:
    """Whether a file may be a SQLite session store (any name a log has not; its first bytes)."""
    if name == STDIN or status is None or not stat.S_ISREG(status.st_mode) or name.endswith(LOG_SUFFIXES):
        return False
    from replay.sources.sqlitenames import sniffed

    return sniffed(name)


def _sessions_of(name: str, skipped: Skipped | None) -> list[str]:
    """A SQLite file's sessions, each named `STORE#ID`; the file itself when it cannot be read
    as a session store (its report says why); none for a store of no session (said)."""
    from replay.sources.sqlitestore import store_sessions

    sessions = store_sessions(name)
    if sessions is None:
        return [name]
    if not sessions and skipped is not None:
        skipped(name, "a session store holding no session")
    return sessions


def in_shard(path: str, index: int, count: int) -> bool:
    """Whether `path` belongs to shard `index` of `count` (1-based): a stable split by the path's
    own bytes (CRC-32), the same on every machine and run, so a fleet can be cut into jobs by
    any scheduler and each log is judged by exactly one of them."""
    return zlib.crc32(path.encode("utf-8", "surrogateescape")) % count == index - 1


def read_path_list(text: str) -> list[str]:
    """The paths of a list file (`--files-from`): one per line, blank lines skipped, each line
    taken as written but for its line end (a path may hold spaces)."""
    return [line for line in text.split("\n") if line.strip()]


def _walk(top: str, stores: bool = False, skipped: Skipped | None = None) -> tuple[list[str], list[str]]:
    """The logs under `top` (the current generation of each session directory) and the SQLite
    session stores, with `stores` the Host task stores too, and the directories that could not
    be listed; `skipped` hears of the logs compressed in a way schedlog does not read."""
    found: list[str] = []
    unlisted: list[str] = []
    for root, dirs, files in os.walk(top, onerror=lambda err: unlisted.append(err.filename)):
        dirs.sort()
        logs = chosen(root, files, stores, skipped, os.path.join)
        found.extend(os.path.join(root, name) for name in logs)
        found.extend(_stores_among(root, sorted(set(files) - set(logs))))
    return found, unlisted


def _stores_among(folder: str, names: list[str]) -> Iterator[str]:
    """The SQLite session stores among the files of `folder` a walk does not read as logs,
    whatever their names (each is read as its sessions: `discover`). A log's name is never
    opened here, nor a SQLite database's journal or WAL files (no store's header)."""
    from replay.sources.sqlitenames import is_session_store

    for name in names:
        if name.endswith(LOG_SUFFIXES) or name.endswith(_SQLITE_SIDE_FILES):
            continue
        path = os.path.join(folder, name)
        if is_session_store(path):
            yield path


_SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def generations_beside(path: str) -> list[str]:
    """The other canonical session files in a canonical session file's directory, newest first."""
    name = os.path.basename(path)
    if generation(name) is None:
        return []
    if is_url(path):
        from replay.sources.objects import names_beside

        names = names_beside(path)
    else:
        try:
            names = os.listdir(os.path.dirname(path) or ".")
        except OSError:
            return []
    others = [n for n in names if n != name and generation(n) is not None]
    return sorted(others, key=lambda n: generation(n) or (0, False), reverse=True)


def _status(path: str) -> os.stat_result | None:
    """The file's status (links followed), None where it cannot be reached."""
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _kind(st_mode: int) -> str:
    """What a file that is not a regular one is, in words."""
    if stat.S_ISFIFO(st_mode):
        return "a named pipe"
    if stat.S_ISSOCK(st_mode):
        return "a socket"
    if stat.S_ISCHR(st_mode) or stat.S_ISBLK(st_mode):
        return "a device"
    return "a special file"
