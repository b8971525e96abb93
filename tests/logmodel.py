"""A hypothesis generator of valid schedule logs, driven like a correct runtime.

It keeps its own model (active records, seen ids, last batch) with a virtual clock and only
emits events a correct owner could write, so every generated log must fold, and the model's
active ids are the expected fold result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st

from invariant import GATE_MS, MAX_MS, format_instant

START = 1_785_931_200_000  # 2026-08-05T12:00:00Z
MINUTE = 60_000


@dataclass
class Model:
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
    prompts = st.text(min_size=1, max_size=12).map(lambda s: "p" + s + "q")
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
    from invariant import parse_instant

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
