"""`schedlog conform`: the protocol, its cases, the runner against schedlog and against broken ports."""

from __future__ import annotations

import io
import json
import re
import shlex
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from invariant.conformance import BAD_REQUEST, OPERATIONS, agree, answer
from replay.cli import main
from replay.cli.output import Format
from replay.cli.output import conform as conform_output
from replay.conform.cases import all_cases, fixture_cases, generated_cases
from replay.conform.runner import run, shrink, smaller
from replay.conform.transport import (
    AHEAD,
    INTERNAL_ERROR,
    Implementation,
    ProtocolError,
    answer_line,
    request_line,
    serve,
)

from .conform_variants import VARIANTS
from .conftest import ROOT

SCHEDLOG = str(Path(sys.executable).with_name("schedlog"))
SERVER = f"{shlex.quote(SCHEDLOG)} conform --serve"
PYTHON = shlex.quote(sys.executable)


def variant(name: str) -> str:
    return f"{PYTHON} -m tests.conform_variants {name}"


def cli(*args: str, input: bytes | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)
    return result.exit_code, result.output


# --- the protocol ----------------------------------------------------------------------------------


def test_every_fixture_case_is_answered_without_an_internal_error() -> None:
    cases = fixture_cases()
    assert {c.op for c in cases} == set(OPERATIONS)
    assert len(cases) > 3000
    assert all(answer(c.request).get("code") != INTERNAL_ERROR for c in cases)


@pytest.mark.parametrize("op", OPERATIONS)
def test_generated_cases_are_answered_both_ways(op: str) -> None:
    """Each op's generated cases reach both valid answers and refusals, never an exception."""
    answers = [answer(c.request) for c in generated_cases(op, 300, 7)]
    assert {a["ok"] for a in answers} == {True, False}
    assert all(a.get("code") != BAD_REQUEST for a in answers if op != "resolve")


def test_the_same_seed_asks_the_same_cases() -> None:
    one, two = generated_cases("fold", 50, 3), generated_cases("fold", 50, 3)
    assert [c.request for c in one] == [c.request for c in two]
    assert [c.request for c in one] != [c.request for c in generated_cases("fold", 50, 4)]
    # an op's cases do not depend on which other ops are asked
    only = [c for c in all_cases(["zone"], 20, 3) if c.name.startswith("zone-")]
    assert [c.request for c in only] == [c.request for c in generated_cases("zone", 20, 3)]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


FIELDS = ["events", "seedLength", "change", "candidate", "cron", "zone", "args", "now", "id", "schedule"]
FIELDS += ["acceptedAt", "dispatchSeq", "batch", "lastRecurringAcceptedAt", "profile", "sessionTimeZone"]


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(sorted(OPERATIONS)), st.dictionaries(st.sampled_from(FIELDS), JSON_VALUES, max_size=5))
def test_any_request_gets_an_answer_not_an_exception(op: str, fields: dict[str, Any]) -> None:
    got = answer({"op": op, **fields})
    assert type(got["ok"]) is bool and (got["ok"] or isinstance(got["code"], str))


def test_answers_compare_on_results_and_codes_only() -> None:
    assert agree({"ok": False, "code": "x", "rule": "a", "message": "m"}, {"ok": False, "code": "x", "tag": "1"})
    assert not agree({"ok": False, "code": "x"}, {"ok": False, "code": "y"})
    assert agree({"ok": True, "n": 300}, {"ok": True, "n": 300.0})
    assert not agree({"ok": True, "n": 1}, {"ok": True, "n": True})
    assert not agree({"ok": True, "a": [1]}, {"ok": True, "a": [1], "b": None})


