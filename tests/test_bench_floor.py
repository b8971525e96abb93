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

    files = {p: p.read_bytes() for p in sorted((ROOT / "fixtures").rglob("*.jsonl")) if "conformance" not in p.parts}
    after_header = {
        p: data.count(b"\n") - 1 for p, data in files.items() if not data.startswith(ZSTD_MAGIC) and b"\n" in data
    }
    assert len(after_header) > 20
    for path, lines in after_header.items():
        seconds, decoded = floor([path])
        assert seconds >= 0
        assert decoded == lines, path
    assert floor(list(after_header))[1] == sum(after_header.values())


def test_the_reader_floor_reads_a_large_log_in_all_its_pieces_and_blocks(tmp_path: Path) -> None:
    """A log past READ_CHUNK is read in pieces (a FileSource), its lines in several blocks."""
    sys.path.insert(0, str(ROOT))
    from bench.verify import floor
    from replay.sources.bytesource import READ_CHUNK

    line = b'{"type":"step/start","seq":%d,"time":0,"data":{"turn":1,"step":1}}\n'
    count = 2 * READ_CHUNK // len(line % 0) + 7
    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"type":"session","version":0,"id":"s"}\n' + b"".join(line % seq for seq in range(count)))
    assert path.stat().st_size > 2 * READ_CHUNK
    assert floor([path])[1] == count
