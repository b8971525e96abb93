"""Worker processes under every start method: fork, forkserver (Python 3.14's default on Linux)
and spawn give the same results, and a worker ends when the process that started it is killed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from .conftest import ROOT

SESSIONS = ROOT / "fixtures" / "sessions"
METHODS = ["fork", "forkserver", "spawn"]
GROUPS_OF = 64  # fanout.GROUP_FILES: more files than this make verify -j hand out several groups


def _schedlog(method: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI in a fresh interpreter whose multiprocessing start method is `method`."""
    code = (
        "import multiprocessing, sys; "
        f"multiprocessing.set_start_method({method!r}); "
        "from replay.cli import main; main()"
    )
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def many_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fixture sessions copied often enough for verify -j 2 to use several worker groups."""
    root = tmp_path_factory.mktemp("many")
    fixtures = sorted(p for p in SESSIONS.rglob("*.jsonl*") if p.is_file())
    for n in range((2 * GROUPS_OF) // len(fixtures) + 1):
        for path in fixtures:
            target = root / f"copy{n:02d}" / path.relative_to(SESSIONS)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
    return root


@pytest.fixture(scope="module")
def logs_and_store(many_logs: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`many_logs` and the bundled session store beside them: a store's sessions are spread over
    the workers too, each worker opening the store in its own process."""
    root = tmp_path_factory.mktemp("with-store") / "inputs"
    shutil.copytree(many_logs, root)
    (root / "store").mkdir()
    shutil.copyfile(ROOT / "fixtures" / "stores" / "sessions.db", root / "store" / "sessions.db")
    return root


def _verify(method: str, logs: Path) -> list[dict[str, object]]:
    done = _schedlog(method, "verify", str(logs), "--jobs", "2", "--format", "json")
    assert done.returncode == 1, done.stderr  # the corrupt fixtures are among them
    assert "Traceback" not in done.stderr
    reports: list[dict[str, object]] = json.loads(done.stdout)
    return reports


