"""Fleets (issue 20, first part): a bytes-in verdict-out entry point, path lists and stable shards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from replay import verify_bytes
from replay.cli import main
from replay.judge.report import FINDING_LISTS
from replay.sources.discover import discover, in_shard, read_path_list

from .conftest import REAL_LOGS, ROOT

LOGS = sorted(discover([str(ROOT / "fixtures" / "sessions"), str(ROOT / "fixtures" / "formats")]))
REAL = sorted(discover([str(REAL_LOGS)])) if REAL_LOGS.is_dir() else []


@pytest.mark.parametrize("path", LOGS + REAL, ids=lambda p: Path(p).name)
def test_verify_bytes_equals_verify_json(path: str) -> None:
    (expected,) = json.loads(CliRunner().invoke(main, ["verify", "--format", "json", path]).output)
    got = verify_bytes(path, Path(path).read_bytes()).to_json()
    if got["formatFindings"] != expected["formatFindings"]:  # a file's generations are read from its directory
        for name in ("formatFindings", *(name for name, _ in FINDING_LISTS)):
            expected[name] = [f for f in expected[name] if f["code"] != "format.generations"]
    assert json.loads(json.dumps(got)) == expected


@given(st.lists(st.text(min_size=1, max_size=30), max_size=40), st.integers(1, 6))
def test_shards_cover_every_path_exactly_once(paths: list[str], count: int) -> None:
    shards = [[p for p in paths if in_shard(p, index, count)] for index in range(1, count + 1)]
    assert sorted(p for shard in shards for p in shard) == sorted(paths)
    assert all(in_shard(p, index, count) == in_shard(p, index, count) for p in paths for index in range(1, count + 1))


def test_three_shards_judge_the_fleet_once(tmp_path: Path) -> None:
    every = CliRunner().invoke(main, ["verify", "--format", "jsonl", str(ROOT / "fixtures")])
    parts = [
        CliRunner().invoke(main, ["verify", "--format", "jsonl", "--shard", f"{i}/3", str(ROOT / "fixtures")])
        for i in (1, 2, 3)
    ]
    judged = sorted(json.loads(line)["path"] for part in parts for line in part.output.splitlines())
    assert judged == sorted(json.loads(line)["path"] for line in every.output.splitlines())
    assert all(part.exception is None or isinstance(part.exception, SystemExit) for part in parts)


def test_files_from_a_list_or_standard_input(tmp_path: Path) -> None:
    listing = tmp_path / "paths.txt"
    listing.write_text("\n".join(LOGS[:3]) + "\n\n")
    assert read_path_list(listing.read_text()) == LOGS[:3]
    from_file = CliRunner().invoke(main, ["verify", "--format", "jsonl", "--files-from", str(listing)])
    from_stdin = CliRunner().invoke(
        main, ["verify", "--format", "jsonl", "--files-from", "-"], input=listing.read_text()
    )
    assert [json.loads(line)["path"] for line in from_file.output.splitlines()] == LOGS[:3]
    assert from_stdin.output == from_file.output
    nothing = CliRunner().invoke(main, ["verify"])
    assert nothing.exit_code == 2 and "name the logs" in nothing.output


def test_a_shard_holding_no_log_is_an_empty_audit() -> None:
    one = str(ROOT / "fixtures" / "sessions" / "valid" / "fork-child.session.jsonl")
    empty = next(f"{i}/5" for i in range(1, 6) if not in_shard(one, i, 5))
    done = CliRunner().invoke(main, ["verify", "--shard", empty, one])
    assert done.exit_code == 0 and "0 session(s)" in done.output
    bad = CliRunner().invoke(main, ["verify", "--shard", "4/3", one])
    assert bad.exit_code == 2 and "I/N" in bad.output


def test_parquet_verdicts_from_shards_count_as_verify_does(tmp_path: Path) -> None:
    import duckdb

    fleet = str(ROOT / "fixtures")
    for i in (1, 2, 3):
        done = CliRunner().invoke(
            main, ["verify", fleet, "--shard", f"{i}/3", "--format", "parquet", "--output", str(tmp_path)]
        )
        assert done.exception is None or isinstance(done.exception, SystemExit)
        assert "verdicts " in done.output
    every = [
        json.loads(line)
        for line in CliRunner().invoke(main, ["verify", fleet, "--format", "jsonl"]).output.splitlines()
    ]
    with duckdb.connect() as con:
        rows = con.execute(
            f"SELECT path, verdict, profile FROM read_parquet('{tmp_path}/**/*.parquet') ORDER BY path"
        ).fetchall()
    assert rows == sorted((r["path"], r["verdict"], r.get("profile")) for r in every)
    assert not list(tmp_path.glob(".*.tmp"))  # parts are renamed into place whole


def test_parquet_needs_an_output_directory() -> None:
    done = CliRunner().invoke(main, ["verify", str(ROOT / "fixtures" / "sessions"), "--format", "parquet"])
    assert done.exit_code == 2 and "--output" in done.output


def test_verify_bytes_gives_the_schedule_changes_rows_replay_stores(tmp_path: Path) -> None:
    import duckdb

    from replay import verify_bytes_with_changes

    db = tmp_path / "f.duckdb"
    CliRunner().invoke(main, ["replay", str(ROOT / "fixtures" / "sessions"), "--db", str(db)])
    sessions = [p for p in LOGS if p.startswith(str(ROOT / "fixtures" / "sessions"))]
    assert len(sessions) == 8
    compared = 0
    for path in sessions:
        report, rows = verify_bytes_with_changes(path, Path(path).read_bytes())
        assert report.to_json() == verify_bytes(path, Path(path).read_bytes()).to_json()
        with duckdb.connect(str(db), read_only=True) as con:
            stored = con.execute(
                "SELECT c.idx, c.seq, c.line, c.owned, c.status, c.operation, c.id FROM schedule_changes c "
                "JOIN sessions s USING (session_key) WHERE s.path = ? ORDER BY c.idx",
                [path],
            ).fetchall()
        assert [
            tuple(r[k] for k in ("idx", "seq", "line", "owned", "status", "operation", "id")) for r in rows
        ] == stored
        compared += len(stored)
    assert compared > 20  # (the corrupt fixtures give violation and unchecked rows, the fork inherited ones)


def test_verify_parquet_reruns_replace_their_part_and_refuse_another_runs(tmp_path: Path) -> None:
    """A re-run replaces its own part (two runs over 8 sessions gave 16 rows); the shards of one
    split sit side by side; parts of another run are refused, not read beside this one's."""
    import duckdb

    sessions = str(ROOT / "fixtures" / "sessions")
    out = tmp_path / "v"
    for _ in range(2):
        assert (
            CliRunner().invoke(main, ["verify", sessions, "--format", "parquet", "--output", str(out)]).exit_code == 1
        )
    with duckdb.connect() as con:
        assert con.execute(f"SELECT count(*) FROM read_parquet('{out}/*.parquet')").fetchone() == (8,)
    refused = CliRunner().invoke(
        main, ["verify", sessions, "--shard", "1/2", "--format", "parquet", "--output", str(out)]
    )
    assert refused.exit_code == 2 and "holds verdict parts of another run (verdicts.parquet)" in refused.output
    shards = tmp_path / "s"
    for i in (1, 2, 1):
        args = ["verify", sessions, "--shard", f"{i}/2", "--format", "parquet", "--output", str(shards)]
        assert CliRunner().invoke(main, args).exit_code in (0, 1)
    assert sorted(p.name for p in shards.iterdir()) == [
        "verdicts-shard-1-of-2.parquet",
        "verdicts-shard-2-of-2.parquet",
    ]
    with duckdb.connect() as con:
        assert con.execute(f"SELECT count(*) FROM read_parquet('{shards}/*.parquet')").fetchone() == (8,)
