"""Property: the change structs (msgspec, checked in C: replay.judge.fastchanges) decode
exactly what the strict decoder (invariant.changes) decodes; what they leave, it decodes."""

from __future__ import annotations

import copy
import json

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from invariant.changes import decode_change
from invariant.errors import ScheduleLogError
from invariant.profiles import PROFILES
from replay.judge.fastchanges import Structs, decode_change_fast, structured_change

from .test_schema_equivalence import SETTINGS, payloads


def _outcome(decode: object, value: object, profile: str) -> object:
    try:
        return decode(value, profile)  # type: ignore[operator]
    except ScheduleLogError as err:
        return (err.rule, err.message, err.pointer)


@pytest.mark.parametrize("profile", sorted(PROFILES))
@SETTINGS
@given(value=payloads())
def test_the_structs_take_only_what_the_decoder_takes(profile: str, value: object) -> None:
    """What the structs give is what the strict decoder gives; None only where it refuses or
    reads a JavaScript number the structs do not (`300.0`): the checked path and the reader's
    JSON values (msgspec's, from the line's bytes) alike."""
    for seen in (value, _through_json(value)):
        got = structured_change(seen, PROFILES[profile])
        exact = _outcome(decode_change, seen, profile)
        assert got is None or got == exact
        assert _outcome(decode_change_fast, seen, PROFILES[profile]) == exact  # (the judge's decoder)


def _through_json(value: object) -> object:
    """`value` as the reader holds it: written as JSON, decoded by msgspec."""
    return msgspec.json.decode(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))


WRITTEN = {
    "one-shot": {"version": 1, "operation": "dispatch", "id": "schedule-1"},
    "every": {"version": 1, "operation": "dispatch", "id": "s", "acceptedAt": "2026-08-05T10:00:00.000Z"},
    "cron": {
        "version": 1,
        "operation": "dispatch",
        "id": "s",
        "occurrenceAt": "2026-08-05T10:00:00.000Z",
        "acceptedAt": "2026-08-05T10:00:01.000Z",
        "nextScheduledAt": "2026-08-06T10:00:00.000Z",
    },
    "delete": {"version": 1, "operation": "delete", "id": "schedule-1"},
    "after": {
        "version": 1,
        "operation": "create",
        "schedule": {
            "id": "schedule-1",
            "kind": "after",
            "prompt": "stretch",
            "afterSeconds": 600,
            "scheduledAt": "2026-08-05T10:10:00.000Z",
        },
    },
    "every create, titled": {
        "version": 1,
        "operation": "create",
        "schedule": {
            "id": "schedule-2",
            "kind": "every",
            "prompt": "check the build",
            "everySeconds": 300,
            "scheduledAt": "2026-08-05T10:05:00.000Z",
            "title": "Build",
        },
    },
}


@pytest.mark.parametrize("name", sorted(WRITTEN))
def test_what_the_harness_writes_takes_the_structs(name: str) -> None:
    """Each shape the released vocabularies write is decoded by the structs (not left to the
    strict decoder), to the strict decoder's value."""
    value = WRITTEN[name]
    profile = "fixed-rate" if "titled" in name else "calendar"
    got = structured_change(value, PROFILES[profile])
    assert got is not None
    assert got == decode_change(value, profile)


@pytest.mark.parametrize(
    ("profile", "value"),
    [
        ("after-only", WRITTEN["cron"]),  # a shape the profile has not
        ("calendar", WRITTEN["every create, titled"]),  # a title outside the fixed-rate vocabulary
        ("calendar", {**WRITTEN["one-shot"], "version": 1.0}),  # JavaScript's 1.0 is 1: the strict path reads it
        ("calendar", {**WRITTEN["one-shot"], "version": True}),
        ("calendar", {**WRITTEN["one-shot"], "acceptedAt": None}),  # optional means absent, not null
        ("calendar", {**WRITTEN["one-shot"], "id": " padded"}),
    ],
)
def test_the_structs_leave_the_rest_to_the_strict_decoder(profile: str, value: object) -> None:
    assert structured_change(value, PROFILES[profile]) is None


LONE = st.text(st.characters(categories=["Cs"]), min_size=1, max_size=2)
"""Lone surrogates: JSON.parse keeps them (a `\\ud800` escape), and they have no UTF-8 form."""


@st.composite
def haunted(draw: st.DrawFn) -> object:
    """A payload with a lone surrogate somewhere: in a string value, in a key, or deep inside."""
    value = copy.deepcopy(draw(payloads()))  # (a drawn value is hypothesis's: changed here, it is a copy)
    if not isinstance(value, dict):
        return value
    target = value.get("schedule") if isinstance(value.get("schedule"), dict) and draw(st.booleans()) else value
    where = draw(st.sampled_from(["value", "key", "nested"]))
    name = draw(st.sampled_from(sorted(target) or ["id"]))
    if where == "value":
        target[name] = draw(LONE) + draw(st.sampled_from(["", "x"]))
    elif where == "key":
        target[draw(LONE)] = "x"
    else:
        target[name] = [[{draw(LONE): draw(LONE)}]]
    return value


@pytest.mark.parametrize("profile", sorted(PROFILES))
@SETTINGS
@given(value=haunted())
def test_a_lone_surrogate_is_left_to_the_strict_decoder(profile: str, value: object) -> None:
    """Anything msgspec cannot match (a key or value with no UTF-8 form) is the strict decoder's
    to decode: no exception leaves the structs."""
    got = structured_change(value, PROFILES[profile])
    assert got is None or got == _outcome(decode_change, value, profile)


def test_a_value_nested_past_msgspec_is_left_to_the_strict_decoder() -> None:
    deep: object = "x"
    for _ in range(5000):
        deep = [deep]
    value = {**WRITTEN["one-shot"], "id": deep}
    assert structured_change(value, PROFILES["calendar"]) is None


def test_the_judge_decodes_through_the_structs(monkeypatch: pytest.MonkeyPatch) -> None:
    """verify's fold reads each owned change through the structs first (`Folder`'s decode),
    once for the folds of every profile the evidence may choose."""
    from replay.judge.verify import verify_path

    from .conftest import ROOT

    asked = []
    parsed = Structs.parsed

    def counted(self: Structs, value: object) -> object:
        asked.append(value)
        return parsed(self, value)

    monkeypatch.setattr(Structs, "parsed", counted)
    report = verify_path(str(ROOT / "fixtures" / "sessions" / "valid" / "reminders.session.jsonl"))
    assert len(asked) == report.schedule_events == len({id(value) for value in asked})
