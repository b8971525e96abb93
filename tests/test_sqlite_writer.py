"""SQLite session stores written by the published backend itself
(`@deepseek-ai/dsh-session-persistence-sqlite@0.0.1-rc.1`, layout 14, on Node 24's `node:sqlite`):
every fixture log and real log whose header a store holds is written through its own API (create,
then appends in batches, docs/reference-adapter/write-store.mjs), and each session read back
from the store gets the report its JSONL log gets (issue 66). Skipped, saying why, where the
reference tier's packages or its Node cannot be had."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from replay.sources.sqlitestore import Store
from tests.conftest import REAL_LOGS
from tests.reference import engine, reference_dir
from tests.test_sqlite_stores import LOGS, _holdable, expanded, report_json


def _written(store: Path, logs: list[Path], batch: int) -> list[str]:
    done = subprocess.run(
        [engine(), "write-store.mjs", str(store), str(batch), *map(str, logs)],
        cwd=reference_dir(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return list(json.loads(done.stdout))


def _by_store(logs: list[Path]) -> list[list[Path]]:
    """The logs in groups of distinct session ids (a store holds each id once)."""
    groups: list[tuple[set[str], list[Path]]] = []
    for log in logs:
        session = json.loads(log.read_bytes().split(b"\n", 1)[0])["id"]
        group = next((g for g in groups if session not in g[0]), None)
        if group is None:
            groups.append(group := (set(), []))
        group[0].add(session)
        group[1].append(log)
    return [g[1] for g in groups]


def _writable(log: Path) -> bool:
    """A log the backend's API takes: a header a store holds, and seqs contiguous from 0 (its
    append refuses any other)."""
    if not _holdable(log):
        return False
    seqs = [json.loads(line)["seq"] for line in expanded(log.read_bytes()).splitlines()[1:] if line.strip()]
    return seqs == list(range(len(seqs)))


def _real_logs() -> list[Path]:
    return sorted(p for p in REAL_LOGS.glob("*.jsonl") if _writable(p)) if REAL_LOGS.is_dir() else []


@pytest.mark.parametrize("source", ["fixtures", "real logs"])
def test_the_published_writers_stores_read_back_with_their_logs_reports(tmp_path: Path, source: str) -> None:
    logs = [p for p in LOGS if _writable(p)] if source == "fixtures" else _real_logs()
    if not logs:
        pytest.skip(f"no real logs a store can hold at {REAL_LOGS}")
    for k, group in enumerate(_by_store(logs)):
        store = tmp_path / f"store-{k}.db"
        ids = _written(store, group, batch=7)
        with Store(str(store)) as opened:
            assert opened.layout == 14
            held = {s.id for s in opened.sessions()}
        for log, session in zip(group, ids, strict=True):
            if len(expanded(log.read_bytes()).splitlines()) == 1:  # no event: created, never appended
                assert session not in held  # (a session's row is written by its first append)
                continue
            plain = tmp_path / f"{k}-{log.stem}.jsonl"
            plain.write_bytes(expanded(log.read_bytes()))
            assert report_json(f"{store}#{session}") == report_json(str(plain)), log.name
