"""Faults and hostile conditions (issue 21): each finding reproduced, now with its documented
verdict and exit status, and no traceback."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from replay.judge.verdicts import Verdict
from replay.judge.verify import verify_path

from .conftest import ROOT

SESSIONS = ROOT / "fixtures" / "sessions"
VALID = SESSIONS / "valid" / "fork-child.session.jsonl"
SCHEDLOG = Path(sys.executable).with_name("schedlog")


def _run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SCHEDLOG), *args], capture_output=True, text=True, timeout=120, **kwargs)  # type: ignore[call-overload]


def _close(fd: int) -> None:
    os.close(fd)


@pytest.mark.parametrize("command", [["verify", "-"], ["replay", "-", "--db", "{db}"], ["check", str(VALID), "-"]])
def test_closed_standard_input_is_a_usage_error(command: list[str], tmp_path: Path) -> None:
    args = [a.replace("{db}", str(tmp_path / "x.duckdb")) for a in command]
    done = _run(*args, preexec_fn=lambda: _close(0))
    assert done.returncode == 2 and "standard input" in done.stderr and "closed" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    "command", [["verify", str(SESSIONS)], ["inspect", "{db}"], ["cron", "0 9 * * *", "--tz", "UTC"]]
)
def test_closed_standard_output_exits_2(command: list[str], tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    _run("replay", str(SESSIONS), "--db", str(db))
    args = [a.replace("{db}", str(db)) for a in command]
    done = _run(*args, preexec_fn=lambda: _close(1))
    assert done.returncode == 2 and "standard output is closed" in done.stderr
    assert "Traceback" not in done.stderr


def _unprivileged() -> list[str]:
    """The command prefix that runs schedlog as an unprivileged user (nobody), or a skip."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("dropping privileges needs root and setpriv")
    drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    probe = subprocess.run([*drop, str(SCHEDLOG), "--version"], capture_output=True, timeout=60)
    if probe.returncode != 0:  # an interpreter under a private home (pyenv's in /root, say)
        pytest.skip(f"an unprivileged user cannot run {SCHEDLOG} here (exit {probe.returncode})")
    return drop


