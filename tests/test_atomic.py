"""Atomic outputs: readers never see a partial file, and the file gets the mode a plain write
would have given it (not the 0600 of a temporary file)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from replay.atomic import write_atomic, write_atomic_chunks
from replay.duck.verdicts import write_verdicts


@pytest.fixture
def umask_027() -> Iterator[None]:
    old = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_output_gets_0666_less_the_umask(tmp_path: Path, umask_027: None) -> None:
    out = tmp_path / "report.html"
    write_atomic(out, b"<html></html>")
    assert out.read_bytes() == b"<html></html>" and mode(out) == 0o640
    assert write_verdicts([], tmp_path / "parts", "v").stat().st_mode & 0o777 == 0o640


def test_a_replaced_output_keeps_its_mode(tmp_path: Path, umask_027: None) -> None:
    out = tmp_path / "report.html"
    out.write_bytes(b"old")
    out.chmod(0o604)
    write_atomic_chunks(out, [b"new", b"er"])
    assert out.read_bytes() == b"newer" and mode(out) == 0o604
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]  # no temporary file left


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    out.write_bytes(b"old")

    def chunks() -> Iterator[bytes]:
        yield b"half"
        raise RuntimeError("disk gone")

    with pytest.raises(RuntimeError):
        write_atomic_chunks(out, chunks())
    assert out.read_bytes() == b"old" and [p.name for p in tmp_path.iterdir()] == ["report.html"]


def test_no_command_creates_a_missing_parent_folder(tmp_path: Path) -> None:
    """`report -o`, `replay --db`, `replay --parquet`, `simulate --log` and `verify --output`
    refuse a path whose folder does not exist (exit 2, saying so) and leave no folder behind;
    the folder an option names itself is made (verify --output DIR)."""
    from click.testing import CliRunner

    from replay.cli import main

    sessions = str(Path(__file__).parent.parent / "fixtures" / "sessions")
    scenario = sorted((Path(__file__).parent.parent / "fixtures" / "scenarios").glob("*.json"))[0]
    missing = tmp_path / "no" / "such"
    runs = [
        ["report", sessions, "-o", str(missing / "r.html")],
        ["replay", sessions, "--db", str(missing / "x.duckdb")],
        ["replay", sessions, "--db", str(tmp_path / "x.duckdb"), "--parquet", str(missing / "p")],
        ["simulate", str(scenario), "--log", str(missing / "log.jsonl")],
        ["verify", sessions, "--format", "parquet", "--output", str(missing / "parts")],
    ]
    for args in runs:
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, (args, result.output)
        assert "does not exist (schedlog creates no folders)" in result.output, args
        assert not (tmp_path / "no").exists(), args
    made = CliRunner().invoke(main, ["verify", sessions, "--format", "parquet", "--output", str(tmp_path / "parts")])
    assert made.exit_code == 1 and (tmp_path / "parts").is_dir()
