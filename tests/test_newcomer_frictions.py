"""What a new user met trying every command on the real logs from a fresh clone (issue 63,
items 8-18): each friction held by a test that failed before it was mended."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from replay.cli.commands import main

from .conftest import ROOT

TRANSCRIPT = ROOT / "fixtures" / "host" / "transcripts" / "call-edit-no-change.session.v4.jsonl"


def _verify(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["verify", "--no-cache", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout, result.stderr


# --- item 8: lenient mode relaxes the envelope, and says so -------------------------------------


@pytest.mark.parametrize("run", ["[1,0]", "[0,1000001]"])
def test_lenient_mode_makes_an_envelope_problem_a_warning_as_the_docs_say(tmp_path: Path, run: str) -> None:
    log = tmp_path / "run.session.v4.jsonl"
    log.write_text(TRANSCRIPT.read_text().replace('"sourceEventSeqs":[2]', f'"sourceEventSeqs":[{run}]', 1))
    levels = {}
    for mode in ("strict", "lenient"):
        status, out, _ = _verify("--format", "json", "--mode", mode, str(log))
        (report,) = json.loads(out)
        levels[mode] = (status, [f["severity"] for f in report["formatFindings"] if f["code"] == "format.envelope"])
    assert levels == {"strict": (1, ["error"]), "lenient": (0, ["warning"])}
    docs = " ".join((ROOT / "docs" / "verify.md").read_text().split())
    assert "lenient mode also relaxes what only the persistence reader refuses: the envelope's keys and values" in docs
    assert "`[1, 0]`" in docs and "`[0, 1000001]`" in docs


# --- item 10: a selector that names no known code is refused -----------------------------------

SESSIONS = ROOT / "fixtures" / "sessions"


@pytest.mark.parametrize(
    "option, value, near",
    [
        ("--ignore", "format.headr", "format.header"),
        ("--select", "nonsense-code", ""),
        ("--select", "delivery.ordr", "delivery.order"),
    ],
)
def test_an_unknown_selector_on_the_command_line_is_a_usage_error(option: str, value: str, near: str) -> None:
    status, _, said = _verify(option, value, str(SESSIONS))
    assert status == 2
    assert f"'{value}' names no finding code or prefix of one" in said
    assert near in said


def test_an_unknown_selector_in_the_configuration_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.schedlog]\nselect = ["fold.bogus"]\n')
    result = CliRunner().invoke(
        main, ["verify", "--no-cache", "--config", str(tmp_path / "pyproject.toml"), str(SESSIONS)]
    )
    assert result.exit_code == 2
    assert "'fold.bogus' names no finding code or prefix of one" in result.stderr


@pytest.mark.parametrize(
    "selector", ["format", "format.header", "host", "host.soft", "delivery.order", "tool", "fold.gate"]
)
def test_known_codes_and_prefixes_are_taken(selector: str) -> None:
    status, _, _ = _verify("--select", selector, str(SESSIONS))
    assert status == 1  # (the corrupt fixtures: the selection never changes the verdicts)


def test_every_code_the_sources_write_is_known() -> None:
    """The known codes (what a selector is checked against) hold every code literal of the sources."""
    import re

    from replay.audit.rules import CODES

    shape = re.compile(r"\"((?:format|host|delivery|tool|decode|fold|live)\.[a-z0-9.-]+)\"")
    written = {
        code
        for folder in ("invariant", "replay")
        for path in (ROOT / folder).rglob("*.py")
        for code in shape.findall(path.read_text(encoding="utf-8"))
    }
    prefixes_only = {"fold.cron", "fold.every", "live.cron.create", "live.cron.dispatch"}  # (used as prefixes)
    assert written - prefixes_only <= CODES, sorted(written - prefixes_only - CODES)


def test_a_refused_log_whose_refusal_is_not_selected_says_so_not_see_below() -> None:
    log = SESSIONS / "corrupt" / "seq-gap.session.jsonl"
    status, out, _ = _verify("--select", "delivery", str(log))
    assert status == 1
    assert "(see below)" not in out
    assert "refused (by findings the selection leaves out: --select/--ignore)" in out
    assert "(see below)" in _verify(str(log))[1]
