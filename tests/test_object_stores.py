"""Every command against a real S3 API server (moto's, on a free local port, issue 53): the same
verdicts as the same files read locally, a fleet writing its parts there under a manifest, a
re-run over an unchanged prefix reading no object body, and each fault a user can cause ending
in exit 2 with one line naming the URL and the cause.

The commands run as users run them: `schedlog` processes, the server's address in
AWS_ENDPOINT_URL. The server runs in this process, so its request log tells which objects'
bodies a run read (GET of a key), and its IAM simulation can refuse one object.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REAL_LOGS, requires_real_logs
from tests.sessionfiles import ev, session_bytes, zstd_session

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SCHEDLOG = str(Path(sys.executable).with_name("schedlog"))
BUCKET = "audit-bucket"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1"}
NO_AWS_FILES = {"AWS_SHARED_CREDENTIALS_FILE": "/nonexistent", "AWS_CONFIG_FILE": "/nonexistent"}


class Requests(logging.Handler):
    """The server's request lines (werkzeug logs one a request), kept."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def bodies(self, since: int = 0) -> list[str]:
        """The object keys whose bodies were read (a GET of a key: not a listing, not a HEAD)."""
        got = []
        for text in self.lines[since:]:
            m = re.search(r'"GET /([^ ?]+/[^ ?]+) HTTP', text)
            if m:
                got.append(m.group(1))
        return got


@pytest.fixture(scope="session")
def server() -> Iterator[tuple[str, Requests]]:
    """A moto S3 server on a free local port, its address and its request log."""
    from moto.server import ThreadedMotoServer

    requests = Requests()
    werkzeug = logging.getLogger("werkzeug")
    werkzeug.addHandler(requests)
    werkzeug.setLevel(logging.INFO)
    werkzeug.propagate = False  # (its lines are the test's to read, not the console's)
    s = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    s.start()
    host, port = s.get_host_and_port()
    try:
        yield f"http://{host}:{port}", requests
    finally:
        s.stop()
        werkzeug.removeHandler(requests)


@pytest.fixture(scope="session")
def env(server: tuple[str, Requests]) -> dict[str, str]:
    """A user's environment pointed at the server, with the bucket filled: the fixtures under
    `fixtures/`, the real logs (where present) under `real/`."""
    endpoint, _ = server
    full = {**os.environ, **CREDENTIALS, **NO_AWS_FILES, "AWS_ENDPOINT_URL": endpoint}
    import boto3

    s3 = boto3.client("s3", endpoint_url=endpoint, **_boto_credentials())
    s3.create_bucket(Bucket=BUCKET)
    for path in sorted(p for p in FIXTURES.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        s3.put_object(Bucket=BUCKET, Key=f"fixtures/{path.relative_to(FIXTURES).as_posix()}", Body=path.read_bytes())
    if REAL_LOGS.is_dir():
        for path in sorted(REAL_LOGS.iterdir()):
            s3.put_object(Bucket=BUCKET, Key=f"real/{path.name}", Body=path.read_bytes())
    return full


def _boto_credentials() -> dict[str, str]:
    return {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "region_name": "us-east-1"}


def _run(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCHEDLOG, *args], env=env, capture_output=True, text=True, cwd=cwd, timeout=300)


def _as_local(text: str, url: str, folder: str) -> str:
    return text.replace(url, folder)


def test_verify_of_a_prefix_gives_the_local_verdicts(env: dict[str, str], tmp_path: Path) -> None:
    """The fixtures read from the bucket: the same text and JSON reports, exit status and
    generations' findings as the folder on disk (the walk's rules: suffixes, current
    generations, the Host store). A SQLite session store is read from a local file only (a
    bucket's walk passes over it, as over any object that is no log), so the folder on disk is
    the fixtures less their store."""
    shutil.copytree(ROOT / "fixtures", tmp_path / "fixtures", ignore=shutil.ignore_patterns("stores", "__pycache__"))
    for fmt in ("text", "json"):
        local = _run(env, "verify", "--no-cache", "--format", fmt, "fixtures/", cwd=tmp_path)
        remote = _run(env, "verify", "--no-cache", "--format", fmt, f"s3://{BUCKET}/fixtures/", cwd=ROOT)
        assert remote.returncode == local.returncode, remote.stderr
        assert _as_local(remote.stdout, f"s3://{BUCKET}/fixtures/", "fixtures/") == local.stdout
        assert "Traceback" not in remote.stderr
    assert "format.generations" in local.stdout  # (the generations beside a log, listed in the store)


