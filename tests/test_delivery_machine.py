"""The soft delivery checks as a machine fed one event at a time (invariant.reminders.Deliveries,
issue 64's first streaming part): its state, saved at any event and taken up again, gives the
findings of a whole reading; on simulated logs whose reminder messages were dropped, moved or
edited, every delivery rule fires."""

from __future__ import annotations

import pickle
import random
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from invariant import Folder, get_profile
from invariant.findings import Finding
from invariant.folding import Step
from invariant.reminders import Deliveries, ReminderMessage, delivery_findings, reminder_messages
from replay.sim.fuzz import generate
from replay.sim.simulator import Simulation

PROFILE = get_profile("calendar")


def _damaged(events: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
    """The run's events with some reminder messages dropped, their text edited, or a delivery
    moved before its queue (seqs renumbered: the fold counts events by index)."""
    out: list[dict[str, Any]] = []
    held: list[dict[str, Any]] = []
    for event in events:
        kind = event["type"]
        if kind in ("agent/inbox/spliced", "user/message"):
            roll = rng.random()
            if roll < 0.15:
                continue  # dropped: unqueued, or undelivered
            if roll < 0.25 and kind == "agent/inbox/spliced":
                event = {
                    **event,
                    "data": {**event["data"], "inserted": [_edited(m) for m in event["data"]["inserted"]]},
                }
            if roll < 0.3 and kind == "user/message":
                held.append(event)  # delivered again later, or never
                continue
        out.append(event)
        if held and rng.random() < 0.3:
            out.append(held.pop())
    return [{**e, "seq": n} for n, e in enumerate(out)]


def _edited(message: dict[str, Any]) -> dict[str, Any]:
    content = [{**c, "text": c["text"] + " (edited)"} if c.get("type") == "text" else c for c in message["content"]]
    return {**message, "content": content}


def _read(events: list[dict[str, Any]]) -> tuple[list[Step], dict[int, object], list[ReminderMessage]]:
    folder = Folder(0, PROFILE)
    steps, times, messages = [], {}, []
    for index, event in enumerate(events):
        step = folder.feed(event)
        if step is not None:
            steps.append(step)
            times[index] = event["time"]
        messages.extend(reminder_messages(event, index))
    return steps, times, messages


def _fed(events: list[dict[str, Any]], cut: int) -> list[Finding]:
    """The machine fed the log's events in order, its state pickled and taken up again at `cut`."""
    steps, times, messages = _read(events)
    by_index: dict[int, list[Step | ReminderMessage]] = {}
    for step in steps:
        by_index.setdefault(step.index, []).append(step)
    for message in messages:
        by_index.setdefault(message.index, []).append(message)
    machine = Deliveries(PROFILE)
    for index in sorted(by_index):
        if index == cut:
            machine = pickle.loads(pickle.dumps(machine))
        for item in by_index[index]:
            if isinstance(item, ReminderMessage):
                machine.message(item)
            else:
                machine.step(item, times.get(item.index))
    return machine.finish()


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**6), cut=st.floats(0, 1))
def test_a_state_saved_at_any_event_gives_the_whole_readings_findings(seed: int, cut: float) -> None:
    rng = random.Random(seed)
    events = _damaged(Simulation(generate(seed, 40)).run().events, rng)
    steps, times, messages = _read(events)
    whole = delivery_findings(steps, times, messages, PROFILE)
    assert _fed(events, int(cut * len(events))) == whole


def test_the_damaged_logs_draw_every_delivery_rule() -> None:
    """(so that the property above compares findings of every rule, not empty lists)"""
    seen: Counter[str] = Counter()
    for seed in range(200):
        events = _damaged(Simulation(generate(seed, 40)).run().events, random.Random(seed))
        steps, times, messages = _read(events)
        seen.update(f.code for f in delivery_findings(steps, times, messages, PROFILE))
        assert _fed(events, len(events) // 2) == delivery_findings(steps, times, messages, PROFILE)
    assert {"delivery.unqueued", "delivery.undelivered", "delivery.framing"} <= set(seen), seen
