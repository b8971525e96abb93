"""Every fenced block of the documentation (the README and the site's pages, docs/*.md) runs as
written, or is checked against the program it shows.

Each block is claimed by one check (`holder`): a block no check claims fails the first test, so
a new snippet cannot go untested. Transcripts (```text blocks of `$ schedlog ...` commands and
their output) are run and compared, `...` standing for text left out; synopses name only
options and choices the command has, and every option it has; the shell, TypeScript, TOML,
YAML and JSON blocks are run or compared by the tests below (the Python blocks and the fleet
snippet by tests/test_readme.py, the README's first command by .ci/run).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import click
import pytest
from click.testing import CliRunner

from replay.cli import main

from .conftest import ROOT
from .documentation import BLOCKS

BIN = Path(sys.executable).parent


def _is_synopsis(body: str) -> bool:
    return all(line.startswith(("schedlog ", " ")) for line in body.splitlines()) and "[" in body


def holder(lang: str, body: str, line: str) -> str | None:
    """The check that runs this block, or None."""
    if line == BLOCKS[0][2]:
        return ".ci/run (the README's first command, exactly)"
    if lang == "python":
        return "test_readme.py::test_every_python_snippet_runs_as_written"
    if lang == "text" and body.startswith("$ schedlog "):
        return "test_every_transcript_prints_what_it_shows"
    if lang == "json" and body.startswith('{"tag":'):
        return "test_conform.py::test_every_documented_example_is_what_the_server_answers"
    if lang == "json" and body.startswith('{"schema": 1, "run"'):
        return "test_object_stores.py::test_the_manifest_example_names_the_manifest_keys"
    if lang == "json" and body.startswith('{"type":"schedlog/set-aside"'):
        return "test_repair.py::test_the_documented_set_aside_event_is_what_repair_writes"
    if lang == "json":
        return "test_the_json_example_is_what_verify_prints"
    if lang == "" and body.startswith("DISAGREE create "):
        return "test_conform.py::test_the_documented_disagreement_has_the_shape_conform_prints"
    if lang == "" and body.startswith("sessions 1"):
        return "test_the_table_diagram_names_tables_and_keys_the_database_has"
    if lang == "yaml":
        return "test_precommit.py, test_the_precommit_snippet_names_the_hooks_this_repository_has"
    if lang == "toml":
        return "test_the_pytest_configuration_collects_the_logs_it_names"
    if lang == "ts":
        return "test_the_typescript_snippet_validates_a_candidate"
    if lang == "mermaid":
        return "test_docs_site.py, test_mkdocs_builds_the_site_strictly (the diagram is drawn)"
    if lang != "sh":
        return None
    if _is_synopsis(body):
        return "test_every_synopsis_names_the_commands_own_options"
    return next((check for start, check in SHELL_CHECKS.items() if body.startswith(start)), None)


SHELL_CHECKS = {
    "mkdir -p changes && jq ": "test_the_jq_snippet_checks_a_logs_schedule_events",
    "(cd docs/reference-adapter && npm ci": "test_the_reference_adapter_snippet_runs_against_the_published_package",
    'pip install "schedlog @ git+': "test_the_ci_snippet_runs",
    "# the owner writes its log live": "test_watch.py::test_the_readme_live_snippet_runs_as_written",
    "# one machine, cut into jobs": "test_readme.py::test_the_fleet_snippet_runs_as_written",
    "# a local Dask cluster of 2 workers": "test_readme.py::test_the_readme_fleet_example_runs_as_written",
    "python3 -m venv .venv && .venv/bin/pip install -e '.[dev]'\n": (
        "test_readme.py::test_the_site_home_gives_the_readme_commands"
    ),
    'schedlog conform --exec "./my-port conformance"': "test_the_conform_examples_take_options_conform_has",
    "pip install -e '.[s3]'": "test_object_stores.py::test_the_object_store_page_runs_as_written",
}
"""A shell block's check, by how the block starts."""


def test_every_block_is_run_or_checked_by_a_test() -> None:
    unclaimed = [
        f"line {line}: {body.splitlines()[0]}" for lang, body, line in BLOCKS if holder(lang, body, line) is None
    ]
    assert not unclaimed, unclaimed
    assert len(BLOCKS) >= 30


# --- transcripts -------------------------------------------------------------------------------

TRANSCRIPTS = [(body, line) for lang, body, line in BLOCKS if lang == "text"]


