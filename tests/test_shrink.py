"""`schedlog shrink`: a corrupt log cut down to what keeps its verdict and rule, redacted for a bug
report (issue 32, acceptance 2): on every corrupt fixture and real corrupt log."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner

from replay.cli import main
from replay.judge.verify import verify_bytes
from replay.tools.shrink import CannotShrink, key_of, placeholder, shrink_log

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


# --- every input verify accepts: a shrunk log or a clear refusal, in bounded memory (issue 49) ---


def _v4(path: Path) -> list[bytes]:
    """A fixture's lines rewritten as a v4 log (fixtures/upgrade.py)."""
    from fuzz.logs import sources

    name = path.name.removesuffix(".session.jsonl")
    found = next(s for s in sources(ROOT / "no-real-logs") if s.name == f"{name}.v4.session.v4.jsonl")
    return list(found.lines)


def _edited(line_no: int, old: bytes, new: bytes) -> bytes:
    lines = _v4(ROOT / "fixtures" / "sessions" / "valid" / "reminders.session.jsonl")
    assert old in lines[line_no], lines[line_no]
    lines[line_no] = lines[line_no].replace(old, new, 1)
    return b"\n".join(lines) + b"\n"


CREATE = b'"operation":"create"'
APPEND = b'"surfaceOp":"append"'
HOSTILE_KEPT = {
    "a value nested 3,000 levels": (5, CREATE, CREATE + b',"x":' + b"[" * 3000 + b'"secret"' + b"]" * 3000),
    "an object nested 3,000 levels": (5, CREATE, CREATE + b',"x":' + b'{"a":' * 3000 + b"1" + b"}" * 3000),
    "a number past the doubles": (5, CREATE, CREATE + b',"x":1e400'),
    "a negative one": (5, CREATE, CREATE + b',"x":-1e400'),
    "a surfaceOp bound that is a list": (
        6, APPEND, b'"sourceEventSeqs":[2],"surfaceOp":{"op":"replace","startSeq":[2],"endSeq":2}'
    ),
    "a surfaceOp bound that is an object": (
        6, APPEND, b'"sourceEventSeqs":[2],"surfaceOp":{"op":"replace","startSeq":{"a":1},"endSeq":2}'
    ),
    "a run of 10^12 seqs": (6, APPEND, b'"sourceEventSeqs":[[0,1000000000000]],' + APPEND),
    "a run of 2^53 - 1 seqs": (6, APPEND, b'"sourceEventSeqs":[[0,9007199254740991]],' + APPEND),
}  # fmt: skip


@pytest.mark.parametrize("redact", [False, True])
@pytest.mark.parametrize("case", HOSTILE_KEPT)
def test_shrink_keeps_a_hostile_line_its_verdict_needs(case: str, redact: bool) -> None:
    """The line that decides the verdict survives the shrink and is written back as JSON.parse
    reads it (deep values, numbers past the doubles), its odd surface metadata renumbered only
    where it names kept seqs, its runs never expanded (a run of 10^12 once took 810 MB and more)."""
    data = _edited(*HOSTILE_KEPT[case])
    original = verify_bytes("hostile.session.v4.jsonl", data)
    assert original.verdict == "corrupt"
    shrunk = shrink_log("hostile.session.v4.jsonl", data, redact=redact)
    assert key_of(verify_bytes("hostile.session.v4.jsonl", shrunk.data)) == key_of(original)
    assert shrunk.lines == 1
    if "10^12" in case:
        assert b'"sourceEventSeqs":[0]' in shrunk.data  # the one kept seq the run spans, renumbered


