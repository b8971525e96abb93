"""The three management tools (owner.md §3-§4): schedule_create, schedule_list, schedule_delete.

Each call first runs its synchronous shape checks (Phase A: no checkpoint, no owner work); a call
that passes enqueues one transaction on the agent queue (Phase B), which checkpoints, notifies
the owner, folds, decides and appends. Results are the canonical values, in call order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from invariant import (
    MAX_MS,
    ScheduleInputError,
    ScheduleLogError,
    allocate_id,
    create_record,
    schedule_view,
)
from invariant.create import (
    AFTER_ONLY_SELECTOR,
    check_after_seconds,
    check_every_seconds,
    check_prompt,
    select_profile_kind,
)
from invariant.instant import gate_instant
from invariant.jsvalue import is_trimmed_nonempty
from invariant.profiles import Profile
from invariant.shapes import object_problems
from invariant.tools.local import DELETE_ARGS, LIST_ARGS, create_args_problems
from invariant.zones import resolve_zone
from replay.sim.host import AppendRejected, Host

MESSAGES = {
    "internal_error": "The schedule operation failed.",
    "corrupt_schedule_log": "The session schedule log is corrupt.",
    "persistence_uncertain": (
        "Schedule persistence is uncertain; retry with schedule_list before relying on this result."
    ),
    "invalid_prompt": "prompt must be non-empty after trimming.",
}
FIXED_RATE_SELECTOR = "schedule_create accepts exactly one of after_seconds, at, or every_seconds."
SELECTOR_MESSAGES = {
    "calendar": "schedule_create accepts exactly one of after_seconds, at, every_seconds, or cron with time_zone.",
    "after-only": AFTER_ONLY_SELECTOR,
    "fixed-rate": FIXED_RATE_SELECTOR,
    "fixed-rate-exact": FIXED_RATE_SELECTOR,
}
ABORTED: dict[str, Any] = {"$aborted": True}
UNAVAILABLE: dict[str, Any] = {"$unavailable": True}
INVALID_ARGUMENTS: dict[str, Any] = {"$invalid_arguments": True}
"""The host's generic failure for arguments that break the parameter schema (not a Schedule value)."""


def error(code: str, message: str | None = None, **extra: object) -> dict[str, Any]:
    """An error value: `code`, `message`, then the code's extra fields, in that key order."""
    return {"code": code, "message": message or MESSAGES.get(code, code.replace("_", " ")), **extra}


class ZoneDerivationError(Exception):
    """A client zone of the current turn is not canonical (surfaces as internal_error)."""


def _is_time_context(message: object) -> bool:
    """The exact shape of a time-context reading (owner.md §3.6 step 4)."""
    if not isinstance(message, Mapping):
        return False
    source = message.get("source")
    content = message.get("content")
    if not isinstance(source, Mapping) or set(source) != {"kind", "plugin", "form", "sections"}:
        return False
    if (source["kind"], source["plugin"], source["form"]) != ("plugin", "time-context", "snapshot"):
        return False
    sections = source["sections"]
    if type(sections) is not list or len(sections) != 1 or not isinstance(sections[0], Mapping):
        return False
    section = sections[0]
    if set(section) != {"name", "text"} or section["name"] != "time-context":
        return False
    if type(content) is not list or len(content) != 1 or not isinstance(content[0], Mapping):
        return False
    block = content[0]
    return set(block) == {"type", "text"} and block["type"] == "text" and block["text"] == section["text"]


def request_zone_context(events: Sequence[Mapping[str, Any]], session_zone: str | None) -> tuple[str | None, list[str]]:
    """(implicit zone or None, clientTimeZones) for a local `at` without time_zone (owner.md §3.6)."""
    session = session_zone or "unavailable"
    turn = None
    for event in reversed(events):
        if event["type"] in ("step/end", "turn/end"):
            break
        if event["type"] == "step/start":
            data = event.get("data")
            turn = data.get("turn") if isinstance(data, Mapping) else None
            break
    if turn is None:
        return None, []
    start = None
    for n, event in enumerate(events):
        data = event.get("data")
        if event["type"] == "turn/start" and isinstance(data, Mapping) and data.get("turn") == turn:
            start = n
    if start is None:
        return None, []
    after = [e for e in events[start + 1 :] if e["type"] == "user/message"]
    if not any(_is_time_context(e.get("data")) for e in after):
        return None, []
    zones = set()
    for event in after:
        source = event["data"].get("source") if isinstance(event.get("data"), Mapping) else None
        if (
            isinstance(source, Mapping)
            and source.get("kind") == "user"
            and isinstance(source.get("rpcId"), str)
            and isinstance(source.get("clientTimeZone"), str)
        ):
            zone = source["clientTimeZone"]
            if resolve_zone(zone) != zone:
                raise ZoneDerivationError(zone)
            zones.add(zone)
    clients = sorted(zones)
    implicit = clients[0] if session != "unavailable" and clients == [session] else None
    return implicit, clients


