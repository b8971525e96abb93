"""The judge's selector (replay/judge/telling.py): its screen of a run is a sound bound of its
line-by-line bytes test, so the fast path, which asks `by_bytes` only about the lines the
screen keeps, selects exactly the events the exact path does, and leaves the selector's state
as the exact path leaves it."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from replay.judge.telling import TellingEvents

TEXTS = (
    "plain",
    "[SCHEDULE REMINDER] at noon",
    "the schedule of the day",
    "SCHEDULE",
    '"schedule"',
    "tool-schedule",
    "schedule_create",
    "caf\u00e9",
)
CALLS = ("c1", "c2", "c 3", "c\u00e93")
NAMES = ("bash", "schedule_create", "schedule_list", "read")


@st.composite
def events(draw: st.DrawFn) -> dict[str, Any]:
    tag = draw(st.sampled_from(("request/header", "user/message", "agent/inbox/spliced", "tool/call", "tool/result")))
    text = draw(st.sampled_from(TEXTS))
    call = draw(st.sampled_from(CALLS))
    if tag == "tool/call":
        data: dict[str, Any] = {"callId": call, "name": draw(st.sampled_from(NAMES)), "arguments": text}
    elif tag == "tool/result":
        block = {"type": "tool-result", "toolCallId": call, "content": [{"type": "text", "text": text}]}
        data = {"message": {"id": "r", "role": "user", "source": {"kind": "tool", "callId": call}, "content": [block]}}
    elif tag == "request/header":
        data = {"header": {"tools": [{"name": text}]}}
    else:
        data = {"content": [{"type": "text", "text": text}], "source": {"kind": "user"}}
    return {"type": tag, "seq": 0, "time": 0, "data": data}


def _asked(select: TellingEvents, event: dict[str, Any], line: bytes) -> bool:
    return select.by_bytes(event["type"], line) and select.by_event(event["type"], event)


@given(st.lists(st.lists(events(), max_size=12), max_size=5), st.booleans())
def test_the_screen_keeps_every_line_by_bytes_may_take(runs: list[list[dict[str, Any]]], ascii_only: bool) -> None:
    """Runs of events asked line by line, and the same runs screened first (only the kept lines
    asked): the same events selected, and the same calls open and header read at every run's end."""
    one_by_one, screened = TellingEvents(), TellingEvents()
    for run in runs:
        lines = [json.dumps(event, ensure_ascii=ascii_only).encode() + b"\n" for event in run]
        expected = [k for k, event in enumerate(run) if _asked(one_by_one, event, lines[k])]
        told = screened.screen([event["type"] for event in run], lines)
        assert len(told) == len(run)
        got = [k for k, kept in enumerate(told) if kept and _asked(screened, run[k], lines[k])]
        assert got == expected
        assert screened._open_calls == one_by_one._open_calls
        assert screened._tools_read == one_by_one._tools_read


def test_a_run_without_a_mention_is_screened_out_in_one_scan() -> None:
    """The usual run: no line names a schedule, no call is open, the log's tools already read."""
    select = TellingEvents()
    select.by_bytes("request/header", b'{"tools": []}')
    lines = [b'{"type":"user/message","data":"hello"}\n', b'{"type":"tool/result","data":"x"}\n']
    assert select.screen(["user/message", "tool/result"], lines) == [False, False]
    assert select.screen(["request/header"], [b'{"tools":["schedule_create"]}\n']) == [False]


PIECES = (b"", b"plain", b"schedule", b"SCHEDULE REMINDER", b"SCHEDULE", b"xschedule_x", b"sched", b"ule")


@given(st.lists(st.lists(st.sampled_from(PIECES)).map(b"".join), max_size=20))
def test_a_run_s_mentions_are_found_line_by_line(lines: list[bytes]) -> None:
    """The joined scan finds exactly the lines holding `schedule` or `SCHEDULE REMINDER`."""
    from replay.judge.telling import _mentions

    assert _mentions(lines) == [b"schedule" in line or b"SCHEDULE REMINDER" in line for line in lines]
