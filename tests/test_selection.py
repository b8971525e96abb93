"""Finding selection (issue 54): `--select` / `--ignore` and `[tool.schedlog]`, as ruff selects
rules; a selection says what is reported of a log, never what the log is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.cli import main
from replay.cli.selection import ConfigError, configured, selection
from replay.reading import Selection, matches
from tests.conftest import REAL_LOGS, requires_real_logs

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
SCHEDLOG = str(Path(sys.executable).with_name("schedlog"))


def _verify(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SCHEDLOG_CACHE_DIR"}
    return subprocess.run([SCHEDLOG, "verify", "--no-cache", *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_a_selector_names_a_code_or_a_prefix_at_a_dot() -> None:
    assert matches("format.header", "format.header")
    assert matches("format.header.placeholder", "format.header")
    assert matches("format.header.placeholder", "format")
    assert not matches("format.headerless", "format.header")
    assert not matches("format", "format.header")
    s = Selection(select=("format",), ignore=("format.header",))
    assert s.keeps("format.seq-gap") and not s.keeps("format.header.cwd") and not s.keeps("delivery.order")


@requires_real_logs
def test_ignoring_format_header_on_the_real_logs() -> None:
    """The acceptance's command: no `format.header` finding printed (the placeholder warnings of
    21 logs, the 7 refusals' errors), and the same verdicts and exit status as without."""
    plain = _verify(str(REAL_LOGS))
    ignored = _verify("--ignore", "format.header", str(REAL_LOGS))
    assert "format.header" in plain.stdout
    assert "format.header" not in ignored.stdout
    assert ignored.returncode == plain.returncode
    assert ignored.stdout.splitlines()[-1] == plain.stdout.splitlines()[-1]  # the verdicts' summary
    assert _verdicts(ignored.stdout) == _verdicts(plain.stdout)
    assert "hint: " in plain.stdout and "hint: " not in ignored.stdout  # (it names the header errors: none are left)


def _verdicts(text: str) -> list[str]:
    """Each log's verdict word and path, as the text output's head lines give them."""
    return [" ".join(line.split()[:2]) for line in text.splitlines() if line.split()[0] in ("ok", "CORRUPT")]


@requires_real_logs
def test_the_same_from_tool_schedlog_above_the_current_folder(tmp_path: Path) -> None:
    """`[tool.schedlog]` in a pyproject.toml above the current folder does what the option does;
    --isolated reads none; --config names another file; an option replaces the file's value."""
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.schedlog]\nignore = ["format.header"]\n')
    below = tmp_path / "a" / "b"
    below.mkdir(parents=True)
    from_file = _verify(str(REAL_LOGS), cwd=below)
    assert from_file.stdout == _verify("--ignore", "format.header", str(REAL_LOGS)).stdout
    assert "format.header" in _verify("--isolated", str(REAL_LOGS), cwd=below).stdout
    assert "format.header" in _verify("--ignore", "delivery", str(REAL_LOGS), cwd=below).stdout
    other = tmp_path / "schedlog.toml"
    other.write_text('select = ["format.header.placeholder"]\n')
    named = _verify("--config", str(other), str(REAL_LOGS), cwd=below)
    findings = {line.split(": ")[1] for line in named.stdout.splitlines() if line.startswith("    ")}
    assert findings == {"format.header.placeholder"}