def _pattern(expected: str) -> re.Pattern[str]:
    """`expected` as a regular expression: a line `...` stands for any lines, `...` within a
    line for any text on it."""
    parts = []
    for line in expected.splitlines():
        if line.strip() == "...":
            parts.append(r"(?:[^\n]*\n)*?")
        else:
            parts.append(re.escape(line).replace(re.escape("..."), r"[^\n]*?") + r"\n")
    return re.compile("".join(parts))


def _commands(body: str) -> list[tuple[list[str], str]]:
    """Each `$ schedlog ...` command of a transcript with the output shown after it."""
    steps: list[tuple[list[str], str]] = []
    for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
        command, _, output = chunk.partition("\n")
        argv = shlex.split(command)
        assert argv[0] == "schedlog", command
        steps.append((argv[1:], output))
    return steps


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder as the README's reader has it after its first command: the fixtures, and the
    database that command's replay wrote (its schedlog commands, run as written)."""
    folder = tmp_path_factory.mktemp("readme")
    (folder / "fixtures").symlink_to(ROOT / "fixtures")
    first = BLOCKS[0][1].splitlines()[0]
    group = first[first.index("{") + 1 : first.rindex("}")]
    commands = [shlex.split(c) for c in group.split(";") if c.strip()]
    assert [c[0] for c in commands] == [".venv/bin/schedlog"] * 3
    old = Path.cwd()
    os.chdir(folder)
    try:
        for argv in commands:
            result = CliRunner().invoke(main, argv[1:])
            assert result.exit_code in (0, 1), (argv, result.output)
    finally:
        os.chdir(old)
    assert (folder / "fixtures.duckdb").is_file()
    return folder


@pytest.mark.parametrize(("body", "line"), TRANSCRIPTS, ids=[f"line-{line}" for _, line in TRANSCRIPTS])
def test_every_transcript_prints_what_it_shows(
    body: str, line: str, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workspace)
    for argv, shown in _commands(body):
        result = CliRunner().invoke(main, argv)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.output
        assert result.exit_code in (0, 1), (argv, result.output)
        assert _pattern(shown).fullmatch(result.output), (
            f"{argv}\n--- README ---\n{shown}--- printed ---\n{result.output}"
        )


def test_the_transcript_pattern_can_fail() -> None:
    assert _pattern("a\n...\nb ... c\n").fullmatch("a\nx\ny\nb 1 2 c\n")
    assert not _pattern("a\n...\nb ... c\n").fullmatch("a\nb 1 2 d\n")
    assert not _pattern("a\n").fullmatch("a\nmore\n")


def test_the_table_diagram_names_tables_and_keys_the_database_has(workspace: Path) -> None:
    """Each table of the diagram is in the database the first command builds, and each join key
    it names (a parenthesis of identifiers) is a column of at least two tables on its line."""
    import duckdb

    ((diagram, _),) = [(body, line) for lang, body, line in BLOCKS if lang == "" and body.startswith("sessions 1")]
    with duckdb.connect(str(workspace / "fixtures.duckdb"), read_only=True) as db:
        columns: dict[str, set[str]] = {}
        for table, column in db.execute("SELECT table_name, column_name FROM information_schema.columns").fetchall():
            columns.setdefault(table, set()).add(column)
    checked = 0
    for line in diagram.splitlines():
        drawn, _, keys = line.partition("(")
        tables = re.findall(r"[a-z_]+", drawn)
        assert tables and all(table in columns for table in tables), line
        names = re.split(r"[,;]\s*|\w+:\s*", keys.rstrip(")"))
        if all(re.fullmatch(r"[a-z_]*", name.strip()) for name in names):
            for key in filter(None, (name.strip() for name in names)):
                assert sum(key in columns[table] for table in tables) >= 2, (line, key)
                checked += 1
    assert checked >= 5


# --- synopses ----------------------------------------------------------------------------------

SYNOPSES = [(body, line) for lang, body, line in BLOCKS if lang == "sh" and _is_synopsis(body)]


def _synopsis_lines(body: str) -> list[str]:
    """The synopsis of each command, its continuation lines joined (and `(Host stores)` notes cut)."""
    joined: list[str] = []
    for line in body.splitlines():
        line = re.sub(r"\s+\([^)]*\)\s*$", "", line)
        if line.startswith(" "):
            joined[-1] += " " + line.strip()
        else:
            joined.append(line)
    return joined


def _options(command: click.Command) -> dict[str, click.Option]:
    return {
        name: param
        for param in command.params
        if isinstance(param, click.Option) and not param.hidden
        for name in (*param.opts, *param.secondary_opts)
    }


