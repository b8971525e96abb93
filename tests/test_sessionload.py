"""Logs the harness refuses to load (session-log.md §11.2, after the §12 import upgrades): one log
per rule, refused in strict mode (a warning in lenient mode), on the fast path and the exact one;
the legacy shapes the upgrades accept load; the message checks agree with the published session
package's `adoptSessionEvent`."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from invariant.logshapes import appended
from invariant.sessionload import LoadChecks
from replay.judge.verify import verify_log
from replay.logs.logfile import SessionLog
from replay.reading import Reading

from .sessionfiles import header, write_session

BLOCK = {"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "ok"}]}
TOOL_RESULT = {"turn": 1, "step": 1, "message": {"id": "m3", "role": "user", "source": {"kind": "tool", "callId": "c1"},
               "content": [BLOCK]}}  # fmt: skip
ASSISTANT = {"turn": 1, "step": 1, "message": {"id": "m2", "role": "assistant", "content": [],
             "source": {"kind": "model", "provider": "deepseek", "model": "v4"}}}  # fmt: skip
USER = {"id": "m1", "role": "user", "content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}
REQUEST = {"header": {"config": {"provider": "deepseek", "model": "v4", "reasoningEffort": "high"},
                      "adapterDefaults": {"reasoningEffort": True}}}  # fmt: skip


def events() -> list[dict[str, Any]]:
    """A turn as the harness writes it: every checked event type, each valid."""
    kinds = [
        ("turn/start", {"turn": 1}),
        ("request/header", REQUEST),
        ("user/message", USER),
        ("assistant/message", ASSISTANT),
        ("tool/result", TOOL_RESULT),
        ("turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
    ]
    return [appended(t, n, n, copy.deepcopy(d)) for n, (t, d) in enumerate(kinds)]


def at(seq: int, *path: str) -> Any:
    def change(evs: list[dict[str, Any]], value: object) -> None:
        target: Any = evs[seq]
        for key in path[:-1]:
            target = target[key]
        if value is DROP:
            del target[path[-1]]
        else:
            target[path[-1]] = value

    return change


DROP = object()
RULES: dict[str, tuple[Any, object]] = {
    # one per §11.2 session-layer rule: (where, the value put there)
    "message id missing": (at(2, "data", "id"), DROP),
    "message id empty": (at(2, "data", "id"), ""),
    "wrong role": (at(3, "data", "message", "role"), "user"),
    "source kind missing": (at(2, "data", "source"), {"rpcId": "x"}),
    "content not an array": (at(2, "data", "content"), "hi"),
    "assistant source not a model": (at(3, "data", "message", "source", "kind"), "user"),
    "assistant without provider": (at(3, "data", "message", "source", "provider"), ""),
    "tool result source not a tool": (at(4, "data", "message", "source"), {"kind": "user"}),
    "tool result two blocks": (at(4, "data", "message", "content"), [BLOCK, BLOCK]),
    "tool result other call": (at(4, "data", "message", "content", 0, "toolCallId"), "c2"),  # type: ignore[arg-type]
    "request header without model": (at(1, "data", "header", "config", "model"), DROP),
    "request header empty effort": (at(1, "data", "header", "config", "reasoningEffort"), ""),
    "request header stray default": (at(1, "data", "header", "adapterDefaults"), {"maxTokens": True}),
    "obsolete header delta": (at(1, "type"), "request/header-delta"),
    "obsolete mode set": (at(0, "type"), "mode/set"),
    "fallback header": (at(1, "data", "reason"), "fallback"),
    "malformed legacy turn start": (at(0, "data", "trigger"), {"kind": ""}),
    "malformed turn end": (at(5, "data", "reason", "extra"), 1),
}  # fmt: skip


def verify(tmp_path: Path, evs: list[dict[str, Any]], mode: str = "strict", fast: bool = True) -> Any:
    path = write_session(tmp_path / "session.jsonl", evs, header("s1"))
    return verify_log(SessionLog(str(path), Reading.of(mode=mode), fast=fast))


def test_a_turn_as_the_harness_writes_it_loads(tmp_path: Path) -> None:
    report = verify(tmp_path, events())
    assert report.verdict == "ok" and report.findings == ()


@pytest.mark.parametrize("rule", sorted(RULES))
@pytest.mark.parametrize("fast", [True, False])
def test_each_load_refusal_makes_the_log_corrupt(tmp_path: Path, rule: str, fast: bool) -> None:
    evs = events()
    change, value = RULES[rule]
    change(evs, value)
    report = verify(tmp_path, evs, fast=fast)
    assert report.verdict == "corrupt", report
    assert [f.code for f in report.findings] == ["format.session"] and report.findings[0].severity == "error"
    lenient = verify(tmp_path, evs, mode="lenient", fast=fast)
    assert [(f.code, f.severity) for f in lenient.findings] == [("format.session", "warning")]


LEGACY = {
    "user message without id": (2, {"content": [], "source": {"kind": "user", "rpcId": "r"}}),
    "flat assistant message": (3, {"turn": 1, "step": 1, "content": [], "provenance": {"provider": "p", "model": "m"}}),
    "flat tool result": (4, {"turn": 1, "step": 1, "callId": "c1", "content": [], "isError": False}),
    "turn start with trigger": (0, {"turn": 1, "trigger": {"kind": "message", "source": {"kind": "user"}}}),
    "legacy error turn end": (5, {"turn": 1, "reason": {"kind": "error", "step": 0, "message": "boom"}}),
    "legacy aborted turn end": (5, {"turn": 1, "reason": {"kind": "aborted"}}),
}  # fmt: skip


@pytest.mark.parametrize("shape", sorted(LEGACY))
def test_a_legacy_shape_the_import_upgrades_loads(tmp_path: Path, shape: str) -> None:
    evs = events()
    seq, data = LEGACY[shape]
    evs[seq]["data"] = data
    report = verify(tmp_path, evs)
    assert report.verdict == "ok" and report.findings == (), report.findings


def test_a_flat_tool_result_replacing_a_message_inherits_its_id() -> None:
    checks = LoadChecks()
    assert checks.refusal({"type": "user/message", "seq": 0, "data": USER}) is None
    replace = {"op": "replace", "start": 0}
    flat = {"callId": "c1", "content": [], "isError": False}
    assert checks.refusal({"type": "tool/result", "seq": 1, "data": flat, "surfaceOp": replace}) is None
    missing = {**replace, "start": 7}  # no message at seq 7: no id to inherit
    assert checks.refusal({"type": "tool/result", "seq": 2, "data": flat, "surfaceOp": missing}) is not None


# --- against the published session package -----------------------------------------------------------

VALUES = st.sampled_from([None, "", "x", "user", "assistant", "model", "tool", "c1", "c2", 0, [], {}, True])


@st.composite
def message_events(draw: st.DrawFn) -> dict[str, Any]:
    """A current-shape message event with a few fields bent (no legacy shape: the package's
    adoption is checked alone)."""
    kind, seq = draw(st.sampled_from([("user/message", 2), ("assistant/message", 3), ("tool/result", 4)]))
    event = events()[seq]
    message = event["data"] if kind == "user/message" else event["data"]["message"]
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from(["id", "role", "content", "source"]))
        target = (
            message["source"]
            if key == "source" and draw(st.booleans()) and isinstance(message.get("source"), dict)
            else message
        )
        inner = draw(st.sampled_from(["kind", "provider", "model", "callId"])) if target is not message else key
        target[inner] = copy.deepcopy(draw(VALUES))  # drawn values are shared between examples
    return event


@settings(max_examples=8, deadline=None)  # each example is one node run over its whole batch
@given(st.lists(message_events(), min_size=100, max_size=400))
def test_message_checks_agree_with_the_session_package(batch: list[dict[str, Any]]) -> None:
    from .reference import node

    script = """