@requires_real_logs
def test_verify_of_the_real_logs_in_a_bucket(env: dict[str, str]) -> None:
    local = _run(env, "verify", "--no-cache", "--format", "json", str(REAL_LOGS) + "/")
    remote = _run(env, "verify", "--no-cache", "--format", "json", f"s3://{BUCKET}/real/")
    assert remote.returncode == local.returncode
    assert _as_local(remote.stdout, f"s3://{BUCKET}/real/", str(REAL_LOGS) + "/") == local.stdout


def _corrupt_fixture() -> str:
    """A fixture log whose verdict is corrupt (its path under fixtures/)."""
    return "sessions/corrupt/gate-too-soon.session.jsonl"


def test_every_command_reads_one_object(env: dict[str, str], tmp_path: Path) -> None:
    """replay, report, explain and shrink take one object's URL and say what they say of the
    same file on disk."""
    name = _corrupt_fixture()
    url, path = f"s3://{BUCKET}/fixtures/{name}", str(FIXTURES / name)
    local, remote = _run(env, "verify", "--no-cache", path), _run(env, "verify", "--no-cache", url)
    assert _as_local(remote.stdout, url, path) == local.stdout and remote.returncode == local.returncode
    explained = [_run(env, "explain", "--no-cache", p) for p in (path, url)]
    assert _as_local(explained[1].stdout, url, path) == explained[0].stdout
    assert explained[1].returncode == explained[0].returncode
    report = _run(env, "report", "--no-cache", url, "-o", str(tmp_path / "r.html"))
    assert report.returncode == local.returncode and (tmp_path / "r.html").stat().st_size > 0
    replayed = _run(env, "replay", "--no-cache", url, "--db", str(tmp_path / "r.duckdb"))
    assert replayed.returncode == local.returncode, replayed.stderr
    import duckdb

    with duckdb.connect(str(tmp_path / "r.duckdb"), read_only=True) as con:
        assert con.execute("SELECT path FROM sessions").fetchall() == [(url,)]
    assert local.returncode == 1
    shrunk = [_run(env, "shrink", p, "-o", str(tmp_path / f"s{i}.jsonl")) for i, p in enumerate((path, url))]
    assert shrunk[1].returncode == shrunk[0].returncode == 0, shrunk[1].stderr
    assert (tmp_path / "s0.jsonl").read_bytes() == (tmp_path / "s1.jsonl").read_bytes()


def test_a_rerun_over_an_unchanged_prefix_reads_no_object_body(
    env: dict[str, str], server: tuple[str, Requests], tmp_path: Path
) -> None:
    """The cache knows an object by its URL, size and ETag, which the listing gives: a second run
    reads no body and gives the same report; a replaced object (another ETag) is read again."""
    _, requests = server
    cache = ["--cache-dir", str(tmp_path / "cache")]
    first = _run(env, "verify", *cache, f"s3://{BUCKET}/fixtures/formats/")
    before = len(requests.lines)
    second = _run(env, "verify", *cache, f"s3://{BUCKET}/fixtures/formats/")
    assert requests.bodies(before) == []
    assert second.stdout.splitlines()[:-1] == first.stdout.splitlines()[:-1]
    assert re.search(r"; (\d+) from cache, 0 resumed, 0 read whole$", second.stdout.strip())
    import boto3

    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], **_boto_credentials())
    key = "fixtures/formats/fixed-rate/v0/session.jsonl"
    body = s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    other = (FIXTURES / "formats/after-only/v0/session.jsonl").read_bytes()
    try:
        s3.put_object(Bucket=BUCKET, Key=key, Body=other)  # replaced: another ETag
        before = len(requests.lines)
        third = _run(env, "verify", *cache, "-v", f"s3://{BUCKET}/fixtures/formats/")
        assert requests.bodies(before) == [f"{BUCKET}/{key}"]
        assert "another ETag" in third.stderr + third.stdout
        cold = _run(env, "verify", "--no-cache", f"s3://{BUCKET}/fixtures/formats/")
        assert third.stdout.splitlines()[:-1] == cold.stdout.splitlines()[:-1]
    finally:
        s3.put_object(Bucket=BUCKET, Key=key, Body=body)


