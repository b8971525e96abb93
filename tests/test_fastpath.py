"""The reader's fast path (replay/logs/envelope.py) against its exact path: the same entries,
findings, verdicts and fold results, on generated, mutated, fixture and real logs.

The fast path decodes a run of lines with msgspec and reads exactly only what msgspec refuses;
whatever it accepts must be what the exact path would make of the line. These tests read
every log both ways (`SessionLog(fast=False)` reads every line exactly) and compare.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from invariant.logshapes import appended
from replay.judge.telling import TellingEvents
from replay.judge.verify import verify_log
from replay.logs import envelope
from replay.logs.logfile import SessionLog
from replay.logs.records import Records
from replay.reading import Mode, Reading
from replay.testing.strategies import valid_logs
from tests.test_hostile_values import _mutate
from tests.test_sessionload import LEGACY, RULES, checked_events, events

ROOT = Path(__file__).resolve().parent.parent
REAL_LOGS = ROOT.parent / "shared" / "real-logs"
READINGS = (Reading(), Reading(mode=Mode.LENIENT))


def both_ways(name: str, data: bytes, reading: Reading) -> tuple[Any, Any]:
    """(fast, exact) of one log: its schedule entries and findings, and its verdict report.

    The log is read once before: its event types are then known to the fast decoder (a type met
    for the first time is read exactly), so the fast path is what the comparison exercises."""
    for _ in SessionLog(name, reading, data).entries(schedule_only=True, select=TellingEvents()):
        pass
    out = []
    for fast in (True, False):
        log = SessionLog(name, reading, data, fast=fast)
        entries = [
            (e.line, e.event_index, e.event, e.raw) for e in log.entries(schedule_only=True, select=TellingEvents())
        ]
        seen = (entries, [f.to_json() for f in log.findings], log.event_count, log.records.marker_cut, log.rejected)
        report = verify_log(SessionLog(name, reading, data, fast=fast)).to_json()
        out.append((seen, report))
    return out[0], out[1]


def assert_same(name: str, data: bytes) -> None:
    for reading in READINGS:
        fast, exact = both_ways(name, data, reading)
        assert fast == exact, (name, reading.mode)


# --- generated logs, written in every way the fast decoder must refuse or take -------------------

HEADER = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "cwd": "/w", "delegationDepth": 0}
TWISTS = (
    "none",
    "float-seq",  # 3.0: JavaScript's 3, msgspec's float
    "unsafe-time",
    "extra-key",
    "surface-append",
    "surface-other",
    "spaces",  # whitespace inside and around the value
    "keys-reordered",
    "lone-surrogate",
    "invalid-utf8",
    "big-int",  # beyond 64 bits
    "deep",  # deeper than msgspec reads
    "duplicate-key",
    "seq-gap",
    "blank-line",
    "two-values",
    "split-value",
    "string-data",
    "row",
    "row-bad-dt",
    "row-float-gap",
    "row-big-gap",
    "row-extra-key",
    "row-empty",
    "row-number-member",
    "tool-row",
    "tool-row-bad-name",
    "crlf",
    "bom",
    "unknown-type",
    "marker-inherited",
    "schedule-call",  # a schedule_* tool call: yielded, and its result after it
    "schedule-result",
    "cite",  # sourceEventSeqs as the harness writes them: earlier seqs, once each
    "cite-later",  # the event's own seq or a later one (refused from v2 on)
    "cite-twice",
    "cite-run",  # a [start, end] run (v2 on)
    "cite-odd",  # negative, fractional, 1.0, beyond 2^53, not a list
    "replace",  # a surface replace spelt for v0-v2
    "replace-v3",  # spelt for v3 and v4
    "replace-odd",  # mixed, partial, negative, other op
)
CALL_IDS = ("c1", "c 1", "c\u00e91", 'c"1')
"""Call ids the reader searches for as bytes, and ids whose spelling may vary (every result read)."""


def _row(seq: int, tag: str = "text-chunks", n: int = 3, **data: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"turn": 1, "step": 1, "index": 0, "dt": [1] * (n - 1), "texts": ["a"] * n}
    if tag == "tool-call-chunks":
        body = {"turn": 1, "step": 1, "index": 0, "id": "c", "name": "bash", "dt": [1] * (n - 1), "args": ["{"] * n}
    return {"type": tag, "seq0": seq, "time0": 5, "data": body | data}


def _line(event: dict[str, Any], twist: str, rng: random.Random) -> tuple[list[bytes], int]:
    """The line(s) of one event twisted as `twist`, and how many events they stand for."""
    seq = event["seq"]
    n = 1
    value: Any = dict(event)
    text = None
    if twist == "float-seq":
        text = json.dumps(value).replace(f'"seq": {seq},', f'"seq": {seq}.0,')
    elif twist == "unsafe-time":
        value["time"] = 2**53 + rng.choice([0, 1, 10])
    elif twist == "extra-key":
        value["sourceEventSeqs"] = [0] if seq else []
    elif twist == "surface-append":
        value["surfaceOp"] = "append"
    elif twist == "surface-other":
        value["surfaceOp"] = rng.choice(["replace", 1, None])
    elif twist.startswith("cite"):
        earlier = rng.sample(range(seq), min(seq, rng.randint(0, 3)))
        value["sourceEventSeqs"] = {
            "cite": sorted(earlier),
            "cite-later": [*earlier, seq + rng.choice([0, 1])],
            "cite-twice": [*earlier, 0, 0],
            "cite-run": [[0, max(seq - 1, 0)]],
            "cite-odd": rng.choice([[-1], [0.5], [2**53], "0", [True], None]),
        }[twist]
        if twist == "cite-odd" and rng.random() < 0.3:
            text = json.dumps(value).replace('"sourceEventSeqs": [', '"sourceEventSeqs": [1.0, ')
    elif twist.startswith("replace"):
        value["surfaceOp"] = {
            "replace": {"op": "replace", "start": 0, "end": max(seq - 1, 0)},
            "replace-v3": {"op": "replace", "startSeq": 0, "endSeq": max(seq - 1, 0)},
            "replace-odd": rng.choice(
                [
                    {"op": "replace", "start": 0, "endSeq": 1},
                    {"op": "replace", "start": 0},
                    {"op": "replace", "start": -1, "end": 0},
                    {"op": "append", "start": 0, "end": 0},
                    {"end": 0, "op": "replace", "start": 0},
                    {"op": "replace", "start": 0, "end": 0, "x": 1},
                ]
            ),
        }[twist]
    elif twist == "spaces":
        text = " " + json.dumps(value, indent=None, separators=(" , ", " : ")) + " \t"
    elif twist == "keys-reordered":
        value = dict(reversed(list(value.items())))
    elif twist == "lone-surrogate":
        value["data"] = {"text": rng.choice(["\ud83d", "a\udc00b", "\ud83d\ude00"])}
    elif twist == "invalid-utf8":
        return [json.dumps(value).encode()[:-1] + b', "x": "\xff\xfe"}'], 1
    elif twist == "big-int":
        value["data"] = {"n": 2**70, "m": -(2**65)}
    elif twist == "deep":
        envelope_only = json.dumps({k: v for k, v in value.items() if k != "data"})
        text = envelope_only[:-1] + ', "data": {"d": ' + "[" * 1100 + "]" * 1100 + "}}"
    elif twist == "duplicate-key":
        text = json.dumps(value)[:-1] + f', "seq": {seq + rng.choice([0, 1])}}}'
    elif twist == "seq-gap":
        value["seq"] = seq + rng.choice([1, -1, 5])
    elif twist == "blank-line":
        return [rng.choice([b"", b"  ", b"\r"]), json.dumps(value).encode()], 1
    elif twist == "two-values":
        return [
            json.dumps(value).encode() + rng.choice([b" ", b",", b""]) + b'{"type":"x","seq":0,"time":0,"data":{}}'
        ], 1
    elif twist == "split-value":
        whole = json.dumps(value)
        cut = whole.index('"time"')
        return [whole[:cut].encode(), whole[cut:].encode()], 1
    elif twist == "string-data":
        value["data"] = rng.choice(["text", 5, None, [1, 2]])
    elif twist.startswith("row") or twist.startswith("tool-row"):
        n = rng.randint(1, 4)
        tag = "tool-call-chunks" if twist.startswith("tool") else rng.choice(["text-chunks", "reasoning-chunks"])
        value = _row(seq, tag, n)
        if twist == "row-bad-dt":
            value["data"]["dt"] = [1] * n
        elif twist == "row-float-gap" and n > 1:
            text = json.dumps(value).replace('"dt": [1', '"dt": [1.0')
        elif twist == "row-big-gap" and n > 1:
            value["data"]["dt"][0] = rng.choice([2**31 + 1, 2**53 - 1, 2**53])
        elif twist == "row-extra-key":
            value["data"]["more"] = 1
        elif twist == "row-empty":
            value["data"]["texts" if "texts" in value["data"] else "args"] = []
            value["data"]["dt"] = []
            n = 0
        elif twist == "row-number-member":
            value["data"]["texts" if "texts" in value["data"] else "args"][0] = 1
        elif twist == "tool-row-bad-name":
            value["data"]["name"] = 7
    elif twist == "crlf":
        text = json.dumps(value) + "\r"
    elif twist == "bom":
        text = "\ufeff" + json.dumps(value)
    elif twist == "unknown-type":
        value["type"] = rng.choice(["brand/new", "x" * 300, "", "schedule/Change", "schedule\\/change"])
        if value["type"] == "schedule\\/change":
            text = json.dumps(value).replace("schedule\\\\/change", "schedule\\/change")
    elif twist == "marker-inherited":
        value = {"type": "session/end-seed", "seq": seq, "time": event["time"], "data": {"inherited": True}}
    elif twist == "schedule-call":
        call = {"turn": 1, "step": 1, "callId": rng.choice(CALL_IDS), "name": rng.choice(["schedule_list", "bash"])}
        value = {"type": "tool/call", "seq": seq, "time": event["time"], "data": call | {"arguments": "{}"}}
    elif twist == "schedule-result":
        call_id, body = rng.choice(CALL_IDS), [{"type": "text", "text": rng.choice(["[]", "{", "x"])}]
        block = {"type": "tool-result", "toolCallId": call_id, "content": body}
        message = {"id": "r", "role": "user", "source": {"kind": "tool", "callId": call_id}, "content": [block]}
        data = rng.choice([{"turn": 1, "step": 1, "message": message}, {"callId": call_id, "content": body}])
        value = appended("tool/result", seq, event["time"], data)
    line = (text if text is not None else json.dumps(value, ensure_ascii=rng.random() < 0.5)).encode(
        "utf-8", "surrogatepass"
    )
    return [line], n


def render(events: list[dict[str, Any]], seed: int, twists: list[tuple[int, str]], version: int) -> bytes:
    """The log's bytes: header, then each event (renumbered as rows add members), twisted where drawn."""
    rng = random.Random(seed)
    header = dict(HEADER)
    if version >= 2:
        header = {k: v for k, v in header.items()} | {"version": version, "isSeeded": False}
    twisted = dict(twists)
    lines = [json.dumps(header).encode()]
    seq = 0
    for k, event in enumerate(events):
        event = {**event, "seq": seq}
        out, n = _line(event, twisted.get(k, "none"), rng)
        lines.extend(out)
        seq += n
    return b"\n".join(lines) + b"\n"


