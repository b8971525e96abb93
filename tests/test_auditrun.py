"""`replay.verify_paths` is the library call behind `schedlog verify`: it returns the audit the
command only prints (the Host cross-check included) and the status it exits with."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import replay
from replay.cli import main
from replay.exitstatus import EXIT_HELP, EXIT_ORDER, exit_status
from replay.sources.discover import discover

from .conftest import ROOT

REAL_LOGS = ROOT.parent / "shared" / "real-logs"
ROOTS = {
    "fixtures": ROOT / "fixtures" / "sessions",
    "host-root": ROOT / "fixtures" / "host" / "root",
    "real-logs": REAL_LOGS,
}


@pytest.mark.parametrize("name", sorted(ROOTS))
def test_verify_paths_returns_what_verify_prints(name: str) -> None:
    folder = ROOTS[name]
    if not folder.exists():
        pytest.skip(f"{folder} is absent (CI always has ../shared/real-logs)")
    printed = CliRunner().invoke(main, ["verify", "--format", "json", str(folder)], catch_exceptions=False)
    audit = replay.verify_paths(list(discover([str(folder)], stores=True)))
    assert audit.to_json() == json.loads(printed.stdout)
    assert audit.exit_status == printed.exit_code
    assert [r.path for r in audit] == [r["path"] for r in audit.to_json()]
    if name == "host-root":  # the store's cross-check against the logs beside it is the library's
        assert any(r.store for r in audit)


def test_the_exit_status_follows_the_worst_verdict_in_one_order() -> None:
    assert exit_status([]) == exit_status(["ok"]) == 0
    assert exit_status(["ok", "unsupported", "corrupt", "unreadable"]) == 2
    assert exit_status(["unsupported", "corrupt"]) == 1
    assert exit_status(["unsupported", "ok"]) == 3
    assert [status for _, status, _ in EXIT_ORDER] == [2, 1, 3]


@pytest.mark.parametrize("command", ["verify", "replay", "report", "explain"])
def test_every_reading_command_states_the_exit_statuses(command: str) -> None:
    shown = CliRunner().invoke(main, [command, "--help"], terminal_width=1000).stdout
    assert " ".join(EXIT_HELP.split()) in " ".join(shown.split())
