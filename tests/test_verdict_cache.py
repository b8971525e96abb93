"""The verdict cache (issue 50): a re-audit reads only what changed, and nothing the cache holds
changes a verdict. Every case compares with a cold read (`--no-cache`), byte for byte in
`--format json`: an unchanged log (from the cache), a grown one (resumed), an edit that keeps
size and mtime, a truncation, a replaced file, a garbage cache file, a damaged entry, an entry
of another version, two runs at once sharing one cache, a folder that cannot be written."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner

from replay.cli import main

from .conftest import ROOT

SESSIONS = ROOT / "fixtures" / "sessions"
FORMATS = ROOT / "fixtures" / "formats"


def _verify(folder: Path, cache: Path | None, *more: str) -> tuple[int, str, str]:
    args = ["verify", "--format", "json", *more, str(folder)]
    args += ["--no-cache"] if cache is None else ["--cache-dir", str(cache)]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def _summary(folder: Path, cache: Path, *more: str) -> str:
    result = CliRunner().invoke(main, ["verify", *more, "--cache-dir", str(cache), str(folder)], catch_exceptions=False)
    return result.stdout.strip().splitlines()[-1]


def _same_as_cold(folder: Path, cache: Path, *more: str) -> str:
    """Verify through the cache and cold; assert the same output and status; the cache's stderr."""
    cached = _verify(folder, cache, "-v", *more)
    cold = _verify(folder, None, *more)
    assert json.loads(cached[1]) == json.loads(cold[1])
    assert cached[1] == cold[1] and cached[0] == cold[0]
    return cached[2]


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    """The bundled sessions and format fixtures, plain and as Zstandard frames, in a folder of their own."""
    out = tmp_path / "logs"
    shutil.copytree(SESSIONS, out / "sessions")
    for k, path in enumerate(sorted(FORMATS.rglob("*.jsonl"))):
        lines = path.read_bytes().splitlines(keepends=True)
        (out / f"f{k}.jsonl").write_bytes(b"".join(lines))
        compressor = zstandard.ZstdCompressor()
        framed = b"".join(compressor.compress(b"".join(lines[i : i + 3])) for i in range(1, len(lines), 3))
        (out / f"f{k}.jsonl.zstd").write_bytes(compressor.compress(lines[0]) + framed)
    return out


def _all_logs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and ".jsonl" in p.name)