def test_fleet_from_a_bucket_into_a_bucket(env: dict[str, str], server: tuple[str, Requests], tmp_path: Path) -> None:
    """Dask workers read the logs from the server and write their parts under a run prefix, the
    manifest last; the parts (downloaded) hold one row per log, as the local fleet's; a re-run
    with the cache reads no object body and keeps the previous run's parts beside its own."""
    _, requests = server
    source, out = f"s3://{BUCKET}/fixtures/formats/", f"s3://{BUCKET}/fleet-out/"
    cache = ["--cache-dir", str(tmp_path / "cache")]
    local = _run(
        env, "fleet", "--no-cache", "--workers", "2", str(FIXTURES / "formats"), "--output", str(tmp_path / "l")
    )
    run = _run(env, "fleet", *cache, "--workers", "2", source, "--output", out)
    assert run.returncode == local.returncode, run.stderr
    assert run.stdout.split("; ")[0] == local.stdout.split("; ")[0]  # the verdicts' count
    rows = _fleet_rows(env, out, tmp_path / "down1")
    import duckdb

    with duckdb.connect() as con:
        expected = con.execute(f"SELECT path, verdict FROM read_parquet('{tmp_path / 'l'}/*.parquet')").fetchall()
    assert sorted((p.replace(str(FIXTURES / "formats"), source.rstrip("/")), v) for p, v in expected) == rows
    assert len(rows) == len({p for p, _ in rows})  # one row a log
    before = len(requests.lines)
    again = _run(env, "fleet", *cache, "--workers", "2", source, "--output", out)
    assert again.returncode == run.returncode, again.stderr
    assert requests.bodies(before) == [] or all(b.startswith(f"{BUCKET}/fleet-out/") for b in requests.bodies(before))
    assert re.search(r"\d+ from cache, 0 resumed, 0 read whole", again.stdout)
    assert _fleet_rows(env, out, tmp_path / "down2") == rows


def _fleet_rows(env: dict[str, str], out: str, down: Path) -> list[tuple[str, str]]:
    """The (path, verdict) rows of the parts the manifest under `out` names, downloaded."""
    import boto3
    import duckdb

    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], **_boto_credentials())
    prefix = out.removeprefix(f"s3://{BUCKET}/")
    manifest = json.loads(s3.get_object(Bucket=BUCKET, Key=prefix + "manifest.json")["Body"].read())
    down.mkdir()
    for n, part in enumerate(manifest["parts"]):
        (down / f"{n}.parquet").write_bytes(s3.get_object(Bucket=BUCKET, Key=prefix + part)["Body"].read())
    with duckdb.connect() as con:
        got = con.execute(f"SELECT path, verdict FROM read_parquet('{down}/*.parquet')").fetchall()
    assert manifest["rows"] == len(got)
    return sorted(got)


def test_verify_writes_its_parquet_part_into_a_bucket(env: dict[str, str], tmp_path: Path) -> None:
    out = f"s3://{BUCKET}/verify-out/"
    done = _run(env, "verify", "--no-cache", "--format", "parquet", "--output", out, f"s3://{BUCKET}/fixtures/formats/")
    assert done.stdout.strip().endswith(f"verdicts {out}verdicts.parquet"), done.stderr
    import boto3

    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], **_boto_credentials())
    names = [o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET, Prefix="verify-out/")["Contents"]]
    assert names == ["verify-out/verdicts.parquet"]


# --- faults a user can cause: exit 2, one line naming the URL and the cause, in bounded time ----


def _fault(env: dict[str, str], url: str, cause: str, *more: str) -> None:
    started = time.monotonic()
    done = _run(env, "verify", "--no-cache", *more, url)
    assert time.monotonic() - started < 30
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and url in lines[0] and cause in lines[0], done.stderr


