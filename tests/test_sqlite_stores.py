"""SQLite session stores (sqlite-store.md, issue 66): every session read from a store gets the
report its JSONL log gets, plus what only a store can have wrong, located by session and seq;
the database is never written; hostile files end in verdicts, never in tracebacks."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
from collections import Counter
from itertools import accumulate
from pathlib import Path
from typing import Any

import pytest
import zstandard
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from fixtures.storewriter import create, varints, write_session, write_store
from replay.cli import main
from replay.judge.verify import verify_path
from replay.lines.chunks import ROW_TAGS, decode_row
from replay.sources.sqlitenames import split_name
from replay.sources.sqlitestore import Store, StoreError
from replay.sources.storerows import RowDefect, varint_seqs
from tests.conftest import ROOT, SHARED

STORES = SHARED / "sqlite-stores" / "17"
requires_stores = pytest.mark.skipif(
    not STORES.is_dir(), reason=f"the harness's SQLite stores are not present at {STORES} (no ../shared)"
)
HOLDABLE = [
    ROOT / "fixtures" / "sessions" / "valid" / "fork-child.session.jsonl",
    ROOT / "fixtures" / "sessions" / "valid" / "reminders.session.jsonl",
    *sorted((ROOT / "fixtures" / "formats").glob("*/v0/session.jsonl")),
    *sorted((ROOT / "fixtures" / "sessions" / "corrupt").glob("*.session.jsonl")),
]
"""Fixture logs whose headers (format v0) a store's columns hold."""


def _holdable(path: Path) -> bool:
    lines = path.read_bytes().splitlines()
    try:
        header = json.loads(lines[0])
        records = [json.loads(line) for line in lines[1:] if line.strip()]
    except ValueError:
        return False
    envelope = {"type", "seq", "time", "data", "sourceEventSeqs", "surfaceOp"}
    if header.get("version") not in (0, 1) or not all(
        isinstance(r, dict) and ((set(r) <= envelope and type(r.get("seq")) is int) or r.get("type") in ROW_TAGS)
        for r in records
    ):
        return False
    seqs = [json.loads(line)["seq"] for line in expanded(path.read_bytes()).splitlines()[1:] if line.strip()]
    return len(set(seqs)) == len(seqs)  # (a store's key holds each seq once)


def expanded(log: bytes) -> bytes:
    """The JSONL log of a session's logical events: a packed row's lines expanded (a store's
    session is read back one line per event, so its line numbers are these)."""
    lines = []
    for line in log.splitlines():
        value = json.loads(line) if line.strip() else None
        if isinstance(value, dict) and value.get("type") in ROW_TAGS:
            lines += [json.dumps(e, separators=(",", ":")).encode() for e in decode_row(value, value["type"]).events()]
        else:
            lines.append(line)
    return b"\n".join(lines) + b"\n"


LOGS = [p for p in HOLDABLE if _holdable(p)]


def report_json(path: str) -> dict[str, Any]:
    """A report as JSON, less what its path alone decides (the path, and the format generation
    a log's file name identifies)."""
    found = verify_path(path).to_json()
    del found["path"], found["generation"]
    return found


def test_verify_reads_a_stores_packed_rows_one_line_each_numbering_lines_as_the_logical_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """verify (no one hearing the records but the judge) is given a store's packed rows as a
    log file holds them, a line each, and numbers the lines after each by the members before
    it: the violation and the findings after two packed rows are at the lines of the session's
    logical log (one line an event), its report that log's, as when the rows are expanded."""
    from replay.logs.logfile import SessionLog
    from replay.logs.records import Records
    from replay.sources import sqlitestore

    real = Records.record
    log = (ROOT / "fixtures" / "sessions" / "corrupt" / "gate-too-soon.session.jsonl").read_bytes()
    log = log.replace(b'{"turn":2,"reason"', b'{"turn":2.0,"reason"')  # (the fast path reads it exactly)
    store = tmp_path / "store.db"
    [session] = write_store(store, 17, [log])
    name = f"{store}#{session}"
    read = sqlitestore.stored_session(name, 0, packed=True)
    assert isinstance(read, sqlitestore.SessionRows) and [members for _, members in read.spans] == [5, 5]
    whole = sqlitestore.stored_session(name)
    assert isinstance(whole, sqlitestore.SessionRows) and not whole.spans and whole.log == expanded(log)
    plain = tmp_path / "expanded.jsonl"
    plain.write_bytes(expanded(log))
    found = report_json(name)
    assert found == report_json(str(plain))
    assert (found["violation"]["seq"], found["violation"]["line"]) == (29, 31)
    assert [(f["index"], f["line"]) for f in found["deliveryFindings"]] == [(27, 29)]
    exact: list[int] = []
    monkeypatch.setattr(Records, "record", lambda self, line, raw: exact.append(line) or real(self, line, raw))
    last = expanded(log).count(b"\n")
    rows = [n for n in range(2, last + 1) if not 6 <= n <= 9 and not 19 <= n <= 22]  # (the members after the first)
    for fast in (True, False):  # (the fast path and the exact one number the lines alike)
        exact.clear()
        lines = [e.line for e in SessionLog(name, fast=fast).entries(schedule_only=True)]
        assert exact == ([27] if fast else rows)
        assert lines == [e.line for e in SessionLog(str(plain), fast=fast).entries(schedule_only=True)]
        assert lines == [11, 24, 29, 31]


@given(st.lists(st.tuples(st.integers(1, 40), st.integers(1, 4)), min_size=1, max_size=30), st.integers(8, 200))
def test_packed_blocks_number_every_line_as_the_logical_log_however_the_blocks_fall(
    lines: list[tuple[int, int]], chunk: int
) -> None:
    """A store's session read packed comes in blocks wherever READ_CHUNK cuts it (`chunk` here),
    each packed row in the block that holds it: every line, read as the plain-lines stage and
    `Records.at` number it, has the number its first event has in the logical log."""
    from unittest import mock

    from replay.logs import frames

    raw = b'{"type":"session"}\n' + b"".join(b"x" * width + b"\n" for width, _ in lines)
    spans = tuple((k + 1, members) for k, (_, members) in enumerate(lines) if members > 1)  # (line 0: the header)
    logical = list(accumulate((members for _, members in lines), initial=2))[:-1]
    with mock.patch.object(frames, "READ_CHUNK", chunk):
        parts = list(frames.packed_blocks(raw, spans))
    assert parts[0] == frames.Head(b'{"type":"session"}')
    numbered, before = [], 1
    for block in parts[1:]:
        assert isinstance(block, frames.Block) and isinstance(block.lines, list)
        shifts = frames.LineShifts.of(before, block.spans)
        numbered += [k if shifts is None else shifts.at(k) for k in range(before + 1, before + len(block.lines) + 1)]
        before += block.stands_for
    assert numbered == logical
    assert before == logical[-1] + lines[-1][1] - 1