def test_serve_echoes_tags_and_refuses_what_is_not_a_request() -> None:
    out = io.BytesIO()
    lines = [b'{"tag":"t1","op":"zone","zone":"US/Eastern"}', b"not json", b"[1]", b'{"tag":7,"op":"nope"}']
    serve(io.BytesIO(b"\n".join(lines) + b"\n\n"), out)
    answers = [json.loads(line) for line in out.getvalue().splitlines()]
    assert answers[0] == {"tag": "t1", "ok": True, "zone": "America/New_York"}
    assert [(a["tag"], a["ok"], a["code"]) for a in answers[1:]] == [
        (None, False, "bad_request"),
        (None, False, "bad_request"),
        (None, False, "bad_request"),  # a tag is a string: any other is refused, with tag null
    ]
    assert answers[3]["message"] == "tag must be a string, got a number"


@pytest.mark.parametrize(
    "tag",
    ["1e400", "-1e400", "7" * 5000, "[" * 100_000 + "]" * 100_000, '{"a":' * 100_000 + "1" + "}" * 100_000, "{}"],
)
def test_any_tag_gets_a_json_answer(tag: str) -> None:
    """A tag nested 100,000 deep, past the largest double or of 5,000 digits: the answer is
    still one JSON line (a refusal with tag null), never a crash or `Infinity`."""
    out = io.BytesIO()
    serve(
        io.BytesIO(f'{{"tag":{tag},"op":"zone","zone":"UTC"}}\n{{"tag":"next","op":"zone","zone":"UTC"}}\n'.encode()),
        out,
    )
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert (first["tag"], first["ok"], first["code"]) == (None, False, "bad_request")
    assert second == {"tag": "next", "ok": True, "zone": "UTC"}


def test_a_request_line_past_the_bound_is_refused_without_being_held(monkeypatch: pytest.MonkeyPatch) -> None:
    from replay.conform import transport

    monkeypatch.setattr(transport, "MAX_LINE", 1000)
    out = io.BytesIO()
    long = b'{"tag":"big","op":"zone","zone":"' + b"x" * 5000 + b'"}\n'
    serve(io.BytesIO(long + b'{"tag":"after","op":"zone","zone":"UTC"}\n'), out)
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first == {
        "tag": None,
        "ok": False,
        "code": "bad_request",
        "message": "the request line is longer than 1,000 bytes",
    }
    assert second["tag"] == "after" and second["ok"] is True


def test_a_deep_value_anywhere_in_a_request_gets_a_json_answer() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    for request in (f'{{"tag":"d","op":"decode","change":{deep}}}', f'{{"tag":"d","op":"fold","events":{deep}}}'):
        answer = json.loads(answer_line(request.encode()))
        assert answer["tag"] == "d" and answer["ok"] is False


def test_a_lone_surrogate_travels_as_its_escape() -> None:
    request = {"op": "create", "args": {"prompt": "\ud800 x", "after_seconds": 30}, "now": "2026-08-05T12:00:00.000Z"}
    line = request_line(request, "1")
    assert line.isascii() and "\\ud800" in line
    back = json.loads(answer_line(line.encode()))
    assert back["schedule"]["prompt"] == "\ud800 x"


DOC = Path(__file__).parents[1] / "docs" / "conformance.md"