@st.composite
def twisted_logs(draw: Any) -> tuple[str, bytes]:
    log = draw(valid_logs(fork=False))
    events = log.events or [{"type": "turn/start", "seq": 0, "time": 1, "data": {}}]
    count = draw(st.integers(0, 4))
    twists = [(draw(st.integers(0, len(events) - 1)), draw(st.sampled_from(TWISTS))) for _ in range(count)]
    version = draw(st.sampled_from([0, 0, 4]))
    name = "session.v4.jsonl" if version == 4 else "session.jsonl"
    return name, render(events, draw(st.integers(0, 2**16)), twists, version)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(twisted_logs())
def test_the_fast_and_exact_paths_read_twisted_logs_alike(case: tuple[str, bytes]) -> None:
    name, data = case
    assert_same(name, data)


def test_every_twist_is_refused_or_taken_alike() -> None:
    """Each twist alone, at the start, middle and end of a log, in both modes."""
    events = [{"type": t, "seq": i, "time": 100 + i, "data": {"turn": 1}} for i, t in enumerate(["turn/start"] * 6)]
    for twist in TWISTS:
        for at in (0, 3, 5):
            for seed in range(4):
                for version in (0, 4):
                    assert_same(
                        "session.jsonl" if version == 0 else "session.v4.jsonl",
                        render(events, seed, [(at, twist)], version),
                    )


