"""What a newcomer met on the way (issue 54), each as it was reproduced: a command that said only
its summary for an input it could not read, an output folder no one else could open, a
"nothing found" message naming some suffixes and not others, a hint that named the wrong cause,
help texts cut in the middle of a word."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from replay.atomic import replace_folder
from replay.cli import main
from replay.cli.group import every_command
from replay.sources.discover import LOG_SUFFIXES
from tests.conftest import REAL_LOGS, requires_real_logs

ROOT = Path(__file__).resolve().parent.parent
SCHEDLOG = str(Path(sys.executable).with_name("schedlog"))
MISSING = "/nonexistent/x.jsonl"
NAMED = f"UNREADABLE {MISSING}: cannot read: No such file or directory"


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SCHEDLOG, *args], capture_output=True, text=True, cwd=cwd, timeout=300)


@pytest.mark.parametrize(
    "args",
    [["report", MISSING, "-o", "{tmp}/r.html"], ["replay", MISSING, "--db", "{tmp}/r.duckdb"]],
    ids=["report", "replay"],
)
def test_a_command_names_each_input_it_could_not_read(args: list[str], tmp_path: Path) -> None:
    """As verify does: the path and why, before the summary (it printed the summary alone)."""
    done = _run(*(a.format(tmp=tmp_path) for a in args), "--no-cache")
    assert done.stdout.splitlines()[0] == NAMED, done.stdout
    assert done.returncode == 2


def test_fleet_names_each_input_it_could_not_read_and_makes_its_folder_as_mkdir_would(tmp_path: Path) -> None:
    """The fleet's output folder under umask 022 is drwxr-xr-x (it was drwx------: the run's
    temporary folder renamed into place), and the unreadable input is named."""
    pytest.importorskip("distributed", reason="the dask extra (schedlog[dask]) is not installed")
    logs = ROOT / "fixtures" / "sessions" / "valid"
    done = subprocess.run(
        ["bash", "-c", f"umask 022 && exec {SCHEDLOG} fleet --no-cache --workers 1 {MISSING} {logs} --output out"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert NAMED in done.stdout.splitlines(), done.stdout + done.stderr
    assert done.returncode == 2
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o755


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o077])
def test_a_folder_put_in_place_takes_the_mode_mkdir_gives(tmp_path: Path, mask: int) -> None:
    old = os.umask(mask)
    try:
        fresh = Path(tempfile.mkdtemp(dir=tmp_path))
        replace_folder(fresh, tmp_path / "made")
        (tmp_path / "kept").mkdir(mode=0o750)
        again = Path(tempfile.mkdtemp(dir=tmp_path))
        replace_folder(again, tmp_path / "kept")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "made").stat().st_mode) == 0o777 & ~mask
    assert stat.S_IMODE((tmp_path / "kept").stat().st_mode) == 0o750 & ~mask  # the replaced folder's


@pytest.mark.parametrize(
    ("command", "stores"),
    [
        (["verify"], True),
        (["replay", "--db", "x.duckdb"], True),
        (["report", "-o", "r.html"], False),
        (["explain"], False),
        (["fleet", "--output", "out"], True),
    ],
)
def test_one_nothing_found_message_names_every_suffix_walked(command: list[str], stores: bool, tmp_path: Path) -> None:
    """Each command over an empty folder: exit 2, one line naming the folder and every name its
    walk reads (none named *.jsonl.zst, which the walk reads; explain named two of three)."""
    (tmp_path / "empty").mkdir()
    done = CliRunner().invoke(main, [command[0], str(tmp_path / "empty"), *command[1:]])
    if command[0] == "fleet" and "dask extra" in done.output:
        pytest.skip("the dask extra (schedlog[dask]) is not installed")
    assert done.exit_code == 2
    (line,) = done.output.strip().splitlines()
    assert str(tmp_path / "empty") in line
    for suffix in LOG_SUFFIXES:
        assert f"*{suffix}" in line
    assert ("schedule.json" in line) is stores


@requires_real_logs
def test_explain_says_a_header_lacks_a_field() -> None:
    """A header without delegationDepth was glossed "the header line is missing, malformed or
    not terminated": it is none of those."""
    log = REAL_LOGS / "approval-composer.session.jsonl"
    out = CliRunner().invoke(main, ["explain", "--no-cache", str(log)]).output
    assert "header lacks delegationDepth" in out
    assert "lacks a field the strict reader requires" in out


def test_shrink_of_an_unreadable_log_says_it_cannot_be_read(tmp_path: Path) -> None:
    (tmp_path / "notes.jsonl").write_text("not json\n")
    done = CliRunner().invoke(main, ["shrink", str(tmp_path / "notes.jsonl"), "-o", str(tmp_path / "s.jsonl")])
    assert done.exit_code == 2
    assert "the log is unreadable" in done.output and "no problem to keep" not in done.output


def test_the_command_list_cuts_no_help_text() -> None:
    """`schedlog --help` gave "May CANDIDATE be appended to LOG? CANDIDATE is a file or -...":
    each command's first sentence is given whole."""
    out = CliRunner().invoke(main, ["--help"]).output
    listing = out.split("Commands:", 1)[1]
    assert "..." not in listing
    assert "May CANDIDATE be appended to LOG?\n" in listing
    for name, command in every_command().items():
        assert command.short_help and name in listing
        words = " ".join(listing.split())
        assert " ".join(command.short_help.split()) in words, name
