"""Hypothesis strategies for schedule logs: valid ones, corrupt ones with the rule they break,
and candidate events with their verdict.

`valid_logs` is driven like a correct runtime: it keeps its own model (active records, seen
ids, last batch) on a virtual clock and emits only events a correct owner could write, so every
generated log folds, and the model's active records are the expected fold result. `corrupt_logs`
breaks one such log in one place, `candidate_events` proposes one more event; each carries what
schedlog (and the reference) must answer, so a host's own decoder can be tested against them:

    from hypothesis import given
    from replay.testing.strategies import corrupt_logs

    @given(corrupt_logs())
    def test_my_fold_refuses(log):
        with pytest.raises(MyCorruptLogError):
            my_fold(log.events, log.seed_length)
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from invariant import GATE_MS, MAX_MS, format_instant, parse_instant

PROMPT_ALPHABET = 'ab ü"\\\n\t\u00a0\u2028\ufeff\U0001f600\ud800</>&'
"""What prompts are drawn from: the characters that trip encoders and trims (whitespace inside
a prompt, quotes, escapes, a line separator, a BOM, an astral and a lone surrogate, markup).
An explicit alphabet also spares a first run Hypothesis's slow build of its Unicode tables."""
START = 1_785_931_200_000  # 2026-08-05T12:00:00Z
MINUTE = 60_000


@dataclass
class Model:
    """What a correct owner knows while it writes a log."""

    clock: int = START
    events: list[dict[str, Any]] = field(default_factory=list)
    active: dict[str, dict[str, Any]] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)
    ended: list[str] = field(default_factory=list)
    last: int | None = None
    counter: int = 0

    def emit(self, type_: str, data: object) -> None:
        self.events.append({"type": type_, "seq": len(self.events), "time": self.clock, "data": data})

    def change(self, data: dict[str, Any]) -> None:
        self.emit("schedule/change", {"version": 1, **data})

    def new_id(self, draw: Any) -> str:
        self.counter += 1
        style = draw(st.sampled_from(["schedule-{}", "custom {}", 'q"{}', "ü-{}"]))
        return str(style.format(self.counter))


