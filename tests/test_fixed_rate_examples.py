"""Every worked example of the fixed-rate profile (profiles.md §7.1), loaded as data: the verdict,
the active ids and the index where the fold stops, under fixed-rate; and the calendar profile's
answer on the same events, given beside each row."""

from __future__ import annotations

from typing import Any

import pytest

from invariant import ScheduleLogError, fold

from .conftest import CONFORMANCE, load_jsonl

EXAMPLES = load_jsonl(CONFORMANCE / "fixed-rate-examples.jsonl")


def test_example_count() -> None:
    assert len(EXAMPLES) == 255
    assert sum(e["expect"] == "ok" for e in EXAMPLES) == 97
    assert {e["profile"] for e in EXAMPLES} == {"fixed-rate"}


def _judge(example: dict[str, Any], profile: str) -> tuple[str, list[str] | None, int | None]:
    try:
        folded = fold(example["events"], example["seedLength"], profile)
    except ScheduleLogError as err:
        return "corrupt", None, err.index
    return "ok", [r.id for r in folded.active], None


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_fixed_rate_example(example: dict[str, Any]) -> None:
    verdict, active, index = _judge(example, "fixed-rate")
    assert verdict == example["expect"]
    if verdict == "ok":
        assert active == example["active"]
    else:
        assert index == example["index"]


@pytest.mark.parametrize("example", EXAMPLES, ids=[e["name"] for e in EXAMPLES])
def test_calendar_answer_beside_each_example(example: dict[str, Any]) -> None:
    verdict, active, _ = _judge(example, "calendar")
    assert verdict == example["calendar"]
    if verdict == "ok" and example["expect"] == "ok":
        assert active == example.get("calendar_active", example["active"])


def test_a_title_survives_the_fold_and_writes_back() -> None:
    titled = next(e for e in EXAMPLES if e["name"] == "title-60-astral-is-120-units")
    (record,) = fold(titled["events"], 0, "fixed-rate").active
    assert record.title is not None and len(record.title) == 60  # 60 astral characters: 120 UTF-16 units
    assert record.to_json() == titled["events"][0]["data"]["schedule"]


@pytest.mark.parametrize("profile", ["calendar", "after-only"])
def test_only_fixed_rate_records_carry_a_title(profile: str) -> None:
    titled = next(e for e in EXAMPLES if e["name"] == "title-at-120-units")
    with pytest.raises(ScheduleLogError) as info:
        fold(titled["events"], 0, profile)
    assert info.value.rule in ("decode.record.keys", "decode.record.kind")
