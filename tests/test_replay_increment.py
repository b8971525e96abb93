"""Replay into an existing database (issue 50, acceptance 4): replayed twice into one database
over a growing folder, the database equals a fresh replay of the final folder, table by table
and view by view (a session's key aside: a kept session keeps its key, so rows are compared
with each key replaced by its session's path)."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.logs import make, sources
from replay.duck import staging
from replay.duck.build import TABLES, replay
from replay.reading import Mode, Reading
from replay.sources.discover import discover

from .conftest import ROOT

POOL = sources(ROOT / "no-real-logs")
COMPARED = (*TABLES, "sources", "replay_meta", "active_schedules", "batches", "timeline", "host_reminder_deliveries")


def contents(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's and view's rows, sorted, each session key replaced by its session's path."""
    with duckdb.connect(str(db), read_only=True) as con:
        con.execute("SET TimeZone = 'UTC'")
        path_of = dict(con.execute("SELECT session_key, path FROM sessions").fetchall())
        out = {}
        for table in COMPARED:
            cursor = con.execute(f"SELECT * FROM {table}")
            names = [d[0] for d in cursor.description]
            rows = [
                tuple(path_of.get(v, v) if n == "session_key" else v for n, v in zip(names, row, strict=True))
                for row in cursor.fetchall()
            ]
            out[table] = sorted(rows, key=repr)
    return out


def _write(folder: Path, files: dict[str, bytes]) -> None:
    for old in folder.iterdir():
        if old.name not in files:
            old.unlink()
    for name, data in files.items():
        if not (folder / name).exists() or (folder / name).read_bytes() != data:
            (folder / name).write_bytes(data)


def _inputs(folder: Path) -> list[str]:
    return list(discover([str(folder)], stores=True))


def _grown_twice(tmp: Path, before: dict[str, bytes], after: dict[str, bytes], reading: Reading) -> tuple[str, str]:
    folder = tmp / "logs"
    folder.mkdir(exist_ok=True)
    _write(folder, before)
    db = tmp / "grown.duckdb"
    _, first = replay(_inputs(folder), db, reading=reading)
    _write(folder, after)
    _, second = replay(_inputs(folder), db, reading=reading)
    assert second != "built anew"
    fresh = tmp / "fresh.duckdb"
    replay(_inputs(folder), fresh, reading=reading)
    assert contents(db) == contents(fresh)
    return first, second


def _folder(seed: int, count: int) -> dict[str, bytes]:
    """`count` fuzz inputs (valid or mutated, plain or framed, v0-v4, chunk rows, fork children)."""
    files = {}
    for n in range(count):
        item = make(seed, n, POOL)
        if not item.source.startswith("store:"):
            files[f"{n:02d}-{item.source}"] = item.data
    return files


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10**6), cuts=st.lists(st.floats(0, 1), min_size=6, max_size=6), mode=st.sampled_from(Mode))
def test_replay_twice_over_a_growing_folder_equals_a_fresh_replay(
    tmp_path_factory: pytest.TempPathFactory, seed: int, cuts: list[float], mode: Mode
) -> None:
    """The first replay sees each log cut short (inside a line, a frame, a chunk row), one log
    not yet written and one that is later removed; the second the whole logs, one replaced by
    other bytes and one truncated."""
    final = _folder(seed, 6)
    names = sorted(final)
    rng = random.Random(seed)
    before = {name: final[name][: int(cut * len(final[name]))] for name, cut in zip(names, cuts, strict=False)}
    before.pop(names[0], None)  # added by the second replay
    before["99-gone.session.jsonl"] = (ROOT / "fixtures/sessions/valid/reminders.session.jsonl").read_bytes()
    after = dict(final)
    if len(names) > 2:
        after[names[1]] = final[names[1]][: len(before.get(names[1], b"")) // 2]  # truncated
        after[names[2]] = bytes(rng.randrange(256) for _ in range(8)) + final[names[2]]  # edited
    _grown_twice(tmp_path_factory.mktemp("inc"), before, after, Reading(mode=mode))


@pytest.mark.parametrize("inline", [True, False], ids=["inline", "direct"])
def test_grown_logs_append_only_their_new_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inline: bool
) -> None:
    """Logs staged inline and read straight by DuckDB (direct) alike; the summary says what changed."""
    if not inline:
        monkeypatch.setattr(staging, "INLINE_BYTES", 0)
    sessions = ROOT / "fixtures" / "sessions"
    final = {p.name: p.read_bytes() for p in sorted(sessions.rglob("*.jsonl*"))}
    before = dict(final)
    grown = "reminders.session.jsonl"
    lines = final[grown].splitlines(keepends=True)
    before[grown] = b"".join(lines[: len(lines) // 2]) + lines[len(lines) // 2][:7]  # a torn tail, completed later
    first, second = _grown_twice(tmp_path, before, final, Reading())
    assert first == ""  # (no database before)
    assert second == f"{len(final) - 1} kept, 1 grown, 0 read again, 0 added, 0 removed"


def test_a_database_of_other_options_is_rebuilt(tmp_path: Path) -> None:
    inputs = _inputs(ROOT / "fixtures" / "sessions")
    db = tmp_path / "r.duckdb"
    replay(inputs, db)
    assert replay(inputs, db, reading=Reading(mode=Mode.LENIENT))[1] == "built anew"
    assert replay(inputs, db, reading=Reading(mode=Mode.LENIENT))[1].startswith(f"{len(inputs)} kept")
    assert replay(inputs, db, reading=Reading(mode=Mode.LENIENT), rebuild=True)[1] == "built anew"


def test_host_stores_and_standard_input_are_taken_again_each_time(tmp_path: Path) -> None:
    """A Host task store's tables are made again from the store (read whole every run), and
    cross-checked with every session, kept or read; standard input is read again under its key."""
    import shutil

    root = tmp_path / "root"
    shutil.copytree(ROOT / "fixtures" / "host" / "root", root)
    alpha = root / "--home-dev-app--" / "s-alpha" / "session.v4.jsonl"
    whole = alpha.read_bytes()
    lines = whole.splitlines(keepends=True)
    alpha.write_bytes(b"".join(lines[: len(lines) // 2]))
    stdin = (ROOT / "fixtures/sessions/valid/fork-child.session.jsonl").read_bytes()
    db, fresh = tmp_path / "grown.duckdb", tmp_path / "fresh.duckdb"
    replay([*_inputs(root), "-"], db, stdin=stdin)
    alpha.write_bytes(whole)
    assert replay([*_inputs(root), "-"], db, stdin=stdin)[1] == "1 kept, 1 grown, 1 read again, 0 added, 0 removed"
    replay([*_inputs(root), "-"], fresh, stdin=stdin)
    got = contents(db)
    assert got == contents(fresh)
    assert got["host_tasks"] and got["host_reminder_deliveries"]


def test_a_zstandard_log_grown_by_a_bad_frame_is_read_again_whole(tmp_path: Path) -> None:
    """A Zstandard container with one frame that does not scan is refused whole (a cold read
    stages none of its records): the records held of its prefix go too (found by the property
    above, seed 5158)."""
    log = (ROOT / "fixtures/sessions/valid/reminders.session.jsonl.zstd").read_bytes()
    _, second = _grown_twice(
        tmp_path, {"s.session.jsonl.zstd": log}, {"s.session.jsonl.zstd": log + b"\0garbage"}, Reading()
    )
    assert second == "0 kept, 0 grown, 1 read again, 0 added, 0 removed"
