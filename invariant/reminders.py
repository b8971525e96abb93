"""Did each reminder reach the conversation? The soft delivery checks of profiles.md §2.5, §4.7
and §5.1 steps 4-5, for every profile.

The live owner queues the reminder message (an `agent/inbox/spliced` insertion whose text is the
framing), then appends the dispatch(es) right after; the message becomes the `user/message` of a
later turn, with the same id. None of this is enforced by the reference fold (a crash between
queueing and the dispatch, or a failed append mid-batch, leave legitimate traces), so every
finding here is a warning, never a verdict:

- `delivery.unqueued`: a dispatch with no reminder message queued before it (since the previous
  dispatch): its reminder was never put into the conversation;
- `delivery.framing`: the queued message is not exactly the framing of what was dispatched;
- `delivery.undelivered`: the queued message never appears as a `user/message`;
- `delivery.early`: a dispatch event written before its record was due (one-shot: its target;
  recurring: the batch's `acceptedAt`);
- `delivery.order`: a one-shot dispatched while an earlier one (target, then create order) was
  due; a batch that leaves out a due recurring record, holds one not due, is out of (target,
  create order) order, or was dispatched while a one-shot was due.

Pure: the fold's steps and the reminder messages in, findings out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from .changes import ONE_SHOT_KINDS, CreateChange, DeleteChange, DispatchChange, Record
from .delivery import target_of
from .detect import message_text
from .findings import Finding, Severity
from .folding import Step
from .framing import render_batch_framing, render_framing
from .instant import parse_instant
from .profiles import Profile

FRAMING_HEAD = "[SCHEDULE REMINDER"
RULES = {
    "delivery.unqueued": "a dispatch with no reminder message queued before it",
    "delivery.framing": "the queued reminder message is not exactly the framing of what was dispatched",
    "delivery.undelivered": "the queued reminder message never appears as a user/message",
    "delivery.early": "a dispatch written before its record was due",
    "delivery.order": "a one-shot or a batch dispatched out of (target, create order), or a batch missing a due record",
}
"""The soft delivery rules, by code."""


IDS_SHOWN = 5
"""The ids a message lists of a longer list (a batch of 60 records says the first and how many)."""


def listed_ids(ids: Sequence[str]) -> str:
    """`ids` as a message lists them: all of a short list, else the first IDS_SHOWN and how many."""
    if len(ids) <= IDS_SHOWN + 1:
        return repr(list(ids))
    return f"{repr(list(ids[:IDS_SHOWN]))[:-1]}, ... {len(ids) - IDS_SHOWN} more: {len(ids)} ids]"


@dataclass(frozen=True)
class ReminderMessage:
    """A reminder message seen in the log: queued (an inbox insertion) or delivered (a
    `user/message`), at event `index`."""

    index: int
    queued: bool
    message_id: str | None
    text: str


def delivery_finding(code: str, index: int, message: str) -> Finding:
    """A soft delivery rule the dispatch at event `index` breaks: a warning (the fold accepts the
    log), located at that dispatch's id."""
    return Finding(code, Severity.WARNING, message, pointer="/data/id", index=index)


def reminder_messages(event: Mapping[str, object], index: int) -> Iterator[ReminderMessage]:
    """The reminder messages an event carries: the user messages an inbox splice inserts, or the
    event's own `user/message`, whose text is a reminder framing."""
    data = event.get("data")
    if not isinstance(data, Mapping):
        return
    kind = event.get("type")
    if kind == "agent/inbox/spliced":
        inserted = data.get("inserted")
        messages = [(m, True) for m in inserted if isinstance(m, Mapping)] if isinstance(inserted, list) else []
    elif kind == "user/message":
        messages = [(data, False)]
    else:
        return
    for message, queued in messages:
        text = message_text(message)
        if text is not None and text.startswith(FRAMING_HEAD):
            found = message.get("id")
            yield ReminderMessage(index, queued, found if isinstance(found, str) else None, text)


def _first_difference(expected: str, found: str) -> str:
    for n, (a, b) in enumerate(zip(expected.split("\n"), found.split("\n"), strict=False), start=1):
        if a != b:
            return f"line {n} is {b[:80]!r}, the framing's is {a[:80]!r}"
    return "the framing has {} line(s), the message {}".format(expected.count("\n") + 1, found.count("\n") + 1)