def test_no_credentials(env: dict[str, str]) -> None:
    bare = {k: v for k, v in env.items() if k not in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")}
    _fault({**bare, "AWS_EC2_METADATA_DISABLED": "true"}, f"s3://{BUCKET}/fixtures/", "no credentials")


def test_a_missing_bucket(env: dict[str, str]) -> None:
    _fault(env, "s3://no-such-bucket/logs/", "the bucket does not exist")


def test_a_missing_prefix(env: dict[str, str]) -> None:
    _fault(env, f"s3://{BUCKET}/no/such/prefix/", "nothing to read")


def test_a_closed_endpoint(env: dict[str, str]) -> None:
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    _fault({**env, "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port}"}, f"s3://{BUCKET}/fixtures/", "does not answer")


def test_the_s3_extra_is_named_where_s3fs_is_missing(env: dict[str, str], tmp_path: Path) -> None:
    """Without s3fs (its import refused), the one line names the extra that installs it."""
    blocker = tmp_path / "block" / "s3fs"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('s3fs is not installed')\n")
    bare = {**env, "PYTHONPATH": str(tmp_path / "block")}
    _fault(bare, f"s3://{BUCKET}/fixtures/", "pip install 'schedlog[s3]'")


def test_wrong_credentials_and_one_refused_object(env: dict[str, str]) -> None:
    """With the server checking IAM: keys it does not know end the run (exit 2, one line); a
    reader denied one object sees it unreadable, and the rest judged."""
    import boto3
    from moto.core import enable_iam_authentication

    endpoint = env["AWS_ENDPOINT_URL"]
    s3 = boto3.client("s3", endpoint_url=endpoint, **_boto_credentials())
    iam = boto3.client("iam", endpoint_url=endpoint, **_boto_credentials())
    log = (FIXTURES / "formats/fixed-rate/v0/session.jsonl").read_bytes()
    for key in ("perm/ok.jsonl", "perm/refused.jsonl"):
        s3.put_object(Bucket=BUCKET, Key=key, Body=log)
    iam.create_user(UserName="auditor")
    key = iam.create_access_key(UserName="auditor")["AccessKey"]
    policy: dict[str, Any] = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Action": "s3:*", "Resource": "*"},
            {"Effect": "Deny", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{BUCKET}/perm/refused.jsonl"},
        ],
    }
    iam.put_user_policy(UserName="auditor", PolicyName="audit", PolicyDocument=json.dumps(policy))
    auditor = {**env, "AWS_ACCESS_KEY_ID": key["AccessKeyId"], "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"]}
    with enable_iam_authentication():
        _fault({**env, "AWS_ACCESS_KEY_ID": "AKIAUNKNOWNUNKNOWN00"}, f"s3://{BUCKET}/perm/", "refused the credentials")
        done = _run(auditor, "verify", "--no-cache", f"s3://{BUCKET}/perm/")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"UNREADABLE s3://{BUCKET}/perm/refused.jsonl: cannot read: permission denied" in done.stdout
    assert f"ok         s3://{BUCKET}/perm/ok.jsonl" in done.stdout


# --- large objects: read in ranges, never held whole --------------------------------------------


def _big_log(n: int) -> list[dict[str, Any]]:
    """`n` events of 400 random hex digits each (Zstandard halves them, no more: a large object)."""
    return [ev(i, data={"text": os.urandom(200).hex()}) for i in range(n)]


@pytest.mark.parametrize("zstd", [False, True], ids=["plain", "zstd"])
def test_a_large_object_is_read_in_ranges_as_the_file_on_disk(env: dict[str, str], tmp_path: Path, zstd: bool) -> None:
    """An object of ~120 MB (plain; ~70 MB of Zstandard frames, spooled) gives the file's report, and the run's
    peak memory grows with it no more than a run over the file on disk does (measured against a
    one-line log read each way: the object store's client is the fixed cost)."""
    records = _big_log(260_000)
    data = (
        zstd_session([records[i : i + 5000] for i in range(0, len(records), 5000)]) if zstd else session_bytes(records)
    )
    name = "big.jsonl.zstd" if zstd else "big.jsonl"
    small = session_bytes(records[:1])
    import boto3

    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], **_boto_credentials())
    for key, body in ((f"big/{name}", data), ("small/small.jsonl", small)):
        s3.put_object(Bucket=BUCKET, Key=key, Body=body)
        (tmp_path / key).parent.mkdir(exist_ok=True)
        (tmp_path / key).write_bytes(body)
    peaks = {}
    for where, target in (("file", str(tmp_path / "big" / name)), ("object", f"s3://{BUCKET}/big/{name}")):
        peak, out = _peak(env, "verify", "--no-cache", "--format", "json", target)
        peaks[where] = peak
        assert json.loads(out)[0]["path"] == target
        if where == "file":
            expected = out.replace(target, "TARGET")
        else:
            assert out.replace(target, "TARGET") == expected
    base_file, _ = _peak(env, "verify", "--no-cache", str(tmp_path / "small" / "small.jsonl"))
    base_object, _ = _peak(env, "verify", "--no-cache", f"s3://{BUCKET}/small/small.jsonl")
    grown_file, grown_object = peaks["file"] - base_file, peaks["object"] - base_object
    assert grown_object <= grown_file + (24 << 20), (peaks, base_file, base_object)
    if not zstd:
        assert grown_object < len(data) // 2  # never the whole object at once