def test_a_second_run_takes_every_report_from_the_cache(logs: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    count = len(_all_logs(logs))
    assert _summary(logs, cache).endswith(f"; 0 from cache, 0 resumed, {count} read whole")
    assert _summary(logs, cache).endswith(f"; {count} from cache, 0 resumed, 0 read whole")
    assert _same_as_cold(logs, cache) == ""
    assert "from cache" not in _summary(logs, cache, "--no-cache")


def test_grown_logs_are_resumed_and_judged_as_a_cold_read_judges_them(logs: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    full = {p: p.read_bytes() for p in _all_logs(logs)}
    for path, data in full.items():  # each log as it was a third of the way through, torn mid-line
        path.write_bytes(data[: max(len(data) // 3, data.index(b"\n") + 1 if b"\n" in data else 0)])
    _verify(logs, cache)
    for path, data in full.items():
        path.write_bytes(data)
    line = _summary(logs, cache)
    resumed = int(line.split("; ")[1].split(", ")[1].split()[0])
    assert resumed >= len(full) // 2, line
    for path in full:  # the resumed entries were written anew: the next run takes them from the cache
        path.write_bytes(full[path])
    assert _same_as_cold(logs, cache) == ""


def test_an_edit_that_keeps_size_and_mtime_is_seen(logs: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = logs / "sessions" / "valid" / "reminders.session.jsonl"
    _verify(logs, cache)
    data = path.read_bytes()
    stat = path.stat()
    at = data.index(b'"prompt":"') + len(b'"prompt":"')
    edited = data[:at] + b" " + data[at + 1 :]  # the prompt untrimmed: corrupt, the same size
    path.write_bytes(edited)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert path.stat().st_size == stat.st_size and path.stat().st_mtime_ns == stat.st_mtime_ns
    said = _same_as_cold(logs, cache)
    assert "reminders.session.jsonl: read whole: its first" in said and "edited in place" in said


def test_a_truncated_and_a_replaced_log_are_read_whole(logs: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _verify(logs, cache)
    short = logs / "sessions" / "valid" / "fork-child.session.jsonl"
    short.write_bytes(short.read_bytes()[:-200])
    other = logs / "sessions" / "valid" / "reminders.session.jsonl"
    replacement = other.with_name("new")
    replacement.write_bytes(other.read_bytes() + other.read_bytes().splitlines(keepends=True)[-1])
    os.replace(replacement, other)
    said = _same_as_cold(logs, cache)
    assert "fork-child.session.jsonl: read whole: the file is shorter than when judged" in said
    assert "reminders.session.jsonl: read whole: the file was replaced" in said


def test_a_garbage_cache_file_is_replaced_and_the_run_is_right(logs: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _verify(logs, cache)
    for stale in cache.glob("verdicts.sqlite*"):
        stale.unlink()
    (cache / "verdicts.sqlite").write_bytes(b"not a database at all" * 1000)
    assert _same_as_cold(logs, cache) == ""
    count = len(_all_logs(logs))
    assert _summary(logs, cache).endswith(f"; {count} from cache, 0 resumed, 0 read whole")


def _damage(cache: Path, how: str) -> None:
    db = sqlite3.connect(cache / "verdicts.sqlite")
    with db:
        for key, head in db.execute("SELECT key, head FROM entries").fetchall():
            if how == "truncated":
                head = head[:40]
            elif how == "flipped":
                head = head[:-5] + bytes([head[-5] ^ 0xFF]) + head[-4:]
            db.execute("UPDATE entries SET head = ? WHERE key = ?", (head, key))
    db.close()


@pytest.mark.parametrize("how", ["truncated", "flipped"])
def test_a_damaged_entry_is_not_trusted(logs: Path, tmp_path: Path, how: str) -> None:
    cache = tmp_path / "cache"
    _verify(logs, cache)
    _damage(cache, how)
    said = _same_as_cold(logs, cache)
    assert said.count("read whole: the cache entry") == len(_all_logs(logs)), said


def test_an_entry_of_another_version_is_not_trusted(
    logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from replay.cache import cached as verdicts

    cache = tmp_path / "cache"
    monkeypatch.setattr(verdicts, "fingerprint", lambda: "another schedlog")
    _verify(logs, cache)
    monkeypatch.undo()
    said = _same_as_cold(logs, cache)
    assert said.count("written by another version of schedlog") == len(_all_logs(logs)), said


def test_a_folder_that_cannot_be_written_warns_once_and_the_run_goes_on(logs: Path, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    cache = blocker / "cache"  # under a file: no folder can be made there, whoever runs the tests
    code, out, err = _verify(logs, cache)
    assert (code, out) == _verify(logs, None)[:2]
    assert err.count("warning: the cache folder") == 1 and "running without the cache" in err


def test_two_runs_at_once_share_one_cache(logs: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    command = [str(Path(sys.executable).with_name("schedlog")), "verify", "--format", "json", "--cache-dir", str(cache)]
    runs = [subprocess.Popen([*command, *more, str(logs)], stdout=subprocess.PIPE) for more in ([], ["-j", "2"], [])]
    outputs = [run.communicate()[0] for run in runs]
    cold = _verify(logs, None)[1].encode()
    assert all(out == cold for out in outputs)
    assert _verify(logs, cache)[1].encode() == cold


def test_the_cache_is_written_beside_nothing_of_the_logs(logs: Path, tmp_path: Path) -> None:
    before = sorted(p.relative_to(logs) for p in logs.rglob("*"))
    _verify(logs, tmp_path / "cache")
    assert sorted(p.relative_to(logs) for p in logs.rglob("*")) == before


def test_the_cache_stays_within_its_bound(logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.cache.cached import fingerprint
    from replay.cache.cachestore import VerdictStore

    cache = tmp_path / "cache"
    _verify(logs, cache)
    whole = VerdictStore(cache, fingerprint()).info()
    assert whole.entries == len(_all_logs(logs))
    shutil.rmtree(cache)
    limit = whole.bytes // 3
    monkeypatch.setattr("replay.cache.cached._limit", lambda: limit)
    _verify(logs, cache)
    kept = VerdictStore(cache, fingerprint(), limit).info()
    assert 0 < kept.entries < whole.entries and kept.bytes <= limit
    assert _same_as_cold(logs, cache) == ""


def test_cache_info_and_clear(logs: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    _verify(logs, cache)
    info = CliRunner().invoke(main, ["cache", "info", "--cache-dir", str(cache)]).stdout
    assert f"entries: {len(_all_logs(logs))}" in info and "MiB of entries" in info and str(cache) in info
    cleared = CliRunner().invoke(main, ["cache", "clear", "--cache-dir", str(cache)]).stdout
    assert cleared.startswith(f"cleared {len(_all_logs(logs))} entries")
    assert "entries: 0" in CliRunner().invoke(main, ["cache", "info", "--cache-dir", str(cache)]).stdout


def test_the_default_folder_is_the_environments_then_the_platforms(monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.cache.cached import default_folder

    monkeypatch.setenv("SCHEDLOG_CACHE_DIR", "/somewhere/else")
    assert default_folder() == Path("/somewhere/else")
    monkeypatch.delenv("SCHEDLOG_CACHE_DIR")
    import platformdirs

    assert default_folder() == Path(platformdirs.user_cache_dir("schedlog")) / "verdicts"


def _grown_twice(logs: Path, run: object) -> list[object]:
    """What `run` gives over `logs` cut short, then grown, then unchanged (the cache read whole,
    resumed, then read back), each beside what it gives with no cache."""
    full = {p: p.read_bytes() for p in _all_logs(logs)}
    for path, data in full.items():
        path.write_bytes(data[: len(data) // 2])
    outputs = [run(True)]  # type: ignore[operator]
    for path, data in full.items():
        path.write_bytes(data)
    outputs += [run(True), run(True), run(False)]  # type: ignore[operator]
    return outputs


def test_explain_through_the_cache_tells_what_a_cold_read_tells(logs: Path, tmp_path: Path) -> None:
    def explain(cached: bool) -> str:
        more = ["--cache-dir", str(tmp_path / "cache")] if cached else ["--no-cache"]
        return CliRunner().invoke(main, ["explain", "--format", "json", *more, str(logs)]).stdout

    _, grown, unchanged, cold = _grown_twice(logs, explain)
    assert grown == unchanged == cold and json.loads(cold)


def test_report_through_the_cache_draws_what_a_cold_read_draws(logs: Path, tmp_path: Path) -> None:
    def report(cached: bool) -> bytes:
        page = tmp_path / "page.html"
        more = ["--cache-dir", str(tmp_path / "cache")] if cached else ["--no-cache"]
        CliRunner().invoke(main, ["report", "-o", str(page), *more, str(logs)], catch_exceptions=False)
        return page.read_bytes()

    _, grown, unchanged, cold = _grown_twice(logs, report)
    assert grown == unchanged == cold


def test_verify_report_and_explain_share_their_entries(logs: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    CliRunner().invoke(main, ["report", "-o", str(tmp_path / "p.html"), "--cache-dir", str(cache), str(logs)])
    count = len(_all_logs(logs))
    assert _summary(logs, cache).endswith(f"; {count} from cache, 0 resumed, 0 read whole")


def _text(folder: Path | str, cache: Path | None, *more: str) -> tuple[int, str]:
    """`verify` in text (the output a hit prints without making its report), less the summary's
    account of the cache."""
    args = ["verify", *more, str(folder)] + (["--no-cache"] if cache is None else ["--cache-dir", str(cache)])
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    return result.exit_code, re.sub(r"; \d+ from cache, \d+ resumed, \d+ read whole\n$", "\n", result.stdout)


@pytest.mark.parametrize("more", [(), ("--quiet",)])
def test_the_text_a_hit_prints_is_the_cold_text(logs: Path, tmp_path: Path, more: tuple[str, ...]) -> None:
    """Every line, the hint of the header rules (logs the strict reader refuses for them alone)
    and --quiet's choice of sessions, as a cold run prints them."""
    head = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "cwd": "/w"}
    (logs / "no-depth.jsonl").write_text(json.dumps(head) + "\n")
    cache = tmp_path / "cache"
    cold = _text(logs, None, *more)
    assert "hint: 1 session(s) are corrupt only for the strict reader's header rules" in cold[1]
    assert _text(logs, cache, *more) == cold
    assert "from cache" in _summary(logs, cache, *more)
    assert _text(logs, cache, *more) == cold


def test_a_hit_names_the_path_as_given(logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry is keyed by the absolute path, and its text names the path it was made for: a
    hit under another spelling of the path prints the spelling given."""
    cache = tmp_path / "cache"
    _text(logs, cache)
    monkeypatch.chdir(logs)
    relative = _text("sessions", cache)
    assert relative == _text("sessions", None)
    assert "sessions/valid/" in relative[1] and str(logs) not in relative[1]
    assert "from cache" in _summary(Path("sessions"), cache)


def test_a_log_whose_name_is_no_utf8_is_cached_as_any_other(tmp_path: Path) -> None:
    """An entry's head (written by marshal) holds the log's path and its text as the run names
    them: a name with bytes that are no UTF-8 (held as lone surrogates) is kept and found again."""
    folder = tmp_path / "logs"
    folder.mkdir()
    for k, path in enumerate(sorted((SESSIONS / "valid").iterdir())):
        shutil.copy(path, folder / os.fsdecode(b"caf\xe9-%d-" % k + path.name.encode()))
    count = len(list(folder.iterdir()))
    cache = tmp_path / "cache"
    assert _summary(folder, cache).endswith(f"; 0 from cache, 0 resumed, {count} read whole")
    assert _summary(folder, cache).endswith(f"; {count} from cache, 0 resumed, 0 read whole")
    assert _same_as_cold(folder, cache) == ""