def delivery_findings(
    steps: Iterable[Step],
    times: Mapping[int, object],
    messages: Sequence[ReminderMessage],
    profile: Profile,
) -> list[Finding]:
    """Every soft delivery rule the owned dispatches break (see the module). `steps` are the
    applied fold steps in log order; `times` the events' `time` by index. The steps and the
    messages are fed to a `Deliveries` in log order."""
    machine = Deliveries(profile)
    pending = sorted(messages, key=lambda m: m.index)
    at = 0
    for step in steps:
        while at < len(pending) and pending[at].index < step.index:
            machine.message(pending[at])
            at += 1
        machine.step(step, times.get(step.index))
    for message in pending[at:]:
        machine.message(message)
    return machine.finish()


class Deliveries:
    """The soft delivery rules as a machine fed one event at a time, in log order: each applied
    owned fold step (`step`, with its event's time) and each reminder message (`message`), then
    `finish`ed. What it keeps between two events is what is live: the active records and their
    create order, the dispatches of the group being written and the records as they stood when it
    began, the last reminder queued since the previous group, the groups whose reminder is not
    delivered yet, and the findings so far; so a reading can stop at any event and go on later
    from this state (it pickles) with the findings a whole reading gives."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.active: dict[str, tuple[Record, int]] = {}
        self.order = 0
        self.latest: ReminderMessage | None = None
        """The last reminder queued since the previous group of dispatches."""
        self.latest_delivered = False
        self.group: list[tuple[Step, object, int | None]] = []
        """The dispatches of the group being written, each with its event's time and line."""
        self.group_active: dict[str, tuple[Record, int]] = {}
        self.group_message: ReminderMessage | None = None
        self.group_delivered = False
        self.found: list[Finding] = []
        self.awaiting: list[tuple[ReminderMessage, int, Finding]] = []
        """The `delivery.undelivered` of each group whose reminder has not appeared yet as a
        user/message, with where it stands among the findings."""

    def message(self, message: ReminderMessage) -> None:
        """A reminder message queued or delivered at its event (no dispatch group goes on past it)."""
        self._close()
        if message.queued:
            self.latest, self.latest_delivered = message, False
            return
        if not message.message_id:
            return
        latest = self.latest
        if latest is not None and latest.message_id == message.message_id and latest.index < message.index:
            self.latest_delivered = True
        self.awaiting = [
            a for a in self.awaiting if not (a[0].message_id == message.message_id and a[0].index < message.index)
        ]

    def step(self, step: Step, time: object, line: int | None = None) -> None:
        """An applied owned fold step (a create, a delete or a dispatch), its event's time, and
        the line that holds it (a dispatch's findings are located there)."""
        change = step.change
        if isinstance(change, CreateChange):
            self._close()
            self.order += 1
            self.active[change.record.id] = (change.record, self.order)
            return
        if isinstance(change, DeleteChange):
            self._close()
            self.active.pop(change.id, None)
            return
        assert isinstance(change, DispatchChange)
        accepted = change.accepted_at
        group = self.group
        if not (
            group and accepted is not None and group[-1][0].index + 1 == step.index
            and accepted == group[0][0].change.accepted_at  # type: ignore[union-attr]
        ):  # fmt: skip
            self._close()
            self.group_active = dict(self.active)  # (as the records stood when the group began)
            self.group_message, self.group_delivered = self.latest, self.latest_delivered
            self.latest, self.latest_delivered = None, False
        self.group.append((step, time, line))
        if step.after is None:
            self.active.pop(change.id, None)
        else:
            self.active[step.after.id] = (step.after, self.active[step.after.id][1])
        if accepted is None:  # a one-shot is a group of its own
            self._close()

    def finish(self) -> list[Finding]:
        """The findings of the whole reading (the undelivered reminders now known as such)."""
        self._close()
        found = list(self.found)
        for _, at, finding in reversed(self.awaiting):
            found.insert(at, finding)
        return found

    def _close(self) -> None:
        """Judge the group of dispatches being written, now whole."""
        if not self.group:
            return
        steps = [step for step, _, _ in self.group]
        times = {step.index: time for step, time, _ in self.group}
        found, undelivered = _group_findings(
            steps, self.group_active, times, self.group_message, self.group_delivered, self.profile
        )
        lines = {step.index: line for step, _, line in self.group if line is not None}
        if lines:
            found = [f.at_line(lines.get(f.index)) if f.index is not None else f for f in found]
        if undelivered is not None:
            assert self.group_message is not None
            late = undelivered[1]
            if lines and late.index is not None:
                late = late.at_line(lines.get(late.index))
            self.awaiting.append((self.group_message, len(self.found) + undelivered[0], late))
        self.found += found
        self.group, self.group_active, self.group_message = [], {}, None


