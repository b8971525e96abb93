"""The verdict cache and watch under the defects an independent fuzzer found (issue 63, items
1-7): a report is stored only under the bytes it judged, a saved reading only with its own entry,
and nothing a cache row holds (NULLs, text, another entry's reading, a database without its
table, a lock held by another run) ends in a traceback, a wrong verdict or a silent wait. Every
case is compared with a cold read (`--no-cache`), byte for byte in `--format json`."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from replay.cache import cached as cached_module
from replay.cli import main
from replay.judge.verify import verify_path
from replay.live import follow as follow_module
from replay.live.follow import Kind, look, told_of
from replay.reading import Reading

from .conftest import ROOT

SESSIONS = ROOT / "fixtures" / "sessions"
VALID = SESSIONS / "valid" / "reminders.session.jsonl"
CORRUPT = SESSIONS / "corrupt" / "gate-too-soon.session.jsonl"


def _run(target: Path, cache: Path | None, *more: str) -> tuple[int, str, str]:
    args = ["verify", "--format", "json", *more, str(target)]
    args += ["--no-cache"] if cache is None else ["--cache-dir", str(cache), "-v"]
    result = CliRunner().invoke(main, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout, result.stderr


def _as_cold(target: Path, cache: Path) -> str:
    """Verify through the cache and cold: the same output and status (the cache's stderr)."""
    status, out, said = _run(target, cache)
    cold_status, cold, _ = _run(target, None)
    assert (status, out) == (cold_status, cold), said
    return said


def _same_size_corrupt(valid: bytes, corrupt_line: bytes) -> bytes:
    """`valid` with its last line replaced by `corrupt_line` cut or padded to the same size."""
    lines = valid.splitlines(keepends=True)
    last = lines[-1]
    text = corrupt_line.rstrip(b"\n")[: len(last) - 1]
    return b"".join(lines[:-1]) + text + b" " * (len(last) - 1 - len(text)) + b"\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    out = tmp_path / "logs"
    out.mkdir()
    shutil.copy(VALID, out / "a.session.jsonl")
    shutil.copy(CORRUPT, out / "b.session.jsonl")
    return out


# --- item 1: a report is stored only under the bytes it judged ---------------------------------


def _rewritten_while_judged(log: Path, new: bytes, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Rewrite `log` in place (size and mtime kept) once `name` of replay.cache.cached has judged it."""
    real: Callable[..., Any] = getattr(cached_module, name)
    st = log.stat()

    def rewriting(*args: Any, **kwargs: Any) -> Any:
        with open(log, "r+b") as f:
            f.write(new)
        os.utime(log, ns=(st.st_atime_ns, st.st_mtime_ns))
        return real(*args, **kwargs)

    monkeypatch.setattr(cached_module, name, rewriting)


def test_a_log_rewritten_while_it_was_judged_is_never_answered_with_the_old_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "s.session.jsonl"
    valid = VALID.read_bytes()
    log.write_bytes(valid)
    bad = b'{"seq":1,"type":"not-a-session"}'
    new = _same_size_corrupt(valid, bad)
    assert len(new) == len(valid) and new != valid
    cache = tmp_path / "cache"
    _rewritten_while_judged(log, new, monkeypatch, "remember")
    _run(log, cache)  # judged the valid bytes; the file holds the new ones when the entry is written
    monkeypatch.undo()
    said = _as_cold(log, cache)
    assert "read whole" in said


def test_a_grown_log_rewritten_while_it_was_resumed_is_read_whole_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "s.session.jsonl"
    valid = VALID.read_bytes()
    lines = valid.splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-3]))
    cache = tmp_path / "cache"
    _run(log, cache)
    log.write_bytes(valid)  # grown
    _rewritten_while_judged(log, _same_size_corrupt(valid, b"[1,2,3]"), monkeypatch, "remember")
    said = CliRunner().invoke(main, ["verify", "--cache-dir", str(cache), str(log)]).stdout
    assert said.splitlines()[-1].endswith("; 0 from cache, 1 resumed, 0 read whole"), said
    monkeypatch.undo()
    assert "read whole: its first" in _as_cold(log, cache)


def test_watch_never_keeps_the_hash_of_bytes_it_did_not_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "s.session.jsonl"
    valid = VALID.read_bytes()
    log.write_bytes(valid)
    new = _same_size_corrupt(valid, b"[1,2,3]")
    real = follow_module._judged

    def judged_then_rewritten(*args: Any, **kwargs: Any) -> Any:
        got = real(*args, **kwargs)
        log.write_bytes(new)
        return got

    monkeypatch.setattr(follow_module, "_judged", judged_then_rewritten)
    first, _ = look(str(log), None, Reading())
    monkeypatch.undo()
    _, events = look(str(log), first, Reading())
    assert any(e.kind is Kind.REREAD for e in events), events
    now = verify_path(str(log))
    assert [e.finding for e in events if e.kind is Kind.FINDING] == list(told_of(now))
    assert told_of(now)  # (the rewrite has a finding to tell)


# --- item 3: a malformed row is an entry not trusted -------------------------------------------


@pytest.mark.parametrize(
    "column, value",
    [("used", None), ("used", "yesterday"), ("head", None), ("head", "text"), ("rest", None), ("rest", "text")],
)
def test_a_malformed_cache_row_is_read_whole(folder: Path, tmp_path: Path, column: str, value: object) -> None:
    cache = tmp_path / "cache"
    log = folder / "a.session.jsonl"
    lines = VALID.read_bytes().splitlines(keepends=True)
    log.write_bytes(b"".join(lines[:-2]))
    _run(folder, cache)
    log.write_bytes(b"".join(lines))  # grown: its saved reading is read too
    db = sqlite3.connect(cache / "verdicts.sqlite")
    with db:
        db.execute(f"UPDATE entries SET {column} = ?", (value,))
    db.close()
    _as_cold(folder, cache)
    _as_cold(folder, cache)  # and the entries written again serve


# --- item 4: a saved reading is sealed with its entry ------------------------------------------


def test_a_saved_reading_moved_from_another_entry_is_not_trusted(tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    one, other = folder / "a.session.jsonl", folder / "b.session.jsonl"
    valid = VALID.read_bytes().splitlines(keepends=True)
    corrupt = CORRUPT.read_bytes().splitlines(keepends=True)
    one.write_bytes(b"".join(valid[:-2]))
    other.write_bytes(b"".join(corrupt[:-2]))
    cache = tmp_path / "cache"
    _run(folder, cache)
    db = sqlite3.connect(cache / "verdicts.sqlite")
    with db:
        rows = dict(db.execute("SELECT path, rest FROM entries").fetchall())
        swapped = {os.fsencode(one.resolve()): os.fsencode(other.resolve())}
        for mine, theirs in swapped.items():
            db.execute("UPDATE entries SET rest = ? WHERE path = ?", (rows[theirs], mine))
    db.close()
    one.write_bytes(b"".join(valid))
    said = _as_cold(one, cache)
    assert "read whole" in said and "resumed" not in said


# --- item 6: a database without its table is replaced ------------------------------------------


@pytest.mark.parametrize("schema", ["no table", "another table"])
def test_a_cache_database_without_its_table_is_replaced(folder: Path, tmp_path: Path, schema: str) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    db = sqlite3.connect(cache / "verdicts.sqlite")
    if schema == "another table":
        db.execute("CREATE TABLE entries (key TEXT PRIMARY KEY, what BLOB)")
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()
    said = _as_cold(folder, cache)
    assert "warning" not in said
    summary = CliRunner().invoke(main, ["verify", "--cache-dir", str(cache), str(folder)]).stdout.splitlines()[-1]
    assert summary.endswith("; 2 from cache, 0 resumed, 0 read whole"), summary
    result = CliRunner().invoke(main, ["cache", "clear", "--cache-dir", str(cache)])
    assert result.exit_code == 0, result.output


def test_cache_clear_replaces_a_database_without_its_table(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    db = sqlite3.connect(cache / "verdicts.sqlite")
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()
    result = CliRunner().invoke(main, ["cache", "clear", "--cache-dir", str(cache)])
    assert result.exit_code == 0, result.output
    assert "cleared 0 entries" in result.output


# --- item 7: a lock held by another run is said, and waited for briefly -----------------------

_HOLDER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute("UPDATE entries SET used = used")
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def test_a_held_cache_lock_is_said_and_the_run_goes_on(folder: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _run(folder, cache)
    (folder / "a.session.jsonl").write_bytes(VALID.read_bytes().splitlines(keepends=True)[0])
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(cache / "verdicts.sqlite"), "120"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        status, out, said = _run(folder, cache)
        took = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    cold_status, cold, _ = _run(folder, None)
    assert (status, out) == (cold_status, cold)
    assert "lock" in said and "another" in said, said
    assert took < 60, took  # (not a speed goal: the holder keeps its lock for 120 s)


# --- item 5: watch sees every edit of committed bytes ------------------------------------------


def test_watch_sees_an_edit_far_before_the_committed_end_then_an_append(tmp_path: Path) -> None:
    log = tmp_path / "s.session.jsonl"
    body = VALID.read_bytes()
    log.write_bytes(body)
    first, _ = look(str(log), None, Reading())
    assert verify_path(str(log)).verdict.value == "ok"
    # an edit in place of the header (far more than 4 KiB before the end), size kept, then an append
    edited = body.replace(b'"version"', b'"versi0n"', 1)
    assert len(edited) == len(body) and edited != body and len(body) > 8192
    with open(log, "r+b") as f:
        f.write(edited)
    with open(log, "ab") as f:
        f.write(b"[1]\n")
    _, more = look(str(log), first, Reading())
    assert any(e.kind is Kind.REREAD for e in more), more


def test_watch_judges_a_torn_tail_rewritten_into_a_whole_line_of_the_same_size(tmp_path: Path) -> None:
    log = tmp_path / "s.session.jsonl"
    lines = VALID.read_bytes().splitlines(keepends=True)
    whole = b"[1,2,3]" + b" " * (len(lines[-1]) - 8) + b"\n"
    torn = lines[-1][: len(whole) - 1] + b"x"  # no LF: a write in progress
    assert len(torn) == len(whole)
    log.write_bytes(b"".join(lines[:-1]) + torn)
    first, _ = look(str(log), None, Reading())
    with open(log, "r+b") as f:
        f.seek(len(b"".join(lines[:-1])))
        f.write(whole)
    _, more = look(str(log), first, Reading())
    expected = told_of(verify_path(str(log)))
    assert expected  # (the whole line has a finding to tell)
    assert [e.finding for e in more if e.kind is Kind.FINDING] == list(expected), more


def test_json_of_every_case_is_json() -> None:
    """(the helper's output is the JSON report: a guard that the cases compare reports)"""
    status, out, _ = _run(VALID, None)
    assert status == 0 and json.loads(out)


def test_watch_withdraws_what_it_told_of_a_log_written_again_with_no_whole_line(tmp_path: Path) -> None:
    """A Zstandard file told unreadable (no whole frame yet), then written again in place as a
    plain file with no LF yet: nothing is left told (found by fuzz/cache.py, case 20261206:867)."""
    log = tmp_path / "s.session.jsonl.zstd"
    log.write_bytes(b"\x28\xb5\x2f\xfd\x20\x8e\xcd\x03\x00\x92")
    first, events = look(str(log), None, Reading())
    assert any(e.kind is Kind.VERDICT for e in events)
    log.write_bytes(b"\x28\xb5\x20\xfd\x20\x8e\xcd\x03\x00\x92")  # (no magic now: a plain first line, no LF)
    _, more = look(str(log), first, Reading())
    assert [e.kind for e in more] == [Kind.REREAD]


def _large_log(path: Path, torn: bool = False) -> bytes:
    """The valid log followed by padding events past the reader's piece size (8 MiB): read in
    pieces, each hashed as it passes (`Hashing.pieces`); `torn`: its last line cut short."""
    lines = VALID.read_bytes().splitlines(keepends=True)
    seq = json.loads(lines[-1])["seq"] + 1
    pad = "x" * 2000
    more = [
        f'{{"type":"x/padding","seq":{seq + k},"time":1785932800000,"data":{{"text":"{pad}"}}}}\n'.encode()
        for k in range(4500)
    ]
    data = b"".join(lines + more)
    if torn:
        data = data[:-100]
    path.write_bytes(data)
    return data


def test_a_large_log_rewritten_while_it_was_judged_is_read_whole_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "big.session.jsonl"
    data = _large_log(log)
    assert len(data) > 8 << 20
    new = data[:100] + data[100:200].replace(b'"', b"'", 1) + data[200:]
    assert len(new) == len(data)
    cache = tmp_path / "cache"
    _rewritten_while_judged(log, new, monkeypatch, "remember")
    _run(log, cache)
    monkeypatch.undo()
    assert "read whole" in _as_cold(log, cache)


def test_a_large_log_with_a_torn_tail_is_resumed_as_a_cold_read_reads_it(tmp_path: Path) -> None:
    log = tmp_path / "big.session.jsonl"
    torn = _large_log(log, torn=True)
    cache = tmp_path / "cache"
    _as_cold(log, cache)
    whole = _large_log(tmp_path / "whole.jsonl")
    with open(log, "ab") as f:
        f.write(whole[len(torn) :])
    said = CliRunner().invoke(main, ["verify", "--cache-dir", str(cache), str(log)]).stdout
    assert said.splitlines()[-1].endswith("; 0 from cache, 1 resumed, 0 read whole"), said
    _as_cold(log, cache)
