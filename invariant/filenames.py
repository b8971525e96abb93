"""The canonical names of a session's log files (formats.md §2), apart from the log's shapes:
walking a folder and keying the verdict cache need the names only, not the shapes' tables."""

from __future__ import annotations

import re

_FILE_NAME = re.compile(r"session(?:\.v([1-9][0-9]*))?\.jsonl")


def file_version(name: str) -> int | None:
    """The version a canonical session file name identifies (`session.jsonl` 0, `session.vN.jsonl`
    N, with `.zstd` or not), None for any other name (formats.md §2)."""
    match = _FILE_NAME.fullmatch(name.removesuffix(".zstd"))
    return None if match is None else int(match.group(1) or 0)
