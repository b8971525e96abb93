"""ParallelLoader: steps on several connections, committed in the background by `finish`."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import duckdb
import pytest

from replay.duck.loading import ParallelLoader


def _database(tmp_path: Path) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(str(tmp_path / "l.duckdb"))
    con.execute("CREATE TABLE t (x INTEGER)")
    return con


def _insert(n: int, pause: float = 0.01) -> Callable[[duckdb.DuckDBPyConnection], None]:
    def step(con: duckdb.DuckDBPyConnection) -> None:
        time.sleep(pause)
        con.execute("INSERT INTO t VALUES (?)", [n])

    return step


def _count(con: duckdb.DuckDBPyConnection) -> int:
    row = con.execute("SELECT count(*) FROM t").fetchone()
    assert row is not None
    return int(row[0])


def test_finish_commits_every_step_in_the_background(tmp_path: Path) -> None:
    con = _database(tmp_path)
    loader = ParallelLoader(con, 2, [])
    for n in range(6):
        loader.submit(_insert(n))
    committed = loader.finish()
    assert _count(con) == 0  # not visible before the loaders commit
    committed.result(timeout=30)
    loader.close()
    assert _count(con) == 6


def test_a_failed_step_fails_the_finish_and_commits_nothing(tmp_path: Path) -> None:
    con = _database(tmp_path)
    loader = ParallelLoader(con, 2, [])
    loader.submit(_insert(1))
    loader.submit(lambda c: c.execute("SELECT error('boom')"))
    committed = loader.finish()
    with pytest.raises(duckdb.Error, match="boom"):
        committed.result(timeout=30)
    loader.close()
    assert _count(con) == 0


def test_close_right_after_finish_waits_for_the_commit(tmp_path: Path) -> None:
    """close() while the committer still waits on the steps: it lets the commit finish (the
    steps' rows are kept) and does not trip over the running steps the committer takes."""
    for _ in range(10):
        con = _database(tmp_path)
        loader = ParallelLoader(con, 2, [])
        loader.submit(_insert(1, 0.02))
        loader.submit(_insert(2, 0.02))
        loader.finish()
        loader.close()
        assert _count(con) == 2
        con.close()
        (tmp_path / "l.duckdb").unlink()
