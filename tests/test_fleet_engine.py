"""`schedlog fleet` on a real local Dask cluster: the rows `verify --format parquet` gives, and a
worker killed in the middle of a run loses and duplicates no verdict (the engine's retry)."""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from replay.cli import main

from .conftest import ROOT

pytest.importorskip("distributed", reason="the dask extra (schedlog[dask]) is not installed")

from replay.fleet.engine import expand, run_fleet

FIELDS = "path, verdict, event_count, schedule_event_count, violation_rule, format_version, profile, format_findings"


def _rows(directory: Path) -> list[tuple[object, ...]]:
    with duckdb.connect() as con:
        return con.execute(f"SELECT {FIELDS} FROM read_parquet('{directory}/**/*.parquet') ORDER BY path").fetchall()


@pytest.fixture(scope="module")
def fleet_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled sessions and format fixtures (zstd among them), a Host root (its task store
    beside its sessions, with delivery mismatches), a corrupt store, and an unreadable log."""
    root = tmp_path_factory.mktemp("fleet")
    shutil.copytree(ROOT / "fixtures" / "sessions", root / "sessions")
    shutil.copytree(ROOT / "fixtures" / "host" / "root", root / "host")
    (root / "broken-host").mkdir()
    shutil.copy(
        ROOT / "fixtures" / "host" / "stores" / "corrupt-window-inverted.json", root / "broken-host" / "schedule.json"
    )
    shutil.copytree(ROOT / "fixtures" / "formats", root / "formats")
    (root / "garbage.session.jsonl").write_bytes(b"\x00\x01 not a log")
    return root


@pytest.mark.slow
def test_the_fleet_gives_the_rows_verify_gives(fleet_logs: Path, tmp_path: Path) -> None:
    by_verify, by_fleet = tmp_path / "verify", tmp_path / "fleet"
    CliRunner().invoke(main, ["verify", str(fleet_logs), "--format", "parquet", "--output", str(by_verify)])
    done = CliRunner().invoke(main, ["fleet", str(fleet_logs), "--output", str(by_fleet), "--workers", "2"])
    assert done.exit_code == 2, done.output  # verify's exit status: an unreadable log is among them
    rows = _rows(by_fleet)
    counts = {v: sum(1 for row in rows if row[1] == v) for v in ("ok", "corrupt", "unreadable", "unsupported")}
    summary = (
        f"{len(rows)} session(s): {counts['ok']} ok, {counts['corrupt']} corrupt, {counts['unreadable']} unreadable, "
        f"{counts['unsupported']} unsupported; "
    )
    assert summary in done.output and f"; verdicts in {by_fleet}" in done.output
    assert rows == _rows(by_verify)
    # verify left its entries in the cache (the test's own): the fleet's workers took them, and
    # read whole only what is never kept (the unreadable log; the stores are judged by the driver)
    stores = sum(1 for row in rows if str(row[0]).endswith("schedule.json"))
    cached = len(rows) - stores - counts["unreadable"]
    assert f"; {cached} from cache, 0 resumed, {counts['unreadable']} read whole; verdicts in" in done.output
    again = CliRunner().invoke(main, ["fleet", str(fleet_logs), "--output", str(by_fleet), "--no-cache"])
    assert "from cache" not in again.output and _rows(by_fleet) == rows
    verdicts = {row[1] for row in rows}
    assert {"ok", "corrupt", "unreadable", "unsupported"} <= verdicts
    assert any(str(row[0]).endswith(".zstd") for row in rows)
    stores = {Path(str(row[0])).parent.name: row for row in rows if str(row[0]).endswith("schedule.json")}
    assert stores["host"][1] == "ok" and stores["broken-host"][1] == "corrupt"
    assert "host.receipt.unmatched" in str(stores["host"][7])  # the root's cross-check, as verify gives it


@pytest.mark.slow
def test_a_local_fleet_binds_no_fixed_dashboard_port(fleet_logs: Path, tmp_path: Path) -> None:
    """Two fleets at once (two CI suites, two users) do not contend for dask's dashboard port
    8787: held here, no "already in use" warning (`dashboard_address=None` did not disable the
    dashboard: dask/distributed#8136)."""
    import socket
    import warnings

    with socket.socket() as held:
        try:
            held.bind(("127.0.0.1", 8787))
            held.listen()
        except OSError:
            pass  # held already by another process: the case under test all the same
        with warnings.catch_warnings(record=True) as heard:
            warnings.simplefilter("always")
            run_fleet([str(fleet_logs / "sessions")], tmp_path / "out", workers=1)
    assert not [w for w in heard if "already in use" in str(w.message)]


@pytest.mark.slow
def test_a_worker_killed_mid_run_loses_and_duplicates_nothing(fleet_logs: Path, tmp_path: Path) -> None:
    paths = expand([str(fleet_logs)])
    killed: list[int] = []

    def kill_one_worker(client: Any) -> None:
        def kill() -> None:
            deadline = time.monotonic() + 30
            while not list(tmp_path.glob(".out.fleet-*/part-*.parquet")) and time.monotonic() < deadline:
                time.sleep(0.05)  # the run is under way: some tasks have finished
            pids = client.run(os.getpid)
            victim = sorted(pids.values())[0]
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

        threading.Thread(target=kill, daemon=True).start()

    out = tmp_path / "out"  # (the parts are written into a new folder beside it, which then takes its place)
    judged = run_fleet(paths, out, workers=2, group=1, delay=0.15, started=kill_one_worker).judged
    assert killed, "a worker was killed during the run"
    rows = _rows(out)
    assert judged == len(paths) == len(rows)
    assert sorted(str(row[0]) for row in rows) == sorted(paths)  # each verdict once


def test_an_unreachable_scheduler_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    schedlog = Path(sys.executable).with_name("schedlog")
    env = {**os.environ, "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "1s"}
    args = [str(schedlog), "fleet", str(ROOT / "fixtures" / "sessions"), "--output", str(tmp_path / "v")]
    done = subprocess.run([*args, "--scheduler", "tcp://127.0.0.1:9"], capture_output=True, text=True, env=env)
    assert done.returncode == 2 and "the fleet run failed" in done.stderr and "Traceback" not in done.stderr
    stdin = subprocess.run([*args[:2], "-", *args[3:]], capture_output=True, text=True)
    assert stdin.returncode == 2 and "not from standard input" in stdin.stderr


def test_a_fleet_of_a_missing_path_is_unreadable_and_exits_as_verify_does(tmp_path: Path) -> None:
    """It printed "1 session(s) judged" and exited 0."""
    pytest.importorskip("distributed", reason="the dask extra (schedlog[dask]) is not installed")
    missing = str(tmp_path / "nonexistent")
    done = CliRunner().invoke(main, ["fleet", missing, "--output", str(tmp_path / "d"), "--workers", "1"])
    assert done.exit_code == 2, done.output
    assert "1 session(s): 0 ok, 0 corrupt, 1 unreadable" in done.output
    assert CliRunner().invoke(main, ["verify", missing]).exit_code == 2


def test_a_fleet_rerun_replaces_the_folder_and_refuses_a_foreign_one(tmp_path: Path) -> None:
    """It left an earlier run's part-00001 beside the new part-00000 (the README's query then
    counted 681 sessions for 23)."""
    pytest.importorskip("distributed", reason="the dask extra (schedlog[dask]) is not installed")
    import duckdb

    out = tmp_path / "fleet"
    out.mkdir()
    (out / "part-00007.parquet").write_bytes(b"an earlier run's part")
    one = str(ROOT / "fixtures" / "sessions" / "valid" / "reminders.session.jsonl")
    done = CliRunner().invoke(main, ["fleet", one, "--output", str(out), "--workers", "1"])
    assert done.exit_code == 0, done.output
    assert [p.name for p in out.iterdir()] == ["part-00000.parquet"]
    with duckdb.connect() as con:
        assert con.execute(f"SELECT count(*) FROM read_parquet('{out}/**/*.parquet')").fetchone() == (1,)
    (out / "notes.txt").write_text("mine")
    refused = CliRunner().invoke(main, ["fleet", one, "--output", str(out), "--workers", "1"])
    assert refused.exit_code == 2 and "holds files a fleet run did not write (notes.txt)" in refused.output
    assert (out / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fleet"]  # no temporary folder left


def test_the_fleet_reports_its_progress_by_sessions(fleet_logs: Path, tmp_path: Path) -> None:
    """Each finished task tells how many sessions it judged (the command line draws a bar of
    them on a terminal); together, every one."""
    paths = expand([str(fleet_logs)])
    heard: list[int] = []
    run = run_fleet(paths, tmp_path / "out", workers=2, group=3, progress=heard.append)
    assert sum(heard) == len(paths) == run.judged and len(heard) > 1


@pytest.mark.slow
def test_a_fleet_spreads_a_sqlite_stores_sessions_over_its_workers(tmp_path: Path) -> None:
    store = tmp_path / "sessions.db"
    shutil.copy(ROOT / "fixtures" / "stores" / "sessions.db", store)
    by_verify, by_fleet = tmp_path / "verify", tmp_path / "fleet"
    CliRunner().invoke(main, ["verify", str(store), "--format", "parquet", "--output", str(by_verify)])
    done = CliRunner().invoke(main, ["fleet", str(store), "--output", str(by_fleet), "--workers", "2"])
    assert done.exit_code == 1, done.output
    rows = _rows(by_fleet)
    assert rows == _rows(by_verify) and len(rows) == 4
    assert all(str(row[0]).startswith(f"{store}#") for row in rows)
    assert "; 4 from cache, 0 resumed, 0 read whole;" in done.output  # (verify left its entries)
