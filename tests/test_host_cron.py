"""The Host cron grammar and its canonical spelling (host.md §4, §4.1): every row of
host-cron-examples.jsonl gives the Host's answer, directly and through a store; properties
hold the canonical spelling to be a fixed point with the same values and day matching."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fixtures.host.stores import store, task
from invariant.hostcron import FIELDS, HostCronError, canonical, parse_host_cron
from invariant.hoststore import store_findings
from replay.sources.discover import STORE_NAME

from .conftest import CONFORMANCE, load_jsonl

EXAMPLES = load_jsonl(CONFORMANCE / "host-cron-examples.jsonl")


def test_the_vector_file_holds_every_kind_of_answer() -> None:
    assert len(EXAMPLES) == 992
    kinds = {(e["valid"], e["stored"]) for e in EXAMPLES}
    assert kinds == {(True, True), (True, False), (False, False)}


def answer(expression: str) -> dict[str, Any]:
    """What the grammar and the canonical spelling say, in the vector file's terms."""
    try:
        cron = parse_host_cron(expression)
        spelled = canonical(cron)
    except HostCronError:
        return {"valid": False, "canonical": None, "stored": False}
    return {
        "valid": True,
        "canonical": spelled,
        "stored": spelled == expression,
        "values": [sorted(v) for v in cron.values],
        "starLed": {"dayOfMonth": cron.star[2], "dayOfWeek": cron.star[4]},
    }


@pytest.mark.parametrize("row", EXAMPLES, ids=[e["expression"] for e in EXAMPLES])
def test_each_example_gives_the_hosts_answer(row: dict[str, Any]) -> None:
    assert answer(row["expression"]) == {k: v for k, v in row.items() if k != "expression"}


def cron_store(expression: str) -> dict[str, Any]:
    value = task("cron")
    value["record"]["expression"] = expression
    return store(value)


@pytest.mark.parametrize("row", EXAMPLES, ids=[e["expression"] for e in EXAMPLES])
def test_each_example_through_a_store(row: dict[str, Any]) -> None:
    """`stored` rows open; the rest are refused, with the canonical spelling named when valid."""
    found = store_findings(cron_store(row["expression"]))
    if row["stored"]:
        assert found == []
        return
    (finding,) = found
    assert finding.pointer == "/tables/tasks/schedule-a/record/expression"
    if row["valid"]:
        assert finding.code == "host.cron.canonical"
        assert f"the Host stores {row['canonical']!r}" in finding.message
    else:
        assert finding.code == "host.cron.grammar"


def test_verify_names_the_spelling_to_write(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from replay.cli import main

    path = tmp_path / STORE_NAME
    path.write_text(json.dumps(cron_store("0 9 * * 1,2,3,4,5")))
    result = CliRunner().invoke(main, ["verify", str(path)])
    assert result.exit_code == 1
    assert "stored '0 9 * * 1,2,3,4,5'; the Host stores '0 9 * * 1-5'" in result.output


# --- properties ----------------------------------------------------------------------------------


@st.composite
def fields(draw: st.DrawFn, lo: int, hi: int) -> str:
    """One field of the grammar: a comma list of `*`, `n`, `a-b`, `*/n`, `a-b/n`."""
    items = []
    for _ in range(draw(st.integers(1, 4))):
        a, b = sorted(draw(st.tuples(st.integers(lo, hi), st.integers(lo, hi))))
        step = draw(st.integers(1, hi - lo + 2))
        items.append(draw(st.sampled_from(["*", f"*/{step}", str(a), f"{a}-{b}", f"{a}-{b}/{step}"])))
    return ",".join(items)


EXPRESSIONS = st.tuples(*(fields(lo, hi) for _, lo, hi in FIELDS)).map(" ".join)


@settings(max_examples=500, deadline=None)
@given(EXPRESSIONS)
@example("* * 1,*/2 * *")
@example("5,* * * * */8")
@example("*/30,20,40 * * * 5-7")
def test_the_canonical_spelling_is_a_fixed_point_with_the_same_meaning(expression: str) -> None:
    cron = parse_host_cron(expression)
    spelled = canonical(cron)
    again = parse_host_cron(spelled)
    assert canonical(again) == spelled  # stored as canonical, it opens
    assert again.values == cron.values
    assert (again.star[2], again.star[4]) == (cron.star[2], cron.star[4])  # the same day matching
    assert store_findings(cron_store(spelled)) == []
