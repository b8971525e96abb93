"""The reference live-owner simulator (owner.md §7): scenarios in, appended payloads, followup
texts, tool results, the effect trace and a real session log out.

All time comes from one virtual clock; the simulator jumps from wake to wake and never sleeps or
reads the wall clock, so the same scenario always gives byte-identical output.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from invariant import format_instant, parse_instant
from invariant.jsvalue import js_compact_json
from invariant.profiles import Profile, get_profile
from invariant.readers import READERS
from replay.sim.host import AppendLimitReached, Host, TextLimitReached, VirtualClock
from replay.sim.owner import LiveOwner
from replay.sim.tools import ABORTED, INVALID_ARGUMENTS, UNAVAILABLE, Tools


class ScenarioError(ValueError):
    """A scenario that does not follow the vocabulary (a usage problem)."""


TEXT_PER_EVENT = 1_000
"""Characters of reminder text a run may hold per event its `max_events` allows (prompts are
short: a run within both bounds holds about 2.5 KB per event)."""


class TooManyEvents(ScenarioError):
    """The run appended more events than its limit allows (it holds its whole log in memory)."""


@dataclass(frozen=True)
class Scenario:
    name: str
    start: int
    steps: tuple[Mapping[str, Any], ...]
    time_zone: str | None = None

    @classmethod
    def from_json(cls, obj: object) -> Scenario:
        """Read the owner-scenarios vocabulary (owner.md §0); raise ScenarioError."""
        if not isinstance(obj, Mapping):
            raise ScenarioError("a scenario is a JSON object")
        start = parse_instant(obj.get("start")) if isinstance(obj.get("start"), str) else None
        if start is None:
            raise ScenarioError("start must be a canonical instant")
        steps = obj.get("steps")
        if not isinstance(steps, list) or not all(isinstance(s, Mapping) for s in steps):
            raise ScenarioError("steps must be a list of objects")
        for n, step in enumerate(steps):
            if step.get("do") not in VERBS:
                raise ScenarioError(f"step {n}: unknown verb {step.get('do')!r}")
            if not isinstance(step.get("at"), str) or parse_instant(step["at"]) is None:
                raise ScenarioError(f"step {n}: at must be a canonical instant")
            try:
                _check_args(step["do"], step.get("args"))
                if not _is_bool(step.get("cancelled", False)):
                    raise ScenarioError("cancelled must be a boolean")
            except ScenarioError as err:
                raise ScenarioError(f"step {n} ({step['do']}): {err}") from None
        name = obj.get("name", "scenario")
        if not isinstance(name, str):
            raise ScenarioError("name must be a string")
        session = {} if obj.get("session") is None else obj["session"]  # null: absent
        if not isinstance(session, Mapping) or not isinstance(session.get("timeZone"), str | None):
            raise ScenarioError('session must be an object {"timeZone": ZONE}')
        _check_expect({} if obj.get("expect") is None else obj["expect"])
        return cls(name, start, tuple(steps), session.get("timeZone"))


@dataclass
class SimulationResult:
    appended: list[dict[str, Any]]
    followups: list[str]
    results: list[object]
    trace: list[dict[str, Any]]
    header: dict[str, Any]
    events: list[dict[str, Any]]
    timeline: list[dict[str, Any]] = field(default_factory=list)

    def expectations(self) -> dict[str, object]:
        """The four observables of owner-scenarios.jsonl (`expect`)."""
        return {"appended": self.appended, "followups": self.followups, "results": self.results, "trace": self.trace}

    def session_log(self) -> bytes:
        """The session log (header + events) as the harness writes it: one JSON.stringify per line."""
        return b"".join(self.session_log_lines())

    def session_log_lines(self) -> Iterator[bytes]:
        """`session_log` one line at a time (a long run's log need not be held twice)."""
        for value in (self.header, *self.events):
            yield js_compact_json(value).encode("utf-8") + b"\n"


class _Publication:
    """Whether an owner still belongs to the published agent (its tools are live).

    The simulation clears the flag when it disposes or replaces the owner. The owner reads only
    this flag, never the simulation: a reference back would make every finished run a cycle,
    its whole log freed only when the cyclic collector next ran.
    """

    def __init__(self) -> None:
        self.live = True


class Simulation:
    """One scenario run: the host, the agent's tools and owner, and the step verbs."""

    def __init__(self, scenario: Scenario, profile: str | Profile = "calendar", max_events: int | None = None) -> None:
        """`max_events` bounds the events the tools and the owner may append (TooManyEvents)."""
        self.scenario = scenario
        self.profile = get_profile(profile)
        self.host = Host(
            VirtualClock(scenario.start),
            time_zone=scenario.time_zone,
            max_appends=max_events,
            max_text=None if max_events is None else max(max_events, 1) * TEXT_PER_EVENT,
        )
        self.owner: LiveOwner | None = None
        self.tools: Tools | None = None
        self.subscribed = False
        self.results: list[object] = []
        self.timeline: list[dict[str, Any]] = []
        self._publication = _Publication()

    # --- lifecycle ----------------------------------------------------------------------------------

    def start(self, with_owner: bool = True) -> None:
        self.host.queue.clear()
        self._publication.live = False  # a new agent object replaces the old one's owner
        publication = self._publication = _Publication()
        owner = LiveOwner(self.host, self.profile, lambda: publication.live)
        self.owner = owner
        self.tools = Tools(self.host, self.profile, owner.request)
        self.subscribed = True
        if with_owner:
            owner.request()
        else:
            owner.dispose()

    def dispose(self) -> None:
        self._publication.live = False
        self.tools = None
        self.subscribed = False
        if self.owner is not None:
            self.owner.dispose()

    # --- time (§7.3 step 1) --------------------------------------------------------------------------

    def advance_to(self, at: int) -> None:
        clock = self.host.clock
        while self.owner is not None and self.owner.state.timer is not None:
            deadline = self.owner.state.timer
            if deadline > clock.monotonic + (at - clock.wall):
                break
            clock.elapse(deadline - clock.monotonic)
            self.owner.fire_timer()
            self.host.run_queue()
        clock.elapse(at - clock.wall)

    # --- management calls ---------------------------------------------------------------------------

    def call(self, verb: str, args: Mapping[str, Any], cancelled: bool) -> None:
        """Issue one call: Phase A now, its transaction on the queue (the result slot is fixed now)."""
        slot = len(self.results)
        self.results.append(None)
        tools = self.tools
        if tools is None:
            self.results[slot] = UNAVAILABLE
            return

        def settle(value: object) -> None:
            self.results[slot] = value

        def refuse(value: dict[str, Any]) -> None:
            """A Phase A refusal: the body returned it, and a signal that has fired by then makes
            the host replace it (owner.md §3.1); the host's own argument refusal stays."""
            settle(ABORTED if cancelled and value is not INVALID_ARGUMENTS else value)

        if verb == "create":
            kind = tools.create_phase_a(args)
            if isinstance(kind, dict):
                refuse(kind)
                return
            self.host.enqueue(lambda: settle(tools.create(args, kind, cancelled)))
        elif verb == "list":
            failure = tools.list_phase_a(args)
            if failure is not None:
                refuse(failure)
                return
            self.host.enqueue(lambda: settle(tools.list(cancelled)))
        else:
            failure = tools.delete_phase_a(args)
            if failure is not None:
                refuse(failure)
                return
            self.host.enqueue(lambda: settle(tools.delete(args["id"], cancelled)))

    # --- one step (§7.3) ---------------------------------------------------------------------------------

    def step(self, step: Mapping[str, Any]) -> None:
        at = parse_instant(step["at"])
        assert at is not None
        if at < self.host.clock.wall:
            raise ScenarioError(f"step at {step['at']} is earlier than the wall clock (use jump)")
        before = (len(self.host.trace), len(self.results))
        self.advance_to(at)
        self._apply(step["do"], step.get("args") or {}, bool(step.get("cancelled")))
        self.host.run_queue()
        self.timeline.append(
            {
                "at": step["at"],
                "do": step["do"],
                "args": step.get("args") or {},
                "effects": self.host.trace[before[0] :],
                "results": self.results[before[1] :],
            }
        )

    def _apply(self, verb: str, args: Mapping[str, Any], cancelled: bool) -> None:
        host = self.host
        faults = host.faults
        owner = self.owner
        if verb == "start":
            self.start(args.get("owner", True) is not False)
        elif verb in TOOL_VERBS:
            self.call(verb, args, cancelled)
        elif verb == "parallel":
            for call in args.get("calls", []):
                self.call(call["do"], call.get("args") or {}, bool(call.get("cancelled")))
        elif verb == "advance":
            pass
        elif verb == "jump":
            host.clock.jump(_instant(args["to"]))
        elif verb == "busy":
            host.busy = True
        elif verb == "idle":
            if host.busy:
                host.busy = False
                if self.subscribed and owner is not None and host.has_schedule_events():
                    owner.request()
            if owner is not None:
                owner.idle_resolved()
        elif verb == "idle_wait_fails":
            if owner is not None:
                owner.idle_rejected()
        elif verb == "drive":
            if owner is not None:
                owner.request()
        elif verb == "log":
            tag = args.get("type", "schedule/change")
            # a type the profile's reader would refuse is written marked, so the harness loads it
            host.log_event(tag, args.get("data"), READERS[self.profile.name].refuses_type(tag))
        elif verb == "fork":
            host.seed_length = len(host.events)
            host.reset_fold()
        elif verb == "flush_outcomes":
            faults.flush_outcomes.extend(args.get("outcomes", []))
        elif verb == "fail_followup":
            faults.followup += int(args.get("times", 1))
        elif verb == "fail_framing":
            faults.framing += int(args.get("times", 1))
        elif verb == "fail_append":
            operation = args["operation"]
            faults.append[operation] = faults.append.get(operation, 0) + int(args.get("times", 1))
        elif verb == "fail_maintenance":
            faults.maintenance += int(args.get("times", 1))
        elif verb == "calendar_fails":
            faults.calendar = bool(args.get("enabled", True))
        elif verb == "on_claim_jump":
            faults.on_claim_jump = _instant(args["to"])
        elif verb == "on_claim_log":
            faults.on_claim_log = args["data"]
        elif verb == "dispose":
            self.dispose()
        elif verb == "restart":  # a resume publishes a new, idle agent object
            self.dispose()
            if args.get("lose_unflushed"):
                host.lose_unflushed()
            host.busy = False
            host.claim_open = False
            self.start()

    def run(self) -> SimulationResult:
        try:
            with _collector_paused():
                for step in self.scenario.steps:
                    self.step(step)
        except AppendLimitReached as err:
            raise TooManyEvents(
                f"the scenario appends more than {err.args[0]:,} events by "
                f"{format_instant(self.host.clock.wall)} (a run holds its whole log in memory)"
            ) from None
        except TextLimitReached as err:
            raise TooManyEvents(
                f"the scenario's reminders hold more than {err.args[0]:,} characters of text (prompts created and "
                f"reminders sent, {TEXT_PER_EVENT:,} per event allowed) by {format_instant(self.host.clock.wall)} "
                "(a run holds its whole log in memory)"
            ) from None
        return self.result()

    def result(self) -> SimulationResult:
        host = self.host
        header: dict[str, Any] = {
            "type": "session",
            "version": 0,
            "id": self.scenario.name,
            "createdAt": max(self.scenario.start, 0),
        }
        if host.seed_length:
            header["seedLength"] = host.seed_length
        if self.scenario.time_zone is not None:
            header["timeZone"] = self.scenario.time_zone
        header["delegationDepth"] = 0
        return SimulationResult(
            list(host.appended),
            list(host.followups),
            list(self.results),
            list(host.trace),
            header,
            list(host.events),
            list(self.timeline),
        )


TOOL_VERBS = ("create", "list", "delete")
"""The verbs that are calls of the management tools (`parallel` issues several at once)."""


def _is_instant(value: object) -> bool:
    return isinstance(value, str) and parse_instant(value) is not None


def _is_count(value: object) -> bool:
    return type(value) is int and value >= 0


def _is_bool(value: object) -> bool:
    return type(value) is bool


def _is_str(value: object) -> bool:
    return type(value) is str


def _is_calls(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(call, Mapping) and call.get("do") in TOOL_VERBS and _is_bool(call.get("cancelled", False))
        for call in value
    )


def _is_outcomes(value: object) -> bool:
    return isinstance(value, list) and all(v in ("ok", "reject", "none") for v in value)


MAX_SCENARIO_DEPTH = 500
"""The deepest nesting a scenario file may hold: its values are written back with the standard
library, whose depth bound depends on the Python version (3.11 reads about 990 levels, 3.13
more); one bound, below every version's, makes a scenario valid or not on all of them."""


def nested_beyond(value: object, limit: int) -> bool:
    """Whether `value` nests containers more than `limit` levels deep (walked without recursion)."""
    pending: list[tuple[object, int]] = [(value, 0)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            if depth >= limit:
                return True
            members = item.values() if isinstance(item, dict) else item
            pending.extend((member, depth + 1) for member in members)
    return False


def _is_json(value: object) -> bool:
    """Log data must be writable as JSON: JSON has no Infinity (a number like 1e400 reads as one),
    and the writer (the standard library's) has a nesting limit (MAX_SCENARIO_DEPTH, below it)."""
    if nested_beyond(value, MAX_SCENARIO_DEPTH):
        return False
    try:
        js_compact_json(value)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


_ARGUMENTS: dict[str, dict[str, tuple[Callable[[object], bool], bool, str]]] = {
    "start": {"owner": (_is_bool, False, "a boolean")},
    "jump": {"to": (_is_instant, True, "a canonical instant")},
    "on_claim_jump": {"to": (_is_instant, True, "a canonical instant")},
    "log": {"type": (_is_str, False, "a string"), "data": (_is_json, False, "JSON")},
    "on_claim_log": {"data": (_is_json, True, "JSON")},
    "flush_outcomes": {"outcomes": (_is_outcomes, True, "a list of ok, reject or none")},
    "fail_followup": {"times": (_is_count, False, "a count")},
    "fail_framing": {"times": (_is_count, False, "a count")},
    "fail_maintenance": {"times": (_is_count, False, "a count")},
    "fail_append": {"operation": (_is_str, True, "a string"), "times": (_is_count, False, "a count")},
    "calendar_fails": {"enabled": (_is_bool, False, "a boolean")},
    "restart": {"lose_unflushed": (_is_bool, False, "a boolean")},
    "parallel": {"calls": (_is_calls, True, "a list of calls: do create, list or delete; cancelled a boolean")},
}  # fmt: skip
"""The arguments each verb reads: (check, required, what it must be). Tool calls take any
arguments (the tools judge them, as the host would)."""


def _check_args(verb: str, args: object) -> None:
    """Refuse a step whose verb would read a missing or mistyped argument."""
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        if verb in TOOL_VERBS:
            return
        raise ScenarioError("args must be an object")
    for key, (ok, required, what) in _ARGUMENTS.get(verb, {}).items():
        if (key in args and not ok(args[key])) or (required and key not in args):
            raise ScenarioError(f"args.{key} must be {what}")


EXPECTED = ("appended", "followups", "results", "trace")


def _check_expect(expect: object) -> None:
    """`expect` may hold only the four observables, each a list: a misspelt key would otherwise
    leave its observable unchecked and the run reported as meeting its expectations."""
    if not isinstance(expect, Mapping) or not all(k in EXPECTED and isinstance(v, list) for k, v in expect.items()):
        raise ScenarioError(f"expect must be an object of lists, keyed by {', '.join(EXPECTED)}")


VERBS = frozenset(
    {
        "start", "create", "list", "delete", "parallel", "advance", "jump", "busy", "idle", "idle_wait_fails",
        "drive", "log", "fork", "flush_outcomes", "fail_followup", "fail_framing", "fail_append",
        "fail_maintenance", "calendar_fails", "on_claim_jump", "on_claim_log", "dispose", "restart",
    }
)  # fmt: skip


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a scenario runs.

    A run allocates millions of objects that live to its end (the log, the trace) and makes few
    reference cycles; the collector's passes would re-scan the growing heap again and again
    (measured: 9-12% of a 30-90 day run). Cycles made meanwhile are collected once it resumes.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _instant(value: object) -> int:
    ms = parse_instant(value) if isinstance(value, str) else None
    if ms is None:
        raise ScenarioError(f"{value!r} is not a canonical instant")
    return ms


def simulate(
    scenario: Scenario | Mapping[str, Any], profile: str | Profile = "calendar", max_events: int | None = None
) -> SimulationResult:
    """Run one scenario (a Scenario or its JSON object) and return everything it produced.

    Raises ScenarioError for a scenario outside the vocabulary, TooManyEvents past `max_events`.
    """
    if not isinstance(scenario, Scenario):
        scenario = Scenario.from_json(scenario)
    return Simulation(scenario, profile, max_events).run()


__all__ = ["Scenario", "ScenarioError", "SimulationResult", "TooManyEvents", "simulate"]
