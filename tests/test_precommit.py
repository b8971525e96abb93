"""The pre-commit hooks, run by the real `pre-commit` tool against this repository (`try-repo`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

PRE_COMMIT = Path(sys.executable).with_name("pre-commit")
SESSIONS = ROOT / "fixtures" / "sessions"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed: pre-commit needs it"),
    pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout: try-repo needs one"),
]


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's repository holding one valid and one corrupt session log, and schedlog's schemas."""
    repo = tmp_path_factory.mktemp("project")
    git(repo, "init", "-q")
    shutil.copy(SESSIONS / "valid" / "reminders.session.jsonl.zstd", repo / "good.session.jsonl.zstd")
    shutil.copy(SESSIONS / "corrupt" / "reused-id.session.jsonl", repo / "bad.session.jsonl")
    shutil.copytree(ROOT / "schemas", repo / "schemas")
    (repo / "notes.txt").write_text("not a log\n")
    git(repo, "add", ".")
    return repo


def try_repo(project: Path, hook: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PRE_COMMIT_HOME=str(project.parent / "pre-commit-home"), PRE_COMMIT_COLOR="never")
    return subprocess.run(
        [str(PRE_COMMIT), "try-repo", str(ROOT), hook, *args],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_verify_hook_passes_a_valid_log_and_fails_a_corrupt_one(project: Path) -> None:
    good = try_repo(project, "schedlog-verify", "--files", "good.session.jsonl.zstd", "notes.txt")
    assert good.returncode == 0, good.stdout + good.stderr
    assert "schedlog verify" in good.stdout and "Passed" in good.stdout
    bad = try_repo(project, "schedlog-verify", "--all-files")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "Failed" in bad.stdout and "fold.create.reuse" in bad.stdout and "notes.txt" not in bad.stdout


def test_schemas_hook_fails_on_a_stale_schema(project: Path) -> None:
    fresh = try_repo(project, "schedlog-schemas-check", "--all-files")
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr
    schema = next((project / "schemas").glob("*.json"))
    schema.write_text(schema.read_text().replace('"type"', '"type" ', 1))
    stale = try_repo(project, "schedlog-schemas-check", "--all-files")
    assert stale.returncode == 1 and f"stale: schemas/{schema.name}" in stale.stdout