# --- mutated real-shaped, fixture and real logs (mutations as the bounded fuzz makes them) ----------


def _sources() -> list[tuple[str, bytes]]:
    fixtures = sorted((ROOT / "fixtures").rglob("*.jsonl*"))
    fixtures = [p for p in fixtures if "conformance" not in p.parts]
    real = sorted(REAL_LOGS.glob("*.jsonl")) if REAL_LOGS.is_dir() else []
    return [(p.name, p.read_bytes()) for p in [*fixtures, *real]]


def _real_shaped() -> list[tuple[str, bytes]]:
    sys.path.insert(0, str(ROOT))
    from bench.corpus import real_shaped

    return [
        (f"{sid}.session.jsonl", ("\n".join(lines) + "\n").encode())
        for sid, lines in real_shaped(random.Random(3), 600_000)
    ]


def _real_bodies() -> list[tuple[str, bytes]]:
    """Sessions of the benchmark corpus built from the real logs' bodies (none without them)."""
    if not REAL_LOGS.is_dir():
        return []
    sys.path.insert(0, str(ROOT))
    from bench.realcorpus import bodies, sessions

    return list(sessions(random.Random(5), bodies(REAL_LOGS), 1_500_000))


def test_fixtures_real_logs_and_a_real_shaped_corpus_read_alike() -> None:
    for name, data in [*_sources(), *_real_shaped(), *_real_bodies()]:
        assert_same(name, data)