def test_a_v0_replacement_names_its_bounds_by_start_and_end_renumbered() -> None:
    """v0-v2 replacements say `start`/`end` (v3+ `startSeq`/`endSeq`): both are renumbered."""
    lines = (ROOT / "fixtures" / "sessions" / "corrupt" / "reused-id.session.jsonl").read_bytes().split(b"\n")
    k = next(i for i, line in enumerate(lines) if b'"seq":28' in line)
    lines[k] = lines[k].replace(
        b'"surfaceOp":"append"', b'"sourceEventSeqs":[15],"surfaceOp":{"op":"replace","start":15,"end":15}'
    )
    data = b"\n".join(lines)
    original = verify_bytes("v0.session.jsonl", data)
    assert original.verdict == "corrupt" and not any(f.code == "format.envelope" for f in original.findings)
    shrunk = shrink_log("v0.session.jsonl", data)
    kept = [json.loads(line) for line in shrunk.data.splitlines()[1:]]
    for event in kept:
        op = event.get("surfaceOp")
        if isinstance(op, dict):
            assert op["start"] == op["end"] == event["sourceEventSeqs"][0] < event["seq"]
            assert kept[op["start"]]["seq"] == op["start"]  # names the kept, renumbered message


def test_a_tool_call_row_counts_its_argument_members() -> None:
    from replay.tools.shrink import _events_in

    row = {"type": "tool-call-chunks", "seq0": 3, "time0": 0, "data": {"args": ["a", "b", "c"], "dt": [1, 1]}}
    assert _events_in(row) == 3
    assert _events_in({**row, "type": "text-chunks", "data": {"texts": ["a", "b"], "dt": [1]}}) == 2


def test_the_structural_keys_are_these() -> None:
    """What `--redact` keeps: vocabulary, identities compared across events, instants and rules.
    Every other string of the header and the events is redacted (paths with their separators)."""
    from replay.tools.shrink import JSON_TEXT_KEYS, PATH_KEYS, STRUCTURAL_KEYS

    assert sorted(STRUCTURAL_KEYS) == [
        "acceptedAt", "agentPreset", "callId", "cron", "id", "kind", "name", "nextScheduledAt", "occurrenceAt",
        "operation", "origin", "parentSession", "reason", "role", "scheduledAt", "surfaceOp", "timeZone",
        "time_zone", "toolCallId", "type", "version",
    ]  # fmt: skip
    assert ({"cwd"}, {"arguments"}) == (PATH_KEYS, JSON_TEXT_KEYS)


def _strings(value: object, key: str | None = None) -> list[tuple[str | None, str]]:
    found: list[tuple[str | None, str]] = []
    stack = [(value, key)]
    while stack:
        item, name = stack.pop()
        if isinstance(item, dict):
            stack += [(v, k) for k, v in item.items()]
        elif isinstance(item, list):
            stack += [(v, name) for v in item]
        elif isinstance(item, str):
            found.append((name, item))
    return found


@pytest.mark.parametrize("path", _cases(), ids=lambda p: p.name)
def test_a_redacted_shrink_keeps_no_string_but_the_structural_ones(path: Path) -> None:
    """The header's cwd (`/home/alice/acme-merger-2027` was left verbatim) and every other free
    text or path, in the header and the events, is a placeholder unless its key is structural
    or the line had to be kept as written (counted)."""
    from replay.tools.shrink import STRUCTURAL_KEYS, path_placeholder

    data = path.read_bytes()
    lines = data.split(b"\n")
    head = json.loads(lines[0])
    head["cwd"] = "/home/alice/acme-merger-2027"
    data = b"\n".join([json.dumps(head).encode(), *lines[1:]])
    shrunk = shrink_log(path.name, data, redact=True)
    out = [json.loads(line) for line in shrunk.data.splitlines()]
    assert out[0]["cwd"] == "/xxxx/xxxxx/xxxxxxxxxxxxxxxx" == path_placeholder(head["cwd"])
    if shrunk.kept_strings:
        return  # some line's text decides the verdict: that line is kept, and the summary says so
    for value in out:
        for key, text in _strings(value):
            if key == "arguments":
                continue  # JSON text, redacted inside
            assert key in STRUCTURAL_KEYS or text in (placeholder(text), path_placeholder(text)), (key, text)
