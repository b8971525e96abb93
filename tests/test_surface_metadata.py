"""Surface metadata beyond the envelope's shape (session-log.md §5.1, every format version): a
log-only event carries neither `surfaceOp` nor `sourceEventSeqs`, a surface event always carries
`surfaceOp`; `sourceEventSeqs` is empty only
on an `assistant/message` and names earlier seqs, none twice; a replacement takes the place of
current surface nodes, in order, each cited (a `tool/result` one: of one current `tool/result`).
The harness refuses a log that breaks them (§11.2, "surface metadata errors"), on the fast path
and the exact one alike, and the rules agree with the session package's surface fold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from invariant.logshapes import REPLACE_BOUNDS, surface_problems
from invariant.surface import Surface
from replay.judge.verify import verify_log
from replay.logs.logfile import SessionLog
from replay.reading import Mode, Reading

from .sessionfiles import header, write_session

USER = {"id": "m", "role": "user", "content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}
ASSISTANT = {"turn": 1, "step": 1, "message": {"id": "a", "role": "assistant", "content": [],
             "source": {"kind": "model", "provider": "deepseek", "model": "v4"}}}  # fmt: skip


def _event(seq: int, tag: str = "user/message", **meta: object) -> dict[str, object]:
    data: object = {"turn": 1} if tag == "turn/start" else ASSISTANT if tag == "assistant/message" else USER
    if tag == "user/message":
        data = {**USER, "id": f"m{seq}"}
    return {"type": tag, "seq": seq, "time": seq, "data": data, **meta}


BROKEN = {
    "surfaceOp on a log-only event": (_event(1, "turn/start", surfaceOp="append"), "/surfaceOp"),
    "citations on a log-only event": (_event(1, "turn/start", sourceEventSeqs=[0]), "/sourceEventSeqs"),
    "no citation on a user/message": (_event(1, sourceEventSeqs=[], surfaceOp="append"), "/sourceEventSeqs"),
    "a later seq cited": (_event(1, sourceEventSeqs=[1], surfaceOp="append"), "/sourceEventSeqs"),
    "a seq cited twice": (_event(2, sourceEventSeqs=[0, 0], surfaceOp="append"), "/sourceEventSeqs"),
    "a user/message without surfaceOp": (_event(1), "/surfaceOp"),
    "a cited assistant/message without surfaceOp": (_event(1, "assistant/message", sourceEventSeqs=[0]), "/surfaceOp"),
}


def _head(version: int) -> dict[str, Any]:
    if version < 2:
        return header(version=version)
    return header(version=version, isSeeded=False, cwd="/srv")


def _file(directory: Path, version: int) -> Path:
    """The name a log of `version` has (a name says its version: formats.md §2)."""
    return directory / ("session.jsonl" if version == 0 else f"session.v{version}.jsonl")


def _report(path: Path, fast: bool, mode: Mode = Mode.STRICT) -> Any:
    return verify_log(SessionLog(str(path), Reading(mode=mode), fast=fast))


def _refused_at_last(records: list[dict], version: int, code: str, pointer: str | None, tmp_path: Path) -> None:
    """The log of `records` is refused for its last record (`code`, at `pointer`), on both
    paths; in lenient mode that is a warning."""
    path = write_session(_file(tmp_path, version), records, _head(version))
    for fast in (True, False):
        report = _report(path, fast)
        assert report.verdict == "corrupt", (fast, report.findings)
        refusal = next(f for f in report.findings if f.code == code)
        assert refusal.pointer == pointer and refusal.line == len(records) + 1, refusal
        lenient = _report(path, fast, Mode.LENIENT)
        assert lenient.verdict == "ok" and any(f.code == code for f in lenient.findings)


def _loads(records: list[dict], version: int, tmp_path: Path) -> Path:
    """The log of `records` loads with no finding, on both paths; its path."""
    path = write_session(_file(tmp_path, version), records, _head(version))
    for fast in (True, False):
        report = _report(path, fast)
        assert report.verdict == "ok" and not report.findings, (fast, report.findings)
    return path


@pytest.mark.parametrize("version", [0, 1, 2, 4])
@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_surface_metadata_refuses_the_log(case: str, version: int, tmp_path: Path) -> None:
    event, pointer = BROKEN[case]
    records = [_event(0, surfaceOp="append"), _event(1, surfaceOp="append"), {**event, "seq": 2}]
    if event["seq"] == 1:  # the broken event right after the first
        records = [_event(0, surfaceOp="append"), event]
    _refused_at_last(records, version, "format.envelope", pointer, tmp_path)


RESULT_BLOCK = {"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "ok"}]}
TOOL = {"turn": 1, "step": 1, "message": {"id": "t", "role": "user", "source": {"kind": "tool", "callId": "c1"},
        "content": [RESULT_BLOCK]}}  # fmt: skip


def _replacing(version: int, seq: int, start: int, end: int, cites: list[int], tag: str = "user/message") -> dict:
    first, last = REPLACE_BOUNDS[version]
    event = _event(seq, tag, sourceEventSeqs=cites, surfaceOp={"op": "replace", first: start, last: end})
    if tag == "tool/result":
        event["data"] = TOOL
    return event


REPLACEMENTS = {  # after user messages 0 and 1 and a tool result 2: (start, end, cited, tag, pointer)
    "a start that is no current node": (5, 1, [0, 1], "user/message", "/surfaceOp/{first}"),
    "an end that is no current node": (0, 7, [0, 1], "user/message", "/surfaceOp/{last}"),
    "a start after the end": (1, 0, [0, 1], "user/message", "/surfaceOp"),
    "a shadowed node not cited": (0, 1, [0], "user/message", "/sourceEventSeqs"),
    "a tool result over two nodes": (1, 2, [1, 2], "tool/result", "/surfaceOp"),
    "a tool result over a user message": (1, 1, [1], "tool/result", "/surfaceOp"),
    "a node replaced twice": (0, 0, [0], "user/message", "/surfaceOp/{first}"),  # the second time
}


def _surface_log(version: int, case: str) -> tuple[list[dict], str | None]:
    records = [_event(0, surfaceOp="append"), _event(1, surfaceOp="append")]
    records.append({**_event(2, "tool/result", surfaceOp="append"), "data": TOOL})
    first, last = REPLACE_BOUNDS[version]
    if case == "a node replaced twice":
        records.append(_replacing(version, 3, 0, 0, [0]))
        records.append(_replacing(version, 4, 0, 0, [0]))
        return records, f"/surfaceOp/{first}"
    if case == "sound":
        records.append(_replacing(version, 3, 0, 1, [0, 1]))
        records.append(_replacing(version, 4, 2, 2, [2], "tool/result"))
        records.append(_replacing(version, 5, 3, 4, [0, 3, 4]))
        return records, None
    start, end, cites, tag, pointer = REPLACEMENTS[case]
    records.append(_replacing(version, 3, start, end, cites, tag))
    return records, pointer.format(first=first, last=last)


@pytest.mark.parametrize("version", [0, 2, 4])
@pytest.mark.parametrize("case", sorted(REPLACEMENTS))
def test_a_replacement_out_of_the_surface_refuses_the_log(case: str, version: int, tmp_path: Path) -> None:
    records, pointer = _surface_log(version, case)
    _refused_at_last(records, version, "format.surface", pointer, tmp_path)


@pytest.mark.parametrize("version", [0, 2, 4])
def test_replacements_of_current_cited_nodes_pass(version: int, tmp_path: Path) -> None:
    records, _ = _surface_log(version, "sound")
    _loads(records, version, tmp_path)


def _rewritten(**change: Any) -> dict[str, Any]:
    """TOOL with `change` made to its message (`block`: to its result block; `data`: beside it)."""
    block = {**RESULT_BLOCK, **change.pop("block", {})}
    data = {**TOOL, **change.pop("data", {})}
    return {**data, "message": {**TOOL["message"], "content": [block], **change}}  # type: ignore[dict-item]


REWRITES = {  # a tool/result replacing the tool result at 2: (its data, whether the harness loads it)
    "the content alone": (_rewritten(block={"content": [{"type": "text", "text": "pruned"}]}), True),
    "the same data, its keys in another order": ({**dict(reversed(TOOL.items()))}, True),
    "a turn of 1.0 for 1": (_rewritten(data={"turn": 1.0}), True),
    "an isError added": (_rewritten(block={"isError": False}), False),
    "another message id": (_rewritten(id="t2"), False),
    "a meta added": (_rewritten(data={"meta": {"pruned": True}}), False),
    "a step of true for 1": (_rewritten(data={"step": True}), False),
}


@pytest.mark.parametrize("version", [0, 2, 4])
@pytest.mark.parametrize("case", sorted(REWRITES))
def test_a_tool_result_replacement_changes_only_the_content(case: str, version: int, tmp_path: Path) -> None:
    """The package's assertToolResultRewrite: the replaced result's data and its replacement's,
    each with the result's content null, are equal as JSON values; the original is read back
    from its line on the fast path, where it was read with its content cut out."""
    records, _ = _surface_log(version, "sound")
    data, loads = REWRITES[case]
    records = [*records[:3], {**_replacing(version, 3, 2, 2, [2], "tool/result"), "data": data}]
    if loads:
        _loads(records, version, tmp_path)
    else:
        _refused_at_last(records, version, "format.surface", "/data", tmp_path)


LEGACY_RESULT = {"turn": 1, "step": 1, "callId": "c1", "content": [{"type": "text", "text": "ok"}], "isError": False}
"""A tool result as builds before message ids wrote it (session-log.md §12): the load upgrades
it to a message of id `legacy-message:<session id>:<seq>`."""


@pytest.mark.parametrize(
    ("message_id", "loads"), [("legacy-message:test-session:2", True), ("legacy-message:other:2", False)]
)
def test_a_legacy_result_is_compared_as_the_load_upgrades_it(message_id: str, loads: bool, tmp_path: Path) -> None:
    records, _ = _surface_log(0, "sound")
    records[2] = {**records[2], "data": LEGACY_RESULT}
    block = {"type": "tool-result", "toolCallId": "c1", "content": [], "isError": False}
    source = {"kind": "tool", "callId": "c1"}
    data = {"turn": 1, "step": 1, "message": {"id": message_id, "role": "user", "source": source, "content": [block]}}
    records = [*records[:3], {**_replacing(0, 3, 2, 2, [2], "tool/result"), "data": data}]
    if loads:
        _loads(records, 0, tmp_path)
    else:
        _refused_at_last(records, 0, "format.surface", "/data", tmp_path)


LONG = [{"type": "text", "text": "a long tool output " * 40}]
"""A result content long enough for the fast path to hold its line with the content cut out."""


@pytest.mark.parametrize("copied", [False, True])
@pytest.mark.parametrize("same", [True, False])
def test_a_long_result_is_compared_from_its_cut_line(copied: bool, same: bool, tmp_path: Path) -> None:
    """On the fast path, a long result's line is held with its content cut out, unless those
    bytes are found twice in it (here first in `meta`, written before the message: cutting
    there would change `meta`); a replacement pruning the content loads, one that also
    changes `turn` does not."""
    meta = {"meta": {"copy": LONG}} if copied else {}
    original = {**meta, **_rewritten(block={"content": LONG})}
    records, _ = _surface_log(0, "sound")
    records[2] = {**records[2], "data": original}
    pruned = {**meta, **_rewritten(block={"content": []}, data={} if same else {"turn": 2})}
    records = [*records[:3], {**_replacing(0, 3, 2, 2, [2], "tool/result"), "data": pruned}]
    if not same:
        _refused_at_last(records, 0, "format.surface", "/data", tmp_path)
        return
    path = _loads(records, 0, tmp_path)
    assert (b'{"meta":{"copy":[{"type":"text"' in path.read_bytes()) is copied


@pytest.mark.parametrize("version", [0, 2, 4])
def test_the_metadata_the_harness_writes_passes(version: int, tmp_path: Path) -> None:
    """Appends citing earlier seqs, and an assistant/message citing nothing (it may)."""
    records = [
        _event(0, surfaceOp="append"),
        _event(1, "turn/start"),
        _event(2, "assistant/message", sourceEventSeqs=[], surfaceOp="append"),
        _event(3, sourceEventSeqs=[0, 2], surfaceOp="append"),
    ]
    _loads(records, version, tmp_path)


FOLD = """
import { createInterface } from 'node:readline'
import { foldSurface } from 'dsh-session-chunks'
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  try { foldSurface(JSON.parse(line)); console.log('ok') } catch (error) { console.log('refused') }
}
"""
TAGS = st.sampled_from(["user/message", "assistant/message", "tool/result", "turn/start", "schedule/change"])
CITED = st.one_of(st.integers(0, 6), st.sampled_from([-1, 1.5, "1", 2**53]))


_BLOCK = {"type": "tool-result", "content": []}
RESULTS = st.sampled_from([
    {"message": {"content": [_BLOCK]}},
    {"message": {"content": [{**_BLOCK, "content": [{"type": "text", "text": "x"}]}]}},  # content alone differs
    {"message": {"content": [{**_BLOCK, "isError": True}]}},
    {"message": {"content": [{**_BLOCK, "isError": 1}]}},  # not true
    {"message": {"id": "r", "content": [_BLOCK]}},
    {"turn": 1, "message": {"content": [_BLOCK]}},
    {"turn": 1.0, "message": {"content": [_BLOCK]}},  # 1 to JSON.parse
    {"message": {"content": [_BLOCK]}, "meta": {"a": [1, {"b": None}]}},
    {"message": {"content": [_BLOCK]}, "meta": {"a": [1, {"b": False}]}},
])  # fmt: skip
"""The data of the tool results drawn: a replacement may change only the result's content."""


