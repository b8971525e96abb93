"""The world the simulated owner lives in (owner.md §2, §7): one virtual clock, the session log
with its durable prefix, persistence checkpoints, the agent stub, injected faults, the agent's
transaction queue, and the trace of observable effects.

Everything is explicit state; nothing reads the wall clock or sleeps.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from invariant import SCHEDULE_CHANGE, Change, Folded, Folder, ScheduleLogError, format_instant
from invariant.delivery import Agenda
from invariant.logshapes import appended, reminder_message
from invariant.profiles import Profile

TIMER_LIMIT_MS = 2_147_483_647
"""The largest timer segment (Node's setTimeout maximum); longer waits are split."""


@dataclass
class VirtualClock:
    """Wall clock (what samples read) and monotonic clock (what timers measure), in ms."""

    wall: int
    monotonic: int = 0

    def elapse(self, ms: int) -> None:
        self.wall += ms
        self.monotonic += ms

    def jump(self, to: int) -> None:
        """Set the wall clock only (rollback or forward jump); timers keep their deadlines."""
        self.wall = to


class AppendRejected(Exception):
    """The session refused an append (an injected fault)."""


class AppendLimitReached(Exception):
    """An append beyond the host's `max_appends` (the run would outgrow its bound)."""


class TextLimitReached(Exception):
    """Reminder text beyond the host's `max_text` characters (the run would outgrow its bound)."""


@dataclass
class Faults:
    """Injected failures, each consumed as it fires (owner-scenarios vocabulary)."""

    flush_outcomes: deque[str] = field(default_factory=deque)
    followup: int = 0
    framing: int = 0
    maintenance: int = 0
    append: dict[str, int] = field(default_factory=dict)
    calendar: bool = False
    on_claim_jump: int | None = None
    on_claim_log: dict[str, Any] | None = None


@dataclass
class Host:
    """Session log, persistence, agent stub and trace, shared by the tools and the owner."""

    clock: VirtualClock
    time_zone: str | None = None
    events: list[dict[str, Any]] = field(default_factory=list)
    durable: int = 0
    """Length of the durable prefix of `events`."""
    seed_length: int = 0
    faults: Faults = field(default_factory=Faults)
    appended: list[dict[str, Any]] = field(default_factory=list)
    followups: list[str] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)
    busy: bool = False
    claim_open: bool = False
    queue: deque[Callable[[], None]] = field(default_factory=deque)
    schedule_events: int = 0
    _folder: Folder | None = None
    _agenda: Agenda = field(default_factory=Agenda)
    _decoded: dict[int, Change] = field(default_factory=dict)
    max_appends: int | None = None
    """The most events the tools and the owner may append: the log is held in memory."""
    max_text: int | None = None
    """The most characters of reminder text a run may hold: the prompts of the records created
    and the framed reminders sent (each holds its prompts again). An event count alone does not
    bound memory: a 100 KB prompt dispatched a few thousand times holds gigabytes."""
    text_held: int = 0
    fold_generation: int = 0
    """Counts fold resets; (generation, events folded) identifies one fold state."""
    _folded_error: ScheduleLogError | None = None

    # --- trace --------------------------------------------------------------------------------

    def effect(self, effect: str, **fields: Any) -> None:
        self.trace.append({"at": format_instant(self.clock.wall), "effect": effect, **fields})

    # --- the session log ---------------------------------------------------------------------------

    def log_event(self, type_: str, data: object, ignorable: bool = False) -> None:
        """Pre-existing history: appended durably, observed by nobody; `ignorable` marks it
        `ignorable: true`, as a harness writes an event its readers may not know."""
        durable = self.durable == len(self.events)
        event = appended(type_, len(self.events), self.clock.wall, data)
        if ignorable:
            event["ignorable"] = True
        self.events.append(event)
        self.schedule_events += type_ == SCHEDULE_CHANGE
        if durable:
            self.durable = len(self.events)

    def fold(self, profile: Profile) -> Folded:
        """`fold(events, seedLength)`, computed incrementally (the log only grows between resets).

        Raises ScheduleLogError exactly as the full fold would.
        """
        return self.live_fold(profile)[0].snapshot()  # live_fold has checked the seedLength bound

    def live_fold(self, profile: Profile) -> tuple[Folder, Agenda]:
        """The up-to-date fold state and its agenda, without copying the active set."""
        folder = self._folder
        if folder is None or folder.count > len(self.events) or folder.profile != profile:
            folder = self._folder = Folder(self.seed_length, profile)
            self._agenda = Agenda()
            self.fold_generation += 1
            self._folded_error = None
        if self._folded_error is None:
            try:
                for event in self.events[folder.count :]:
                    change = self._decoded.pop(folder.count, None)  # applied once, then forgotten
                    if change is None or folder.count < folder.seed_length:
                        step = folder.feed(event)
                    else:
                        step = folder.apply(change)
                    if step is not None:
                        self._agenda.apply(step)
            except ScheduleLogError as err:
                self._folded_error = _detached(err)
        if self._folded_error is not None:
            raise _detached(self._folded_error)
        folder.check_bound()
        return folder, self._agenda

    def reset_fold(self) -> None:
        """Forget the cached fold (the log was truncated or re-seeded)."""
        self._folder = None
        self._folded_error = None

    def append_change(self, payload: dict[str, Any], change: Change | None = None) -> None:
        """A `schedule/change` append by the tools or the owner; raise AppendRejected on a fault.

        `change` is the payload already decoded (it must equal `decode_change(payload)`); the
        fold then applies it without decoding it again.
        """
        operation = payload["operation"]
        if self.faults.append.get(operation, 0) > 0:
            self.faults.append[operation] -= 1
            self.effect("append_rejected", change=payload)
            raise AppendRejected(operation)
        if self.max_appends is not None and len(self.appended) >= self.max_appends:
            raise AppendLimitReached(self.max_appends)
        schedule = payload.get("schedule")
        if isinstance(schedule, dict) and isinstance(schedule.get("prompt"), str):
            self._hold(len(schedule["prompt"]))
        if change is not None:
            self._decoded[len(self.events)] = change
        self.events.append({"type": SCHEDULE_CHANGE, "seq": len(self.events), "time": self.clock.wall, "data": payload})
        self.schedule_events += 1
        self.appended.append(payload)
        self.effect("append", index=len(self.appended) - 1)

    def follow_up(self, text: str) -> dict[str, Any]:
        """A framed reminder sent to the agent as a follow-up message: queued in the session's
        inbox as the harness queues it (an `agent/inbox/spliced` insertion of a user message whose
        text is the framing, before the dispatches it announces); the message, to be delivered."""
        self._hold(len(text))
        self.followups.append(text)
        self.effect("followup", index=len(self.followups) - 1)
        message = reminder_message(f"reminder-{len(self.events)}", text)
        inserted = {"target": "next-turn", "start": 0, "inserted": [message]}
        self.events.append(appended("agent/inbox/spliced", len(self.events), self.clock.wall, inserted))
        return message

    def deliver(self, message: dict[str, Any]) -> None:
        """A queued reminder message reaching the conversation: the agent's next turn takes it
        from the inbox as a `user/message` with the same id (invariant/reminders.py)."""
        self.events.append(appended("user/message", len(self.events), self.clock.wall, message))

    def _hold(self, characters: int) -> None:
        self.text_held += characters
        if self.max_text is not None and self.text_held > self.max_text:
            raise TextLimitReached(self.max_text)

    def has_schedule_events(self) -> bool:
        return self.schedule_events > 0

    def lose_unflushed(self) -> None:
        """A crash: events after the durable prefix are gone."""
        lost = self.events[self.durable :]
        del self.events[self.durable :]
        self._decoded = {i: c for i, c in self._decoded.items() if i < self.durable}
        self.schedule_events -= sum(1 for e in lost if e["type"] == SCHEDULE_CHANGE)
        self.reset_fold()

    # --- persistence ---------------------------------------------------------------------------------

    def checkpoint(self) -> bool:
        """One flush: the next queued outcome (default ok); ok makes everything so far durable."""
        outcome = self.faults.flush_outcomes.popleft() if self.faults.flush_outcomes else "ok"
        self.effect("flush", outcome=outcome)
        if outcome == "ok":
            self.durable = len(self.events)
        return outcome == "ok"

    # --- the agent queue -------------------------------------------------------------------------------

    def enqueue(self, transaction: Callable[[], None]) -> None:
        self.queue.append(transaction)

    def run_queue(self) -> None:
        """Run transactions to quiescence; each runs atomically (checkpoints are instant)."""
        while self.queue:
            self.queue.popleft()()


def _detached(error: ScheduleLogError) -> ScheduleLogError:
    """The same verdict as a new exception, with no traceback or context.

    A kept exception that was raised holds frames, and the frames hold the host: a cycle that
    would keep a finished run's log alive until the cyclic collector next ran.
    """
    return ScheduleLogError(error.rule, error.message, index=error.index, pointer=error.pointer)
