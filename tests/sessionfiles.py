"""Helpers that write session log files for tests (plain or Zstandard)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import zstandard


def header(session_id: str = "test-session", seed_length: object = None, **extra: Any) -> dict[str, Any]:
    h: dict[str, Any] = {"type": "session", "version": 0, "id": session_id, "createdAt": 0}
    if seed_length is not None:
        h["seedLength"] = seed_length
    h.update(extra)
    h.setdefault("delegationDepth", 0)
    return h


def line(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass") + b"\n"


def session_bytes(records: Iterable[object], head: dict[str, Any] | None = None) -> bytes:
    return line(head if head is not None else header()) + b"".join(line(r) for r in records)


def write_session(path: Path, records: Sequence[object], head: dict[str, Any] | None = None) -> Path:
    path.write_bytes(session_bytes(records, head))
    return path


def zstd_session(batches: Sequence[Sequence[object]], head: dict[str, Any] | None = None) -> bytes:
    """Frame 1 = header line; one frame per batch, checksummed, as the harness writes them."""
    c = zstandard.ZstdCompressor(write_checksum=True)
    out = c.compress(line(head if head is not None else header()))
    for batch in batches:
        out += c.compress(b"".join(line(r) for r in batch))
    return out


DEFAULT_DATA: dict[str, dict[str, Any]] = {"turn/end": {"turn": 1, "reason": {"kind": "completed"}}}
"""The data an event of a type needs to load at the session layer when a test gives none."""


def ev(seq: int, type_: str = "turn/start", data: object = None, time: int = 0) -> dict[str, Any]:
    return {
        "type": type_,
        "seq": seq,
        "time": time,
        "data": dict(DEFAULT_DATA.get(type_, {})) if data is None else data,
    }


def text_row(seq0: int, texts: Sequence[str], dt: Sequence[int] | None = None, time0: int = 0) -> dict[str, Any]:
    return {
        "type": "text-chunks",
        "seq0": seq0,
        "time0": time0,
        "data": {
            "turn": 1,
            "step": 1,
            "index": 0,
            "dt": list(dt if dt is not None else [1] * (len(texts) - 1)),
            "texts": list(texts),
        },
    }
