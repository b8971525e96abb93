"""Which names a walk reads (a folder's, or an object store prefix's): the log suffixes, the
Host store's name, the current generation of a session's files, and what a URL is. Shared by
the walk of folders (discover.py) and the listing of prefixes (objects.py)."""

from __future__ import annotations

import re
from collections.abc import Callable

from invariant.filenames import file_version

LOG_SUFFIXES = (".jsonl", ".jsonl.zstd", ".jsonl.zst")
"""The logs a walk reads: plain, and Zstandard (the harness's `.zstd`, and `.zst`, the zstd
tool's own suffix for the same container)."""
OTHER_COMPRESSION = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz", ".lz4": "lz4", ".br": "brotli"}
"""Logs compressed otherwise: a walk names them as skipped (read them through a pipe)."""
STDIN = "-"
STORE_NAME = "schedule.json"
"""The Host task store's file name (host.md §1)."""


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def is_url(path: str) -> bool:
    """Whether `path` is an object store's URL (s3://, gs://, ...: replay.sources.objects); a
    `file://` URL names a local path (`local_path`)."""
    return _SCHEME.match(path) is not None and not path.startswith("file://")


def local_path(path: str) -> str:
    """A `file://` URL as the local path it names; any other path as given."""
    return path.removeprefix("file://")


Skipped = Callable[[str, str], None]
"""Hears each file a walk found and did not yield, with why (the command line says it)."""


def chosen(
    folder: str, names: list[str], stores: bool, skipped: Skipped | None, joined: Callable[[str, str], str]
) -> list[str]:
    """Of the files `names` of one folder, those a walk reads: the logs (the current generation
    of a session's, `current_generations`), with `stores` the Host store; `skipped` hears of the
    logs compressed in a way schedlog does not read (`joined` names them: a folder's path and a
    file's name, as the walk spells them)."""
    if skipped is not None:
        for name in names:
            stem, dot, suffix = name.rpartition(".")
            if stem.endswith(".jsonl") and f"{dot}{suffix}" in OTHER_COMPRESSION:
                how = OTHER_COMPRESSION[f"{dot}{suffix}"]
                skipped(
                    joined(folder, name),
                    f"compressed with {how}, which schedlog does not read (pipe it: "
                    f"{'zcat' if how == 'gzip' else how + ' -dc'} FILE | schedlog verify -)",
                )
    logs = current_generations([n for n in names if n.endswith(LOG_SUFFIXES)])
    return [*logs, STORE_NAME] if stores and STORE_NAME in names else logs


def generation(name: str) -> tuple[int, bool] | None:
    """A canonical session file's (version, compressed), None for any other name."""
    version = file_version(name)
    return None if version is None else (version, name.endswith(".zstd"))


def current_generations(names: list[str]) -> list[str]:
    """The names of one directory less the generations the runtime does not load: of the
    canonical session files, only the highest version (compressed first, the default encoding)."""
    canonical = [n for n in names if generation(n) is not None]
    if len(canonical) < 2:
        return names
    best = max(canonical, key=lambda n: generation(n) or (0, False))
    return [n for n in names if generation(n) is None or n == best]
