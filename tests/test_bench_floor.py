"""bench/verify.py's reader floor is a floor of verify's own reading: every line after the
header of each file is split and decoded, none skipped (else the figure it prints beside verify
would flatter the judgement above it)."""

from __future__ import annotations

import sys
from pathlib import Path

from replay.logs.frames import ZSTD_MAGIC

ROOT = Path(__file__).resolve().parent.parent


def test_the_reader_floor_decodes_every_line_after_the_header() -> None:
    sys.path.insert(0, str(ROOT))
    from bench.verify import floor

    logs = [p for p in sorted((ROOT / "fixtures").rglob("*.jsonl")) if "conformance" not in p.parts]
    logs = [p for p in logs if not p.read_bytes().startswith(ZSTD_MAGIC) and b"\n" in p.read_bytes()]
    assert len(logs) > 20
    for path in logs:
        seconds, decoded = floor([path])
        assert seconds >= 0
        assert decoded == path.read_bytes().count(b"\n") - 1, path
    _, together = floor(logs)
    assert together == sum(p.read_bytes().count(b"\n") - 1 for p in logs)


def test_the_reader_floor_reads_a_large_log_in_all_its_pieces_and_blocks(tmp_path: Path) -> None:
    """A log past READ_CHUNK is read in pieces (a FileSource), its lines in several blocks."""
    sys.path.insert(0, str(ROOT))
    from bench.verify import floor
    from replay.logs.bytesource import READ_CHUNK

    line = b'{"type":"step/start","seq":%d,"time":0,"data":{"turn":1,"step":1}}\n'
    count = 2 * READ_CHUNK // len(line % 0) + 7
    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"type":"session","version":0,"id":"s"}\n' + b"".join(line % seq for seq in range(count)))
    assert path.stat().st_size > 2 * READ_CHUNK
    assert floor([path])[1] == count
