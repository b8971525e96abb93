"""Profile detection (profiles.md §6, formats.md §7): the bundled logs of every profile and format
are judged by their own profile, on named evidence; silent evidence never hides a violation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from invariant.detect import ALL, Clue, choose
from replay.judge.verdicts import Verdict
from replay.judge.verify import verify_path
from replay.reading import Reading
from replay.sources.discover import discover

from .conftest import ROOT

FORMATS = ROOT / "fixtures" / "formats"
EXPECTED: dict[str, dict[str, Any]] = json.loads((FORMATS / "expected.json").read_text())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_format_fixture(name: str) -> None:
    expect = EXPECTED[name]
    report = verify_path(str(FORMATS / name))
    assert report.verdict == expect["verdict"]
    codes = {(f.severity, f.code) for f in report.findings}
    if "profile" in expect:
        assert report.profile is not None
        assert (report.profile.name, report.profile.source) == (expect["profile"], "evidence")
        assert report.profile.evidence  # named
    if "active" in expect:
        assert report.folded is not None and [r.id for r in report.folded.active] == expect["active"]
    if "seedLength" in expect:
        assert report.seed_length == expect["seedLength"]
    for severity in ("error", "warning", "info"):
        key = "finding" if severity == "error" else severity
        if key in expect:
            assert (severity, expect[key]) in codes, codes


def test_a_walk_judges_the_generation_the_runtime_loads() -> None:
    walked = {str(Path(p).relative_to(FORMATS)) for p in discover([str(FORMATS)])}
    assert walked == {name for name, expect in EXPECTED.items() if expect.get("walked", True)}


def test_every_profile_and_both_eras_are_in_the_corpus() -> None:
    judged = {(e["profile"], n.split("/")[1]) for n, e in EXPECTED.items() if "profile" in e}
    assert {("calendar", "v0"), ("after-only", "v0"), ("after-only", "v4"), ("fixed-rate", "v0")} <= judged
    assert any(
        p == "fixed-rate" and n.endswith(".v4.jsonl.zstd") for n, e in EXPECTED.items() if (p := e.get("profile"))
    )


def test_the_fixed_rate_log_is_corrupt_under_calendar() -> None:
    path = str(FORMATS / "fixed-rate" / "v0" / "session.jsonl")
    assert verify_path(path).verdict is Verdict.OK
    calendar = verify_path(path, Reading.of("calendar"))
    assert calendar.verdict is Verdict.CORRUPT and calendar.violation is not None
    assert calendar.violation.rule == "fold.gate"
    assert calendar.profile is not None and calendar.profile.source == "option"


def test_silent_evidence_never_hides_a_violation(tmp_path: Path) -> None:
    """Without the plugin and framing clues, batches 120 s apart are no proof of fixed-rate: the
    strictest possible profile judges, and the report says fixed-rate would accept the log."""
    source = (FORMATS / "fixed-rate" / "v0" / "session.jsonl").read_text().splitlines()
    silent = [line for line in source if "agent/inbox/spliced" not in line and "SCHEDULE REMINDER" not in line]
    # renumber seqs after the dropped lines
    out, seq = [silent[0]], 0
    for line in silent[1:]:
        record = json.loads(line)
        if "seq0" in record:
            record["seq0"] = seq
            seq += len(record["data"]["texts"])
        else:
            record["seq"] = seq
            seq += 1
        out.append(json.dumps(record))
    path = tmp_path / "silent.session.jsonl"
    path.write_text("\n".join(out) + "\n")
    report = verify_path(str(path))
    assert report.verdict is Verdict.CORRUPT and report.violation is not None and report.violation.rule == "fold.gate"
    assert report.profile is not None and report.profile.source == "undecided"
    assert dict(report.profile.disagreement) == {"fixed-rate": Verdict.OK}


clues = st.builds(
    Clue,
    st.sampled_from(["a", "b", "c"]),
    st.frozensets(st.sampled_from(sorted(ALL)), min_size=1),
    st.booleans(),
    st.booleans(),
)


@given(st.lists(clues, max_size=6), st.randoms())
def test_the_choice_does_not_depend_on_the_order_of_the_clues(found: list[Clue], rng: Any) -> None:
    shuffled = list(found)
    rng.shuffle(shuffled)
    one, two = choose(found), choose(shuffled)
    assert (one.profile, one.decided, one.candidates, one.conflicting) == (
        two.profile,
        two.decided,
        two.candidates,
        two.conflicting,
    )
    assert set(one.evidence) == set(two.evidence)


@given(st.lists(clues, max_size=6))
def test_a_decided_choice_is_consistent_with_every_decisive_clue(found: list[Clue]) -> None:
    detection = choose(found)
    if detection.decided:
        assert all(detection.profile.name in c.profiles for c in found if c.decisive)


def _chosen_after(decisive: frozenset[frozenset[str]], version: int | None, more: tuple[frozenset[str], ...]) -> str:
    from invariant.detect import Clue, choose, era_clue

    clues = [Clue("", names) for names in sorted(decisive, key=sorted)] + era_clue(version)
    return choose([*clues, *(Clue("", names) for names in more)]).profile.name


def test_the_profiles_the_evidence_may_still_choose_are_those_any_clues_to_come_reach() -> None:
    """`reachable_choices` (which lets the judge drop the delivery checks of a profile it can no
    longer choose) against every run of up to three more decisive clues, each naming any set of
    profiles: never a choice it misses (a missed one would lose that profile's findings), none
    it invents."""
    from itertools import combinations, product

    from invariant.detect import _EVERY_SET, reachable_choices

    for version in (None, 0, 1, 2, 4):
        for size in range(3):
            for decisive in combinations(_EVERY_SET, size):
                known = frozenset(decisive)
                found = {
                    _chosen_after(known, version, more)
                    for depth in range(4)
                    for more in product(_EVERY_SET, repeat=depth)
                }
                assert reachable_choices(known, version) == found, (known, version)
