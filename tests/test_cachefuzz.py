"""The verdict cache and watch fuzzer (fuzz/cache.py, issue 63): a bounded run in the suite finds
no difference between a cached, resumed or followed reading and a cold one, and it finds the
defects it is there for when they are planted back. The campaign (100,000 comparisons and more)
runs by hand: `python -m fuzz.cache --cases 37000`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import REAL_LOGS, ROOT

sys.path.insert(0, str(ROOT))
from fuzz import cache as fuzz
from fuzz.logs import Source, sources

SEED = 20261206


@pytest.fixture(scope="module")
def pool() -> list[Source]:
    return sources(REAL_LOGS)


def _cases(pool: list[Source], tmp_path: Path, indexes: range, kind: str | None = None) -> fuzz.Tally:
    tally = fuzz.Tally(SEED)
    for index in indexes:
        folder = tmp_path / f"c{index}"
        folder.mkdir()
        tally.add(fuzz.one_case(SEED, index, pool, folder, tmp_path / "cache", kind))
    return tally


def test_a_bounded_run_finds_no_difference(pool: list[Source], tmp_path: Path) -> None:
    tally = _cases(pool, tmp_path, range(350))
    assert tally.differences == []
    assert set(tally.comparisons) == set(fuzz.KINDS) and sum(tally.comparisons.values()) > 900


def test_it_finds_a_cache_that_trusts_a_stat(
    pool: list[Source], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from replay.cache import cached
    from replay.sources.hashed import fed

    def by_stat(saved: Any, found: Any, path: str) -> tuple[str, Any]:  # (size and inode, no hash compared)
        if (saved.device, saved.inode) != (found.device, found.inode) or found.size < saved.size:
            return "replaced or shorter", None
        return "", fed(path, max(saved.offset, 0))

    monkeypatch.setattr(cached, "_why_not", by_stat)
    assert _cases(pool, tmp_path, range(0, 700, 7), "edit").differences


def test_it_finds_watch_trusting_edited_committed_bytes(
    pool: list[Source], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from replay.live import follow
    from replay.sources.hashed import fed

    def trusting(path: str, status: Any, before: Any) -> tuple[str, Any]:  # (the prefix never compared)
        return "", fed(path, before.offset)

    monkeypatch.setattr(follow, "_changed", trusting)
    assert _cases(pool, tmp_path, range(0, 700, 7), "watch").differences


def test_it_finds_a_report_stored_under_bytes_it_did_not_judge(
    pool: list[Source], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from replay.cache import cached
    from replay.sources import hashed

    real = cached.remember

    def hashed_again(consulted: Any, store: Any, log: Any, report: Any, use: Any) -> Any:
        if log.hashing is not None and log.hashing.digest is not None:  # (the file hashed after judging)
            again = hashed.fed(consulted.path, log.size)
            log.hashing.digest = None if again is None else again.digest()
        return real(consulted, store, log, report, use)

    monkeypatch.setattr(cached, "remember", hashed_again)
    assert _cases(pool, tmp_path, range(0, 700, 7), "rewrite").differences