def test_a_pyproject_without_the_table_is_passed_over(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.schedlog]\nselect = ["delivery"]\n')
    (tmp_path / "inner").mkdir()
    (tmp_path / "inner" / "pyproject.toml").write_text('[project]\nname = "inner"\n')
    chosen, path = configured(None, False, tmp_path / "inner")
    assert chosen == Selection(select=("delivery",)) and path == tmp_path / "pyproject.toml"
    assert configured(None, True, tmp_path / "inner") == (Selection(), None)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("select = [", "is not TOML"),
        ('[tool.schedlog]\nselect = "format"\n', "takes a list of finding codes"),
        ('[tool.schedlog]\nignore = ["Format Header"]\n', "is no finding code"),
        ('[tool.schedlog]\nexclude = ["x"]\n', "unknown key 'exclude'"),
    ],
)
def test_a_configuration_that_cannot_be_used_is_a_usage_error(tmp_path: Path, content: str, message: str) -> None:
    config = tmp_path / "pyproject.toml"
    config.write_text(content)
    with pytest.raises(ConfigError, match=message):
        selection(None, None, None, False, tmp_path)
    done = _verify(str(FIXTURES / "sessions"), cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr


def test_a_bad_selector_on_the_command_line() -> None:
    done = _verify("--select", "format,,Bad", str(FIXTURES / "sessions"))
    assert done.returncode == 2 and "--select: 'Bad' is no finding code" in done.stderr


def _findings(report: dict[str, object]) -> list[str]:
    findings = report["formatFindings"]
    assert isinstance(findings, list)
    return [f["code"] for f in findings]


FULL = json.loads(
    CliRunner().invoke(main, ["verify", "--no-cache", "--isolated", "--format", "json", str(FIXTURES)]).output
)
CODES = sorted({code for r in FULL for code in _findings(r)})
SELECTORS = sorted({c.rsplit(".", n)[0] for c in CODES for n in range(3)})


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(SELECTORS), max_size=3), st.lists(st.sampled_from(SELECTORS), max_size=3))
def test_a_selection_reports_the_findings_it_keeps_and_changes_no_verdict(select: list[str], ignore: list[str]) -> None:
    """For any selection over the fixtures: each report's findings are the full run's, less
    those the selection drops, in order; verdicts, violations and the exit status unchanged."""
    args = ["verify", "--no-cache", "--isolated", "--format", "json", str(FIXTURES)]
    more = [*(["--select", ",".join(select)] if select else []), *(["--ignore", ",".join(ignore)] if ignore else [])]
    done = CliRunner().invoke(main, [*args, *more])
    got = json.loads(done.output)
    chosen = Selection(tuple(select), tuple(ignore))
    assert [r["path"] for r in got] == [r["path"] for r in FULL]
    for mine, full in zip(got, FULL, strict=True):
        assert mine["verdict"] == full["verdict"] and mine["violation"] == full["violation"]
        assert _findings(mine) == [c for c in _findings(full) if chosen.keeps(c)]


def test_the_cache_keeps_each_selection_apart(tmp_path: Path) -> None:
    """A report cached without a selection is not the one given with it (the selection is part
    of what decides a report)."""
    cache = ["--cache-dir", str(tmp_path / "cache"), "--isolated", str(FIXTURES / "sessions")]
    runner = CliRunner()
    whole = runner.invoke(main, ["verify", *cache]).output
    ignored = runner.invoke(main, ["verify", "--ignore", "delivery", *cache]).output
    assert "delivery." in whole and "delivery." not in ignored
    assert runner.invoke(main, ["verify", *cache]).output.splitlines()[:-1] == whole.splitlines()[:-1]


def test_quiet_prints_only_the_logs_that_are_not_ok() -> None:
    """An ok log with warnings is left out too (it printed before: 1 line of 54 went)."""
    loud = _verify("--isolated", str(FIXTURES / "sessions"))
    quiet = _verify("--isolated", "-q", str(FIXTURES / "sessions"))
    heads = [line for line in quiet.stdout.splitlines()[:-1] if not line.startswith(" ")]
    assert heads and all(not line.startswith("ok ") for line in heads)
    assert any(line.startswith("ok ") for line in loud.stdout.splitlines())
    assert quiet.stdout.splitlines()[-1] == loud.stdout.splitlines()[-1] and quiet.returncode == loud.returncode


def test_a_violation_is_reported_whatever_the_selection() -> None:
    """A violation is what makes a log corrupt, not a finding: ignoring its rule drops the
    findings of that code, never the violation."""
    log = str(FIXTURES / "sessions" / "corrupt" / "gate-too-soon.session.jsonl")
    done = _verify("--isolated", "--ignore", "fold,delivery", log)
    (head, *rest) = done.stdout.splitlines()
    assert head.startswith("CORRUPT ") and "fold.gate" in head and done.returncode == 1
    assert not any("delivery." in line for line in rest)