@pytest.mark.parametrize("layout", [14, 17])
def test_a_sessions_report_from_a_store_is_its_jsonl_logs(tmp_path: Path, layout: int) -> None:
    assert len(LOGS) >= 8
    stores: list[list[Path]] = []  # (fixtures share session ids: a store holds each id once)
    for log in LOGS:
        session = json.loads(log.read_bytes().split(b"\n", 1)[0])["id"]
        free = next(
            (s for s in stores if session not in {json.loads(p.read_bytes().split(b"\n", 1)[0])["id"] for p in s}), None
        )
        if free is None:
            stores.append(free := [])
        free.append(log)
    for k, logs in enumerate(stores):
        store = tmp_path / f"store-{k}.db"
        ids = write_store(store, layout, [p.read_bytes() for p in logs])
        for log, session in zip(logs, ids, strict=True):
            plain = tmp_path / f"{k}-{log.stem}.jsonl"
            plain.write_bytes(expanded(log.read_bytes()))
            assert report_json(f"{store}#{session}") == report_json(str(plain)), log.name


def test_a_layout_17_store_packs_compresses_and_lists_seqs_as_its_writer_does(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    log = (ROOT / "fixtures" / "sessions" / "valid" / "fork-child.session.jsonl").read_bytes()
    big = json.loads(log.splitlines()[1])
    big["data"] = {"padding": "x" * 9000}  # compressed: 4,096 bytes or more, and smaller so
    seqs = {"type": "turn/start", "seq": 1, "time": 1, "data": {"turn": 9}, "sourceEventSeqs": [5, 3, 900, 900, 0]}
    chunks = [
        {"type": "assistant/chunk", "seq": 2 + k, "time": 10 + k * k, "data": {"turn": 1, "step": 1, "chunk": c}}
        for k, c in enumerate({"type": "text-delta", "index": 0, "text": t} for t in ("a", "b", "c", "d"))
    ]
    lines = [log.splitlines()[0], *(json.dumps(e).encode() for e in (big, seqs, *chunks))]
    body = b"\n".join(lines) + b"\n"
    db = create(store, 17)
    session = write_session(db, 17, body)
    kinds = db.execute("SELECT type, typeof(data), typeof(source_event_seqs), ignorable FROM events").fetchall()
    db.close()
    assert kinds == [
        (big["type"], "blob", "null", None),
        ("turn/start", "text", "blob", None),
        ("text-chunks", "text", "null", 0),
    ]
    with Store(str(store)) as opened:
        read = opened.read(session)
    assert read is not None and read.events == 6 and not read.findings
    assert [json.loads(line) for line in read.log.splitlines()[1:]] == [big, seqs, *chunks]


# --- the harness's own stores (layout 17) ------------------------------------------------------------


@pytest.fixture
def stores(tmp_path: Path) -> Path:
    """A private copy of the harness's stores (a WAL database opened read-write checkpoints)."""
    copied = tmp_path / "17"
    shutil.copytree(STORES, copied)
    for path in copied.iterdir():
        path.chmod(0o644)
    return copied


def _sessions_by_id(folder: Path) -> dict[str, Path]:
    return {json.loads(p.read_bytes().split(b"\n", 1)[0])["id"]: p for p in folder.glob("*.session.jsonl")}


@requires_stores
def test_the_harness_stores_sessions_read_back_as_its_jsonl_logs_byte_for_byte(stores: Path) -> None:
    logs = _sessions_by_id(stores)
    with Store(str(stores / "valid.db")) as store:
        assert store.layout == 17 and store.how == "immutable"  # (a WAL database with no -wal: all in its file)
        sessions = store.sessions()
        assert {s.id for s in sessions} == set(logs)
        for session in sessions:
            read = store.read(session.id)
            assert read is not None and read.log == logs[session.id].read_bytes()
    for session, log in logs.items():
        assert report_json(f"{stores / 'valid.db'}#{session}") == report_json(str(log))


@requires_stores
def test_what_the_harness_reader_says_of_each_store(stores: Path) -> None:
    """../shared/sqlite-stores/README.md: the harness's `loadStored` of each session."""
    fork = "96cf59c9-b347-48b9-b234-a5200913ad05"
    gap = verify_path(f"{stores / 'seq-gap.db'}#{fork}")
    assert gap.verdict == "corrupt" and gap.events == 158
    assert [(f.code, f.index) for f in gap.findings] == [("sqlite.row", 159)]
    assert "invalid committed physical row at seq 159" in gap.findings[0].message
    torn = verify_path(f"{stores / 'torn-packed-tail.db'}#{fork}")
    assert torn.verdict == "ok" and torn.events == 189
    assert [(f.code, f.severity, f.index) for f in torn.findings] == [("sqlite.tail", "warning", 189)]
    for name in ("seq-gap", "torn-packed-tail"):
        others = [s for s in Store(str(stores / f"{name}.db")).sessions() if s.id != fork]
        assert [verify_path(f"{stores / name}.db#{s.id}").verdict for s in others] == ["ok"] * 3
    with pytest.raises(StoreError, match="schema version 18"):
        Store(str(stores / "wrong-user-version.db"))


@requires_stores
def test_a_wal_databases_committed_frames_are_read_and_nothing_is_written(stores: Path) -> None:
    before = {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in stores.iterdir()}
    done = CliRunner().invoke(main, ["verify", "--no-cache", str(stores / "wal-pending.db"), str(stores / "valid.db")])
    assert done.exit_code == 0, done.output
    assert done.output.count("wal-pending.db#") == 4  # the -wal holds the fourth session
    after = {p.name: (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns) for p in stores.iterdir()}
    assert after == before  # no file written, none made (no -shm, no empty -wal), none removed
    alone = stores / "main-only"
    alone.mkdir()
    shutil.copy(stores / "wal-pending.db", alone / "wal-pending.db")
    with Store(str(alone / "wal-pending.db")) as store:
        assert store.how == "immutable" and len(store.sessions()) == 3
    assert sorted(os.listdir(alone)) == ["wal-pending.db"]


@requires_stores
def test_a_wal_whose_shm_exists_is_read_with_it(stores: Path) -> None:
    writer = sqlite3.connect(stores / "wal-pending.db")  # a live writer: it keeps the -wal and -shm
    try:
        writer.execute("SELECT count(*) FROM sessions").fetchone()
        assert (stores / "wal-pending.db-shm").exists()
        with Store(str(stores / "wal-pending.db")) as store:
            assert store.how == "read-only" and len(store.sessions()) == 4
    finally:
        writer.close()


# --- damage: each defect class, in committed rows and in the tail -----------------------------------


def _store_of(tmp_path: Path, layout: int, name: str = "fork-child") -> tuple[Path, str]:
    """A store of one session that ends with two rows after its last turn/end (a tail to damage)."""
    store = tmp_path / f"damaged-{layout}.db"
    log = expanded((ROOT / "fixtures" / "sessions" / "valid" / f"{name}.session.jsonl").read_bytes())
    last = json.loads(log.splitlines()[-1])
    after = [
        {"type": "turn/start", "seq": last["seq"] + 1, "time": last["time"] + 1, "data": {"turn": 99}},
        {"type": "step/start", "seq": last["seq"] + 2, "time": last["time"] + 2, "data": {"turn": 99, "step": 1}},
    ]
    log += b"".join(json.dumps(e).encode() + b"\n" for e in after)
    return store, write_store(store, layout, [log], journal="delete")[0]


def _scalar_rows(store: Path, session: str) -> tuple[int, int]:
    """The seq of the first scalar row after seq 0 (committed: a turn/end follows), and of the
    first one after the last turn/end (the tail)."""
    with sqlite3.connect(store) as db:
        packed = "ignorable" if db.execute("PRAGMA user_version").fetchone()[0] == 17 else "NULL"
        rows = db.execute(f"SELECT seq, type, {packed} FROM events WHERE session_id = ? ORDER BY seq", (session,))
        rows = rows.fetchall()
    end = max(seq for seq, kind, _ in rows if kind == "turn/end")
    scalar = [seq for seq, kind, packed in rows if packed is None and seq > 0]
    return scalar[0], next(seq for seq in scalar if seq > end)


DEFECTS_17 = {
    "data not JSON": ("UPDATE events SET data = '{not json' WHERE seq = ?", "its data is not JSON"),
    "data not a frame": ("UPDATE events SET data = x'00010203' WHERE seq = ?", "no Zstandard frame"),
    "a frame past the bound": ("UPDATE events SET data = ? WHERE seq = ?", "declares"),
    "a truncated frame": ("UPDATE events SET data = ? WHERE seq = ?", "truncated"),
    "not UTF-8": ("UPDATE events SET data = ? WHERE seq = ?", "not UTF-8"),
    "a non-canonical varint": ("UPDATE events SET source_event_seqs = x'8100' WHERE seq = ?", "non-canonical"),
    "a truncated varint": ("UPDATE events SET source_event_seqs = x'81' WHERE seq = ?", "ends inside a varint"),
    "a varint of 9 bytes": ("UPDATE events SET source_event_seqs = x'818181818181818101' WHERE seq = ?", "more than"),
    "a seq gone negative": ("UPDATE events SET source_event_seqs = x'0003' WHERE seq = ?", "outside 0"),
    "seqs as text": ("UPDATE events SET source_event_seqs = '[1]' WHERE seq = ?", "not a varint BLOB"),
    "a packed row of another type": ("UPDATE events SET ignorable = 0, type = 'x' WHERE seq = ?", "packed row's type"),
    "a malformed packed row": ("UPDATE events SET ignorable = 0, type = 'text-chunks' WHERE seq = ?", "malformed"),
    "seq moved": ("UPDATE events SET seq = seq + 1000 WHERE seq = ?", "breaks contiguity (expected"),
}


def _frame(kind: str) -> bytes:
    if kind == "a frame past the bound":
        return zstandard.ZstdCompressor(write_content_size=True).compress(b" " * ((1 << 29) + 1))
    if kind == "a truncated frame":
        return zstandard.ZstdCompressor().compress(b'{"a":' + b"1" * 5000 + b"}")[:-5]
    return zstandard.ZstdCompressor().compress(b'{"a":"\xff"}')


DEFECTS_14 = {
    "data not JSON": DEFECTS_17["data not JSON"],
    "seqs not JSON": ("UPDATE events SET source_event_seqs = '[1,' WHERE seq = ?", "source_event_seqs is not JSON"),
    "seqs not seqs": ("UPDATE events SET source_event_seqs = '[-1]' WHERE seq = ?", "not an array of seqs"),
    "surface_op not JSON": ("UPDATE events SET surface_op = 'append' WHERE seq = ?", "surface_op is not JSON"),
    "seq moved": DEFECTS_17["seq moved"],
}
"""What can go wrong with a layout-14 row (it has neither packed rows nor compressed data)."""


@pytest.mark.parametrize(
    ("layout", "defect"), [*((17, d) for d in sorted(DEFECTS_17)), *((14, d) for d in sorted(DEFECTS_14))]
)
@pytest.mark.parametrize("where", ["committed", "tail"])
def test_each_defect_of_a_row_is_located_by_seq_as_committed_or_tail(
    tmp_path: Path, layout: int, defect: str, where: str
) -> None:
    store, session = _store_of(tmp_path, layout)
    committed, tail = _scalar_rows(store, session)
    seq = committed if where == "committed" else tail
    sql, why = (DEFECTS_17 if layout == 17 else DEFECTS_14)[defect]
    with sqlite3.connect(store) as db:
        db.execute(sql, (_frame(defect), seq) if sql.count("?") == 2 else (seq,))
    report = verify_path(f"{store}#{session}")
    code = "sqlite.row" if where == "committed" else "sqlite.tail"
    assert [f.code for f in report.findings][:1] == [code], report.findings
    at = seq + 1 if defect == "seq moved" else seq  # (a row moved away: the one after it breaks the seqs)
    assert report.findings[0].index == at and why in report.findings[0].message, report.findings[0]
    assert report.verdict == ("corrupt" if where == "committed" else "ok")
    assert report.events == seq


def test_a_blob_where_layout_14_holds_text_does_not_decode(tmp_path: Path) -> None:
    store, session = _store_of(tmp_path, 14)
    db = sqlite3.connect(store)
    db.execute("PRAGMA writable_schema = ON")  # (a STRICT TEXT column refuses a BLOB: the file was edited)
    sql = db.execute("SELECT sql FROM sqlite_schema WHERE name = 'events'").fetchone()[0]
    db.execute("UPDATE sqlite_schema SET sql = ? WHERE name = 'events'", (sql.replace(" STRICT", ""),))
    db.commit()
    db.close()
    db = sqlite3.connect(store)
    db.execute("UPDATE events SET data = x'7b7d' WHERE seq = 2")
    db.commit()
    db.close()
    report = verify_path(f"{store}#{session}")
    assert report.verdict == "corrupt" and report.findings[0].code == "sqlite.row"
    assert "layout 14 holds JSON text" in report.findings[0].message


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        ("PRAGMA application_id = 7", "not a session store"),
        ("PRAGMA user_version = 15", "schema version 15"),
        ("DROP TABLE persistence_state", "no persistence_state table"),
        ("ALTER TABLE events DROP COLUMN surface_op", "no surface_op column"),
        ("DELETE FROM persistence_state", "no store id"),
    ],
)
def test_a_schema_no_harness_writes_is_unreadable_and_named(tmp_path: Path, edit: str, why: str) -> None:
    store, _ = _store_of(tmp_path, 17)
    with sqlite3.connect(store) as db:
        db.execute(edit)
    done = CliRunner().invoke(main, ["verify", "--no-cache", str(store)])
    assert done.exit_code == 2, done.output
    assert done.output.startswith(f"UNREADABLE {store}: ") and why in done.output


