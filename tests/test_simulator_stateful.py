"""Hypothesis state machine over the simulator: the owner's invariants hold after every step."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from invariant import fold, format_instant
from invariant.profiles import AFTER_ONLY, CALENDAR, Profile
from replay.sim.fuzz import START, ZONES, check, settle
from replay.sim.simulator import Scenario, Simulation

DELAYS = st.sampled_from([1, 5, 30, 300, 3600, 86400])
MOVES = st.sampled_from([0, 1_000, 60_000, 299_999, 300_000, 3_600_000, 86_400_000])


class OwnerMachine(RuleBasedStateMachine):
    profile: Profile = CALENDAR

    def __init__(self) -> None:
        super().__init__()
        self.sim = Simulation(Scenario("stateful", START, ()), self.profile)
        self.now = START
        self.faulty = False
        self.step("start")

    def step(self, verb: str, **args: Any) -> None:
        self.sim.step({"at": format_instant(self.now), "do": verb, "args": args})

    @rule(seconds=DELAYS, prompt=st.sampled_from(["check logs", "  padded  ", "x\ny"]))
    def create_after(self, seconds: int, prompt: str) -> None:
        self.step("create", prompt=prompt, after_seconds=seconds)

    @rule(seconds=st.sampled_from([300, 600, 3600, 86400]))
    def create_every(self, seconds: int) -> None:
        self.step("create", prompt="metrics", every_seconds=seconds)

    @rule(cron=st.sampled_from(["0 * * * *", "*/30 * * * *", "0 9 * * *", "30 2 * * 0"]), zone=st.sampled_from(ZONES))
    def create_cron(self, cron: str, zone: str) -> None:
        self.step("create", prompt="calendar", cron=cron, time_zone=zone)

    @rule(offset=st.sampled_from([-1_000, 0, 1_000, 3_600_000]))
    def create_at(self, offset: int) -> None:
        self.step("create", prompt="at", at=format_instant(self.now + offset))

    @rule(
        args=st.sampled_from(
            [{"prompt": " "}, {"prompt": "x", "after_seconds": 0}, {"prompt": "x", "every_seconds": 299}]
        )
    )
    def create_invalid(self, args: dict[str, Any]) -> None:
        self.step("create", **args)

    @rule()
    def list_matches_the_fold(self) -> None:
        before = len(self.sim.host.events)  # the list's transaction runs first, on this log
        self.step("list")
        value = self.sim.results[-1]
        if isinstance(value, list):
            active = fold(self.sim.host.events[:before], self.sim.host.seed_length, self.profile).active
            assert [v["id"] for v in value] == [r.id for r in active]

    @rule(n=st.integers(1, 6))
    def delete(self, n: int) -> None:
        self.step("delete", id=f"schedule-{n}")

    @rule(ms=MOVES)
    def advance(self, ms: int) -> None:
        self.now += ms
        self.step("advance")

    @rule(ms=st.sampled_from([-3_600_000, -60_000, 60_000, 40 * 86_400_000]))
    def jump(self, ms: int) -> None:
        self.step("jump", to=format_instant(self.now + ms))
        self.now += ms

    @rule()
    def busy(self) -> None:
        self.step("busy")

    @rule()
    def idle(self) -> None:
        self.step("idle")

    @rule()
    def drive(self) -> None:
        self.step("drive")

    @rule(outcome=st.sampled_from(["reject", "none"]))
    def flush_fails(self, outcome: str) -> None:
        self.faulty = True
        self.step("flush_outcomes", outcomes=[outcome])

    @rule(verb=st.sampled_from(["fail_followup", "fail_framing", "fail_maintenance"]))
    def delivery_fault(self, verb: str) -> None:
        self.faulty = True
        self.step(verb, times=1)

    @rule(operation=st.sampled_from(["create", "delete", "dispatch"]))
    def append_fault(self, operation: str) -> None:
        self.faulty = True
        self.step("fail_append", operation=operation)

    @rule(lose=st.booleans())
    def restart(self, lose: bool) -> None:
        self.faulty |= lose
        self.step("restart", lose_unflushed=lose)

    @invariant()
    def the_log_folds_and_the_cached_fold_agrees(self) -> None:
        host = self.sim.host
        assert host.fold(self.profile) == fold(host.events, host.seed_length, self.profile)

    @invariant()
    def never_early_and_gate_spacing(self) -> None:
        assert check(self.sim.result(), self.sim.host.seed_length, profile=self.profile) == []

    @precondition(lambda self: not self.faulty)
    @rule()
    def without_faults_every_due_one_shot_fires_exactly_once(self) -> None:
        scenario = settle(Scenario("stateful", START, tuple(self._replayable())))
        tail = scenario.steps[-2:]
        for step in tail:
            self.sim.step(step)
        self.now = max(self.now, self.sim.host.clock.wall)
        assert check(self.sim.result(), self.sim.host.seed_length, faults_free=True, profile=self.profile) == []

    def _replayable(self) -> list[dict[str, Any]]:
        return [{"at": format_instant(self.sim.host.clock.wall), "do": "advance", "args": {}}]


TestOwnerMachine = OwnerMachine.TestCase
TestOwnerMachine.settings = settings(
    max_examples=60, stateful_step_count=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


class AfterOnlyOwnerMachine(OwnerMachine):
    """The same steps under the after-only revision (seed 001): the kinds it lacks are refused
    calls, and its log must fold under that revision's own decoder."""

    profile = AFTER_ONLY


TestAfterOnlyOwnerMachine = AfterOnlyOwnerMachine.TestCase
TestAfterOnlyOwnerMachine.settings = TestOwnerMachine.settings