def _tables(db: Path) -> dict[str, list[tuple[object, ...]]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {
            table: con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()
            for table in ("sessions", "records", "schedule_changes", "schedules", "dispatches", "violations")
        }


@pytest.mark.slow
def test_verify_jobs_gives_the_same_reports_under_every_start_method(logs_and_store: Path) -> None:
    reports = {method: _verify(method, logs_and_store) for method in METHODS}
    assert sum("#" in str(r["path"]) for r in reports["fork"]) == 4  # (the store's sessions)
    assert len(reports["fork"]) > 2 * GROUPS_OF
    assert reports["forkserver"] == reports["fork"] == reports["spawn"]


@pytest.mark.slow
def test_replay_gives_the_same_database_under_every_start_method(tmp_path: Path, logs_and_store: Path) -> None:
    tables = {}
    for method in METHODS:
        db = tmp_path / f"{method}.duckdb"
        done = _schedlog(method, "replay", str(logs_and_store), "--db", str(db), "--jobs", "2")
        assert done.returncode == 1, done.stderr
        assert "session(s)" in done.stdout and "Traceback" not in done.stderr
        tables[method] = _tables(db)
    assert tables["forkserver"] == tables["fork"] == tables["spawn"]
    assert len(tables["fork"]["sessions"]) > 2 * GROUPS_OF


@pytest.mark.slow
def test_replay_into_an_existing_database_is_the_same_under_every_start_method(tmp_path: Path, many_logs: Path) -> None:
    """The second replay finds a third of the logs new and one grown: it stages them with the keys
    it chose (worker tasks carry them) under each start method alike."""
    tables = {}
    for method in METHODS:
        logs = tmp_path / "logs"  # one path for every method: the sessions table holds it
        shutil.rmtree(logs, ignore_errors=True)
        shutil.copytree(many_logs, logs)
        later = sorted(p for p in logs.rglob("*.jsonl*") if p.is_file())
        held = {p: p.read_bytes() for p in later[: len(later) // 3]}
        grown = next(p for p in reversed(later) if p.suffix == ".jsonl")  # a Zstandard one is read again whole
        whole = grown.read_bytes()
        for path in held:
            path.unlink()
        grown.write_bytes(whole[: len(whole) // 2])
        db = tmp_path / f"{method}.duckdb"
        assert _schedlog(method, "replay", str(logs), "--db", str(db), "--no-cache").returncode == 1
        for path, data in held.items():
            path.write_bytes(data)
        grown.write_bytes(whole)
        done = _schedlog(method, "replay", str(logs), "--db", str(db), "--jobs", "2", "--no-cache")
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert f"1 grown, 0 read again, {len(held)} added, 0 removed" in done.stdout, done.stdout
        tables[method] = _tables(db)
    assert tables["forkserver"] == tables["fork"] == tables["spawn"]


@pytest.mark.slow
def test_report_jobs_writes_the_same_page_under_every_start_method(tmp_path: Path, many_logs: Path) -> None:
    pages = {}
    for method in METHODS:
        page = tmp_path / f"{method}.html"
        done = _schedlog(method, "report", str(many_logs), "-o", str(page), "--jobs", "2")
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        pages[method] = page.read_text()
    assert pages["forkserver"] == pages["fork"] == pages["spawn"]
    assert pages["fork"].count('"key":') > 2 * GROUPS_OF


_ORPHAN = """
import multiprocessing, sys
from replay.audit.fanout import in_processes
from tests.test_start_methods import sleepy

def main():
    with in_processes(sleepy, [(str(n),) for n in range(4)], 2, None, size=lambda task: 0) as results:
        print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
        list(results)

if __name__ == "__main__":
    multiprocessing.set_start_method(sys.argv[1])
    main()
"""


def sleepy(task: tuple[str]) -> int:
    time.sleep(600)
    return 0


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_workers_end_when_their_parent_is_killed(tmp_path: Path, method: str) -> None:
    """The orphan watcher does not depend on who the worker's OS parent is (under forkserver it
    is the fork server): killed outright, the pool's owner takes its workers with it."""
    script = tmp_path / "orphan.py"
    script.write_text(_ORPHAN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, str(script), method], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    workers = [int(pid) for pid in proc.stdout.readline().split()]
    assert workers, "the pool started its workers on entering"
    time.sleep(0.3)  # the workers are running their (endless) first tasks
    assert all(_alive(pid) for pid in workers)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 15
    while any(_alive(pid) for pid in workers):
        assert time.monotonic() < deadline, f"a worker outlived its parent under {method}"
        time.sleep(0.05)


_THREADED = """
import multiprocessing, os, sys, threading, warnings
from replay.audit.fanout import in_processes
from tests.test_start_methods import parent_pid

def main():
    if sys.argv[1] == "threaded":
        stop = threading.Event()
        threading.Thread(target=stop.wait, daemon=True).start()
    forked = []
    with warnings.catch_warnings(record=True) as heard:
        warnings.simplefilter("always")
        for _ in range(2):  # the first pool fixes the start method: the second must not then fork
            with in_processes(parent_pid, [(str(n),) for n in range(4)], 2, None, size=lambda task: 0) as results:
                forked.append({parent for _, parent in results} == {os.getpid()})
    print(forked, [str(w.message) for w in heard])

if __name__ == "__main__":
    main()
"""


def parent_pid(task: tuple[str]) -> int:
    return os.getppid()


@pytest.mark.slow
def test_a_process_running_threads_starts_its_workers_without_fork(tmp_path: Path) -> None:
    """Where fork is the default, a process already running another thread (DuckDB's pool, a host
    application's) starts its workers from a fork server, whose workers' OS parent is the server
    and not this process, also once a pool has fixed the start method to fork; a single-threaded
    one forks (its first pool at least: a thread of that pool may still be winding down when the
    next starts). No 'multi-threaded, use of fork()' warning is given."""
    import multiprocessing

    if multiprocessing.get_all_start_methods()[0] != "fork":
        pytest.skip(f"this Python's default start method is {multiprocessing.get_all_start_methods()[0]}")
    script = tmp_path / "threaded.py"
    script.write_text(_THREADED)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    said = {}
    for case in ("alone", "threaded"):
        done = subprocess.run([sys.executable, str(script), case], capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, done.stderr
        said[case] = done.stdout.strip()
    # alone, the second pool may see a thread the first left winding down, and then not fork
    assert said["alone"].startswith("[True, ") and said["alone"].endswith("] []"), said
    assert said["threaded"] == "[False, False] []", said


@pytest.mark.slow
def test_a_sqlite_stores_sessions_give_the_same_reports_under_every_start_method(tmp_path: Path) -> None:
    """A store's sessions spread over the workers (each opens the store itself: a connection
    never crosses a fork) give the reports one process gives."""
    from fixtures.storewriter import write_store

    store = tmp_path / "store.db"
    logs = [p.read_bytes() for p in sorted((SESSIONS / "valid").glob("*.session.jsonl"))]
    renamed = [log.replace(b'"id":"', f'"id":"s{k}-'.encode(), 1) for k, log in enumerate(logs * 40)]
    write_store(store, 17, [r for r in renamed if b'"version":0' in r.split(b"\n", 1)[0]])
    one = _schedlog("fork", "verify", str(store), "--format", "json", "--no-cache")
    assert one.returncode in (0, 1) and "Traceback" not in one.stderr, one.stderr
    for method in METHODS:
        done = _schedlog(method, "verify", str(store), "--jobs", "2", "--format", "json", "--no-cache")
        assert done.stdout == one.stdout and "Traceback" not in done.stderr, (method, done.stderr)
    assert len(json.loads(one.stdout)) > GROUPS_OF