@st.composite
def surface_logs(draw: st.DrawFn) -> list[dict[str, object]]:
    """A few events with metadata drawn around the rules: citations of any seq, at times none,
    on any type; appends, and replacements of any seqs (v0 spelling, as the package reads)."""
    events = []
    for seq in range(draw(st.integers(1, 6))):
        tag = draw(TAGS)
        data = draw(RESULTS) if tag == "tool/result" else {}
        event: dict[str, object] = {"type": tag, "seq": seq, "time": 0, "data": data}
        surface = tag in ("user/message", "assistant/message", "tool/result")
        if surface and seq and draw(st.integers(0, 2)) == 0:
            start, end = draw(st.integers(0, seq)), draw(st.integers(0, seq))
            event["surfaceOp"] = {"op": "replace", "start": start, "end": end}
            whole = list(range(start, end + 1))
            event["sourceEventSeqs"] = draw(st.sampled_from([whole, whole, whole, [start], [end], []]))
        elif (surface and draw(st.integers(0, 9))) or draw(st.integers(0, 4)) == 0:
            event["surfaceOp"] = "append"  # a surface event without one is refused
        if "sourceEventSeqs" not in event and draw(st.integers(0, 3)) == 0:
            event["sourceEventSeqs"] = draw(st.lists(CITED, max_size=3))
        events.append(event)
    return events


