"""A resumed read equals a cold read (issue 50, acceptance 1): a log read when it was shorter,
its state saved at its last committed line (replay/logs/readstate.py), then resumed over the
grown file, gives the report a cold read of the grown file gives, byte for byte in
`--format json`, wherever the split falls: inside a line, a frame, a chunk row or a torn tail;
plain and Zstandard; v0 to v4; fork children; valid and corrupt logs; both modes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.logs import make, sources
from invariant.profiles import PROFILES, get_profile
from invariant.tools.names import SURFACE_NAMES
from replay.judge.verify import verify_log
from replay.lines.jsonline import DeepBudget
from replay.logs.logfile import SessionLog
from replay.logs.readstate import ReadState
from replay.reading import Mode, Reading
from replay.sources.zstdframes import Frame

from .conftest import ROOT

SESSIONS = sorted((ROOT / "fixtures").rglob("*.jsonl"))
POOL = sources(ROOT / "no-real-logs")
"""The fixture sessions (v0 with chunk rows, fork children) as they are and rewritten as v2-v4,
plain and Zstandard (what the fuzzer mutates)."""


def _json(log: SessionLog) -> str:
    return json.dumps(verify_log(log).to_json(), sort_keys=True)


def _cold(data: bytes, reading: Reading, fast: bool = True) -> tuple[str, ReadState | None]:
    log = SessionLog("s.jsonl", reading, data, fast=fast, saving=True)
    return _json(log), log.saved


def _resumed(data: bytes, reading: Reading, state: ReadState, fast: bool = True) -> tuple[str, ReadState | None]:
    log = SessionLog("s.jsonl", reading, data, fast=fast, resume=state, saving=True)
    return _json(log), log.saved


def test_the_pool_holds_what_the_property_asks_for() -> None:
    names = " ".join(source.name for source in POOL)
    text = b"".join(line for source in POOL for line in source.lines)
    for version in (0, 2, 3, 4):
        assert f".v{version}.session" in names
    assert ".zstd" in names and "fork-child" in names
    assert b"text-chunks" in text and b'"inherited":true' in text


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(
    index=st.integers(0, 10**6),
    splits=st.lists(st.floats(0, 1), min_size=1, max_size=3),
    mode=st.sampled_from(list(Mode)),
    fast=st.booleans(),
    profile=st.sampled_from([None, *sorted(PROFILES)]),
    surface=st.sampled_from([None, *SURFACE_NAMES]),
    seed=st.sampled_from([None, None, 0, 3, 7]),
)
def test_a_resumed_read_equals_a_cold_read_wherever_the_log_was_cut(
    index: int, splits: list[float], mode: Mode, fast: bool, profile: str | None, surface: str | None, seed: int | None
) -> None:
    """Any fuzz input (valid or mutated, plain or framed, torn anywhere), read when it was cut
    short at up to three places in turn, each read resumed from the last's state (the reader's
    and the judge's), then resumed over the whole: the cold read's report, under every profile
    (or the one the evidence chooses), tool surface and seedLength."""
    item = make(20261205, index, POOL)
    if item.source.startswith("store:"):
        return
    chosen = None if profile is None else get_profile(profile)
    data, reading = item.data, Reading(chosen, mode, seed, tool_surface=surface)
    whole, _ = _cold(data, reading, fast)
    state = None
    for cut in sorted(int(s * len(data)) for s in splits):
        if state is None:
            _, state = _cold(data[:cut], reading, fast)
        else:
            assert state.offset <= cut
            _, state = _resumed(data[:cut], reading, state, fast)
    if state is not None:
        assert _resumed(data, reading, state, fast)[0] == whole


@pytest.mark.parametrize("path", SESSIONS[:60], ids=lambda p: p.name)
def test_every_fixture_session_resumes_at_every_line(path: Path) -> None:
    data = path.read_bytes()
    reading = Reading()
    whole, _ = _cold(data, reading)
    ends = [k + 1 for k, b in enumerate(data) if b == 0x0A]
    for cut in ends[:40]:
        _, state = _cold(data[:cut], reading)
        if state is not None:
            assert state.offset == cut
            assert _resumed(data, reading, state)[0] == whole


def test_the_state_is_saved_before_a_torn_tail_and_read_again_with_what_was_appended() -> None:
    data = next(p.read_bytes() for p in SESSIONS if p.read_bytes().count(b"\n") > 5)
    cut = data.index(b"\n", data.index(b"\n") + 1) + 10  # ten bytes into the third line
    _, state = _cold(data[:cut], Reading())
    assert state is not None and state.offset == data.index(b"\n", data.index(b"\n") + 1) + 1
    assert state.line == 2


def test_no_state_where_the_read_ended_early_or_nothing_was_a_log() -> None:
    reading = Reading()
    assert _cold(b"", reading)[1] is None
    assert _cold(b'{"type":"session","version":4}', reading)[1] is None  # the only line, torn
    newer = b'{"type":"session","version":99,"id":"x"}\n'
    assert _cold(newer, reading)[1] is None  # a newer format is not read past its header
    unframed = zstandard.ZstdCompressor().compress(SESSIONS[0].read_bytes())  # one frame: compressed whole
    assert _cold(unframed, reading)[1] is None


def test_a_resumed_read_asks_the_selector_as_it_was_left() -> None:
    """A schedule_* call before the cut and its result after it: the result is still read."""
    path = ROOT / "fixtures" / "host" / "transcripts" / "call-delete-with-patch.session.v4.jsonl"
    data = path.read_bytes()
    whole, _ = _cold(data, Reading())
    assert "tool.call.accepted" in whole
    for cut in (k + 1 for k, b in enumerate(data) if b == 0x0A):
        _, state = _cold(data[:cut], Reading())
        assert state is not None
        assert _resumed(data, Reading(), state)[0] == whole


def _crossing_the_deep_bound(framed: bool) -> bytes:
    """A v4 log whose events after the sixth carry ~30 KB values nested 12,000 deep: the
    reader's budget for deep values (SMALL_BUDGET in these tests) is crossed near the 5th of
    them (issue 63, item 2)."""
    framed_log = FIXED_RATE_V4.read_bytes()
    z = zstandard.ZstdDecompressor()
    text = b"".join(z.decompress(framed_log[f.start : f.end]) for f in _frames(framed_log))
    lines = text.splitlines(True)
    deep = "[" * 12_000 + "0," * 3_000 + "0" + "]" * 12_000  # (past what msgspec and json read: 5,000 on 3.13)
    seq = 5
    out = lines[:7]
    for k in range(16):
        seq += 1
        event = f'{{"type":"x/deep","seq":{seq},"time":{1785931300000 + k},"data":{{"deep":{deep}}}}}\n'
        out.append(event.encode())
    if not framed:
        return b"".join(out)
    return b"".join(zstandard.ZstdCompressor().compress(line) for line in out)


SMALL_BUDGET = 128 << 10
FIXED_RATE_V4 = ROOT / "fixtures" / "formats" / "fixed-rate" / "v4" / "session.v4.jsonl.zstd"


@pytest.mark.parametrize("framed", [False, True], ids=["plain", "zstd"])
@pytest.mark.parametrize("mode", list(Mode))
def test_a_bound_crossed_is_located_alike_wherever_the_read_resumed(
    framed: bool, mode: Mode, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every finding's line and index, `format.depth.bound`'s among them, is the cold read's
    whatever line the read resumed at (the bound is located at the record that crossed it,
    not at the first line of the block being read). The budget is made small (a read of a
    whole 1 MiB of deep values costs seconds) by the reader's own DeepBudget."""
    from replay.logs import logfile

    monkeypatch.setattr(logfile, "DeepBudget", lambda: DeepBudget(left=SMALL_BUDGET))
    data = _crossing_the_deep_bound(framed)
    reading = Reading(mode=mode)
    whole, _ = _cold(data, reading)
    bound = [f for f in json.loads(whole)["formatFindings"] if f["code"] == "format.depth.bound"]
    assert len(bound) == 1 and bound[0]["line"] > 8, bound
    ends = [frame.end for frame in _frames(data)] if framed else [k + 1 for k, b in enumerate(data) if b == 0x0A]
    resumed = 0
    for cut in ends:
        _, state = _cold(data[:cut], reading)
        if state is not None:
            resumed += 1
            assert _resumed(data, reading, state)[0] == whole, f"resumed at byte {cut}"
    assert resumed >= 8


def _frames(data: bytes) -> list[Frame]:
    """The Zstandard frames of `data`."""
    from replay.logs.frames import scan_frames

    return scan_frames(data)