def _peak(env: dict[str, str], *args: str) -> tuple[int, str]:
    """The peak resident bytes of one schedlog process (measured by a parent of its own: the
    test process's children's peak is the largest of any), and its output."""
    code = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "sys.stderr.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
        "sys.stdout.write(done.stdout)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, SCHEDLOG, *args], env=env, capture_output=True, text=True)
    return int(done.stderr.strip().splitlines()[-1]) * 1024, done.stdout


def test_the_readme_fleet_line_runs_against_the_server(env: dict[str, str], tmp_path: Path) -> None:
    """The README's object-store fleet line, run as written by a shell, over the bundled
    sessions uploaded where it looks for them: its manifest names parts of one row a log."""
    import boto3

    from tests.documentation import ALL as readme

    block = readme.split("Three ways to", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    (line,) = [x for x in block.splitlines() if x.startswith("schedlog fleet 's3://")]
    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], **_boto_credentials())
    sessions = sorted(p for p in (FIXTURES / "sessions").rglob("*") if p.is_file())
    for path in sessions:
        s3.put_object(
            Bucket=BUCKET, Key=f"sessions/{path.relative_to(FIXTURES / 'sessions').as_posix()}", Body=path.read_bytes()
        )
    shell = {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"}
    done = subprocess.run(["bash", "-c", line], cwd=tmp_path, env=shell, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 1), done.stderr
    rows = _fleet_rows(env, f"s3://{BUCKET}/fleet-verdicts/", tmp_path / "down")
    local = _run(env, "verify", "--no-cache", str(FIXTURES / "sessions"))
    assert len(rows) == int(local.stdout.strip().splitlines()[-1].split()[0])


def test_replay_into_one_database_keeps_unchanged_objects(
    env: dict[str, str], server: tuple[str, Requests], tmp_path: Path
) -> None:
    """An object the database was made of, with the same ETag and size, keeps its rows; once the
    cache knows it too, a replay over the unchanged prefix reads no object body, and the tables
    equal a fresh build's."""
    import duckdb

    _, requests = server
    source, db, cache = f"s3://{BUCKET}/fixtures/formats/", str(tmp_path / "a.duckdb"), str(tmp_path / "cache")
    for _ in range(2):
        _run(env, "replay", "--cache-dir", cache, source, "--db", db)
    before = len(requests.lines)
    done = _run(env, "replay", "--cache-dir", cache, source, "--db", db)
    assert requests.bodies(before) == [], done.stdout
    assert re.search(r"\((\d+) kept, 0 grown, 0 read again, 0 added, 0 removed\)", done.stdout), done.stdout
    _run(env, "replay", "--no-cache", "--rebuild", source, "--db", str(tmp_path / "fresh.duckdb"))
    tables = ("sessions", "records", "schedule_changes", "violations", "dispatches")
    with duckdb.connect(db, read_only=True) as a, duckdb.connect(str(tmp_path / "fresh.duckdb"), read_only=True) as b:
        for table in tables:
            q = f"SELECT * EXCLUDE (session_key) FROM {table} ORDER BY ALL"
            assert a.execute(q).fetchall() == b.execute(q).fetchall(), table


def test_a_fleet_refuses_a_prefix_holding_other_objects(env: dict[str, str]) -> None:
    """As a folder holding other files is refused, so is a prefix: a reader of its parts would
    read them beside whatever else is there."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], **_boto_credentials())
    s3.put_object(Bucket=BUCKET, Key="taken/notes.txt", Body=b"mine\n")
    done = _run(env, "fleet", "--no-cache", f"s3://{BUCKET}/fixtures/formats/", "--output", f"s3://{BUCKET}/taken/")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "holds objects a fleet run did not write (notes.txt)" in done.stderr


def test_watch_polls_a_prefix(env: dict[str, str]) -> None:
    """An object store sends no events: `watch` lists the prefix again every --poll seconds,
    tells a new object's findings and verdict, a replaced object's change (read whole: another
    ETag), and an object removed as gone."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], **_boto_credentials())
    ok = (FIXTURES / "formats/fixed-rate/v0/session.jsonl").read_bytes()
    corrupt = (FIXTURES / "sessions/corrupt/gate-too-soon.session.jsonl").read_bytes()
    s3.put_object(Bucket=BUCKET, Key="watched/a.jsonl", Body=ok)
    s3.put_object(Bucket=BUCKET, Key="watched/b.jsonl", Body=ok)
    args = [SCHEDLOG, "watch", "--poll", "0.3", "--until-idle", "4", f"s3://{BUCKET}/watched/"]
    proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    lines = [proc.stdout.readline(), proc.stdout.readline()]
    assert lines == [f"s3://{BUCKET}/watched/a.jsonl: ok\n", f"s3://{BUCKET}/watched/b.jsonl: ok\n"]
    s3.put_object(Bucket=BUCKET, Key="watched/b.jsonl", Body=corrupt)  # replaced
    s3.put_object(Bucket=BUCKET, Key="watched/c.jsonl", Body=corrupt)  # new
    s3.delete_object(Bucket=BUCKET, Key="watched/a.jsonl")  # gone
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    told = out.splitlines()
    assert f"s3://{BUCKET}/watched/a.jsonl: gone" in told
    for name in ("b", "c"):
        assert f"s3://{BUCKET}/watched/{name}.jsonl: CORRUPT" in told, told
        assert any(t.startswith(f"s3://{BUCKET}/watched/{name}.jsonl:23: error fold.gate") for t in told), told
    assert told[-1].startswith("2 log(s) watched: 0 ok, 2 corrupt"), told


def _upload_sessions(env: dict[str, str]) -> None:
    """The bundled sessions under s3://BUCKET/sessions/, where the documentation's lines look."""
    import boto3

    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], **_boto_credentials())
    for path in sorted(p for p in (FIXTURES / "sessions").rglob("*") if p.is_file()):
        key = f"sessions/{path.relative_to(FIXTURES / 'sessions').as_posix()}"
        s3.put_object(Bucket=BUCKET, Key=key, Body=path.read_bytes())