@pytest.mark.slow
def test_mutated_logs_read_alike() -> None:
    rng = random.Random(17)
    sources = [*_sources(), *_real_shaped()[:20]]
    for _ in range(400):
        name, data = rng.choice(sources)
        assert_same(name, _mutate(data, rng))


def test_an_event_type_met_for_the_first_time_is_learned() -> None:
    """An unknown type costs one exact read; the next run decodes it fast."""
    tag = "brand/new-in-this-test"
    assert tag not in envelope.REGISTRY.classes
    line = json.dumps({"type": tag, "seq": 0, "time": 1, "data": {}}).encode()
    data = json.dumps(HEADER).encode() + b"\n" + line + b"\n"
    assert_same("session.jsonl", data)
    assert tag in envelope.REGISTRY.classes
    assert envelope.decode_lines([line])[0].seq == 0


def test_past_the_type_limit_an_unknown_type_is_read_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """A log of endless new types (hostile, or a new vocabulary) makes no more event classes
    than MAX_EVENT_TYPES: their lines go the exact way, and read alike."""
    monkeypatch.setattr(envelope, "MAX_EVENT_TYPES", len(envelope.REGISTRY.classes))
    lines = [json.dumps({"type": f"never-seen/{n}", "seq": n, "time": 1, "data": {}}).encode() for n in range(50)]
    data = json.dumps(HEADER).encode() + b"\n" + b"\n".join(lines) + b"\n"
    assert_same("session.jsonl", data)
    assert not any(tag.startswith("never-seen/") for tag in envelope.REGISTRY.classes)


