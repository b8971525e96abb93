"""The documentation's commands stay true (the README and the site's pages): its set-up command is
CI's, its Python blocks and fleet snippets run as written."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT
from .documentation import ALL, README, page, section


def test_readme_opens_with_the_two_commands() -> None:
    lines = README.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert lines[0].startswith("python3 -m venv .venv && .venv/bin/pip install -e '.[dev]' && {")
    assert "schedlog verify fixtures/sessions" in lines[0] and "schedlog replay fixtures/sessions" in lines[0]
    assert "schedlog sql fixtures.duckdb" in lines[0]
    assert lines[1] == ".venv/bin/python -m pytest"


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    lines = [line.split("#")[0].strip() for line in ci.splitlines()]
    assert ".venv/bin/python -m pytest" in lines  # the README's command, on the oldest Python
    assert '"$venv/bin/python" -m pytest' in lines  # the same, in the newest Python's venv
    assert 'readme_first_command "$old"' in ci and 'install "$new" .venv-newest' in ci
    # the oldest Python's venv is made by the README's first line itself, taken from the README
    extract = re.search(r"bash -c \"\$\(sed -n '([^']+)' README.md\)\"", ci)
    assert extract is not None
    taken = subprocess.run(["sed", "-n", extract.group(1), str(ROOT / "README.md")], capture_output=True, text=True)
    assert taken.stdout == README.split("```sh\n", 1)[1].splitlines()[0] + "\n"
    assert "suite .venv >" in ci and "suite .venv-newest >" in ci
    assert 'schedlog" schemas --check' in ci


def test_the_architecture_page_shows_every_room() -> None:
    """docs/architecture.md's table names every room of replay/ (a folder with an `__init__`),
    and docs/layout.md lists each folder once."""
    rows = [line.split("|") for line in page("architecture.md").splitlines() if line.startswith("| ")]
    listed = {name for row in rows if len(row) > 3 for name in re.findall(r"`(\w+)/`", row[2])}
    rooms = sorted(p.parent.name for p in (ROOT / "replay").glob("*/__init__.py"))
    assert rooms and set(rooms) <= listed, (rooms, sorted(listed))
    paths = [line.split("`")[1] for line in page("layout.md").splitlines() if line.startswith("| `")]
    assert "replay/" in paths and len(paths) == len(set(paths))  # one line each


def test_every_reliability_promise_names_tests_that_exist() -> None:
    spans = re.findall(r"`([^`]+)`", section("Reliability, and the test that holds each promise"))
    named = [n for span in spans for n in re.findall(r"(?:^|::)(test_\w+)(?=$|::)", span)]
    files = [f for span in spans for f in re.findall(r"^(test_\w+\.py)", span)]
    assert len(named) >= 15
    source = "\n".join(p.read_text() for p in (ROOT / "tests").glob("test_*.py"))
    for name in named:
        assert f"def {name}(" in source, name
    for file in files:
        assert (ROOT / "tests" / file).is_file(), file


@pytest.mark.slow
def test_the_fleet_snippet_runs_as_written(tmp_path: Path) -> None:
    """Each local command of the README's fleet snippet, run by a shell in a folder whose logs/
    are the bundled sessions (the object-store line runs against an S3 server in
    test_object_stores.py), ends in a verdict exit
    status, and the overview query prints its table (it named a duckdb CLI nobody had)."""
    import shutil
    import sys

    pytest.importorskip("distributed", reason="the dask extra (schedlog[dask]) is not installed")
    block = ALL.split("Three ways to", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line and not line.startswith("#") and "s3://" not in line]
    assert len(commands) == 4
    shutil.copytree(ROOT / "fixtures" / "sessions", tmp_path / "logs")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    for command in commands:
        command = command.replace(".venv/bin/python", sys.executable)
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True)
        assert done.returncode in (0, 1), (command, done.stdout, done.stderr)
    assert "corrupt" in done.stdout and "ok" in done.stdout  # the overview's table


PYTHON_SNIPPETS = re.findall(r"```python\n(.*?)```", ALL, re.S)


@pytest.mark.parametrize("snippet", PYTHON_SNIPPETS, ids=[f"python-{n}" for n in range(len(PYTHON_SNIPPETS))])
def test_every_python_snippet_runs_as_written(snippet: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each Python block of the README runs as written, in a folder holding `logs/` (the bundled
    sessions) and `fixtures/`; a block that defines a test has it run."""
    (tmp_path / "logs").symlink_to(ROOT / "fixtures" / "sessions")
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "readme_snippet"}
    exec(compile(snippet, "README.md", "exec"), namespace)
    for name, value in namespace.items():
        if name.startswith("test_") and callable(value):
            value()


def test_the_readme_fleet_example_runs_as_written(tmp_path: Path) -> None:
    """The README's fleet line, run by a shell where the bundled fixtures are: a verdict exit
    status, and Parquet parts of one row a session."""
    import shutil
    import sys

    import duckdb

    pytest.importorskip("distributed", reason="the dask extra (schedlog[dask]) is not installed")
    block = README.split("### Audit a fleet", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    (command,) = [line for line in block.splitlines() if line and not line.startswith("#")]
    shutil.copytree(ROOT / "fixtures" / "sessions", tmp_path / "fixtures" / "sessions")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode in (0, 1), done.stderr
    with duckdb.connect() as con:
        rows = con.execute(f"SELECT count(*) FROM read_parquet('{tmp_path}/fleet-verdicts/*.parquet')").fetchone()
    assert rows == (8,)


def test_the_site_home_gives_the_readme_commands() -> None:
    """The site's home page gives the README's two set-up commands (the install without the
    demonstration that follows it in the README)."""
    block = page("index.md").split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    first = README.split("```sh\n", 1)[1].splitlines()
    assert first[0].startswith(block[0] + " && {") and block[1] == first[1]


def test_the_first_command_prints_what_the_readme_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Five `CORRUPT` lines from verify, four rows from the violations query: the fifth corrupt
    log is refused for its format, a finding and no violation (the README said the query shows
    which rules were violated where, and a reader counted five against four)."""
    from click.testing import CliRunner

    from replay.cli import main

    assert "five `CORRUPT` lines" in " ".join(README.split()) and "four rows" in " ".join(README.split())
    (tmp_path / "fixtures").symlink_to(ROOT / "fixtures")
    monkeypatch.chdir(tmp_path)
    verified = CliRunner().invoke(main, ["verify", "--no-cache", "fixtures/sessions"]).output
    assert sum(line.startswith("CORRUPT ") for line in verified.splitlines()) == 5
    CliRunner().invoke(main, ["replay", "--no-cache", "fixtures/sessions", "--db", "f.duckdb"])
    query = "SELECT s.path, v.rule FROM violations v JOIN sessions s USING (session_key)"
    rows = CliRunner().invoke(main, ["sql", "f.duckdb", query, "--format", "jsonl"]).output.splitlines()
    assert len(rows) == 4 and not any("seq-gap" in row for row in rows)