def test_every_synopsis_names_the_commands_own_options() -> None:
    """Each `--option` a synopsis names is one the command takes, each choice list it spells out
    is the command's, and every option the command takes is named in the README's synopsis."""
    assert len(SYNOPSES) >= 8
    ctx = click.Context(main)
    named: dict[str, set[click.Option]] = {}
    for body, line in SYNOPSES:
        for synopsis in _synopsis_lines(body):
            name = synopsis.split()[1]
            command = main.get_command(ctx, name)
            assert command is not None, (line, name)
            options = _options(command)
            for option in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", synopsis.split(maxsplit=2)[2]):
                assert option in options, f"line {line}: {name} has no option {option}"
                named.setdefault(name, set()).add(options[option])
            for option, spelled in re.findall(r"(--[\w-]+) ([\w.-]+(?:\|[\w.-]+)+)", synopsis):
                choices = getattr(options[option].type, "choices", None)
                assert choices is not None and set(spelled.split("|")) == set(choices), (line, option, choices)
    for name, seen in named.items():
        command = main.get_command(ctx, name)
        assert command is not None
        missing = {o.opts[-1] for o in _options(command).values()} - {o.opts[-1] for o in seen}
        assert not missing, f"the README's synopsis of {name} omits {sorted(missing)}"


def test_the_conform_examples_take_options_conform_has() -> None:
    """The conformance page's `schedlog conform` lines (a port of your own stands behind
    --exec): each option one conform takes, each choice one it offers."""
    (body,) = [b for _, b, _ in BLOCKS if b.startswith('schedlog conform --exec "./my-port conformance"')]
    command = main.get_command(click.Context(main), "conform")
    assert command is not None
    options = _options(command)
    for line in body.splitlines():
        argv = shlex.split(line.split("  #")[0].split(" > ")[0])
        assert argv[:2] == ["schedlog", "conform"], line
        for n, arg in enumerate(argv):
            if arg.startswith("--"):
                assert arg in options, (line, arg)
                choices = getattr(options[arg].type, "choices", None)
                if choices is not None:
                    assert argv[n + 1] in choices, (line, arg)


# --- JSON ----------------------------------------------------------------------------------------


def _matches(shown: object, printed: object) -> bool:
    """Whether `printed` is `shown`, a `...` in a shown string standing for any text."""
    if isinstance(shown, dict):
        return (
            isinstance(printed, dict)
            and list(shown) == list(printed)
            and all(_matches(shown[k], printed[k]) for k in shown)
        )
    if isinstance(shown, list):
        return isinstance(printed, list) and len(shown) == len(printed) and all(map(_matches, shown, printed))
    if isinstance(shown, str) and "..." in shown:
        return (
            isinstance(printed, str)
            and re.fullmatch(".*?".join(map(re.escape, shown.split("..."))), printed) is not None
        )
    return type(shown) is type(printed) and shown == printed


def test_the_json_example_is_what_verify_prints(monkeypatch: pytest.MonkeyPatch) -> None:
    ((shown_text, _),) = [
        (body, line)
        for lang, body, line in BLOCKS
        if holder(lang, body, line) == "test_the_json_example_is_what_verify_prints"
    ]
    shown = json.loads(shown_text)
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["verify", "--format", "json", shown["path"]])
    (printed,) = json.loads(result.output)
    assert _matches(shown, printed), printed
    assert not _matches({**shown, "events": 31}, printed)


# --- shell, TypeScript, TOML, YAML ---------------------------------------------------------------


def _block(start: str) -> str:
    (body,) = [body for lang, body, _ in BLOCKS if body.startswith(start)]
    return body


