"""`schedlog shrink`: a corrupt log cut down to what keeps its verdict and rule, redacted for a bug
report (issue 32, acceptance 2): on every corrupt fixture and real corrupt log."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner

from replay.audit.shrink import CannotShrink, key_of, placeholder, shrink_log
from replay.audit.verify import verify_bytes
from replay.cli import main

from .conftest import REAL_LOGS, ROOT

CORRUPT = sorted((ROOT / "fixtures" / "sessions" / "corrupt").glob("*.jsonl"))
REAL = sorted(REAL_LOGS.glob("*.jsonl")) if REAL_LOGS.is_dir() else []


def _free_text(data: bytes) -> set[str]:
    """The prompts and message texts of a log (4 characters or more, not a placeholder)."""
    found: set[str] = set()
    for line in data.splitlines()[1:]:
        try:
            value = json.loads(line)
        except ValueError:
            continue
        text = json.dumps(value)
        for key in ("prompt", "text", "title"):
            for match in re.finditer(rf'"{key}": "((?:[^"\\]|\\.)*)"', text):
                words = json.loads(f'"{match.group(1)}"')
                if len(words.strip()) >= 4 and words != placeholder(words):
                    found.add(words)
    return found


def _cases() -> list[Path]:
    real = [p for p in REAL if verify_bytes(p.name, p.read_bytes()).verdict == "corrupt"]
    return [*CORRUPT, *real]


@pytest.mark.parametrize("path", _cases(), ids=lambda p: p.name)
def test_a_redacted_shrink_keeps_the_rule_and_no_free_text(path: Path) -> None:
    data = path.read_bytes()
    original = verify_bytes(path.name, data)
    shrunk = shrink_log(path.name, data, redact=True)
    assert key_of(shrunk.report) == key_of(original)
    again = verify_bytes(path.name, shrunk.data)
    assert key_of(again) == key_of(original)
    changes = [line for line in data.splitlines()[1:] if b'"schedule/change"' in line]
    assert shrunk.lines <= max(len(changes), 2), shrunk.data.decode()  # the violating events and what they need
    left = [text for text in _free_text(data) if text in shrunk.data.decode("utf-8", "replace")]
    assert not left, left


def test_the_gate_violation_keeps_the_two_batches_and_their_records() -> None:
    path = ROOT / "fixtures" / "sessions" / "corrupt" / "gate-too-soon.session.jsonl"
    shrunk = shrink_log(path.name, path.read_bytes(), redact=True)
    lines = [json.loads(line) for line in shrunk.data.splitlines()]
    assert [line["seq"] for line in lines[1:]] == [0, 1, 2, 3]  # renumbered densely
    assert [line["data"]["operation"] for line in lines[1:]] == ["create", "create", "dispatch", "dispatch"]
    assert shrunk.report.violation is not None and shrunk.report.violation.index == 3


@pytest.mark.parametrize(
    ("text", "masked"),
    [("standup\u00a0", "xxxxxxx\u00a0"), (" a\tb ", " x\tx "), ("\U0001f600!", "xxx"), ("\ud800x", "\ud800x")],
)
def test_a_placeholder_keeps_utf16_length_and_what_trim_reads(text: str, masked: str) -> None:
    assert placeholder(text) == masked
    assert len(text.encode("utf-16-le", "surrogatepass")) == len(masked.encode("utf-16-le", "surrogatepass"))


def test_the_command_writes_a_verified_log_and_refuses_an_ok_one(tmp_path: Path) -> None:
    corrupt = ROOT / "fixtures" / "sessions" / "corrupt" / "reused-id.session.jsonl"
    packed = tmp_path / "reused.session.jsonl.zstd"
    text = corrupt.read_bytes()
    head = text.index(b"\n") + 1
    packed.write_bytes(
        zstandard.ZstdCompressor().compress(text[:head]) + zstandard.ZstdCompressor().compress(text[head:])
    )
    out = tmp_path / "small.jsonl"
    done = CliRunner().invoke(main, ["shrink", str(packed), "-o", str(out), "--redact"])
    assert done.exit_code == 0, done.output
    assert "still corrupt (fold.create.reuse)" in done.output
    assert CliRunner().invoke(main, ["verify", str(out)]).exit_code == 1
    ok = ROOT / "fixtures" / "sessions" / "valid" / "fork-child.session.jsonl"
    refused = CliRunner().invoke(main, ["shrink", str(ok), "-o", str(tmp_path / "x.jsonl")])
    assert refused.exit_code == 2 and "there is no problem to keep" in refused.output
    with pytest.raises(CannotShrink):
        shrink_log("x", ok.read_bytes())


def test_without_redact_the_prompts_stay() -> None:
    """(The redaction test's check can fail: unredacted, a shrunk log keeps its prompts.)"""
    path = ROOT / "fixtures" / "sessions" / "corrupt" / "untrimmed-prompt.session.jsonl"
    data = path.read_bytes()
    assert _free_text(data)
    kept = shrink_log(path.name, data).data.decode()
    assert any(text in kept for text in _free_text(data))