def test_an_unlistable_directory_is_unreadable_not_skipped() -> None:
    drop = _unprivileged()
    tmp_path = Path(tempfile.mkdtemp(prefix="schedlog-perm-"))  # pytest's own tmp is not traversable by others
    root = tmp_path / "logs"
    (root / "a").mkdir(parents=True)
    (root / "b").mkdir()
    shutil.copyfile(VALID, root / "a" / "one.session.jsonl")
    shutil.copyfile(VALID, root / "b" / "two.session.jsonl")
    for path in (tmp_path, root, root / "a"):
        path.chmod(0o755)
    (root / "a" / "one.session.jsonl").chmod(0o644)
    (root / "b").chmod(0o000)
    try:
        done = subprocess.run([*drop, str(SCHEDLOG), "verify", str(root)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stdout
        assert f"UNREADABLE {root / 'b'}: cannot read: Permission denied" in done.stdout
        assert "1 ok" in done.stdout
        root.chmod(0o000)  # the top directory itself
        top = subprocess.run([*drop, str(SCHEDLOG), "verify", str(root)], capture_output=True, text=True, timeout=60)
        assert top.returncode == 2 and "Permission denied" in top.stdout and "no *.jsonl" not in top.stderr
    finally:
        root.chmod(0o755)
        (root / "b").chmod(0o755)
        shutil.rmtree(tmp_path)


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.zstd"])
def test_a_file_without_a_readable_header_is_unreadable_whatever_its_encoding(suffix: str, tmp_path: Path) -> None:
    """Documented: no header can be read -> unreadable (exit 2), plain or zstd alike."""
    for n, data in enumerate((b"\x28\xb5\x2f\xfd" + b"garbage" * 20, b"garbage" * 20 + b"\n")):
        path = tmp_path / f"g{n}{suffix}"
        path.write_bytes(data)
        assert verify_path(str(path)).verdict is Verdict.UNREADABLE


@pytest.fixture(scope="module")
def fixtures_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("db") / "f.duckdb"
    assert _run("replay", str(SESSIONS), "--db", str(db)).returncode == 1
    return db


@pytest.mark.parametrize(
    "query",
    [
        "COPY (SELECT 1) TO '{out}/copied.csv'",
        "SELECT * FROM read_text('{secret}')",
        "SELECT * FROM read_csv('{secret}')",
        "INSTALL httpfs",
        "ATTACH '{out}/other.duckdb'",
        "SET enable_external_access = true",
    ],
)
def test_sql_touches_nothing_outside_the_database(fixtures_db: Path, tmp_path: Path, query: str) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("a,b\n1,2\n")
    done = _run("sql", str(fixtures_db), query.format(out=tmp_path, secret=secret))
    assert done.returncode == 2 and ("disabled by configuration" in done.stderr or "locked" in done.stderr)
    assert "Usage:" not in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret.txt"]


def test_sql_may_reach_outside_when_asked(fixtures_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "copied.csv"
    done = _run("sql", str(fixtures_db), f"COPY (SELECT 1 AS one) TO '{out}'", "--allow-external-access")
    assert done.returncode == 0 and out.read_text().strip().splitlines() == ["one", "1"]


def test_input_errors_are_not_usage_errors(fixtures_db: Path, tmp_path: Path) -> None:
    bad_sql = _run("sql", str(fixtures_db), "SELEKT 1")
    candidate = tmp_path / "c.json"
    candidate.write_text("{not json")
    bad_candidate = _run("check", str(VALID), str(candidate))
    for done in (bad_sql, bad_candidate):
        assert done.returncode == 2 and done.stderr.startswith("Error: ") and "Usage:" not in done.stderr


def test_messages_name_json_types(tmp_path: Path) -> None:
    from invariant import ScheduleLogError, decode_change

    for value, name in ((None, "null"), ([], "an array"), ("x", "a string"), (5, "a number")):
        with pytest.raises(ScheduleLogError) as info:
            decode_change(value)
        assert info.value.message == f"payload must be a JSON object, got {name}"


def test_sql_values_print_as_duckdb_writes_them(fixtures_db: Path) -> None:
    query = "SELECT 'a\\x1b'::BLOB AS b, INTERVAL 1 DAY + INTERVAL 3 HOUR AS i, 'nan'::DOUBLE AS n, chr(27) AS esc"
    as_csv = _run("sql", str(fixtures_db), query, "--format", "csv").stdout
    assert as_csv.split("\n")[1] == "a\\x1B,1 day 03:00:00,NaN,\x1b"  # exact when piped
    as_json = json.loads(_run("sql", str(fixtures_db), query, "--format", "json").stdout)
    assert as_json == [{"b": "a\\x1B", "i": "1 day 03:00:00", "n": None, "esc": "\x1b"}]


def test_a_file_name_with_undecodable_bytes_prints_as_byte_escapes(tmp_path: Path) -> None:
    name = os.fsdecode(b"a\xff.session.jsonl")
    shutil.copyfile(VALID, tmp_path / name)
    done = _run("verify", str(tmp_path))
    assert "a\\xff.session.jsonl" in done.stdout and "\\udcff" not in done.stdout


def _candidate(tmp_path: Path, value: object) -> Path:
    path = tmp_path / "candidate.json"
    path.write_text(json.dumps(value))
    return path


DELETE = {"version": 1, "operation": "delete", "id": "schedule-1"}


@pytest.mark.parametrize("log", ["corrupt/seq-gap.session.jsonl", "headerless-strict"])
def test_check_refuses_candidates_on_a_log_that_cannot_be_loaded(log: str, tmp_path: Path) -> None:
    if log == "headerless-strict":  # a strict-mode header defect: no delegationDepth
        lines = VALID.read_text().splitlines()
        head = json.loads(lines[0])
        del head["delegationDepth"]
        path = tmp_path / "log.session.jsonl"
        path.write_text("\n".join([json.dumps(head), *lines[1:]]) + "\n")
    else:
        path = SESSIONS / log
    done = _run("check", str(path), str(_candidate(tmp_path, DELETE)))
    assert done.returncode == 1 and done.stdout.startswith("rejected (load): format.")
    assert "cannot be loaded" in done.stdout


@pytest.mark.parametrize("seq", [5, "88", 27.5, None])
def test_check_takes_a_whole_event_only_at_the_next_seq(seq: object, tmp_path: Path) -> None:
    event = {"type": "schedule/change", "seq": seq, "time": 0, "data": DELETE}
    done = _run("check", str(VALID), str(_candidate(tmp_path, event)))
    assert done.returncode == 1 and "rejected (append): format.seq-gap" in done.stdout
    right = {**event, "seq": 27}  # the log holds 27 events
    assert _run("check", str(VALID), str(_candidate(tmp_path, right))).returncode == 0


def _wal_of_another_database(tmp_path: Path) -> bytes:
    """A WAL a writer left behind when it died (written, never checkpointed)."""
    other = tmp_path / "other.duckdb"
    code = (
        "import duckdb, os, sys; c = duckdb.connect(sys.argv[1]); c.execute(\"SET checkpoint_threshold = '1TB'\"); "
        "c.execute('CREATE TABLE u (y INT)'); c.execute('INSERT INTO u VALUES (2)'); os._exit(0)"
    )
    subprocess.run([sys.executable, "-c", code, str(other)], check=True)
    return Path(f"{other}.wal").read_bytes()


def test_a_stale_wal_beside_the_target_goes_with_the_old_database(tmp_path: Path) -> None:
    db = tmp_path / "audit.duckdb"
    assert _run("replay", str(SESSIONS), "--db", str(db)).returncode == 1
    Path(f"{db}.wal").write_bytes(_wal_of_another_database(tmp_path))
    again = _run("replay", str(SESSIONS), "--db", str(db))
    assert again.returncode == 1, again.stderr
    assert not Path(f"{db}.wal").exists()
    asked = _run("sql", str(db), "SELECT count(*) AS n FROM sessions", "--format", "csv")
    assert asked.returncode == 0 and asked.stdout.split() == ["n", "8"]


@pytest.mark.parametrize("existing", [True, False])
def test_a_wal_that_is_a_directory_stops_the_replay_before_any_work(tmp_path: Path, existing: bool) -> None:
    """`X.wal` a directory: the replay refuses at once and says so, X and the directory as they
    were (it replaced X, moved the directory aside, then said "X left as it was")."""
    db = tmp_path / "audit.duckdb"
    if existing:
        assert _run("replay", str(SESSIONS), "--db", str(db)).returncode == 1
    before = db.read_bytes() if existing else None
    (tmp_path / "audit.duckdb.wal").mkdir()
    (tmp_path / "audit.duckdb.wal" / "keep").write_text("mine")
    again = _run("replay", str(SESSIONS), "--db", str(db))
    assert again.returncode == 2
    assert f"{db}.wal is not a file (DuckDB's write-ahead log is one); not writing {db} beside it" in again.stderr
    assert (db.read_bytes() if existing else None) == before and db.exists() == existing
    assert (tmp_path / "audit.duckdb.wal" / "keep").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["audit.duckdb.wal", *(["audit.duckdb"] * existing)])


def test_a_database_another_process_holds_open_is_not_replaced(tmp_path: Path) -> None:
    db = tmp_path / "audit.duckdb"
    assert _run("replay", str(SESSIONS), "--db", str(db)).returncode == 1
    before = db.read_bytes()
    code = "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('open', flush=True); time.sleep(60)"
    holder = subprocess.Popen([sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        done = _run("replay", str(SESSIONS), "--db", str(db))
        assert done.returncode == 2 and "open in another process" in done.stderr and "Traceback" not in done.stderr
    finally:
        holder.kill()
        holder.wait()
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["audit.duckdb"]


def test_a_later_replay_removes_what_a_killed_one_left(tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    dead = 2**22 + 7  # above pid_max's default: no such process
    stale = [tmp_path / f".x.duckdb.{dead}.ab12.tmp", tmp_path / f".x.duckdb.{dead}.ab12.tmp.wal"]
    for path in stale:
        path.write_bytes(b"half a database")
    (tmp_path / f".schedlog-stage-{dead}.cd34").mkdir()
    kept = [tmp_path / f".x.duckdb.{os.getpid()}.ef56.tmp", tmp_path / ".x.duckdb.backup", tmp_path / "notes.tmp"]
    for path in kept:  # a live replay's (this process's), and files schedlog did not name
        path.write_bytes(b"keep")
    assert _run("replay", str(SESSIONS), "--db", str(db)).returncode == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["x.duckdb", *(p.name for p in kept)])


def test_a_replay_into_a_directory_it_cannot_write_names_the_directory() -> None:
    drop = _unprivileged()
    top = Path(tempfile.mkdtemp(prefix="schedlog-ro-"))
    try:
        top.chmod(0o755)  # root's: others cannot write here
        done = subprocess.run(
            [*drop, str(SCHEDLOG), "replay", str(SESSIONS), "--db", str(top / "x.duckdb")],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 2 and f"cannot create the database in {top}: Permission denied" in done.stderr
        assert ".tmp" not in done.stderr and "left as it was" not in done.stderr
    finally:
        shutil.rmtree(top)


def test_a_stream_is_spooled_past_a_bound_and_refused_past_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """An endless stream is refused as soon as it passes MAX_STREAM, never held whole: past
    SPOOL_BYTES it goes to a temporary file, mapped for reading."""
    import io
    import mmap

    from replay.sources import bytesource

    monkeypatch.setattr(bytesource, "READ_CHUNK", 1000)
    monkeypatch.setattr(bytesource, "SPOOL_BYTES", 5000)
    monkeypatch.setattr(bytesource, "MAX_STREAM", 20_000)
    small, large = bytes(range(256)) * 10, bytes(range(256)) * 70
    assert bytesource.read_stream(io.BytesIO(small)) == small
    spooled = bytesource.read_stream(io.BytesIO(large))
    assert isinstance(spooled, mmap.mmap) and spooled[:] == large
    with pytest.raises(OSError, match="more than 20,000 bytes"):
        bytesource.read_stream(io.BytesIO(large * 2))


def test_a_spooled_standard_input_is_judged_as_the_file_is(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from replay.cli import main
    from replay.sources import bytesource

    monkeypatch.setattr(bytesource, "SPOOL_BYTES", 100)
    data = (SESSIONS / "valid" / "reminders.session.jsonl").read_bytes()
    from_stdin = CliRunner().invoke(main, ["verify", "--format", "jsonl", "-"], input=data)
    from_file = CliRunner().invoke(
        main, ["verify", "--format", "jsonl", str(SESSIONS / "valid" / "reminders.session.jsonl")]
    )
    assert from_stdin.exit_code == from_file.exit_code == 0
    assert json.loads(from_stdin.output)["active"] == json.loads(from_file.output)["active"]


CENTURY = {
    "name": "century",
    "start": "2026-08-05T12:00:00.000Z",
    "steps": [
        {"at": "2026-08-05T12:00:00.000Z", "do": "start", "args": {}},
        {"at": "2026-08-05T12:00:00.000Z", "do": "create", "args": {"prompt": "tick", "every_seconds": 300}},
        {"at": "2126-08-05T12:00:00.000Z", "do": "advance", "args": {}},
    ],
}


def test_a_century_of_reminders_stops_with_a_clear_message(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from replay.cli import main
    from replay.cli.simulate import MAX_SIMULATED_EVENTS

    path = tmp_path / "century.json"
    path.write_text(json.dumps(CENTURY))
    done = CliRunner().invoke(main, ["simulate", str(path), "--max-events", "3000"])
    assert done.exit_code == 2 and "appends more than 3,000 events" in done.output and "--max-events" in done.output
    # the default keeps a run under 2 GB at the measured 2.5 KB an event, and the README says so
    assert MAX_SIMULATED_EVENTS * 2_500 < 2 * 10**9
    from tests.documentation import ALL

    assert f"default {MAX_SIMULATED_EVENTS:,}" in ALL


@pytest.mark.parametrize("size", [3 << 20, 9 << 20])
@pytest.mark.parametrize("where", ["file", "stdin"])
def test_records_longer_than_duckdbs_default_line_replay_whole(size: int, where: str, tmp_path: Path) -> None:
    """The loader's line readers are sized by the longest staged line (DuckDB's default is 2 MB):
    read from the log itself (a file) or from a staged copy (standard input)."""
    big = {"type": "note/long", "seq": verify_path(str(VALID)).events, "time": 0, "data": {"text": "x" * size}}
    log = tmp_path / "long.session.jsonl"
    log.write_bytes(VALID.read_bytes() + json.dumps(big).encode() + b"\n")
    db = tmp_path / "long.duckdb"
    if where == "file":
        done = _run("replay", str(log), "--db", str(db))
    else:
        done = _run("replay", "-", "--db", str(db), input=log.read_text())
    assert done.returncode == 0, done.stderr
    asked = _run("sql", str(db), "SELECT max(length(record)) AS n FROM records", "--format", "csv")
    assert asked.stdout.split() == ["n", str(len(json.dumps(big)))]


def test_a_closed_pipe_ends_every_command_alike(tmp_path: Path) -> None:
    """`| head -1`: each command stops quietly with its own status (sql and simulate exited 1,
    which reads as "corrupt"), never a BrokenPipeError traceback."""
    import shlex

    db = tmp_path / "x.duckdb"
    assert _run("replay", str(SESSIONS), "--db", str(db)).returncode == 1
    scenario = sorted((SESSIONS.parent / "scenarios").glob("*.json"))[0]
    cases = {
        f"sql {db} 'SELECT * FROM range(300000)'": 0,
        f"simulate {scenario}": 0,
        f"verify {SESSIONS} {SESSIONS}": 1,  # the verdicts' status: corrupt logs among them
        f"inspect {db}": 0,
    }
    for args, status in cases.items():
        command = f"set -o pipefail; {shlex.quote(str(SCHEDLOG))} {args} | head -c 10 > /dev/null"
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True)
        assert done.returncode == status, (args, done.stderr)
        assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, args