def _ours(events: list[dict[str, object]]) -> str:
    """Refused where an event's citations are no array of non-negative safe integers (the
    envelope's shape), break the rules of one event, or its step of the surface."""
    surface = Surface()
    for event in events:
        cited = event.get("sourceEventSeqs", [])
        if not isinstance(cited, list) or not all(type(n) is int and 0 <= n < 2**53 for n in cited):
            return "refused"
        if surface_problems(event, event["seq"]) or surface.step(event, event["seq"], 0):  # type: ignore[arg-type]
            return "refused"
    return "ok"


@settings(  # each example is one node run over its whole batch: a large draw
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.data_too_large, HealthCheck.too_slow]
)
@given(st.lists(surface_logs(), min_size=200, max_size=400))
def test_the_rules_are_the_session_packages(logs: list[list[dict[str, object]]]) -> None:
    from .reference import node

    theirs = node(FOLD, "\n".join(json.dumps(log) for log in logs) + "\n").split()
    ours = [_ours(log) for log in logs]
    assert ours == theirs, [log for log, a, b in zip(logs, ours, theirs, strict=True) if a != b][:2]


# --- runs judged as written, never expanded (issue 49, item 2) ------------------------------------


def _expanded_problems(cited: list[object], seq: int, tag: str) -> set[str]:
    """The rules on the seqs a v2+ `sourceEventSeqs` names, judged by expanding every run (the
    definition, for small runs only)."""
    seqs: list[int] = []
    for item in cited:
        seqs.extend(range(item[0], item[1] + 1) if isinstance(item, list) else [item])  # type: ignore[arg-type]
    found = set()
    if not cited and tag != "assistant/message":
        found.add("empty")
    if any(n >= seq for n in seqs):
        found.add("not earlier")
    if len(set(seqs)) != len(seqs):
        found.add("twice")
    return found


