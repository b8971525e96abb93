"""A writer of SQLite session stores for the tests, as sqlite-store.md describes the harness's two
layouts: 14 (one row per event, JSON text) and 17 (runs of chunk events packed, data of 4,096
bytes or more compressed by Zstandard where that is smaller, seq lists as varints). It writes
the logical events of JSONL logs (v0/v1 headers: the columns hold no other), so that a
session's report read from the store can be held equal to its log's. The real writers (the
published package, layout 14; the harness, layout 17) are tested beside it."""

from __future__ import annotations

import itertools
import json
import sqlite3
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import zstandard

APPLICATION_ID = 0x44534850
SCHEMA = """
CREATE TABLE persistence_state (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), store_id TEXT NOT NULL) STRICT;
CREATE TABLE sessions (id TEXT PRIMARY KEY, version INTEGER NOT NULL, created_at INTEGER NOT NULL,
  cwd TEXT, parent_session TEXT, seed_length INTEGER, origin TEXT, delegation_depth INTEGER,
  agent_preset TEXT, incarnation TEXT NOT NULL, revision INTEGER NOT NULL) STRICT;
CREATE TABLE events (session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL, type TEXT NOT NULL, time INTEGER NOT NULL, data {data} NOT NULL,
  source_event_seqs {seqs}, surface_op TEXT{ignorable},
  PRIMARY KEY (session_id, seq)) STRICT;
"""
PACK_TYPES = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks", "tool-call-delta": "tool-call-chunks"}


def varints(seqs: Sequence[int]) -> bytes:
    """A seq list as layout 17 stores it: the first seq, then ZigZag deltas, LEB128 each."""
    out = bytearray()
    for k, seq in enumerate(seqs):
        value = seq if k == 0 else _zigzag(seq - seqs[k - 1])
        while True:
            byte = value & 0x7F
            value >>= 7
            out.append(byte | (0x80 if value else 0))
            if not value:
                break
    return bytes(out)


def _zigzag(delta: int) -> int:
    return delta * 2 if delta >= 0 else -delta * 2 - 1


def create(path: Path, layout: int, store_id: str = "store-1", journal: str = "wal") -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute(f"PRAGMA journal_mode = {journal}")
    db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    db.execute(f"PRAGMA user_version = {layout}")
    packed = layout == 17
    db.executescript(
        SCHEMA.format(
            data="ANY" if packed else "TEXT",
            seqs="ANY" if packed else "TEXT",
            ignorable=",\n  ignorable INTEGER CHECK (ignorable IS NULL OR ignorable IN (0, 1))" if packed else "",
        )
    )
    db.execute("INSERT INTO persistence_state VALUES (1, ?)", (store_id,))
    return db


def write_session(db: sqlite3.Connection, layout: int, log: bytes, revision: int = 1) -> str:
    """The session of JSONL `log` written into the store: its header row and its event rows."""
    lines = [json.loads(line) for line in log.splitlines() if line.strip()]
    header, events = lines[0], _expanded(lines[1:])
    db.execute(
        "INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            header["id"],
            header["version"],
            header["createdAt"],
            header.get("cwd"),
            header.get("parentSession"),
            header.get("seedLength"),
            header.get("origin"),
            header.get("delegationDepth"),
            header.get("agentPreset"),
            f"incarnation-{header['id']}",
            revision,
        ),
    )
    rows = _packed_rows(events) if layout == 17 else [_scalar(e, layout) for e in events]
    db.executemany(
        f"INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?{', ?' if layout == 17 else ''})",
        [(header["id"], *row[: 7 if layout == 17 else 6]) for row in rows],
    )
    return str(header["id"])


def write_store(path: Path, layout: int, logs: Iterable[bytes], journal: str = "wal") -> list[str]:
    db = create(path, layout, journal=journal)
    ids = [write_session(db, layout, log) for log in logs]
    db.close()
    return ids


def _expanded(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The logical events of a log's records (a JSONL packed row expanded)."""
    from replay.logs.chunks import ROW_TAGS, decode_row

    out: list[dict[str, Any]] = []
    for record in records:
        if record.get("type") in ROW_TAGS:
            out.extend(decode_row(record, record["type"]).events())
        else:
            out.append(record)
    return out


def _text(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _data(text: str, layout: int) -> str | bytes:
    raw = text.encode()
    if layout == 17 and len(raw) >= 4096:
        frame = zstandard.ZstdCompressor(level=3, write_content_size=True).compress(raw)
        if len(frame) < len(raw):
            return frame
    return text


def _scalar(event: dict[str, Any], layout: int) -> tuple[object, ...]:
    seqs = event.get("sourceEventSeqs")
    surface = event.get("surfaceOp")
    return (
        event["seq"],
        event["type"],
        event["time"],
        _data(_text(event["data"]), layout),
        None if seqs is None else varints(seqs) if layout == 17 else _text(seqs),
        None if surface is None else _text(surface),
        1 if event.get("ignorable") is True else None,
    )


def _pack_key(event: dict[str, Any]) -> tuple[object, ...] | None:
    """What a run of packable chunk events shares, None for an event that is not packable."""
    if event.get("type") != "assistant/chunk" or set(event) != {"type", "seq", "time", "data"}:
        return None
    data = event["data"]
    chunk = data.get("chunk") if isinstance(data, dict) else None
    if not isinstance(chunk, dict) or set(data) != {"turn", "step", "chunk"} or chunk.get("type") not in PACK_TYPES:
        return None
    if chunk["type"] == "tool-call-delta":
        if set(chunk) - {"name"} != {"type", "index", "id", "argumentsDelta"}:
            return None
        return (chunk["type"], data["turn"], data["step"], chunk["index"], chunk["id"], chunk.get("name", None))
    if set(chunk) != {"type", "index", "text"}:
        return None
    return (chunk["type"], data["turn"], data["step"], chunk["index"])


def _packed_rows(events: list[dict[str, Any]]) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []
    k = 0
    while k < len(events):
        key = _pack_key(events[k])
        end = k + 1
        while key is not None and end < len(events) and end - k < 1024 and _pack_key(events[end]) == key:
            end += 1
        if key is None or end - k < 3:
            rows.append(_scalar(events[k], 17))
            k += 1
            continue
        run = events[k:end]
        first = run[0]
        chunk = first["data"]["chunk"]
        data: dict[str, object] = {"turn": first["data"]["turn"], "step": first["data"]["step"]}
        data["index"] = chunk["index"]
        data["dt"] = [b["time"] - a["time"] for a, b in itertools.pairwise(run)]
        if chunk["type"] == "tool-call-delta":
            data["id"] = chunk["id"]
            if "name" in chunk:
                data["name"] = chunk["name"]
            data["args"] = [e["data"]["chunk"]["argumentsDelta"] for e in run]
        else:
            data["texts"] = [e["data"]["chunk"]["text"] for e in run]
        rows.append((first["seq"], PACK_TYPES[chunk["type"]], first["time"], _data(_text(data), 17), None, None, 0))
        k = end
    return rows