def test_a_header_version_the_columns_cannot_hold_is_unreadable_and_says_so(tmp_path: Path) -> None:
    """Open question (sqlite-store.md): a v2+ session appended to a store cannot be read back by
    the harness (no column holds isSeeded). Chosen: unreadable (the harness's reader cannot read
    it), named for what it is, not blamed on the header field the store has no place for."""
    store, session = _store_of(tmp_path, 17)
    with sqlite3.connect(store) as db:
        db.execute("UPDATE sessions SET version = 4")
    report = verify_path(f"{store}#{session}")
    assert report.verdict == "unreadable" and [f.code for f in report.findings] == ["format.unreadable"]
    assert "format-v4 session" in report.findings[0].message and "isSeeded" in report.findings[0].message


def test_a_store_session_name_is_only_a_name_where_no_file_has_it(tmp_path: Path) -> None:
    store, session = _store_of(tmp_path, 17)
    assert split_name(f"{store}#{session}") == (str(store), session)
    odd = tmp_path / "a#b.session.jsonl"
    odd.write_bytes(b"")
    assert split_name(str(odd)) is None  # a log whose name holds the separator is that log
    assert verify_path(f"{store}#no-such").verdict == "unreadable"


def test_page_damage_never_escapes_as_a_traceback(tmp_path: Path) -> None:
    store, _ = _store_of(tmp_path, 17)
    pristine = store.read_bytes()
    generator = __import__("random").Random(66)
    for k in range(60):
        damaged = bytearray(pristine)
        page = generator.randrange(len(pristine) // 4096) * 4096
        for _ in range(generator.randrange(1, 64)):
            damaged[page + generator.randrange(4096)] = generator.randrange(256)
        target = tmp_path / f"damaged-{k}.db"
        target.write_bytes(bytes(damaged))
        done = CliRunner().invoke(main, ["verify", "--no-cache", "--format", "json", str(target)])
        assert done.exit_code in (0, 1, 2, 3), (k, done.output)
        assert done.exception is None or isinstance(done.exception, SystemExit), (k, done.output)


# --- varints ---------------------------------------------------------------------------------------------


@given(st.lists(st.integers(min_value=0, max_value=(1 << 52) - 1), max_size=20))
def test_varint_lists_decode_what_the_writer_encodes(seqs: list[int]) -> None:
    assert varint_seqs(varints(seqs)) == seqs


@given(st.binary(max_size=24))
def test_any_bytes_are_a_seq_list_or_a_defect(raw: bytes) -> None:
    try:
        seqs = varint_seqs(raw)
    except RowDefect:
        return
    assert varints(seqs) == raw  # (a list that decodes is canonical: it encodes back to its bytes)


# --- every command on a store ----------------------------------------------------------------------------

CORRUPT_LOG = ROOT / "fixtures" / "sessions" / "corrupt" / "reused-id.session.jsonl"


def test_a_folder_walk_reads_the_session_stores_it_meets_whatever_their_names(tmp_path: Path) -> None:
    """A walk reads a session store as a store named on the command line (its sessions), by its
    header whatever its name, beside the logs; another application's SQLite database, a store's
    WAL and an empty file are passed over, as any file that is no log; every command that walks
    (verify, fleet, replay) reads the same sessions."""
    folder = tmp_path / "deployment"
    (folder / "old").mkdir(parents=True)
    logs = [ROOT / "fixtures" / "sessions" / "valid" / "reminders.session.jsonl", *LOGS[-2:]]
    ids = write_store(folder / "old" / "sessions", 17, [p.read_bytes() for p in logs[1:]])  # (no suffix)
    (folder / "old" / "sessions-wal").write_bytes(b"")
    shutil.copyfile(logs[0], folder / "a.session.jsonl")
    with sqlite3.connect(folder / "other.db") as other:  # (another application's database)
        other.execute("CREATE TABLE t (x)")
    (folder / "empty.db").write_bytes(b"")
    named = {f"{folder / 'a.session.jsonl'}": logs[0]}
    named.update({f"{folder / 'old' / 'sessions'}#{i}": p for i, p in zip(ids, logs[1:], strict=True)})
    done = CliRunner().invoke(main, ["verify", "--format", "json", "--no-cache", str(folder)])
    reports = {r["path"]: r for r in json.loads(done.output)}
    assert set(reports) == set(named), done.output
    for name, log in named.items():
        plain = tmp_path / f"{Path(name).name.replace('#', '-')}.jsonl"
        plain.write_bytes(expanded(log.read_bytes()))
        assert {k: v for k, v in reports[name].items() if k not in ("path", "generation")} == report_json(str(plain))
    from replay.fleet.engine import expand

    assert set(expand([str(folder)])) == set(named)  # (the fleet's inputs)
    database = tmp_path / "walk.duckdb"
    replayed = CliRunner().invoke(main, ["replay", str(folder), "--db", str(database)])
    assert replayed.exit_code in (0, 1), replayed.output
    paths = CliRunner().invoke(
        main, ["sql", str(database), "SELECT path FROM sessions ORDER BY path", "--format", "csv"]
    )
    assert set(paths.output.split()[1:]) == set(named), paths.output


def test_explain_and_report_read_a_stores_sessions(tmp_path: Path) -> None:
    store, session = _store_of(tmp_path, 17, "reminders")
    committed, _ = _scalar_rows(store, session)
    with sqlite3.connect(store) as db:
        db.execute("UPDATE events SET data = '{' WHERE seq = ?", (committed,))
    told = CliRunner().invoke(main, ["explain", str(store)])
    assert told.exit_code == 1 and f"CORRUPT {store}#{session}" in told.output and "sqlite.row" in told.output
    page = tmp_path / "report.html"
    done = CliRunner().invoke(main, ["report", str(store), "-o", str(page)])
    assert done.exit_code == 1, done.output
    assert f"{store.name}#{session}" in page.read_text()


def test_shrink_writes_a_stores_session_as_a_jsonl_log_keeping_its_rule(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    (session,) = write_store(store, 17, [CORRUPT_LOG.read_bytes()])
    out = tmp_path / "shrunk.session.jsonl"
    done = CliRunner().invoke(main, ["shrink", f"{store}#{session}", "-o", str(out)])
    assert done.exit_code == 0, done.output
    shrunk, original = verify_path(str(out)), verify_path(f"{store}#{session}")
    assert shrunk.verdict == original.verdict == "corrupt"
    assert shrunk.violation is not None and original.violation is not None
    assert shrunk.violation.rule == original.violation.rule
    damaged, damaged_session = _store_of(tmp_path, 17)
    with sqlite3.connect(damaged) as db:
        db.execute("UPDATE events SET data = '{' WHERE seq = ?", (_scalar_rows(damaged, damaged_session)[0],))
    refused = CliRunner().invoke(main, ["shrink", f"{damaged}#{damaged_session}", "-o", str(tmp_path / "x.jsonl")])
    assert refused.exit_code == 2 and "a JSONL log cannot hold" in refused.output


def _tables(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every replay table's rows, less the columns that name a session by its path."""
    import duckdb

    pathlike = {"session_key", "path", "store_path", "generation"}
    with duckdb.connect(str(db), read_only=True) as con:
        names = [n for (n,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        found = {}
        for name in names:
            if name in ("sources", "replay_meta"):
                continue
            columns = [
                c
                for (c,) in con.execute(
                    f"SELECT column_name FROM information_schema.columns WHERE table_name = '{name}'"
                ).fetchall()
            ]
            kept = ", ".join(f'"{c}"' for c in columns if c not in pathlike)
            found[name] = sorted(map(repr, con.execute(f"SELECT {kept} FROM {name}").fetchall()))
    return found


def test_replay_gives_a_stores_sessions_the_rows_their_jsonl_logs_get(tmp_path: Path) -> None:
    logs = [CORRUPT_LOG, ROOT / "fixtures" / "sessions" / "valid" / "fork-child.session.jsonl"]
    store = tmp_path / "store.db"
    write_store(store, 17, [p.read_bytes() for p in logs])
    folder = tmp_path / "logs"
    folder.mkdir()
    for log in logs:
        (folder / log.name).write_bytes(expanded(log.read_bytes()))
    runs = []
    for source, db in ((str(store), tmp_path / "a.duckdb"), (str(folder), tmp_path / "b.duckdb")):
        done = CliRunner().invoke(main, ["replay", "--no-cache", source, "--db", str(db)])
        assert done.exit_code == 1, done.output  # (one corrupt session)
        runs.append(_tables(db))
    assert runs[0] == runs[1]


def test_replay_into_its_database_keeps_a_stores_unchanged_sessions_and_reads_a_written_one_again(
    tmp_path: Path,
) -> None:
    """A replay into an existing database keeps the rows of a store's session whose state
    (store, incarnation, revision: `sqlitestore.session_state`) has not moved, reading none of
    its rows, and reads again one the harness wrote to since; the database then equals a fresh
    replay's."""
    log = expanded(CORRUPT_LOG.read_bytes()).splitlines()
    other = expanded((ROOT / "fixtures" / "sessions" / "valid" / "fork-child.session.jsonl").read_bytes())
    store = tmp_path / "store.db"
    session, _ = write_store(store, 17, [b"\n".join(log[:20]) + b"\n", other])
    db = tmp_path / "a.duckdb"

    def replayed(*args: str) -> str:
        done = CliRunner().invoke(main, ["replay", "--no-cache", str(store), "--db", str(db), *args])
        assert done.exit_code in (0, 1), done.output
        return done.output

    replayed()
    assert "(2 kept, 0 grown, 0 read again, 0 added, 0 removed)" in replayed()
    _grow(store, session, [json.loads(line) for line in log[20:]])
    assert "(1 kept, 0 grown, 1 read again, 0 added, 0 removed)" in replayed()
    fresh = tmp_path / "fresh.duckdb"
    assert CliRunner().invoke(main, ["replay", "--no-cache", str(store), "--db", str(fresh)]).exit_code == 1
    assert _tables(db) == _tables(fresh)


def _grow(store: Path, session: str, events: list[dict[str, Any]]) -> None:
    """One writer transaction: rows appended, the session's revision bumped (as the harness does)."""
    with sqlite3.connect(store) as db:
        for e in events:
            db.execute(
                "INSERT INTO events VALUES (?, ?, ?, ?, ?, NULL, NULL, NULL)",
                (session, e["seq"], e["type"], e["time"], json.dumps(e["data"])),
            )
        db.execute("UPDATE sessions SET revision = revision + 1 WHERE id = ?", (session,))


def test_watch_reads_a_stores_session_again_only_when_its_revision_moves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from replay.live import follow
    from replay.live.follow import Kind
    from replay.live.watching import Watch
    from replay.reading import Reading

    store = tmp_path / "store.db"
    log = expanded(CORRUPT_LOG.read_bytes()).splitlines()
    (session,) = write_store(store, 17, [b"\n".join(log[:20]) + b"\n"])
    judged: list[str] = []
    real = follow._judged
    monkeypatch.setattr(follow, "_judged", lambda name, *a, **k: (judged.append(name), real(name, *a, **k))[1])
    firsts = _firsts(monkeypatch)
    watch = Watch((str(store),), Reading())
    first = list(watch.first())
    assert [e.verdict for e in first if e.kind is Kind.VERDICT] == ["ok"] and len(judged) == 1
    events, changed = watch.again({str(store) + "-shm"})  # a reader's mark, no commit
    assert (events, changed, len(judged)) == ([], False, 1)
    events, changed = watch.again({str(store) + "-wal"})  # the same revision: nothing read
    assert (events, changed, len(judged)) == ([], False, 1)
    _grow(store, session, [json.loads(line) for line in log[20:]])
    events, changed = watch.again({str(store) + "-wal"})
    assert changed and len(judged) == 2
    assert firsts[0] == 0 and firsts[-1] > 0  # (grown: only the rows after the saved reading were read)
    assert [e.verdict for e in events if e.kind is Kind.VERDICT] == ["corrupt"]
    assert verify_path(f"{store}#{session}").verdict == "corrupt"
    with sqlite3.connect(store) as db:
        db.execute("DELETE FROM events")
        db.execute("DELETE FROM sessions")
    events, _ = watch.again({str(store) + "-wal"})
    assert [e.kind for e in events] == [Kind.GONE]


def test_watch_reads_a_stores_session_again_after_a_reading_that_could_not_read_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reading of a store's session that came out unreadable (the store could not be read at
    that moment) does not stand for its state: the next look reads the session again though its
    revision has not moved, and tells what it says then."""
    from replay.live.follow import Kind
    from replay.live.watching import Watch
    from replay.reading import Reading
    from replay.sources import sqlitestore

    store = tmp_path / "store.db"
    write_store(store, 17, [expanded(CORRUPT_LOG.read_bytes())])
    real = sqlitestore.stored_session
    failing = [True]

    def once(path: str, first: int = 0, packed: bool = False) -> object:
        return "cannot open: database disk image is malformed" if failing.pop() else real(path, first, packed)

    monkeypatch.setattr(sqlitestore, "stored_session", once)
    failing[:] = [False, True]  # (the first reading fails, the next one reads)
    watch = Watch((str(store),), Reading())
    first = [e.verdict for e in watch.first() if e.kind is Kind.VERDICT]
    events, _ = watch.again({str(store) + "-wal"})  # the same revision
    assert first == ["unreadable"] and [e.verdict for e in events if e.kind is Kind.VERDICT] == ["corrupt"]


def test_the_bundled_store_holds_its_fixture_sessions_with_their_defects(tmp_path: Path) -> None:
    """fixtures/stores/sessions.db, as `python -m fixtures.storewriter` writes it: each session
    as its fixture log judges it, but the two whose rows were damaged."""
    from fixtures.storewriter import FIXTURE, write_fixture

    again = tmp_path / "sessions.db"
    write_fixture(again)
    for store in (FIXTURE, again):
        with Store(str(store)) as opened:
            names = [s.id for s in opened.sessions()]
        reports = {n: verify_path(f"{store}#{n}") for n in names}
        assert {n: r.verdict.value for n, r in reports.items()} == {
            "a1b2c3d4-reminders-0": "ok",
            "child-0002-1": "ok",
            "reused-id-2": "corrupt",
            "gate-too-soon-3": "corrupt",
        }
        assert [f.code for f in reports["a1b2c3d4-reminders-0"].findings] == ["sqlite.tail"]
        assert [f.code for f in reports["gate-too-soon-3"].findings] == ["sqlite.row"]
        assert reports["reused-id-2"].violation is not None
        assert reports["reused-id-2"].violation.rule == "fold.create.reuse"


def test_the_cache_answers_an_unchanged_session_and_reads_one_whose_revision_moved(tmp_path: Path) -> None:
    store = tmp_path / "store.db"
    shutil.copy(ROOT / "fixtures" / "stores" / "sessions.db", store)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    first = CliRunner().invoke(main, ["verify", *cache, str(store)])
    again = CliRunner().invoke(main, ["verify", *cache, "-v", str(store)])
    assert "0 from cache, 0 resumed, 4 read whole" in first.output
    assert "4 from cache, 0 resumed, 0 read whole" in again.output
    assert again.output.replace("4 from cache, 0 resumed, 0 read whole", "") == first.output.replace(
        "0 from cache, 0 resumed, 4 read whole", ""
    )  # (a cached report is the cold one)
    _grow(store, "child-0002-1", [])  # a transaction of the session: its revision moves
    moved = CliRunner().invoke(main, ["verify", *cache, "-v", str(store)])
    assert "3 from cache, 1 resumed, 0 read whole" in moved.output
    with sqlite3.connect(store) as db:
        db.execute("UPDATE sessions SET incarnation = 'another', revision = revision + 1 WHERE id = 'child-0002-1'")
    anew = CliRunner().invoke(main, ["verify", *cache, "-v", str(store)])
    assert "3 from cache, 0 resumed, 1 read whole" in anew.output
    assert "child-0002-1: read whole: the session changed since it was judged (made anew" in anew.output
    replaced = tmp_path / "replaced.db"  # the same store id, incarnation and revision, another file
    shutil.copy(store, replaced)
    os.replace(replaced, store)
    assert "0 from cache, 0 resumed, 4 read whole" in CliRunner().invoke(main, ["verify", *cache, str(store)]).output


WRITER = """
import json, sqlite3, sys, time
store, session, path = sys.argv[1:4]
events = [json.loads(line) for line in open(path).read().splitlines()[1:]]
db = sqlite3.connect(store, isolation_level=None)
db.execute("PRAGMA journal_mode = wal")
start = db.execute("SELECT count(*) FROM events WHERE session_id = ?", (session,)).fetchone()[0]
for at in range(start, len(events), 3):
    db.execute("BEGIN IMMEDIATE")
    for e in events[at : at + 3]:
        db.execute(
            "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                session, e["seq"], e["type"], e["time"], json.dumps(e["data"]),
                None if "sourceEventSeqs" not in e else json.dumps(e["sourceEventSeqs"]),
                None if "surfaceOp" not in e else json.dumps(e["surfaceOp"]),
            ),
        )
    db.execute("UPDATE sessions SET revision = revision + 1 WHERE id = ?", (session,))
    db.execute("COMMIT")
    time.sleep(0.002)
db.close()
"""


def test_a_store_written_meanwhile_is_never_read_torn(tmp_path: Path) -> None:
    """A writer process appends a valid session in transactions of three events while verify
    and watch read the store: every reading is of a committed state (ok, never a seq gap or a
    half-written row), and what watch told in the end is what verify says of the final store."""
    import subprocess
    import sys

    from replay.live.follow import Kind
    from replay.live.watching import Watch
    from replay.reading import Reading

    log = tmp_path / "reminders.session.jsonl"
    log.write_bytes(expanded((ROOT / "fixtures" / "sessions" / "valid" / "reminders.session.jsonl").read_bytes()))
    lines = log.read_bytes().splitlines()
    store = tmp_path / "store.db"
    (session,) = write_store(store, 14, [b"\n".join(lines[:6]) + b"\n"])  # (a row an event: the writer counts them)
    name = f"{store}#{session}"
    watch = Watch((str(store),), Reading())
    told = list(watch.first())
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(store), session, str(log)])
    verdicts = []
    while writer.poll() is None:
        verdicts.append(verify_path(name).verdict.value)
        events, _ = watch.again({str(store) + "-wal"})
        told += events
    assert writer.wait() == 0
    events, _ = watch.again({str(store) + "-wal"})
    told += events
    assert len(verdicts) >= 3 and set(verdicts) == {"ok"}, Counter(verdicts)
    final = verify_path(name)
    assert final.verdict == "ok" and final.events == len(lines) - 1
    assert [e.verdict for e in told if e.kind is Kind.VERDICT][-1] == final.verdict


# --- packed rows: the quick reading and the exact one ------------------------------------------------------

SAFE = (1 << 53) - 1
_numbers = st.integers(0, 9).flatmap(
    lambda k: (
        st.sampled_from([SAFE, SAFE + 1, -SAFE - 1, 1 << 60, 1.0, 2.5, -0.0, True])
        if k == 0
        else st.integers(min_value=-3, max_value=3)
    )
)
_gaps = st.integers(0, 9).flatmap(
    lambda k: (
        st.sampled_from([SAFE, -SAFE, 1.0, 0.5]) if k == 0 else st.integers(min_value=-(1 << 40), max_value=1 << 40)
    )
)


@st.composite
def packed_rows(draw: st.DrawFn) -> tuple[int, str, int, bytes]:
    """A packed row's seq, type, time and data text: mostly well-formed, near every bound
    `chunks.decode_row` checks, and sometimes not (a key missing or extra, a gap too few)."""
    tag = draw(st.sampled_from(sorted(ROW_TAGS)))
    members = draw(st.lists(st.text(max_size=4), min_size=int(draw(st.integers(0, 9)) > 0), max_size=5))
    data: dict[str, object] = {k: draw(_numbers) for k in ("turn", "step", "index")}
    data["dt"] = draw(st.lists(_gaps, min_size=max(len(members) - 1, 0), max_size=max(len(members) - 1, 0)))
    if draw(st.integers(0, 9)) == 0 and data["dt"]:
        data["dt"] = data["dt"][1:]  # type: ignore[index]
    if tag == "tool-call-chunks":
        data["id"] = draw(st.text(max_size=3))
        if draw(st.booleans()):
            data["name"] = draw(st.text(max_size=3)) if draw(st.integers(0, 9)) else 7
        data["args"] = members
    else:
        data["texts"] = members
    if draw(st.integers(0, 9)) == 0:
        data.pop(draw(st.sampled_from(sorted(data))))
    if draw(st.integers(0, 9)) == 0:
        data["extra"] = 1
    seq = draw(st.sampled_from([0, 7, SAFE - 3, SAFE - 1, SAFE]))
    time = draw(st.sampled_from([0, 1783352138307, SAFE - 10, -SAFE + 10]))
    text = json.dumps(data, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    return seq, tag, time, text


@given(packed_rows())
def test_a_packed_row_reads_as_the_chunk_row_decoder_reads_it(row: tuple[int, str, int, bytes]) -> None:
    """Each packed row's lines are its members' events as `chunks.decode_row` expands them, and
    a row is refused exactly where that decoder refuses its data (the quick reading of the common
    shape and the exact one agree)."""
    from replay.lines.chunks import RowError
    from replay.lines.jsonline import JsonLineError, parse_json_line
    from replay.sources.storerows import decode_row as decode_store_row

    seq, tag, time, text = row
    try:
        value = parse_json_line(text)
        expected = [*decode_row({"type": tag, "seq0": seq, "time0": time, "data": value}, tag).events()]
    except (RowError, JsonLineError):
        expected = None
    try:
        lines = decode_store_row(17, (seq, bytearray(tag.encode()), time, bytearray(text), None, None, 0))
    except RowDefect:
        assert expected is None
        return
    assert isinstance(lines, list) and expected is not None
    assert [parse_json_line(line) for line in lines] == expected


@given(packed_rows(), st.one_of(st.none(), st.integers(1, 8)))
def test_verify_judges_a_packed_row_read_as_one_line_as_its_members_read_a_line_each(
    tmp_path_factory: pytest.TempPathFactory, row: tuple[int, str, int, bytes], members: int | None
) -> None:
    """verify, given a store's packed row as one line (`PackedLine`, where its data has the
    common shape), says of the session what it says given the row's members a line each, the
    row's data however drawn (near every bound, a key missing or extra, a number written 1.0,
    a lone surrogate, bytes that are not UTF-8), however many members it holds (the rows after
    it then breaking the seqs, or not)."""
    from unittest import mock

    from replay.sources import sqlitestore

    _, tag, time, text = row
    if members is None:  # (mostly as many as the row holds, where it holds a list of them)
        data = json.loads(text.decode("utf-8", "surrogatepass"))
        held = data.get("args" if tag == "tool-call-chunks" else "texts") if isinstance(data, dict) else None
        members = len(held) if isinstance(held, list) and held else 5
    log = (ROOT / "fixtures" / "sessions" / "corrupt" / "gate-too-soon.session.jsonl").read_bytes()
    store = tmp_path_factory.mktemp("packed") / "store.db"
    db = create(store, 17, journal="delete")
    session = write_session(db, 17, log)
    # (the row at seq 3 holds 5 members: the rows after it go on from seq 3 + `members`)
    db.execute("UPDATE events SET seq = seq + 1000 WHERE seq >= 8")
    db.execute("UPDATE events SET seq = seq - 1005 + ? WHERE seq >= 1008", (members,))
    db.execute("UPDATE events SET type = ?, time = ?, data = CAST(? AS TEXT) WHERE seq = 3", (tag, time, text))
    db.commit()
    db.close()
    name = f"{store}#{session}"
    packed = report_json(name)
    real = sqlitestore.stored_session
    with mock.patch.object(sqlitestore, "stored_session", lambda path, first=0, packed=False: real(path, first)):
        assert report_json(name) == packed


@st.composite
def row_runs(draw: st.DrawFn) -> tuple[int, list[tuple[object, ...]]]:
    """A run of layout-17 rows as `rows_query` selects them, from a seq on: mostly scalar rows
    that decode, with seq lists, surface ops, ignorable events, packed and compressed rows among
    them, and now and then a row that does not decode or does not continue the seqs."""
    start = draw(st.integers(0, 5))
    rows: list[tuple[object, ...]] = []
    seq = start
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(st.integers(0, 19))
        data = json.dumps(
            draw(
                st.one_of(
                    st.integers(), st.text(max_size=5), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2)
                )
            )
        )
        tag, lists, op, mark, width = "message/user", None, None, None, 1
        if kind == 1:
            first = draw(st.integers(0, 1000))
            run = list(range(first, first + draw(st.integers(1, 6))))  # (deltas of 1: the common case)
            lists = varints(draw(st.one_of(st.lists(st.integers(0, 1000), max_size=4), st.just(run))))
        elif kind == 2:
            op = draw(st.sampled_from([b'{"op":"append"}', b'"append"', b'{"op":\n"x"}', b"{", b"\r1", b"%d"]))
            op = draw(st.sampled_from([bytearray(op), bytes(op)]))
        elif kind == 3:
            mark = 1
        elif kind == 4:
            texts = draw(st.lists(st.text(max_size=3), min_size=1, max_size=4))
            tag, mark, width = "text-chunks", 0, len(texts)
            data = json.dumps({"turn": 1, "step": 1, "index": 0, "dt": [1] * (len(texts) - 1), "texts": texts})
        elif kind == 11:
            args = draw(st.lists(st.text(max_size=3), min_size=1, max_size=4))
            tag, mark, width = "tool-call-chunks", 0, len(args)
            call = {
                "turn": 1,
                "step": 1,
                "index": 0,
                "dt": [1] * (len(args) - 1),
                "id": draw(st.sampled_from(["c1", "%s", "%d%%"])),
            }
            data = json.dumps({**call, "args": args, **draw(st.sampled_from([{}, {"name": "100%"}]))})
        elif kind == 5:
            data = draw(st.sampled_from(["{", "1,2", '{"a":\n1}', '"x"\r', "", "nul"]))
        elif kind == 6:
            seq += draw(st.sampled_from([-1, 1, 2]))
        elif kind == 7:
            tag = "turn/end"
        value: object = bytearray(data.encode())
        if kind == 8:
            value = zstandard.ZstdCompressor(write_content_size=True).compress(data.encode())
        elif kind == 9:
            value = draw(st.sampled_from([None, 1, 2.5]))
        elif kind == 10:
            mark = draw(st.sampled_from([2, 1.0, bytearray(b"1")]))
        rows.append((seq, bytearray(tag.encode()), 1783352138307 + seq, value, lists, op, mark))
        seq += width
    return start, rows


@given(row_runs(), st.booleans())
def test_a_run_of_rows_read_at_once_reads_as_each_row_decoded(
    run: tuple[int, list[tuple[object, ...]]], packed: bool
) -> None:
    """`quick_lines` (a run of rows checked a column at a time) gives the lines `decode_row`
    gives each row, where every row decodes and continues the seqs from the run's first, and
    gives nothing where one does not; a run of plain rows is read at once. Read `packed`, a
    packed row of the common shape is one line, standing for its members (its span)."""
    from replay.sources.storerows import PackedLine, events_in, quick_lines
    from replay.sources.storerows import decode_row as decode_store_row

    start, rows = run
    quick = quick_lines(17, rows, start, packed)
    expected: tuple[list[bytes], list[tuple[int, int]]] | None = ([], [])
    at = start
    for row in rows:
        try:
            got = decode_store_row(17, row, packed)
        except RowDefect:
            expected = None
            break
        if row[0] != at:
            expected = None
            break
        assert expected is not None
        if isinstance(got, PackedLine):
            assert packed
            expected[1].append((len(expected[0]), got.members))
            expected[0].append(got.line)
        else:
            expected[0].extend([got] if isinstance(got, bytes) else got)
        at += events_in(got)
    if quick is not None:
        assert quick == expected
    elif expected is not None:  # (refused only for what the exact reader reads otherwise: a CR or LF)
        texts = [r[k] for r in rows for k in (3, 5) if isinstance(r[k], bytearray)]
        assert any(b"\n" in text or b"\r" in text for text in texts)


def _firsts(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The seq each read of a store's session started at (0: whole), as the store read it."""
    from replay.sources import sqlitestore

    firsts: list[int] = []
    real = sqlitestore.stored_session

    def stored_session(path: str, first: int = 0, packed: bool = False) -> object:
        read = real(path, first, packed)
        firsts.append(read.first if isinstance(read, sqlitestore.SessionRows) else -1)
        return read

    monkeypatch.setattr(sqlitestore, "stored_session", stored_session)
    return firsts


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name)
def test_a_grown_stores_session_is_read_from_its_saved_turn_and_reported_as_cold(
    tmp_path: Path, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session judged through the cache, then grown by the harness's transactions (rows
    appended, the revision moved), is read again from the rows appended only, and its report
    is the report of a cold read of the grown store, whatever the rows appended hold."""
    lines = expanded(log.read_bytes()).splitlines()
    ends = [k for k, line in enumerate(lines) if json.loads(line).get("type") == "turn/end"]
    cuts = sorted({2, *ends[:1], *ends[len(ends) // 2 : len(ends) // 2 + 1], len(lines) - 1} - {len(lines)})
    for cut in cuts:
        store = tmp_path / f"{log.stem}-{cut}.db"
        (session,) = write_store(store, 17, [b"\n".join(lines[:cut]) + b"\n"])
        cache = ["--cache-dir", str(tmp_path / f"cache-{cut}")]
        name = f"{store}#{session}"
        assert CliRunner().invoke(main, ["verify", *cache, "--format", "json", name]).exit_code in (0, 1, 2)
        firsts = _firsts(monkeypatch)
        _grow(store, session, [json.loads(line) for line in lines[cut:]])
        resumed = CliRunner().invoke(main, ["verify", *cache, "-v", "--format", "json", name])
        cold = CliRunner().invoke(main, ["verify", "--no-cache", "--format", "json", name])
        assert (resumed.exit_code, resumed.stdout) == (cold.exit_code, cold.stdout), (log.name, cut)
        assert firsts[0] == cut - 1, (log.name, cut, firsts)  # (seq cut - 1 is the first row appended)


def test_a_session_read_with_a_store_finding_is_read_whole_once_grown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reading that met a row that does not decode (a removable tail) is not saved: once the
    session grows past that row (which is then committed corruption), it is read whole, and
    says so, as a cold read does."""
    lines = expanded(CORRUPT_LOG.read_bytes()).splitlines()
    store = tmp_path / "store.db"
    (session,) = write_store(store, 17, [b"\n".join(lines[:20]) + b"\n"])
    with sqlite3.connect(store) as db:
        last = "SELECT max(seq) FROM events WHERE session_id = ?1"
        db.execute(f"UPDATE events SET data = '{{' WHERE session_id = ?1 AND seq = ({last})", (session,))
    name, cache = f"{store}#{session}", ["--cache-dir", str(tmp_path / "cache")]
    before = CliRunner().invoke(main, ["verify", *cache, "--format", "json", name])
    assert json.loads(before.stdout)[0]["formatFindings"][0]["code"] == "sqlite.tail"
    firsts = _firsts(monkeypatch)
    _grow(store, session, [json.loads(line) for line in lines[20:]])
    again = CliRunner().invoke(main, ["verify", *cache, "-v", name])
    assert firsts == [0] and "no reading of it was saved to go on from" in again.output
    cold = CliRunner().invoke(main, ["verify", "--no-cache", "--format", "json", name])
    grown = CliRunner().invoke(main, ["verify", *cache, "--format", "json", name])
    assert grown.stdout == cold.stdout and json.loads(cold.stdout)[0]["formatFindings"][0]["code"] == "sqlite.row"