@pytest.mark.parametrize("call_id", CALL_IDS)
def test_schedule_calls_and_their_results_are_read_alike(call_id: str) -> None:
    """A schedule_* call and its result are yielded both ways (whatever the call id's
    spelling), and a result of another tool's call is not."""

    def event(seq: int, tag: str, data: dict[str, Any]) -> bytes:
        return json.dumps(appended(tag, seq, 100 + seq, data), ensure_ascii=seq % 2 == 0).encode()

    def result(call: str, text: str) -> dict[str, Any]:
        block = {"type": "tool-result", "toolCallId": call, "content": [{"type": "text", "text": text}]}
        return {"turn": 1, "step": 1, "message": {"id": "r", "role": "user", "source": {"kind": "tool", "callId": call},
                                                  "content": [block]}}  # fmt: skip

    lines = [json.dumps(HEADER).encode()]
    calls = [("other", "bash"), (call_id, "schedule_list"), ("z" + call_id, "schedule_delete")]
    for seq, (call, name) in enumerate(calls):
        lines.append(event(seq, "tool/call", {"turn": 1, "step": 1, "callId": call, "name": name, "arguments": "{}"}))
    for seq, (call, _) in enumerate(calls, start=len(calls)):
        lines.append(event(seq, "tool/result", result(call, "not json")))
    data = b"\n".join(lines) + b"\n"
    assert_same("calls.jsonl", data)
    log = SessionLog("calls.jsonl", Reading(), data)
    yielded = [e.event_index for e in log.entries(schedule_only=True, select=TellingEvents())]
    assert yielded == [1, 2, 4, 5]
    report = verify_log(SessionLog("calls.jsonl", Reading(), data))
    assert [f.code for f in report.findings] == ["tool.result.json", "tool.call.params", "tool.result.json"]


CLUE_LINES = {
    "lower": ({"kind": "plugin", "plugin": "tool-schedule"}, "a reminder"),  # only lowercase needles
    "upper": ({"kind": "user"}, "[SCHEDULE REMINDER]\nhello"),  # only an uppercase one
    "none-ascii": ({"kind": "user"}, "nothing to see"),
    "none-unicode": ({"kind": "user"}, "caf\u00e9 \u2603"),
    "invalid-utf8": ({"kind": "user"}, "INVALID"),  # INVALID: bytes that are not UTF-8
    "invalid-utf8-upper": ({"kind": "user"}, "[SCHEDULE REMINDER]\nINVALID"),
}
_TOLD = {"lower", "upper", "invalid-utf8-upper"}
"""The cases whose line holds a needle: ASCII, so a line not UTF-8 holds it as its text does."""


@pytest.mark.parametrize("tag", ["user/message", "agent/inbox/spliced"])
@pytest.mark.parametrize("case", sorted(CLUE_LINES))
def test_messages_that_may_bear_clues_are_found_alike(case: str, tag: str) -> None:
    """A message is yielded for its clues when its line holds a needle, lowercase or uppercase,
    whether or not the line is UTF-8 (the needles are ASCII, which decoding keeps as written);
    among many plain messages, both ways alike."""
    source, text = CLUE_LINES[case]
    lines = [json.dumps(HEADER).encode()]
    for seq in range(40):
        message = {
            "id": f"m{seq}",
            "role": "user",
            "content": [{"type": "text", "text": "plain"}],
            "source": {"kind": "user"},
        }
        if seq == 20:
            message = {**message, "source": source, "content": [{"type": "text", "text": text}]}
        data = message if tag == "user/message" else {"target": "next-turn", "start": 0, "inserted": [message]}
        line = json.dumps({"type": tag, "seq": seq, "time": 100 + seq, "data": data}, ensure_ascii=False).encode()
        line = line.replace(b"INVALID", b"\xff\xfe")
        lines.append(line)
    data = b"\n".join(lines) + b"\n"
    assert_same("clues.jsonl", data)
    yielded = [
        e.event_index
        for e in SessionLog("clues.jsonl", Reading(), data).entries(schedule_only=True, select=TellingEvents())
    ]
    assert yielded == ([20] if case in _TOLD else []), yielded


TURN_ENDS = (
    {"kind": "completed"},
    {"kind": "aborted", "reason": {"kind": "user"}},
    {"kind": "error", "error": {"message": "disk full", "code": "UNKNOWN"}},
    {"kind": "error", "step": 1, "message": "legacy"},
    {"kind": "error"},
    {"kind": "completed", "extra": 1},
    {"kind": "compl\\u0065ted"},  # spelt with an escape: the exact check decides
    {"kind": 5},
    {"kind": "something-new"},
    {},
    "completed",
)


def _checked_log(events: list[dict[str, Any]]) -> bytes:
    """`events` renumbered among plain lines (a turn start before each)."""
    lines, seq = [json.dumps(HEADER)], 0
    for event in events:
        for plain in ({"type": "turn/start", "data": {"turn": 1}}, {**event}):
            lines.append(json.dumps({**plain, "seq": seq, "time": 100 + seq}).replace("\\\\u0065", "\\u0065"))
            seq += 1
    return ("\n".join(lines) + "\n").encode()