def doc_examples() -> list[tuple[str, str]]:
    """Every request/answer pair of docs/conformance.md (a json block of two lines)."""
    blocks = re.findall(r"```json\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    return [tuple(b.splitlines()) for b in blocks]  # type: ignore[misc]


def test_every_documented_example_is_what_the_server_answers() -> None:
    examples = doc_examples()
    assert len(examples) >= len(OPERATIONS) and all(len(e) == 2 for e in examples)
    documented = {json.loads(request)["op"] for request, _ in examples}
    assert set(OPERATIONS) <= documented
    for request, expected in examples:
        assert answer_line(request.encode()) == expected, request


def test_the_document_describes_every_operation() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert all(f"### {op}:" in text for op in OPERATIONS)


# --- shrinking -------------------------------------------------------------------------------------


def test_the_after_only_revision_has_no_batch_framing() -> None:
    """The after-only revision (6da32f8abc `domain.ts`) renders one reminder, never a batch: a
    batch framing under after-only is `unsupported` and `conform --profile after-only` does not
    ask one; a single framing it does ask, and the profiles with batches render them."""
    record = {
        "id": "schedule-1",
        "kind": "after",
        "prompt": "p",
        "afterSeconds": 60,
        "scheduledAt": "2026-08-05T12:00:00.000Z",
    }
    batch = [{"schedule": record, "occurrenceAt": record["scheduledAt"]}]
    refused = answer({"op": "framing", "batch": batch, "profile": "after-only"})
    assert refused["ok"] is False and refused["code"] == "unsupported"
    assert refused["message"] == "after-only has no framing/batch"
    assert answer({"op": "framing", "schedule": record, "profile": "after-only"})["ok"] is True
    for profile in ("calendar", "fixed-rate"):
        assert answer({"op": "framing", "batch": batch, "profile": profile})["ok"] is True
    asked = [c for c in all_cases(list(OPERATIONS), 40, 7, "after-only") if c.op == "framing"]
    assert asked and not any("batch" in c.request for c in asked)
    assert any("batch" in c.request for c in all_cases(["framing"], 40, 7, "fixed-rate"))


def test_shrink_drops_events_and_renumbers_what_points_past_them() -> None:
    events = [{"type": "x", "seq": i, "time": i} for i in range(6)]
    request = {"op": "receipt", "events": events, "seedLength": 5, "dispatchSeq": 4}

    def fails(r: dict[str, Any]) -> bool:  # "a dispatch after one event, inside the seed"
        events = r.get("events", [])
        in_order = all(isinstance(e, dict) and e.get("seq") == i for i, e in enumerate(events))
        seq = r.get("dispatchSeq", 0)
        return in_order and seq >= 1 and len(events) > seq and r.get("seedLength", -1) > seq

    small = shrink(request, fails)
    assert small["dispatchSeq"] == 1 and [e.get("seq") for e in small["events"]] == [0, 1]
    assert small["seedLength"] == 2  # moved down with the events before it
    assert not any(fails(r) for r in smaller(small))  # a local minimum


# --- the runner ------------------------------------------------------------------------------------


def test_schedlog_agrees_with_itself_on_every_case() -> None:
    """Acceptance: all fixtures plus 1,000 generated cases per operation, full agreement."""
    code, out = cli("conform", "--exec", SERVER, "--format", "json")
    result = json.loads(out)
    assert code == 0 and result["status"] == "agree" and result["disagreements"] == []
    fixtures = {op: sum(1 for c in fixture_cases() if c.op == op) for op in OPERATIONS}
    assert result["asked"] == {op: fixtures[op] + 1000 for op in OPERATIONS}


BROKEN_PORT_CASES = 100
"""Generated cases per operation each broken port is asked (seed 0, so always the same ones):
every variant is caught within them, and shrinking each disagreement found is most of the
test's time (300 cases took 86 s for the seven, 100 take 47 s)."""


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_each_broken_port_is_found_and_shrunk(name: str) -> None:
    with Implementation(variant(name)) as implementation:
        outcome = run(implementation, all_cases(list(OPERATIONS), BROKEN_PORT_CASES, 0))
    assert outcome.failure is None and outcome.status == 1, name
    assert outcome.disagreements
    smallest = min(outcome.disagreements, key=lambda d: len(d.line))
    assert len(smallest.request.get("events", [])) <= 4
    assert len(smallest.line) <= smallest.original_size
    for d in outcome.disagreements:
        assert not agree(d.expected, d.actual) and d.expected == answer(json.loads(d.line))
    requests = [json.dumps(d.request, sort_keys=True) for d in outcome.disagreements]
    assert len(requests) == len(set(requests)), "a shrunk counterexample is shown once"


BROKEN = {
    "exits": f"{PYTHON} -c 'import sys; sys.stdin.readline(); sys.exit(3)'",
    "not JSON": f"{PYTHON} -c 'import sys\nfor line in sys.stdin: print(\"hello\", flush=True)'",
    "no tag": f'{PYTHON} -c \'import sys\nfor line in sys.stdin: print("{{\\"ok\\": true}}", flush=True)\'',
    "no such program": "/nonexistent/schedlog-port --serve",
}


@pytest.mark.parametrize("how", sorted(BROKEN))
def test_a_protocol_error_is_reported_with_its_request_and_exit_2(how: str) -> None:
    code, out = cli("conform", "--exec", BROKEN[how], "--cases", "1", "--ops", "zone", "--format", "json")
    assert code == 2, out
    if how == "no such program":
        assert "cannot start /nonexistent/schedlog-port" in out
        return
    failure = json.loads(out)["protocolError"]
    request = json.loads(failure["request"])
    assert request["op"] == "zone" and request["tag"] == failure["name"] and failure["detail"]  # tagged with its case


def test_a_silent_implementation_times_out() -> None:
    silent = f"{PYTHON} -c 'import time; time.sleep(30)'"
    code, out = cli("conform", "--exec", silent, "--timeout", "0.5", "--cases", "0", "--ops", "cron")
    assert code == 2 and "no answer within 0.5 s" in out


CHATTY = """
import sys
from replay.conform.transport import answer_line
for line in sys.stdin.buffer:
    sys.stderr.write("noise " * 350_000 + "\\n")
    sys.stderr.flush()
    sys.stdout.write(answer_line(line)[:-1] + " " * (2 << 20) + "}\\n")
    sys.stdout.flush()
"""


def test_an_implementation_writing_megabytes_per_answer_and_to_stderr_is_heard(tmp_path: Path) -> None:
    """2 MB answers (JSON padded with whitespace) and 2 MB of stderr per request: the pipes are
    read in pieces, the answers agree, and what a protocol error would quote of stderr is cut."""
    script = tmp_path / "chatty.py"
    script.write_text(CHATTY)
    with Implementation(f"{PYTHON} {shlex.quote(str(script))}", timeout=60) as chatty:
        for n in range(5):
            request = {"op": "zone", "zone": "US/Eastern"}
            assert chatty.ask(request) == {"tag": str(n + 1), **answer(request)}
    assert chatty.stderr and all(len(line) <= 500 for line in chatty.stderr)


def test_an_implementation_that_never_reads_its_request_times_out() -> None:
    """A request larger than the pipe's buffer to an implementation that never reads: the
    write blocks, and --timeout bounds it (it bounded only the wait for the answer)."""
    deaf = f"{PYTHON} -c 'import time; time.sleep(60)'"
    with Implementation(deaf, timeout=0.5) as implementation, pytest.raises(ProtocolError) as error:
        implementation.ask({"op": "zone", "zone": "x" * (4 << 20)})
    assert "the request was not read within 0.5 s" in str(error.value)


def test_answers_come_in_order_with_requests_ahead_and_an_ask_between_them() -> None:
    """`answers` writes requests ahead of the one awaited; a request asked in between (a shrink)
    gets its own answer, and the answers ahead of it are kept for their turn."""
    requests = [{"op": "zone", "zone": zone} for zone in ("UTC", "Asia/Tokyo", "Nowhere/Else", "US/Eastern") * 25]
    with Implementation(SERVER) as implementation:
        answers = implementation.answers(requests)
        heard = [next(answers) for _ in range(10)]
        between = {"op": "cron", "expr": "*/5 * * * *"}
        assert implementation.ask(between) == {"tag": str(AHEAD + 11), **answer(between)}
        heard += list(answers)
    assert [a.pop("tag") for a in heard] == [str(n) for n in range(1, AHEAD + 11)] + [
        str(n) for n in range(AHEAD + 12, len(requests) + 2)
    ]
    assert heard == [answer(r) for r in requests]
    for doc in (ROOT / "docs" / "conformance.md", ROOT / "docs" / "conform.md"):
        assert f"up to {AHEAD} requests ahead" in " ".join(doc.read_text().split()), doc.name


PORT = """
import sys, time
from replay.conform.transport import answer_line
for n, line in enumerate(sys.stdin.buffer):
    {before}
    sys.stdout.write(answer_line(line) + "\\n")
    sys.stdout.flush()
"""


def port(tmp_path: Path, before: str) -> str:
    """The command of a port in Python that answers as schedlog does, running `before` (one
    line; `n` the request's index) before each answer."""
    script = tmp_path / "port.py"
    script.write_text(PORT.format(before=before))
    return f"{PYTHON} {shlex.quote(str(script))}"


def test_a_port_that_exits_with_requests_ahead_fails_at_its_first_unanswered_case(tmp_path: Path) -> None:
    cases = all_cases(["zone"], 50, 0)
    with Implementation(port(tmp_path, "n == 3 and sys.exit(4)")) as implementation:
        outcome = run(implementation, cases)
    assert outcome.failure is not None and outcome.failure.name == cases[3].name
    assert "exited without answering (exit status 4)" in outcome.failure.detail
    assert sum(outcome.asked.values()) == 3 and outcome.status == 2


def test_the_timeout_bounds_each_answer_not_the_requests_ahead(tmp_path: Path) -> None:
    """25 answers 0.1 s apart under a 2 s timeout: more than 2 s in all, every one in time."""
    requests = [{"op": "zone", "zone": "UTC"}] * 25
    with Implementation(port(tmp_path, "time.sleep(0.1)"), timeout=2) as implementation:
        assert [a["ok"] for a in implementation.answers(requests)] == [True] * 25


def test_a_last_answer_without_a_line_end_is_heard() -> None:
    """An implementation that answers and exits without ending the line: the answer counts."""
    script = 'import sys; sys.stdin.readline(); sys.stdout.write(\'{"tag":"1","ok":true}\')'
    with Implementation(f"{PYTHON} -c {shlex.quote(script)}") as implementation:
        assert implementation.ask({"op": "zone", "zone": "UTC"}) == {"tag": "1", "ok": True}


def test_usage_errors() -> None:
    assert cli("conform")[0] == 2
    assert cli("conform", "--serve", "--exec", "x")[0] == 2
    code, out = cli("conform", "--exec", SERVER, "--ops", "fold,unfold")
    assert code == 2 and "unknown operation(s) unfold" in out


def test_text_json_and_junit_outputs_name_the_disagreement() -> None:
    with Implementation(variant("cron-spelling")) as implementation:
        outcome = run(implementation, all_cases(["cron"], 50, 0))
    text = conform_output.render(outcome, Format.TEXT)
    assert "DISAGREE cron" in text and "reproduce: printf" in text and variant("cron-spelling") in text
    first = json.loads(conform_output.render(outcome, Format.JSON))["disagreements"][0]
    assert first["expected"]["cron"] != first["actual"]["cron"]
    root = ET.fromstring(conform_output.render(outcome, Format.JUNIT))
    assert root.tag == "testsuites"
    failures = root.findall(".//testcase/failure")
    assert len(failures) == 1 and failures[0].get("type") == "disagreement"


def test_the_documented_disagreement_has_the_shape_conform_prints() -> None:
    """docs/conformance.md's "Reading a disagreement" block: its lines' labels, in its order,
    are those of a disagreement conform prints."""
    from tests.documentation import BLOCKS

    (shown,) = [body for _, body, _ in BLOCKS if body.startswith("DISAGREE create ")]
    with Implementation(variant("cron-spelling")) as implementation:
        outcome = run(implementation, all_cases(["cron"], 50, 0))
    printed = conform_output.render(outcome, Format.TEXT).splitlines()
    labels = [line.split(":")[0] if line.startswith("  ") else line.split()[0] for line in shown.splitlines()]
    start = next(n for n, line in enumerate(printed) if line.startswith("DISAGREE "))
    got = [line.split(":")[0] if line.startswith("  ") else line.split()[0] for line in printed[start:]]
    assert got[: len(labels)] == labels, (labels, got)