def _shell(command: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.mark.skipif(shutil.which("jq") is None, reason="jq is not installed: the snippet needs it")
def test_the_jq_snippet_checks_a_logs_schedule_events(tmp_path: Path) -> None:
    """Run as written in a folder holding `session.jsonl` and `schemas/`: a log's changes pass,
    and a change the schema refuses fails the snippet."""
    (tmp_path / "schemas").symlink_to(ROOT / "schemas")
    log = (ROOT / "fixtures" / "sessions" / "valid" / "reminders.session.jsonl").read_text()
    (tmp_path / "session.jsonl").write_text(log)
    done = _shell(_block("mkdir -p changes && jq "), tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert len(list((tmp_path / "changes").iterdir())) == log.count('"type":"schedule/change"') > 0
    shutil.rmtree(tmp_path / "changes")
    (tmp_path / "session.jsonl").write_text(log.replace('"operation":"create"', '"operation":"explode"', 1))
    done = _shell(_block("mkdir -p changes && jq "), tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed: the snippet needs it")
def test_the_typescript_snippet_validates_a_candidate(tmp_path: Path) -> None:
    """The snippet, as an ES module beside `schemas/` and ajv (tests/ajv's pinned install), with
    `candidate` given: a valid change passes, an invalid one throws ajv's message."""
    from .test_ajv import AJV, _ensure_ajv

    _ensure_ajv()
    (tmp_path / "node_modules").symlink_to(AJV / "node_modules")
    (tmp_path / "schemas").symlink_to(ROOT / "schemas")
    script = tmp_path / "check.mjs"
    script.write_text(
        "const candidate = JSON.parse(process.argv[2]);\n"
        + _block('import Ajv2020 from "ajv')
        + 'console.log("valid");\n'
    )
    change = {"version": 1, "operation": "delete", "id": "schedule-1"}
    ran = subprocess.run(
        ["node", str(script), json.dumps({"data": change})], capture_output=True, text=True, cwd=tmp_path
    )
    assert (ran.returncode, ran.stdout) == (0, "valid\n"), ran.stderr
    ran = subprocess.run(
        ["node", str(script), json.dumps({"data": {**change, "id": ""}})], capture_output=True, text=True, cwd=tmp_path
    )
    assert ran.returncode == 1 and "must NOT have fewer than 1 characters" in ran.stderr, ran.stderr


def test_the_pytest_configuration_collects_the_logs_it_names(pytester: pytest.Pytester) -> None:
    """The TOML snippet as a project's pyproject.toml: each named log, plain or zstd, is a test."""
    pytester.makepyprojecttoml(_block("[tool.pytest.ini_options]"))
    logs = pytester.path / "testdata" / "sessions"
    logs.mkdir(parents=True)
    for log in (ROOT / "fixtures" / "sessions" / "valid").iterdir():
        shutil.copy(log, logs / log.name)
    result = pytester.runpytest_subprocess("-v")
    result.assert_outcomes(passed=len(list(logs.iterdir())))


def test_the_precommit_snippet_names_the_hooks_this_repository_has() -> None:
    snippet = re.findall(r"- id: (\S+)", _block("repos:"))
    hooks = re.findall(r"^- id: (\S+)", (ROOT / ".pre-commit-hooks.yaml").read_text(), re.M)
    assert snippet and snippet == hooks


@pytest.mark.slow
def test_the_ci_snippet_runs(tmp_path: Path) -> None:
    """The host implementer's CI snippet: the install line resolves (OWNER's copy being this
    checkout; a dry run, so the suite's own install is left alone), then the conformance run
    against a port (here schedlog's own server, `conform --serve`) and the verify line, as
    written."""
    if not (ROOT / ".git").exists() or shutil.which("git") is None:
        pytest.skip("not a git checkout: the install line names a git repository")
    install, conform, verify = _block('pip install "schedlog @ git+').splitlines()
    assert "https://github.com/OWNER/schedlog" in install
    # (a host in the URL: pip before 24 takes no `git+file:///path` requirement)
    install = install.replace("https://github.com/OWNER/schedlog", f"file://localhost{quote(ROOT.as_posix())}")
    install = install.replace("pip install", f"{shlex.quote(sys.executable)} -m pip install --dry-run --no-deps -q")
    done = _shell(install, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    port = tmp_path / "my-port"
    port.write_text(f"#!/bin/sh\nexec {shlex.quote(str(BIN / 'schedlog'))} conform --serve\n")
    port.chmod(0o755)
    shutil.copytree(ROOT / "fixtures" / "sessions" / "valid", tmp_path / "testdata" / "sessions")
    done = _shell(conform, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    report = (tmp_path / "conformance.xml").read_text()
    assert 'failures="0" errors="0"' in report and "<testcase" in report
    done = _shell(verify, tmp_path)
    assert done.returncode == 0 and "::error" not in done.stdout, done.stdout + done.stderr


@pytest.mark.slow
def test_the_reference_adapter_snippet_runs_against_the_published_package(tmp_path: Path) -> None:
    """Both lines as written, from a folder laid out as the project root (a copy of the adapter,
    so that its node_modules stay out of the checkout): npm installs the pinned packages and the
    package agrees with schedlog on every case."""
    from .reference import reference_dir

    reference_dir()  # skips, saying why, when the npm registry cannot be reached
    adapter = tmp_path / "docs" / "reference-adapter"
    adapter.mkdir(parents=True)
    for name in ("package.json", "package-lock.json", "adapter.mjs"):
        shutil.copy(ROOT / "docs" / "reference-adapter" / name, adapter / name)
    done = _shell(_block("(cd docs/reference-adapter && npm ci"), tmp_path, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