def _group_findings(
    group: list[Step],
    active: Mapping[str, tuple[Record, int]],
    times: Mapping[int, object],
    message: ReminderMessage | None,
    delivered: bool,
    profile: Profile,
) -> tuple[list[Finding], tuple[int, Finding] | None]:
    """A group's findings, and (where its reminder was not delivered yet) the `delivery.undelivered`
    finding and where it stands among them, decided once the log is read."""
    first = group[0]
    records = [s.before for s in group if s.before is not None]
    ids = ", ".join(repr(r.id) for r in records)
    batch = first.change.accepted_at is not None  # type: ignore[union-attr]
    found: list[Finding] = []
    undelivered = None
    decided = parse_instant(first.change.accepted_at) if batch else target_of(records[0])  # type: ignore[union-attr]
    if message is None:
        text = f"dispatch of {ids} with no reminder message queued before it: the reminder never reached the session"
        found.append(delivery_finding("delivery.unqueued", first.index, text))
    else:
        if batch:
            expected = render_batch_framing([(s.before, s.occurrence_at or "") for s in group if s.before], profile)
        else:
            expected = render_framing(records[0], profile)
        if message.text != expected:
            text = f"the reminder queued at event {message.index} is not the framing of {ids}: "
            found.append(
                delivery_finding("delivery.framing", first.index, text + _first_difference(expected, message.text))
            )
        if not delivered:
            text = f"the reminder queued at event {message.index} for {ids} never appears as a user/message"
            undelivered = (len(found), delivery_finding("delivery.undelivered", first.index, text))
    for step in group:
        time = times.get(step.index)
        if decided is not None and type(time) is int and time < decided:
            text = f"dispatch of {step.change.id!r} written at {time} ms, before it was due ({decided} ms)"  # type: ignore[union-attr]
            found.append(delivery_finding("delivery.early", step.index, text))
    found += _order_findings(group, records, active, decided, batch)
    return found, undelivered


def _order_findings(
    group: list[Step],
    records: list[Record],
    active: Mapping[str, tuple[Record, int]],
    decided: int | None,
    batch: bool,
) -> list[Finding]:
    index = group[0].index
    one_shots = [(target_of(r), n, r.id) for r, n in active.values() if r.kind in ONE_SHOT_KINDS]
    if not batch:
        mine = (target_of(records[0]), active[records[0].id][1], records[0].id) if records[0].id in active else None
        earlier = [e for e in one_shots if mine is not None and e < mine]
        if earlier:
            text = f"one-shot {records[0].id!r} dispatched while {earlier[0][2]!r} was due earlier"
            return [delivery_finding("delivery.order", index, text)]
        return []
    if decided is None:
        return []
    due = sorted(
        (target_of(r), n, r.id) for r, n in active.values() if r.kind not in ONE_SHOT_KINDS and target_of(r) <= decided
    )
    got = [r.id for r in records]
    found = []
    if got != [i for _, _, i in due]:
        due_ids = listed_ids([i for _, _, i in due])
        text = f"batch holds {listed_ids(got)}, but the records due at acceptedAt were {due_ids} (target, create order)"
        found.append(delivery_finding("delivery.order", index, text))
    pending = [i for t, _, i in sorted(one_shots) if t <= decided]
    if pending:
        found.append(
            delivery_finding("delivery.order", index, f"batch dispatched while one-shot {pending[0]!r} was due")
        )
    return found