import { createInterface } from 'node:readline'
import { adoptSessionEvent } from 'dsh-session-chunks'
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  try { adoptSessionEvent(JSON.parse(line)); console.log('ok') } catch (error) { console.log('refused') }
}
"""
    theirs = node(script, "\n".join(json.dumps(e) for e in batch) + "\n").split()
    ours = ["ok" if LoadChecks().refusal(e) is None else "refused" for e in batch]
    assert ours == theirs, [e for e, a, b in zip(batch, ours, theirs, strict=True) if a != b][:2]


@st.composite
def checked_events(draw: st.DrawFn) -> dict[str, Any]:
    """Any checked event of the harness's turn, a few of its fields (at any depth) bent."""
    event = events()[draw(st.integers(0, 5))]
    for _ in range(draw(st.integers(0, 3))):
        target: Any = event["data"]
        while isinstance(target, dict) and target and draw(st.booleans()):
            inner = target[draw(st.sampled_from(sorted(target)))]
            if not isinstance(inner, dict):
                break
            target = inner
        if isinstance(target, dict):
            key = draw(st.sampled_from([*sorted(target), "extra", "trigger", "reason", "provider"]))
            target[key] = copy.deepcopy(draw(VALUES))
    return event


@settings(max_examples=400, deadline=None)
@given(checked_events())
def test_the_fast_load_check_accepts_only_what_the_exact_one_accepts(event: dict[str, Any]) -> None:
    """replay.logs.loadfast is an accelerator: what it calls surely loading (of the data the
    envelope decoder typed), the rules load."""
    import msgspec

    from replay.logs.envelope import REGISTRY, decode_line
    from replay.logs.loadfast import VERDICTS

    kind = REGISTRY.event_class(event["type"])
    assert kind is not None
    try:
        record = decode_line(json.dumps(event).encode())
    except msgspec.MsgspecError:  # the line is then read exactly
        return
    assert type(record) is kind
    verdict = VERDICTS.get(event["type"])
    if verdict is not None and verdict(record.data) is not None:  # type: ignore[attr-defined]
        assert LoadChecks().refusal(event) is None