def _named(problems: list[tuple[str, str]]) -> set[str]:
    words = {"is empty": "empty", "not earlier": "not earlier", "twice": "twice", "ends before": "reversed"}
    return {name for _, text in problems for key, name in words.items() if key in text}


@settings(max_examples=400)
@given(
    seq=st.integers(0, 40),
    tag=st.sampled_from(["user/message", "assistant/message", "tool/result"]),
    cited=st.lists(
        st.one_of(st.integers(0, 45), st.tuples(st.integers(0, 45), st.integers(0, 45)).map(list)), max_size=6
    ),
)
def test_runs_are_judged_as_their_expansion_is(seq: int, tag: str, cited: list[object]) -> None:
    """Without expanding a run, the rules say what expanding it says (a reversed run aside)."""
    event = _event(seq, tag, sourceEventSeqs=cited, surfaceOp="append")
    found = _named(surface_problems(event, seq))
    reversed_run = any(isinstance(c, list) and c[0] > c[1] for c in cited)
    assert ("reversed" in found) == reversed_run
    if not reversed_run:
        assert found == _expanded_problems(cited, seq, tag)


@pytest.mark.parametrize("length", [3, 1_000_000, 1_000_001, 1_000_002, 10**12, 2**53 - 8])
def test_a_run_past_the_event_is_refused_whatever_its_length(length: int) -> None:
    """A run whose end is not earlier than its event breaks the rule at any length (a check that
    expanded runs stopped at 1,000,000 seqs and passed the next one)."""
    event = _event(7, sourceEventSeqs=[[6, 6 + length - 1]], surfaceOp="append")
    assert _named(surface_problems(event, 7)) == {"not earlier"}
    event = _event(2**53 - 1, sourceEventSeqs=[[0, length - 1], [length - 1, length]], surfaceOp="append")
    assert _named(surface_problems(event, 2**53 - 1)) == {"twice"}