@pytest.mark.parametrize("reason", TURN_ENDS, ids=json.dumps)
def test_turn_endings_of_every_shape_read_alike(reason: object) -> None:
    """A turn/end's data is typed with its envelope (loadfast.DATA_SHAPES): an ending the
    fast check vouches for, one it leaves to the exact check, and one whose line it refuses."""
    assert_same("ends.jsonl", _checked_log([{"type": "turn/end", "data": {"turn": 1, "reason": reason}}]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(checked_events(), min_size=1, max_size=6))
def test_checked_events_with_bent_data_read_alike(events: list[dict[str, Any]]) -> None:
    """Checked events (their data typed in the envelope's pass) with fields bent at any depth:
    the load checks' findings and message ids alike both ways."""
    assert_same("checked.jsonl", _checked_log(events))


def test_the_harness_s_turn_endings_stay_on_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The endings the harness writes (plain, an abort with its reason, an error with its
    error) are decoded fast and vouched for: no line is read exactly, no event decoded again."""
    data = _checked_log([{"type": "turn/end", "data": {"turn": 1, "reason": r}} for r in TURN_ENDS[:3]])
    assert_same("ends.jsonl", data)  # the types are known from here on
    assert _read_exactly(monkeypatch, data, load_checks=True) == []


def _read_exactly(monkeypatch: pytest.MonkeyPatch, data: bytes, load_checks: bool = False) -> list[int]:
    """The lines of the log `data` the fast reader hands to the exact path (and, with
    `load_checks`, those whose event the exact load checks read)."""
    exact: list[int] = []
    monkeypatch.setattr(Records, "lines", lambda self, lines, before: exact.append(before + 1) or iter(()))
    if load_checks:
        monkeypatch.setattr(Records, "check_load", lambda self, event, line: exact.append(line))
    for _ in SessionLog("read.jsonl", Reading(), data).entries(schedule_only=True):
        pass
    return exact


def _bent(case: str) -> list[dict[str, Any]]:
    """The harness's turn (tests/test_sessionload.py) in a legacy shape or breaking one load rule."""
    evs = events()
    if case in LEGACY:
        seq, data = LEGACY[case]
        evs[seq]["data"] = data
        return evs
    change, value = RULES[case]
    change(evs, value)
    return evs


@pytest.mark.parametrize("case", sorted(LEGACY) + sorted(RULES))
def test_legacy_shapes_and_load_refusals_read_alike_and_stay_on_the_fast_path(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each load rule broken, and each legacy shape the import upgrades, reads alike both ways;
    a legacy shape, or a value of the right JSON type, never costs its line the fast path (the
    data shapes leave every field optional): only the load check reads its event exactly."""
    data = _checked_log(_bent(case))
    assert_same("bent.jsonl", data)
    assert _read_exactly(monkeypatch, data) == []


@pytest.mark.parametrize("metadata", [{"surfaceOp": "append"}, {"sourceEventSeqs": [0]}])
def test_surface_metadata_is_typed_on_the_surface_types_only(
    monkeypatch: pytest.MonkeyPatch, metadata: dict[str, Any]
) -> None:
    """Only user/message, assistant/message and tool/result carry surfaceOp and sourceEventSeqs
    (session-log.md §4.3): the fast decoder types them on those alone, so a log-only event that
    carries them is read the exact way, and both ways read the log alike."""
    events: list[dict[str, Any]] = [
        {"type": "step/start", "seq": 0, "time": 1, "data": {"turn": 1, "step": 1}},
        {"type": "user/message", "seq": 1, "time": 1, "data": {}, "surfaceOp": "append", "sourceEventSeqs": [0]},
        {"type": "step/end", "seq": 2, "time": 1, "data": {}, **metadata},
    ]
    data = b"\n".join(json.dumps(e).encode() for e in [HEADER, *events]) + b"\n"
    assert_same("surface.jsonl", data)
    for event in events:  # a type met for the first time is read exactly (fastruns.learn)
        envelope.REGISTRY.event_class(event["type"])
    assert _read_exactly(monkeypatch, data) == [4]


def _found_once_by_search(line: bytes, raw: bytes) -> int:
    """The rule `_found_once` keeps, as two whole searches."""
    start = line.find(raw)
    return start if start >= 0 and line.find(raw, start + 1) < 0 else -1


PIECES = st.lists(st.sampled_from([b"a", b"ab", b"aab", b'"', b"[", b"]", b"x" * 20]), max_size=40).map(b"".join)


@given(PIECES, PIECES, st.integers(0, 3), st.data())
def test_a_content_is_found_once_exactly_when_two_whole_searches_find_it_once(
    before: bytes, after: bytes, copies: int, data: st.DataObject
) -> None:
    """fastruns._found_once (its head first, then one compare) answers as two whole searches do,
    on contents made of few letters (heads found often, overlapping and repeated contents),
    present once or several times, or a slice of the line itself."""
    from msgspec import Raw

    from replay.logs.fastruns import _HEAD, _found_once

    raw = data.draw(st.binary(min_size=1, max_size=3 * _HEAD) | PIECES.filter(bool))
    line = before + raw * copies + after + raw
    cut = data.draw(st.integers(0, len(line)))
    for content in (raw, line[cut : cut + data.draw(st.integers(1, 3 * _HEAD))] or raw):
        assert _found_once(line, Raw(content)) == _found_once_by_search(line, content)


def _text(value: Any) -> str:
    """A value as JSON text, however deep (deepjson: no recursion)."""
    from replay.lines import deepjson

    return deepjson.dumps(value)


class _Heard:
    """A SessionSink that writes down everything it hears, in order (replay's stager hears the same)."""

    def __init__(self) -> None:
        self.calls: list[tuple[object, ...]] = []

    def other_record(self, line: int, index: int, event: Any, row: Any, raw: bytes | None) -> None:
        self.calls.append(("other", line, index, _text(event), None if row is None else _text(row.to_json()), raw))

    def schedule_change(self, entry: Any) -> None:
        self.calls.append(("change", entry.line, entry.event_index, _text(entry.event), entry.raw))

    def judged(self, seed: object, judgement: Any) -> None:
        self.calls.append(
            ("judged", repr(seed), [(r.index, r.line, r.owned, r.status.value) for r in judgement.ledger])
        )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.sampled_from(list(Mode)))
def test_a_hearer_hears_the_same_records_by_either_path(index: int, mode: Mode) -> None:
    """replay reads through the fast path too (issue 64: one path for both speeds): what its
    stager hears (every committed record, as its line, value or row, in order; each schedule
    change; the ledger) is what the exact path tells, on valid and mutated logs of every version."""
    from fuzz.logs import make, sources

    item = make(20261207, index, sources(Path(__file__).resolve().parent.parent / "no-real-logs"))
    if item.source.startswith("store:"):
        return
    heard = []
    for fast in (True, False):
        sink = _Heard()
        report = verify_log(SessionLog(item.name, Reading(mode=mode), item.data, fast=fast), sink)
        heard.append((_text(report.to_json()), sink.calls))
    assert heard[0] == heard[1]


def test_a_hearer_gets_no_bytes_the_exact_path_would_not_keep() -> None:
    """A yielded call whose line msgspec cannot read as JSON (a number past the doubles, which
    JSON.parse reads as -Infinity) reaches the hearer as its value without its bytes, by either
    path: a stager writes the value as JavaScript holds it, never the bytes DuckDB would read
    otherwise."""
    source = Path(__file__).resolve().parent.parent / "fixtures" / "sessions" / "valid" / "reminders.session.jsonl"
    call = b'"tool/call","seq":8,"time":1785931200233,"data":{"turn":1,"step":1,'
    data = source.read_bytes().replace(call, call.replace(b'"step":1', b'"step":-1e999'), 1)
    assert b"-1e999" in data
    verify_log(SessionLog("s.jsonl", data=data))  # (the fast decoder learns the log's event types)
    heard = []
    for fast in (True, False):
        sink = _Heard()
        verify_log(SessionLog("s.jsonl", data=data, fast=fast), sink)
        heard.append(sink.calls)
    assert heard[0] == heard[1]
    assert [c[-1] for c in heard[0] if c[0] == "other" and c[2] == 8] == [None]