@st.composite
def owned_steps(draw: Any, model: Model, max_steps: int = 25) -> Model:
    """Up to `max_steps` steps of a correct owner (creates, deletes, dispatches, time, noise)."""
    prompts = st.text(PROMPT_ALPHABET, min_size=1, max_size=12).map(lambda s: "p" + s + "q")
    for _ in range(draw(st.integers(0, max_steps))):
        action = draw(st.sampled_from(["create", "create", "delete", "one-shot", "batch", "advance", "noise"]))
        if action == "advance":
            model.clock += draw(st.integers(0, 3 * 86_400_000))
        elif action == "noise":
            model.emit(draw(st.sampled_from(["turn/start", "user/message", "session/end-seed"])), {})
        elif action == "create":
            sid = model.new_id(draw)
            kind = draw(st.sampled_from(["after", "at", "every", "cron"]))
            prompt = draw(prompts)
            rec: dict[str, Any] = {"id": sid, "kind": kind, "prompt": prompt}
            if kind == "after":
                secs = draw(st.integers(1, 10**6))
                rec |= {"afterSeconds": secs, "scheduledAt": format_instant(model.clock + secs * 1000)}
            elif kind == "at":
                rec["scheduledAt"] = format_instant(model.clock + draw(st.integers(1, 10**9)))
            elif kind == "every":
                secs = draw(st.integers(300, 86_400 * 7))
                rec |= {"everySeconds": secs, "scheduledAt": format_instant(model.clock + secs * 1000)}
            else:
                target = (model.clock // MINUTE + draw(st.integers(1, 100_000))) * MINUTE
                rec |= {"cron": "0 9 * * *", "timeZone": "Europe/Paris", "scheduledAt": format_instant(target)}
            model.change({"operation": "create", "schedule": dict(rec)})
            model.active[sid] = rec
            model.seen.append(sid)
        elif action == "delete" and model.active:
            sid = draw(st.sampled_from(sorted(model.active)))
            model.change({"operation": "delete", "id": sid})
            del model.active[sid]
            model.ended.append(sid)
        elif action == "one-shot":
            due = [r for r in model.active.values() if r["kind"] in ("after", "at")]
            if due:
                rec = draw(st.sampled_from(due))
                model.change({"operation": "dispatch", "id": rec["id"]})
                del model.active[rec["id"]]
                model.ended.append(rec["id"])
        elif action == "batch":
            accepted = model.clock if model.last is None else max(model.clock, model.last + GATE_MS)
            due = [r for r in model.active.values() if r["kind"] in ("every", "cron") and _ms(r) <= accepted]
            if not due:
                continue
            model.clock = accepted
            model.last = accepted
            for rec in due:
                _dispatch_recurring(draw, model, rec, accepted)
    return model


def _ms(rec: dict[str, Any]) -> int:
    value = parse_instant(rec["scheduledAt"])
    assert value is not None
    return value


def _dispatch_recurring(draw: Any, model: Model, rec: dict[str, Any], accepted: int) -> None:
    target = _ms(rec)
    acc = format_instant(accepted)
    if rec["kind"] == "every":
        interval = rec["everySeconds"] * 1000
        nxt = target + (accepted - target) // interval * interval + interval
        model.change({"operation": "dispatch", "id": rec["id"], "acceptedAt": acc})
    else:
        occ = target + draw(st.integers(0, (accepted - target) // MINUTE)) * MINUTE
        nxt = (accepted // MINUTE + draw(st.integers(1, 10_000))) * MINUTE
        data = {"operation": "dispatch", "id": rec["id"], "occurrenceAt": format_instant(occ), "acceptedAt": acc}
        final = draw(st.booleans()) and draw(st.booleans())
        if not final:
            data["nextScheduledAt"] = format_instant(nxt)
        else:
            nxt = MAX_MS + 1
        model.change(data)
    if nxt > MAX_MS:
        del model.active[rec["id"]]
        model.ended.append(rec["id"])
    else:
        rec["scheduledAt"] = format_instant(nxt)


@dataclass
class GeneratedLog:
    """A valid log, its seedLength, and the model that wrote it (its active records)."""

    events: list[dict[str, Any]]
    seed_length: int
    model: Model


@st.composite
def valid_logs(draw: Any, fork: bool | None = None) -> GeneratedLog:
    """A valid log; when forked, an arbitrary (even corrupt) parent prefix precedes the child's events."""
    is_fork = draw(st.booleans()) if fork is None else fork
    prefix: list[dict[str, Any]] = []
    if is_fork:
        parent = draw(owned_steps(Model()))
        prefix = parent.events
        if prefix and draw(st.booleans()):
            victim = draw(st.integers(0, len(prefix) - 1))
            prefix[victim] = {**prefix[victim], "type": "schedule/change", "data": {"version": 9}}
    child = Model(clock=START + 10**9)
    child.events = [dict(e) for e in prefix]
    seed = len(prefix)
    if is_fork:
        child.emit("session/end-seed", {})
    draw(owned_steps(child))
    return GeneratedLog(child.events, seed, child)


@dataclass(frozen=True)
class CorruptLog:
    """A log broken in one place: folding it fails with `rule` at event `index` (None: log-level)."""

    events: list[dict[str, Any]]
    seed_length: int
    rule: str
    index: int | None


def _appended(log: GeneratedLog, data: dict[str, Any]) -> list[dict[str, Any]]:
    events = copy.deepcopy(log.events)
    events.append({"type": "schedule/change", "seq": len(events), "time": 0, "data": {"version": 1, **data}})
    return events


_DISPATCH_OF_OTHER_KIND = {
    "after": {"acceptedAt": "2030-01-01T00:00:00.000Z"},
    "at": {"occurrenceAt": "2030-01-01T00:00:00.000Z", "acceptedAt": "2030-01-01T00:00:00.000Z"},
    "every": {},
    "cron": {"acceptedAt": "2030-01-01T00:00:00.000Z"},
}
_RECORD_BREAKS: dict[str, tuple[str, Callable[[str], str], str]] = {
    "padded-prompt": ("prompt", lambda v: v + " ", "decode.prompt"),
    "bom-prompt": ("prompt", lambda v: "\ufeff" + v, "decode.prompt.js-whitespace"),
    "empty-id": ("id", lambda v: "", "decode.id"),
    "no-millis": ("scheduledAt", lambda v: v[:-5] + "Z", "decode.instant"),
    "extra-record-key": ("anchor", lambda v: "x", "decode.record.keys"),
}
_PAYLOAD_BREAKS = {
    "version-2": ("version", 2, "decode.version"),
    "version-string": ("version", "1", "decode.version"),
    "operation-unknown": ("operation", "pause", "decode.operation"),
}


def _owned(log: GeneratedLog, operation: str | None = None) -> list[int]:
    return [
        i
        for i, e in enumerate(log.events)
        if i >= log.seed_length
        and e["type"] == "schedule/change"
        and (operation is None or e["data"]["operation"] == operation)
    ]


@st.composite
def corrupt_logs(draw: Any) -> CorruptLog:
    """A valid log broken one way: an id reused, a transition on an inactive id, a dispatch of
    the wrong shape, a recurring batch inside the gate, a payload or record that does not
    decode, or a seedLength beyond the log."""
    log = draw(valid_logs())
    ways = ["reuse", "inactive", "seed"]
    ways += ["shape"] if log.model.active else []
    ways += ["payload"] if _owned(log) else []
    ways += ["record"] if _owned(log, "create") else []
    way = draw(st.sampled_from(ways))
    if way == "reuse":
        sid = draw(st.sampled_from(log.model.seen)) if log.model.seen else None
        if sid is None:  # nothing created yet: create one, then again
            record = {"id": "first", "kind": "at", "prompt": "p", "scheduledAt": "2030-01-01T00:00:00.000Z"}
            log = GeneratedLog(_appended(log, {"operation": "create", "schedule": record}), log.seed_length, log.model)
            sid = "first"
        record = {"id": sid, "kind": "at", "prompt": "again", "scheduledAt": "2030-01-01T00:00:00.000Z"}
        events = _appended(log, {"operation": "create", "schedule": record})
        return CorruptLog(events, log.seed_length, "fold.create.reuse", len(events) - 1)
    if way == "inactive":
        op = draw(st.sampled_from(["delete", "dispatch"]))
        sid = draw(st.sampled_from([*log.model.ended, "never-created"]))
        events = _appended(log, {"operation": op, "id": sid})
        return CorruptLog(events, log.seed_length, f"fold.{op}.inactive", len(events) - 1)
    if way == "shape":
        sid = draw(st.sampled_from(sorted(log.model.active)))
        shape = _DISPATCH_OF_OTHER_KIND[log.model.active[sid]["kind"]]
        events = _appended(log, {"operation": "dispatch", "id": sid, **shape})
        return CorruptLog(events, log.seed_length, "fold.dispatch.kind-shape", len(events) - 1)
    if way == "seed":
        seed = len(log.events) + draw(st.integers(1, 5))
        return CorruptLog(copy.deepcopy(log.events), seed, "fold.seed.bounds", None)
    events = copy.deepcopy(log.events)
    if way == "payload":
        at = draw(st.sampled_from(_owned(log)))
        key, value, rule = _PAYLOAD_BREAKS[draw(st.sampled_from(sorted(_PAYLOAD_BREAKS)))]
        events[at]["data"][key] = value
        return CorruptLog(events, log.seed_length, rule, at)
    at = draw(st.sampled_from(_owned(log, "create")))
    key, change, rule = _RECORD_BREAKS[draw(st.sampled_from(sorted(_RECORD_BREAKS)))]
    record = events[at]["data"]["schedule"]
    record[key] = change(record.get(key, ""))
    return CorruptLog(events, log.seed_length, rule, at)


@dataclass(frozen=True)
class Candidate:
    """A valid log and one more `schedule/change` payload: accepted, or refused with `rule`."""

    events: list[dict[str, Any]]
    seed_length: int
    payload: dict[str, Any]
    rule: str | None
    """None when the payload may be appended."""


@st.composite
def candidate_events(draw: Any) -> Candidate:
    """A candidate for appending to a valid log: a create of a fresh id, a delete or a one-shot
    dispatch of an active record (accepted), or an id reused, a transition on an inactive id
    (refused, with the fold rule)."""
    log = draw(valid_logs())
    events = copy.deepcopy(log.events)
    one_shots = sorted(sid for sid, r in log.model.active.items() if r["kind"] in ("after", "at"))
    choices = ["create", "inactive"] + (["reuse"] if log.model.seen else [])
    choices += (["delete"] if log.model.active else []) + (["one-shot"] if one_shots else [])
    choice = draw(st.sampled_from(choices))
    at = format_instant(log.model.clock + draw(st.integers(1, 10**9)))
    if choice in ("create", "reuse"):
        sid = "fresh-candidate" if choice == "create" else draw(st.sampled_from(log.model.seen))
        record = {"id": sid, "kind": "at", "prompt": "p", "scheduledAt": at}
        payload: dict[str, Any] = {"version": 1, "operation": "create", "schedule": record}
        return Candidate(events, log.seed_length, payload, None if choice == "create" else "fold.create.reuse")
    if choice == "inactive":
        op = draw(st.sampled_from(["delete", "dispatch"]))
        sid = draw(st.sampled_from([*log.model.ended, "never-created"]))
        return Candidate(events, log.seed_length, {"version": 1, "operation": op, "id": sid}, f"fold.{op}.inactive")
    sid = draw(st.sampled_from(sorted(log.model.active) if choice == "delete" else one_shots))
    operation = "delete" if choice == "delete" else "dispatch"
    return Candidate(events, log.seed_length, {"version": 1, "operation": operation, "id": sid}, None)