def test_a_reversed_run_is_refused() -> None:
    """Open question (formats.md §4 says only that the writer writes a run of three or more as
    `[start, end]`): a run that ends before it starts is refused, as a codec checking the pairs
    it expands would; a run of one or two seqs the writer would not write is read as named."""
    problems = surface_problems(_event(9, sourceEventSeqs=[[4, 3]], surfaceOp="append"), 9)
    assert problems == [("/sourceEventSeqs", "sourceEventSeqs names a run [4, 3] that ends before it starts")]
    assert surface_problems(_event(9, sourceEventSeqs=[[4, 4], [5, 6]], surfaceOp="append"), 9) == []


def test_a_replacement_may_cite_its_shadowed_nodes_by_one_long_run() -> None:
    surface = Surface()
    surface.appended([10, 11, 12])
    big = _event(10**12, sourceEventSeqs=[[0, 10**12 - 1]], surfaceOp={"op": "replace", "startSeq": 10, "endSeq": 12})
    assert surface.step(big, 10**12, 4) == [] and surface.nodes == [10**12]
    partial = _event(
        10**12 + 1, sourceEventSeqs=[[0, 10**6]], surfaceOp={"op": "replace", "startSeq": 10**12, "endSeq": 10**12}
    )
    assert surface.step(partial, 10**12 + 1, 4) == [
        ("/sourceEventSeqs", f"surface replace: sourceEventSeqs must cite every shadowed node; missing {10**12}")
    ]


@pytest.mark.parametrize("end", [1_000_000, 1_000_001, 10**15])
def test_a_log_citing_a_long_run_past_its_event_is_refused(end: int, tmp_path: Path) -> None:
    records = [_event(0, surfaceOp="append"), _event(1, sourceEventSeqs=[[0, end]], surfaceOp="append")]
    _refused_at_last(records, 4, "format.envelope", "/sourceEventSeqs", tmp_path)
