"""Hypothesis properties of the fold: valid logs fold; one targeted corruption is caught."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from invariant import GATE_MS, CronRecord, ScheduleLogError, allocate_id, fold, format_instant, parse_instant
from invariant.changes import DispatchChange, decode_change
from invariant.instant import gate_instant
from invariant.live import candidate_event, check_candidate, resolve_cron, validate_live
from invariant.shapes import DISPATCH_SHAPES
from replay.testing.strategies import GeneratedLog, valid_logs

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(valid_logs())
def test_valid_logs_fold_to_the_model(log: GeneratedLog) -> None:
    folded = fold(log.events, log.seed_length)
    exhausted = log.model.last is not None and log.model.last + GATE_MS > 253402300799999
    expected = [sid for sid, r in log.model.active.items() if not exhausted or r["kind"] in ("after", "at")]
    assert [r.id for r in folded.active] == expected
    assert list(folded.seen_ids) == log.model.seen
    assert folded.last_recurring_accepted_at == (None if log.model.last is None else format_instant(log.model.last))
    assert allocate_id(folded) not in folded.seen_ids


@SETTINGS
@given(valid_logs())
def test_records_round_trip_through_to_json(log: GeneratedLog) -> None:
    folded = fold(log.events, log.seed_length)
    for record in folded.active:
        assert log.model.active[record.id] == record.to_json()


def _owned_changes(log: GeneratedLog, op: str | None = None) -> list[int]:
    return [
        i
        for i, e in enumerate(log.events)
        if i >= log.seed_length and e["type"] == "schedule/change" and (op is None or e["data"]["operation"] == op)
    ]


def _expect(events: list[dict[str, Any]], seed: int, rule: str, index: int) -> None:
    with pytest.raises(ScheduleLogError) as info:
        fold(events, seed)
    assert (info.value.rule, info.value.index) == (rule, index)


def _append(log: GeneratedLog, data: dict[str, Any]) -> tuple[list[dict[str, Any]], int]:
    events = copy.deepcopy(log.events)
    events.append({"type": "schedule/change", "seq": len(events), "time": 0, "data": {"version": 1, **data}})
    return events, len(events) - 1


@SETTINGS
@given(valid_logs(), st.data())
def test_reused_id_is_caught(log: GeneratedLog, data: st.DataObject) -> None:
    assume(log.model.seen)
    sid = data.draw(st.sampled_from(log.model.seen))
    record = {"id": sid, "kind": "at", "prompt": "again", "scheduledAt": "2030-01-01T00:00:00.000Z"}
    events, at = _append(log, {"operation": "create", "schedule": record})
    _expect(events, log.seed_length, "fold.create.reuse", at)


@SETTINGS
@given(valid_logs(), st.data(), st.sampled_from(["delete", "dispatch"]))
def test_transition_on_inactive_id_is_caught(log: GeneratedLog, data: st.DataObject, op: str) -> None:
    sid = data.draw(st.sampled_from([*log.model.ended, "never-created"]))
    events, at = _append(log, {"operation": op, "id": sid})
    _expect(events, log.seed_length, f"fold.{op}.inactive", at)


@SETTINGS
@given(valid_logs(), st.data())
def test_wrong_dispatch_shape_for_kind_is_caught(log: GeneratedLog, data: st.DataObject) -> None:
    assume(log.model.active)
    sid = data.draw(st.sampled_from(sorted(log.model.active)))
    kind = log.model.active[sid]["kind"]
    shapes = {
        "after": {"acceptedAt": "2030-01-01T00:00:00.000Z"},
        "at": {"occurrenceAt": "2030-01-01T00:00:00.000Z", "acceptedAt": "2030-01-01T00:00:00.000Z"},
        "every": {},
        "cron": {"acceptedAt": "2030-01-01T00:00:00.000Z"},
    }
    events, at = _append(log, {"operation": "dispatch", "id": sid, **shapes[kind]})
    _expect(events, log.seed_length, "fold.dispatch.kind-shape", at)


@SETTINGS
@given(valid_logs(), st.data())
def test_every_dispatch_before_target_is_caught(log: GeneratedLog, data: st.DataObject) -> None:
    every = [r for r in log.model.active.values() if r["kind"] == "every"]
    assume(every)
    rec = data.draw(st.sampled_from(every))
    target = parse_instant(rec["scheduledAt"])
    assert target is not None
    accepted = target - data.draw(st.integers(1, 10**6))
    events, at = _append(log, {"operation": "dispatch", "id": rec["id"], "acceptedAt": format_instant(accepted)})
    _expect(events, log.seed_length, "fold.every.arith", at)


@SETTINGS
@given(valid_logs(), st.data())
def test_batch_inside_the_gate_is_caught(log: GeneratedLog, data: st.DataObject) -> None:
    events = copy.deepcopy(log.events)

    def add(payload: dict[str, Any]) -> None:
        events.append({"type": "schedule/change", "seq": len(events), "time": 0, "data": {"version": 1, **payload}})

    def every(sid: str, target: int) -> dict[str, Any]:
        rec = {"id": sid, "kind": "every", "prompt": "p", "everySeconds": 300, "scheduledAt": format_instant(target)}
        return {"operation": "create", "schedule": rec}

    last = log.model.last
    if last is None:  # open a first batch so that there is a gate to break
        last = log.model.clock
        add(every("gate-opener", last))
        add({"operation": "dispatch", "id": "gate-opener", "acceptedAt": format_instant(last)})
    add(every("gate-victim", last - data.draw(st.integers(0, 10**9))))
    accepted = data.draw(st.integers(last + 1, last + GATE_MS - 1))
    add({"operation": "dispatch", "id": "gate-victim", "acceptedAt": format_instant(accepted)})
    _expect(events, log.seed_length, "fold.gate", len(events) - 1)


MUTATIONS = {
    "extra-key": lambda d: d.update(extra=True),
    "version-2": lambda d: d.update(version=2),
    "version-string": lambda d: d.update(version="1"),
    "operation-unknown": lambda d: d.update(operation="pause"),
}
RULE_OF = {"version-2": "decode.version", "version-string": "decode.version", "operation-unknown": "decode.operation"}
EXTRA_KEY_RULE = {"create": "decode.create.keys", "delete": "decode.delete.keys", "dispatch": "decode.dispatch.shape"}


@SETTINGS
@given(valid_logs(), st.data(), st.sampled_from(sorted(MUTATIONS)))
def test_mutated_owned_event_is_caught_where_it_is(log: GeneratedLog, data: st.DataObject, mutation: str) -> None:
    owned = _owned_changes(log)
    assume(owned)
    at = data.draw(st.sampled_from(owned))
    events = copy.deepcopy(log.events)
    payload = events[at]["data"]
    op = payload["operation"]
    MUTATIONS[mutation](payload)
    _expect(events, log.seed_length, RULE_OF.get(mutation, EXTRA_KEY_RULE[op]), at)


RECORD_MUTATIONS = {
    "padded-prompt": ("prompt", lambda v: v + " ", "decode.prompt"),
    "bom-prompt": ("prompt", lambda v: "\ufeff" + v, "decode.prompt.js-whitespace"),
    "empty-id": ("id", lambda v: "", "decode.id"),
    "no-millis": ("scheduledAt", lambda v: v[:-5] + "Z", "decode.instant"),
    "extra-record-key": ("anchor", lambda v: "x", "decode.record.keys"),
}


@SETTINGS
@given(valid_logs(), st.data(), st.sampled_from(sorted(RECORD_MUTATIONS)))
def test_mutated_record_is_caught(log: GeneratedLog, data: st.DataObject, mutation: str) -> None:
    creates = _owned_changes(log, "create")
    assume(creates)
    at = data.draw(st.sampled_from(creates))
    events = copy.deepcopy(log.events)
    record = events[at]["data"]["schedule"]
    key, change, rule = RECORD_MUTATIONS[mutation]
    record[key] = change(record.get(key, ""))
    _expect(events, log.seed_length, rule, at)


@SETTINGS
@given(valid_logs(fork=True), st.data())
def test_inherited_prefix_is_never_validated(log: GeneratedLog, data: st.DataObject) -> None:
    assume(log.seed_length > 0)
    events = copy.deepcopy(log.events)
    at = data.draw(st.integers(0, log.seed_length - 1))
    events[at] = {"type": "schedule/change", "seq": at, "time": 0, "data": "garbage"}
    assert [r.id for r in fold(events, log.seed_length).active] == [
        r.id for r in fold(log.events, log.seed_length).active
    ]


@SETTINGS
@given(valid_logs(), st.integers(-5, 5))
def test_seed_length_out_of_bounds_is_caught(log: GeneratedLog, delta: int) -> None:
    seed = len(log.events) + 1 + abs(delta) if delta >= 0 else delta
    with pytest.raises(ScheduleLogError) as info:
        fold(log.events, seed)
    assert info.value.rule == "fold.seed.bounds" and info.value.index is None


def _cron_dispatch(data: st.DataObject, log: GeneratedLog, record: dict[str, Any]) -> dict[str, Any]:
    """A dispatch of an active cron record: the calendar decision, or one minute off it."""
    target = parse_instant(record["scheduledAt"])
    assert target is not None
    floor = target if log.model.last is None else max(target, log.model.last + GATE_MS)
    accepted = floor + data.draw(st.integers(0, 40 * 86_400_000))
    folded = fold(log.events, log.seed_length).find(record["id"])
    assume(isinstance(folded, CronRecord))  # not when the gate is exhausted
    occurrence, following = resolve_cron(folded, accepted)
    payload = {"version": 1, "operation": "dispatch", "id": record["id"], "occurrenceAt": occurrence}
    payload |= {"acceptedAt": format_instant(accepted)}
    if following is not None:
        payload["nextScheduledAt"] = following
    off = data.draw(st.sampled_from([None, "occurrenceAt", "nextScheduledAt"]))
    if off in payload:
        payload[off] = format_instant(parse_instant(payload[off]) + 60_000)
    return payload


def _outcome(run: Any) -> object:
    try:
        return run()
    except ScheduleLogError as err:
        return (err.rule, err.index, err.pointer, err.message)


@SETTINGS
@given(valid_logs(fork=None), st.data())
def test_check_candidate_is_the_fold_then_live_validation(log: GeneratedLog, data: st.DataObject) -> None:
    """check_candidate folds once, yet answers as its definition: fold with the candidate, then
    validate_live against the log before it (seedLength anywhere, even over the candidate)."""
    crons = [r for r in log.model.active.values() if r["kind"] == "cron"]
    if crons and data.draw(st.booleans()):
        events, payload = log.events, _cron_dispatch(data, log, data.draw(st.sampled_from(crons)))
    else:
        changes = [i for i, e in enumerate(log.events) if e["type"] == "schedule/change"]
        assume(changes)
        at = data.draw(st.sampled_from(changes))
        events, payload = log.events[:at], log.events[at]["data"]
    at = len(events)
    seed = data.draw(st.sampled_from([0, log.seed_length, at, at + 1, at + 2]))

    def definition() -> object:
        folded = fold([*events, candidate_event(events, payload)], seed)
        validate_live(events, payload, seed)
        return folded

    assert _outcome(lambda: check_candidate(events, payload, seed)) == _outcome(definition)


@SETTINGS
@given(valid_logs(fork=None), st.sampled_from(["after-only", "fixed-rate", "fixed-rate-exact"]), st.data())
def test_check_candidate_only_folds_where_the_companion_only_folds(
    log: GeneratedLog, profile: str, data: st.DataObject
) -> None:
    """The after-only and fixed-rate companions validate an append by folding the log with the
    candidate, nothing more (profiles.md §3.7; the released package's invariant.js): a payload
    the seedLength covers is not read, however malformed."""
    at = data.draw(st.integers(0, len(log.events)))
    events = log.events[:at]
    payload = data.draw(st.sampled_from([*(e["data"] for e in log.events), {}, None, {"version": 2}]))
    seed = data.draw(st.sampled_from([0, log.seed_length, at, at + 1, at + 2]))
    definition = lambda: fold([*events, candidate_event(events, payload)], seed, profile)  # noqa: E731
    assert _outcome(lambda: check_candidate(events, payload, seed, profile)) == _outcome(definition)


@pytest.mark.parametrize(
    ("profile", "verdict"), [("calendar", "decode.version"), ("after-only", None), ("fixed-rate", None)]
)
def test_a_malformed_candidate_the_seed_covers(profile: str, verdict: str | None) -> None:
    """Found by `conform` against the package (check-11-1592): events [], seedLength 1, candidate
    {}. The package's companion folds [candidate] past a seed of 1 and accepts; the calendar
    companion also validates the payload live, and its decode refuses it."""
    outcome = _outcome(lambda: check_candidate([], {}, 1, profile))
    if verdict is None:
        assert not isinstance(outcome, tuple), outcome
        assert outcome == fold([candidate_event([], {})], 1, profile)
    else:
        assert isinstance(outcome, tuple) and outcome[0] == verdict, outcome


@given(
    st.one_of(
        st.integers(-62135596800000, 253402300799999),
        st.integers(0, 10**10).map(lambda m: m * 60_000 - 62135596800000).filter(lambda t: t <= 253402300799999),
    )
)
def test_format_instant_is_to_iso_string(ms: int) -> None:
    """`Date.prototype.toISOString`, from an independent formatter; it parses back exactly."""
    moment = datetime(1, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms + 62135596800000)
    expected = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    assert format_instant(ms) == f"{moment.year:04d}" + expected[expected.index("-") :]
    assert parse_instant(format_instant(ms)) == ms


@pytest.mark.parametrize("ms", [-62135596800001, 253402300800000])
def test_format_instant_refuses_years_outside_1_to_9999(ms: int) -> None:
    with pytest.raises(ValueError, match="outside years"):
        format_instant(ms)


@given(st.integers(-62135596800000, 253402300799999))
def test_gate_instant_is_the_last_batch_plus_300_seconds(last: int) -> None:
    assert gate_instant(None) is None
    assert gate_instant(format_instant(last)) == last + GATE_MS


def test_gate_instant_refuses_a_non_canonical_instant() -> None:
    with pytest.raises(ValueError, match="not a canonical instant"):
        gate_instant("2026-08-05T12:00:00Z")


@pytest.mark.parametrize(
    "change",
    [
        DispatchChange("a"),
        DispatchChange("a", accepted_at="2026-01-01T00:00:00.000Z"),
        DispatchChange("a", "2026-01-01T00:00:00.000Z", "2026-01-01T00:01:00.000Z"),
        DispatchChange("a", "2026-01-01T00:00:00.000Z", "2026-01-01T00:01:00.000Z", "2026-01-01T01:00:00.000Z"),
    ],
)
def test_dispatch_payloads_follow_their_shape_and_decode_back(change: DispatchChange) -> None:
    """Dispatch payloads are written by a per-shape field table: keys in the shape's writer
    order, and the payload decodes to the same change."""
    payload = change.to_json()
    assert list(payload) == [f.name for f in DISPATCH_SHAPES[change.shape].fields]
    assert decode_change(payload) == change


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(
        [
            {"version": 1, "operation": "delete", "id": "schedule-1"},
            {"version": 1, "operation": "dispatch", "id": "schedule-1"},
            {"version": 1, "operation": "create", "schedule": {}},
        ]
    ),
    st.one_of(st.integers(), st.none(), st.tuples(st.integers()), st.booleans()),
)
def test_a_key_that_is_not_a_string_is_a_verdict(payload: dict[object, object], key: object) -> None:
    """A Python caller's payload may hold a key JSON cannot: JavaScript reads object keys as
    strings, so it is an unexpected key like any other, never a TypeError."""
    with pytest.raises(ScheduleLogError, match=r"unexpected key\(s\) |match no dispatch shape") as caught:
        decode_change({**payload, key: 1})
    assert str(key) in str(caught.value)
