"""The due decision: the indexed agenda decides exactly like the plain rule."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from invariant import Folder, fold, parse_instant
from invariant.delivery import Agenda, BatchDue, OneShotDue, Wait, decide
from replay.testing.strategies import GeneratedLog, valid_logs

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _indexed(log: GeneratedLog, nows: list[int]) -> list[object]:
    folder = Folder(log.seed_length)
    agenda = Agenda()
    for event in log.events:
        step = folder.feed(event)
        if step is not None:
            agenda.apply(step)
    return [agenda.decide(folder.active, folder.last, folder.gate_exhausted, now) for now in nows]


@SETTINGS
@given(valid_logs(), st.data())
def test_agenda_decides_like_decide(log: GeneratedLog, data: st.DataObject) -> None:
    """At any instants, in any order, on one agenda: deciding must not disturb the index."""
    folded = fold(log.events, log.seed_length)
    targets = [parse_instant(r.scheduled_at) or 0 for r in folded.active]
    around = [t + d for t in targets for d in (-1, 0, 1)] + [log.model.clock]
    nows = data.draw(st.lists(st.sampled_from(around), min_size=1, max_size=4))
    assert _indexed(log, nows) == [decide(folded, now) for now in nows]


def test_decision_kinds() -> None:
    events = [
        {"type": "schedule/change", "data": {"version": 1, "operation": "create", "schedule": {
            "id": "a", "kind": "after", "prompt": "p", "afterSeconds": 1, "scheduledAt": "2026-08-05T12:00:00.000Z"}}},
        {"type": "schedule/change", "data": {"version": 1, "operation": "create", "schedule": {
            "id": "e", "kind": "every", "prompt": "p", "everySeconds": 300,
            "scheduledAt": "2026-08-05T11:55:00.000Z"}}},
    ]  # fmt: skip
    folded = fold(events)
    noon = parse_instant("2026-08-05T12:00:00.000Z") or 0
    assert isinstance(decide(folded, noon), OneShotDue)
    assert decide(folded, noon - 10 * 60_000) == Wait(noon - 5 * 60_000)
    batch = decide(fold(events[1:]), noon)
    assert isinstance(batch, BatchDue) and batch.members[0].occurrence_at == "2026-08-05T12:00:00.000Z"
