"""Replay into an existing database: what it already holds of the inputs, and what must change.

A replay database records each session's file as it was read (`sources`: its size, the digest of
those bytes, the generations beside it) and what made it (`replay_meta`: schedlog's code and the
reading's options). A later replay with the same code and options into it sorts the inputs:

- unchanged (same size, same bytes, same neighbours): its rows are kept, nothing is read for
  them (its report is the verdict cache's, or a read);
- grown (the bytes it was read from are still its first ones): read again, its committed records
  past the last one held appended, its other rows replaced;
- anything else (edited, truncated, replaced, a stream): its rows replaced under the same key;
- new: rows under a new key (after the highest held); gone from the inputs: its rows removed.

A session keeps its key across replays (a key names the same session in every query saved
against the database); apart from the keys, the result equals a fresh replay of the inputs.
Anything else (no such tables, another schedlog, other options) is rebuilt from scratch.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from replay.cache.cached import current_size, fingerprint, reading_key
from replay.duck.staging import neighbours
from replay.reading import Reading
from replay.sources.bytesource import framed
from replay.sources.inputs import digest as content_digest

SOURCES = "CREATE TABLE sources (session_key BIGINT, path BLOB, size BIGINT, digest VARCHAR, beside VARCHAR)"
"""A session's file as read (its path as the file system's bytes: a name need not be UTF-8)."""
META = "CREATE TABLE replay_meta (fingerprint VARCHAR, reading VARCHAR)"
PER_SESSION = (
    "records", "chunk_events", "sessions", "schedule_changes", "schedules", "dispatches", "violations",
    "violation_related", "sources",
)  # fmt: skip
"""The tables holding rows of each session (its key in `session_key`)."""
APPENDED = ("records", "chunk_events")
"""The tables a grown session's new records are appended to (its other rows are replaced)."""


@dataclass(frozen=True)
class Held:
    """One session's file as the database holds it."""

    key: int
    size: int | None
    digest: str | None
    beside: str


@dataclass
class Plan:
    """What a replay into an existing database does with each input (by its path as given)."""

    keys: dict[str, int] = field(default_factory=dict)
    """Every input's session key: a held session's own, else a new one."""
    kept: list[str] = field(default_factory=list)
    grown: dict[int, int] = field(default_factory=dict)
    """A grown session's key, and the line of its last record held (its records past it are new)."""
    replaced: list[int] = field(default_factory=list)
    """The keys whose rows go, every table's: re-read sessions and sessions gone from the inputs."""
    added: int = 0
    removed: int = 0

    @property
    def told(self) -> str:
        """`180 kept, 15 grown, 3 read again, 2 added, 1 removed`."""
        again = len(self.replaced) - self.removed
        counts = (len(self.kept), len(self.grown), again, self.added, self.removed)
        named = ("kept", "grown", "read again", "added", "removed")
        return ", ".join(f"{n} {what}" for n, what in zip(counts, named, strict=True))


def holdings(db: Path, reading: Reading) -> dict[str, Held] | None:
    """The sessions a replay database at `db` holds, by path, where a replay with `reading` may go
    on from it (same code, same options); None where it must be rebuilt (or does not exist)."""
    if not db.exists():
        return None
    try:
        with duckdb.connect(str(db), read_only=True) as con:
            meta = con.execute("SELECT fingerprint, reading FROM replay_meta").fetchall()
            rows = con.execute("SELECT path, session_key, size, digest, beside FROM sources").fetchall()
    except duckdb.Error:
        return None  # no such tables: made by an earlier schedlog
    if meta != [(fingerprint(), reading_key(reading))]:
        return None
    return {os.fsdecode(bytes(path)): Held(key, size, digest, at) for path, key, size, digest, at in rows}


def meta_row(reading: Reading) -> tuple[str, str]:
    return fingerprint(), reading_key(reading)


def plan_for(
    held: dict[str, Held], logs: Sequence[str], streams: Sequence[str], con: duckdb.DuckDBPyConnection
) -> Plan:
    """Sort the inputs (`logs` files, `streams` read once) against what the database holds."""
    out = Plan()
    top = max((h.key for h in held.values()), default=0)
    grown: list[str] = []
    for path in [*streams, *logs]:
        h = held.get(path)
        if h is None:
            top += 1
            out.keys[path] = top
            out.added += 1
            continue
        out.keys[path] = h.key
        state = "other" if path in streams else _compare(path, h)
        if state == "unchanged":
            out.kept.append(path)
        elif state == "grown":
            grown.append(path)
        else:
            out.replaced.append(h.key)
    gone = [h.key for path, h in held.items() if path not in out.keys]
    out.replaced += gone
    out.removed = len(gone)
    if grown:
        keys = ", ".join(str(out.keys[p]) for p in grown)
        last = dict(
            con.execute(
                f"SELECT session_key, max(line) FROM records WHERE session_key IN ({keys}) GROUP BY 1"
            ).fetchall()
        )
        out.grown = {out.keys[p]: int(last.get(out.keys[p]) or 0) for p in grown}
    return out


def _compare(path: str, h: Held) -> str:
    """unchanged, grown or other: the file now against the bytes the database was made of."""
    size = current_size(path)
    if size is None or h.size is None or h.digest is None or size < h.size or neighbours(path) != h.beside:
        return "other"
    if content_digest(path, h.size) != h.digest:
        return "other"
    if size == h.size:
        return "unchanged"
    return "other" if _framed(path) else "grown"


def _framed(path: str) -> bool:
    """A Zstandard log: one bad frame appended refuses the whole container (a cold read stages
    none of its records), so the records held of its prefix cannot stay; it is read again whole."""
    try:
        return framed(path)
    except OSError:
        return True


def removals(p: Plan) -> list[str]:
    """The statements removing the rows that go: a re-read or gone session's everywhere, a grown
    one's but its records and chunk events (appended to)."""
    out = []
    if p.replaced:
        keys = ", ".join(map(str, p.replaced))
        out += [f"DELETE FROM {table} WHERE session_key IN ({keys})" for table in PER_SESSION]
    if p.grown:
        keys = ", ".join(map(str, p.grown))
        out += [f"DELETE FROM {t} WHERE session_key IN ({keys})" for t in PER_SESSION if t not in APPENDED]
    return out


def after_lines(grown: dict[int, int], column: str = "s", line: str = "l") -> str:
    """A condition keeping a staged record of a grown session only past the last one held."""
    if not grown:
        return "TRUE"
    cases = " ".join(f"WHEN {k} THEN {n}" for k, n in grown.items())
    return f"{line} > CASE {column} {cases} ELSE 0 END"
