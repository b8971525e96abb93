"""The JSON report's finding lists are named by what they hold (issue 67): every finding is in
exactly one of them, the one its code's prefix names, in report order; `formatFindings` keeps
them all, in report order, for one release."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from invariant.findings import Finding, Severity
from replay.judge.report import FINDING_LISTS, finding_lists
from replay.judge.rules import CODES
from replay.judge.verify import verify_path

from .conftest import ROOT

_CODES = st.one_of(st.sampled_from(sorted(CODES)), st.text(max_size=12))
_FINDINGS = st.lists(
    st.builds(Finding, _CODES, st.sampled_from(list(Severity)), st.text(max_size=5)),
    max_size=12,
)
NAMED = {
    "logFindings": ("format.", "sqlite."),
    "transcriptFindings": ("tool.",),
    "deliveryFindings": ("delivery.",),
    "hostFindings": ("host.",),
}


@given(findings=_FINDINGS)
def test_each_finding_is_in_the_one_list_its_code_names(findings: list[Finding]) -> None:
    lists = finding_lists(tuple(findings))
    assert list(lists) == [name for name, _ in FINDING_LISTS]
    placed = sorted(json.dumps(f, sort_keys=True) for fs in lists.values() for f in fs)
    assert placed == sorted(json.dumps(f.to_json(), sort_keys=True) for f in findings)
    for name, held in lists.items():
        codes = [f["code"] for f in held]
        assert codes == [f.code for f in findings if f.to_json() in held]  # (report order)
        for code in codes:
            if name == "scheduleFindings":
                assert not code.startswith(tuple(p for prefixes in NAMED.values() for p in prefixes))
            else:
                assert code.startswith(NAMED[name])


def test_a_report_keeps_format_findings_beside_the_named_lists() -> None:
    report = verify_path(str(ROOT / "fixtures" / "sessions" / "corrupt" / "gate-too-soon.session.jsonl")).to_json()
    assert [f["code"] for f in report["formatFindings"]] == ["delivery.undelivered"]  # type: ignore[index]
    assert report["deliveryFindings"] == report["formatFindings"]
    assert all(report[name] == [] for name, _ in FINDING_LISTS if name != "deliveryFindings")
