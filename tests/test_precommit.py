"""The pre-commit hooks, run by the real `pre-commit` tool against this repository, from the
README's `.pre-commit-config.yaml` snippet."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.documentation import ALL

from .conftest import ROOT

PRE_COMMIT = Path(sys.executable).with_name("pre-commit")
SESSIONS = ROOT / "fixtures" / "sessions"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed: pre-commit needs it"),
    pytest.mark.skipif(not (ROOT / ".git").exists(), reason="not a git checkout: pre-commit clones it"),
]


def git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True, env=env).stdout.strip()


def this_repository(scratch: Path) -> tuple[str, str]:
    """This repository as pre-commit is to clone it, (path, commit): with its uncommitted
    changes committed in a shadow clone, as `pre-commit try-repo` does."""
    head = git(ROOT, "rev-parse", "HEAD")
    if subprocess.run(["git", "diff", "--quiet", "HEAD"], cwd=ROOT).returncode == 0:
        return str(ROOT), head
    shadow = scratch / "shadow"
    git(scratch, "clone", "-q", str(ROOT), str(shadow))
    git(shadow, "checkout", "-q", head, "-b", "uncommitted")
    into_shadow = dict(
        os.environ, GIT_INDEX_FILE=str(shadow / ".git" / "index"), GIT_OBJECT_DIRECTORY=str(shadow / ".git" / "objects")
    )
    if staged := [name for name in git(ROOT, "diff", "--cached", "--name-only", "-z").split("\0") if name]:
        git(ROOT, "add", "--", *staged, env=into_shadow)
    git(ROOT, "add", "-u", env=into_shadow)
    git(shadow, "-c", "user.name=schedlog", "-c", "user.email=schedlog@localhost", "commit", "-q", "-m", "uncommitted")
    return str(shadow), git(shadow, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A user's repository holding one valid and one corrupt session log and schedlog's schemas,
    configured by the README's snippet (its repo this checkout, its rev the commit)."""
    repo = tmp_path_factory.mktemp("project")
    git(repo, "init", "-q")
    shutil.copy(SESSIONS / "valid" / "reminders.session.jsonl.zstd", repo / "good.session.jsonl.zstd")
    shutil.copy(SESSIONS / "corrupt" / "reused-id.session.jsonl", repo / "bad.session.jsonl")
    shutil.copytree(ROOT / "schemas", repo / "schemas")
    (repo / "notes.txt").write_text("not a log\n")
    snippet = re.search(r"```yaml\n(repos:\n.*?)```", ALL, re.S)
    assert snippet is not None, "the README's .pre-commit-config.yaml snippet"
    where, commit = this_repository(tmp_path_factory.mktemp("hooks"))
    config = re.sub(r"(?m)^(\s+rev: )\S+$", rf"\g<1>{commit}", snippet.group(1))
    (repo / ".pre-commit-config.yaml").write_text(config.replace("https://github.com/OWNER/schedlog", where))
    git(repo, "add", ".")
    return repo


def pre_commit(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`pre-commit run` in the project; every run shares one home, so the hooks' environment
    (schedlog installed, ~15 s) is built once."""
    env = dict(os.environ, PRE_COMMIT_HOME=str(project.parent / "pre-commit-home"), PRE_COMMIT_COLOR="never")
    return subprocess.run(
        [str(PRE_COMMIT), "run", *args], cwd=project, env=env, capture_output=True, text=True, timeout=900
    )


def test_both_hooks_pass_and_fail_as_they_should(project: Path) -> None:
    """Two runs of every hook: the whole fresh project (verify fails on the corrupt log, the
    schemas pass), then a valid log, a file that is no log and a stale schema (verify passes,
    the schemas check fails)."""
    whole = pre_commit(project, "--all-files")
    assert whole.returncode == 1, whole.stdout + whole.stderr
    verify, schemas = _hook_lines(whole.stdout)
    assert "Failed" in verify and "fold.create.reuse" in whole.stdout and "notes.txt" not in whole.stdout
    assert "Passed" in schemas
    schema = next((project / "schemas").glob("*.json"))
    schema.write_text(schema.read_text().replace('"type"', '"type" ', 1))
    some = pre_commit(project, "--files", "good.session.jsonl.zstd", "notes.txt", f"schemas/{schema.name}")
    assert some.returncode == 1, some.stdout + some.stderr
    verify, schemas = _hook_lines(some.stdout)
    assert "Passed" in verify and "Failed" in schemas
    assert f"stale: schemas/{schema.name}" in some.stdout


def _hook_lines(output: str) -> tuple[str, str]:
    """The status lines of the two hooks, in the order .pre-commit-hooks.yaml lists them."""
    verify = next(line for line in output.splitlines() if line.startswith("schedlog verify"))
    schemas = next(line for line in output.splitlines() if line.startswith("schedlog schemas --check"))
    return verify, schemas


def test_the_readme_snippet_names_a_tag_of_this_repository() -> None:
    """The README's `rev:` is a released version tag (it named v0.1.0, which did not exist)."""
    rev = re.search(r"^\s+rev: (\S+)$", ALL, re.M)
    assert rev is not None
    tags = subprocess.run(["git", "tag", "--list"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    if not tags:
        pytest.skip("a clone without tags (git clone --no-tags, a shallow CI checkout, a pull from a path)")
    assert rev.group(1) in tags, (rev.group(1), tags)
    version = re.search(r'^version = "([^"]+)"', (ROOT / "pyproject.toml").read_text(), re.M)
    assert version is not None and rev.group(1) == f"v{version.group(1)}"
