"""The live owner (owner.md §5): a disposable projection of the durable log into one timer,
idle-phase claims, reminder followups and dispatch appends.

An explicit state machine over the `Host`. Drive requests collapse into at most one further drive
(§5.3); a drive (§5.5) checkpoints, folds, decides, and either arms the timer, waits for idle, or
claims the idle phase and runs the claimed task (§5.6) that re-folds, re-samples the clock,
queues the framing and appends the dispatches. Every rule comes from `invariant`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from invariant import CronRecord, Folder, ScheduleLogError
from invariant.delivery import Agenda, BatchDue, Decision, DecisionError, OneShotDue, Wait
from invariant.live import resolve_cron
from invariant.profiles import Profile
from replay.sim.host import TIMER_LIMIT_MS, AppendRejected, Host


class _ClaimRejected(Exception):
    """The idle-phase claim was accepted, then rejected asynchronously (escapes the drive)."""


@dataclass
class OwnerState:
    requested: bool = False
    loop_active: bool = False
    timer: int | None = None
    """Monotonic deadline of the one armed wake."""
    idle_wait: bool = False
    stopping: bool = False
    faulted: bool = False


class LiveOwner:
    def __init__(self, host: Host, profile: Profile, is_live: Callable[[], bool]) -> None:
        self.host = host
        self.profile = profile
        self.is_live = is_live
        self.state = OwnerState()
        self._memo: tuple[tuple[int, int, int, bool], Decision | None] | None = None

    # --- drive requests and the loop (§5.3) -----------------------------------------------------

    def request(self) -> None:
        s = self.state
        if s.stopping or s.faulted:
            return
        s.timer = None
        s.requested = True
        if s.loop_active:
            return
        s.loop_active = True
        s.requested = False
        self.host.enqueue(self._run_drive)

    def _run_drive(self) -> None:
        s = self.state
        try:
            self._drive()
        except _ClaimRejected:
            s.faulted = True
        if s.requested and not s.stopping and not s.faulted:
            s.requested = False
            self.host.enqueue(self._run_drive)
        else:
            s.loop_active = False

    def fire_timer(self) -> None:
        """The armed wake's deadline arrived."""
        self.state.timer = None
        self.request()

    def idle_resolved(self) -> None:
        if self.state.idle_wait:
            self.state.idle_wait = False
            self.request()

    def idle_rejected(self) -> None:
        self.state.idle_wait = False

    def dispose(self) -> None:
        """Idempotent: stop, forget requests, cancel the timer, drop a pending idle wait."""
        s = self.state
        s.stopping = True
        s.requested = False
        s.timer = None
        s.idle_wait = False

    # --- one drive (§5.5) --------------------------------------------------------------------------

    def _active(self) -> bool:
        return not self.state.stopping and self.is_live()

    def _fold(self) -> tuple[Folder, Agenda] | None:
        """Re-derive the state from the log (incrementally: the result equals a full fold)."""
        try:
            return self.host.live_fold(self.profile)
        except ScheduleLogError:
            self.state.faulted = True
            return None

    def _decide(self, state: tuple[Folder, Agenda], now: int) -> Decision | None:
        """The pure decision, memoized on its inputs (the claimed task's re-decision usually
        sees the same fold and clock as the drive's first one)."""
        folder, agenda = state
        key = (self.host.fold_generation, folder.count, now, self.host.faults.calendar)
        if self._memo is not None and self._memo[0] == key:
            return self._memo[1]
        try:
            decision: Decision | None = agenda.decide(
                folder.active, folder.last, folder.gate_exhausted, now, self._resolve_cron
            )
        except DecisionError:
            decision = None
        self._memo = (key, decision)
        return decision

    def _resolve_cron(self, record: CronRecord, accepted: int) -> tuple[str, str | None]:
        if self.host.faults.calendar:
            raise ScheduleLogError("live.resolve.calendar", "the current calendar evaluation failed (injected)")
        return resolve_cron(record, accepted)

    def _arm(self, wait: Wait, now: int) -> None:
        if wait.target is not None:
            self.state.timer = self.host.clock.monotonic + min(wait.target - now, TIMER_LIMIT_MS)

    def _drive(self) -> None:
        host = self.host
        self.state.timer = None  # D1
        if not self._active():
            return
        if not host.checkpoint():  # D2: no timer until another request
            return
        if not self._active():  # D3
            return
        folded = self._fold()  # D4
        if folded is None:
            return
        decision = self._decide(folded, host.clock.wall)  # D5
        if decision is None:
            return
        if isinstance(decision, Wait):  # D6
            self._arm(decision, host.clock.wall)
            return
        if host.busy or host.claim_open:  # D7: refused synchronously
            host.effect("claim", outcome="busy")
            if self.is_live() and not self.state.idle_wait:
                self.state.idle_wait = True
                host.effect("wait_idle")
            return
        if host.faults.maintenance > 0:
            host.faults.maintenance -= 1
            host.effect("claim", outcome="rejected")
            raise _ClaimRejected
        host.effect("claim", outcome="claimed")
        host.claim_open = True
        try:
            dispatched = self._task()  # D8
        finally:
            host.claim_open = False
            host.effect("release")
        if not dispatched:  # D9
            return
        if not host.checkpoint():  # D10: dispatches stay pending, no private retry
            return
        if self._active():  # D11
            self.request()

    # --- the claimed task (§5.6) ---------------------------------------------------------------------

    def _task(self) -> bool:
        host = self.host
        faults = host.faults
        if faults.on_claim_jump is not None:
            host.clock.jump(faults.on_claim_jump)
            faults.on_claim_jump = None
        if faults.on_claim_log is not None:
            host.log_event("schedule/change", faults.on_claim_log)
            faults.on_claim_log = None
        if not self._active():  # C1
            return False
        folded = self._fold()  # C2
        if folded is None:
            return False
        now = host.clock.wall
        decision = self._decide(folded, now)  # C3: authoritative
        if decision is None:
            return False
        if isinstance(decision, Wait):
            self._arm(decision, now)
            return False
        assert isinstance(decision, (OneShotDue, BatchDue))
        if faults.framing > 0:  # C4
            faults.framing -= 1
            return False
        text = decision.framing(self.profile)
        if faults.followup > 0:
            faults.followup -= 1
            host.effect("followup_rejected")
            return False
        message = host.follow_up(text)
        for change in decision.changes():  # C5
            try:
                host.append_change(change.to_json(), change)
            except AppendRejected:
                self.state.faulted = True
                self.state.timer = None
                host.deliver(message)  # (queued all the same: the agent reads it)
                return False
        host.deliver(message)
        return True  # C6