class Tools:
    """The three tools of one agent; `notify` asks that agent's owner to recompute."""

    def __init__(self, host: Host, profile: Profile, notify: Callable[[], None]) -> None:
        self.host = host
        self.profile = profile
        self.notify = notify

    def _begin(self, cancelled: bool, operation: str, **where: Any) -> tuple[Any, dict[str, Any] | None]:
        """The opening steps of every transaction (owner.md §3.2): honour a cancellation,
        checkpoint, wake the owner, fold. Returns (fold, None) or (None, the error value)."""
        if cancelled:
            return None, ABORTED
        if not self.host.checkpoint():
            return None, error("persistence_uncertain", operation=operation, **where)
        self.notify()
        try:
            return self.host.fold(self.profile), None
        except ScheduleLogError:
            return None, error("corrupt_schedule_log")

    def _commit(self, payload: dict[str, Any], operation: str, schedule_id: str) -> dict[str, Any] | None:
        """The closing steps: append the change, checkpoint, wake the owner; an error value or None."""
        try:
            self.host.append_change(payload)
        except AppendRejected:
            return error("internal_error")
        if not self.host.checkpoint():
            return error("persistence_uncertain", operation=operation, id=schedule_id)
        self.notify()
        return None

    # --- schedule_create ------------------------------------------------------------------------

    def create_phase_a(self, args: Mapping[str, object]) -> dict[str, Any] | str:
        """The shape checks before the queue; returns an error value or the selected kind."""
        if create_args_problems(args, self.profile.name):
            return INVALID_ARGUMENTS
        try:
            kind = select_profile_kind(args, self.profile)
            check_prompt(args.get("prompt"))
            if kind == "after":
                check_after_seconds(args["after_seconds"])
            if kind == "every":
                check_every_seconds(args["every_seconds"])
        except ScheduleInputError as err:
            message = SELECTOR_MESSAGES[self.profile.name] if err.code == "invalid_selector" else None
            return error(err.code, message or err.message)
        return kind

    def create(self, args: Mapping[str, object], kind: str, cancelled: bool) -> dict[str, Any]:
        """The transaction of a create that passed Phase A (owner.md §3.2 B1-B12)."""
        host = self.host
        folded, failure = self._begin(cancelled, "create")
        if failure is not None:
            return failure
        last = folded.last_recurring_accepted_at
        gate = gate_instant(last)
        if kind in ("every", "cron") and gate is not None and gate > MAX_MS:
            return error("time_out_of_range", "the shared recurring gate has no four-digit-year admission left")
        schedule_id = allocate_id(folded)
        now = host.clock.wall
        implicit = None
        clients: list[str] = []
        at = args.get("at")
        if isinstance(at, Mapping) and "time_zone" not in at:
            try:
                implicit, clients = request_zone_context(host.events, host.time_zone)
            except ZoneDerivationError:
                return error("internal_error")
        try:
            record = create_record(kind, args, now, schedule_id, implicit, self.profile)
        except ScheduleInputError as err:
            if err.code == "timezone_confirmation_required":
                return error(
                    err.code, err.message, sessionTimeZone=host.time_zone or "unavailable", clientTimeZones=clients
                )
            return error(err.code, err.message)
        failure = self._commit(
            {"version": 1, "operation": "create", "schedule": record.to_json()}, "create", schedule_id
        )
        if failure is not None:
            return failure
        return schedule_view(record, now, last, self.profile).to_json()

    # --- schedule_list ----------------------------------------------------------------------------

    def list_phase_a(self, args: Mapping[str, object]) -> dict[str, Any] | None:
        return INVALID_ARGUMENTS if object_problems(args, LIST_ARGS) else None

    def list(self, cancelled: bool) -> object:
        folded, failure = self._begin(cancelled, "list")
        if failure is not None:
            return failure
        now = self.host.clock.wall
        last = folded.last_recurring_accepted_at
        return [schedule_view(r, now, last, self.profile).to_json() for r in folded.active]

    # --- schedule_delete --------------------------------------------------------------------------

    def delete_phase_a(self, args: Mapping[str, object]) -> dict[str, Any] | None:
        if object_problems(args, DELETE_ARGS):
            return INVALID_ARGUMENTS
        schedule_id = args["id"]
        if not isinstance(schedule_id, str) or not is_trimmed_nonempty(schedule_id):
            return error("invalid_rule", "id must be a non-empty id without surrounding whitespace")
        return None

    def delete(self, schedule_id: str, cancelled: bool) -> dict[str, Any]:
        folded, failure = self._begin(cancelled, "delete", id=schedule_id)
        if failure is not None:
            return failure
        if folded.find(schedule_id) is None:
            return {"id": schedule_id, "deleted": False, "code": "schedule_not_found"}
        failure = self._commit({"version": 1, "operation": "delete", "id": schedule_id}, "delete", schedule_id)
        return failure or {"id": schedule_id, "deleted": True}
