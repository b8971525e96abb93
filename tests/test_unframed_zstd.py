"""A Zstandard file the harness did not frame (compressed whole by a general tool: `zstd
log.jsonl`, or split at any byte by a parallel one): the harness refuses it, as its first frame
is not exactly the header line (session-log.md §9.3), but its content is a log all the same.
Strict mode refuses it saying what happened and what its content alone is; lenient mode judges
the content, with a warning; either way the content's findings are the plain bytes' (issue 49,
item 9: `zstdcat … | schedlog verify -` said ok, the file itself CORRUPT "first frame is not
exactly one header line")."""

from __future__ import annotations

import json
import shutil
import subprocess
from itertools import pairwise
from pathlib import Path

import pytest
import zstandard
from hypothesis import given
from hypothesis import strategies as st

from replay.judge.report import FINDING_LISTS
from replay.judge.verify import verify_bytes
from replay.reading import Mode, Reading

from .conftest import REAL_LOGS, ROOT

LOGS = sorted((ROOT / "fixtures" / "sessions").rglob("*.session.jsonl"))
if REAL_LOGS.is_dir():
    LOGS += sorted(REAL_LOGS.glob("*.jsonl"))
FRAMING = "format.zstd.framing"


def _without_framing(report: object, refused: bool = False) -> str:
    """The report without the framing finding; `refused`: nor the readers' word on the event
    types, which a log refused before their guard looks does not get (issue 69)."""
    value = report.to_json()  # type: ignore[attr-defined]
    value["path"] = "x"
    gone = {FRAMING, *(READERS_SAY if refused else ())}
    for name in ("formatFindings", *(name for name, _ in FINDING_LISTS)):
        value[name] = [f for f in value[name] if f["code"] not in gone]
    return json.dumps(value, sort_keys=True)


READERS_SAY = ("format.readers", "format.event.unknown")


def _one_frame(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(write_checksum=True).compress(data)


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_a_log_compressed_whole_is_judged_by_its_content(path: Path) -> None:
    data = path.read_bytes()
    plain = {mode: verify_bytes("log.jsonl", data, Reading(mode=mode)) for mode in Mode}
    packed = _one_frame(data)
    lenient = verify_bytes("log.jsonl.zstd", packed, Reading(mode=Mode.LENIENT))
    strict = verify_bytes("log.jsonl.zstd", packed)
    if data.count(b"\n") < 2 or plain[Mode.STRICT].verdict == "unreadable":
        return  # a header-only or unreadable content says nothing more compressed
    assert _without_framing(lenient) == _without_framing(plain[Mode.LENIENT])
    assert [f.severity.value for f in lenient.findings if f.code == FRAMING] == ["warning"]
    assert strict.verdict == "corrupt"
    (refusal,) = [f for f in strict.findings if f.code == FRAMING]
    assert refusal.severity.value == "error" and "compressed whole by a general tool" in refusal.message
    alone = "ok" if plain[Mode.STRICT].verdict == "ok" else "corrupt (below)"
    assert refusal.message.endswith(f"its content alone is {alone}")
    assert _without_framing(strict) == _without_framing(plain[Mode.STRICT], refused=True).replace(
        '"verdict": "ok"', '"verdict": "corrupt"'
    )


@given(cuts=st.lists(st.integers(1, 3000), min_size=1, max_size=6, unique=True))
def test_frames_split_at_any_byte_read_as_the_content(cuts: list[int]) -> None:
    """A parallel tool's frames end anywhere, inside the header or a record: the content is
    the frames' plaintexts joined."""
    data = (ROOT / "fixtures" / "sessions" / "corrupt" / "reused-id.session.jsonl").read_bytes()
    bounds = [0, *sorted(c for c in cuts if c < len(data)), len(data)]
    pieces = [data[a:b] for a, b in pairwise(bounds)]
    if pieces[0].endswith(b"\n") and pieces[0].count(b"\n") == 1:
        return  # the harness's framing of the header, by chance
    packed = b"".join(_one_frame(p) for p in pieces)
    lenient = verify_bytes("log.jsonl.zstd", packed, Reading(mode=Mode.LENIENT))
    assert _without_framing(lenient) == _without_framing(verify_bytes("log.jsonl", data, Reading(mode=Mode.LENIENT)))


@pytest.mark.skipif(shutil.which("zstd") is None, reason="the zstd tool is not installed")
def test_the_zstd_tools_file_is_refused_saying_why(tmp_path: Path) -> None:
    source = ROOT / "fixtures" / "sessions" / "valid" / "reminders.session.jsonl"
    packed = tmp_path / "reminders.session.jsonl.zst"
    subprocess.run(["zstd", "-q", "-o", str(packed), str(source)], check=True)
    report = verify_bytes(packed.name, packed.read_bytes())
    assert report.verdict == "corrupt" and report.events == 88
    assert [f.code for f in report.findings if f.severity.value == "error"] == [FRAMING]
    lenient = verify_bytes(packed.name, packed.read_bytes(), Reading(mode=Mode.LENIENT))
    assert lenient.verdict == "ok" and lenient.events == 88