def test_the_object_store_page_runs_as_written(env: dict[str, str], tmp_path: Path) -> None:
    """docs/object-stores.md's schedlog lines, run by a shell against the server (the install
    and the endpoint's export aside: the environment is the server's)."""
    from tests.documentation import BLOCKS

    (block,) = [b for _, b, _ in BLOCKS if b.startswith("pip install -e '.[s3]'")]
    _upload_sessions(env)
    shell = {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"}
    lines = [line for line in block.splitlines() if line.startswith("schedlog ")]
    assert len(lines) == 4
    for line in lines:
        done = subprocess.run(
            ["bash", "-c", line], cwd=tmp_path, env=shell, capture_output=True, text=True, timeout=300
        )
        assert done.returncode in (0, 1), (line, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr


def test_the_manifest_example_names_the_manifest_keys(env: dict[str, str]) -> None:
    """docs/object-stores.md's manifest has the keys a run's manifest has, its run's name the
    shape of one, its parts under that run's prefix."""
    import boto3

    from replay.duck.published import MANIFEST, SCHEMA
    from tests.documentation import BLOCKS

    (shown_text,) = [b for lang, b, _ in BLOCKS if lang == "json" and b.startswith('{"schema": 1, "run"')]
    shown = json.loads(shown_text)
    _upload_sessions(env)
    out = f"s3://{BUCKET}/manifest-example/"
    done = _run(env, "fleet", "--no-cache", "--workers", "1", f"s3://{BUCKET}/sessions/", "--output", out)
    assert done.returncode in (0, 1), done.stderr
    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], **_boto_credentials())
    written = json.loads(s3.get_object(Bucket=BUCKET, Key=f"manifest-example/{MANIFEST}")["Body"].read())
    assert set(shown) == set(written) and shown["schema"] == written["schema"] == SCHEMA
    for made in (shown, written):
        run = str(made["run"])
        assert re.fullmatch(r"\d{8}T\d{6}Z-[0-9a-f]{8}", run)
        assert all(str(p).startswith(f"runs/{run}/part-") for p in made["parts"])  # type: ignore[attr-defined]
