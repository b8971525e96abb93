"""The SQLite session-store fuzzer (issue 66): seeded mutations of stores of both layouts, made
from the fixture logs by fixtures/storewriter.py, read by `verify` whole (every session of the
store), each input checked for

- `crash`: an exception escaping the store reader, the reader or the judge, or a report that
  does not render as JSON;
- `hang`: no report within `--timeout` seconds;
- `nondeterministic`: a second reading of the same file gives other reports;
- `wrote`: the file, or the folder it lies in, changed under the reading (it must never write).

Mutations: row edits by SQL (a column set to text, a BLOB, a number, NULL; JSON cut or
nested; Zstandard frames cut, flipped or declaring other sizes; varint lists cut, extended,
made non-canonical; seqs moved, rows deleted or duplicated under another seq; packed rows'
discriminator flipped), session-row edits (versions, seed lengths, revisions, NULLs),
schema-level edits (user_version, application_id, a table dropped), and page-level damage
(random bytes over random pages, the file cut short).

Input N of seed S is made from `random.Random(f"{S}:{N}")` alone (`--show S:N` writes it).

    python -m fuzz.stores --count 100000 --jobs 2 --out fuzz-out
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import random
import shutil
import signal
import sqlite3
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DEFAULT_SEED = 20261207
TIMEOUT = 10.0
CLASSES = ("ok", "crash", "hang", "nondeterministic", "wrote")
LOGS = (
    "sessions/valid/reminders.session.jsonl",
    "sessions/valid/fork-child.session.jsonl",
    "sessions/corrupt/reused-id.session.jsonl",
)


def base_stores(folder: Path) -> list[Path]:
    """One store a layout, each of the fixture logs (ids made unique), written once a worker."""
    from fixtures.storewriter import _renamed, create, write_session

    made = []
    for layout in (14, 17):
        path = folder / f"base-{layout}.db"
        if not path.exists():
            db = create(path, layout, journal="delete")
            for k, log in enumerate(LOGS):
                write_session(db, layout, _with_tail(_renamed((ROOT / "fixtures" / log).read_bytes(), k)))
            db.close()
        made.append(path)
    return made


def _with_tail(log: bytes) -> bytes:
    """The log with a turn begun after its last event (rows whose damage is a removable tail)."""
    last = json.loads(log.rstrip(b"\n").rsplit(b"\n", 1)[-1])
    seq, at = last.get("seq0", last.get("seq", 0)), last.get("time0", last.get("time", 0))
    seq += len(last["data"].get("texts", last["data"].get("args", [0]))) if "seq0" in last else 1
    after = [
        {"type": "turn/start", "seq": seq, "time": at + 1, "data": {"turn": 99}},
        {"type": "step/start", "seq": seq + 1, "time": at + 2, "data": {"turn": 99, "step": 1}},
    ]
    return log + b"".join(json.dumps(e).encode() + b"\n" for e in after)


VALUES: tuple[Callable[[random.Random], object], ...] = (
    lambda r: None,
    lambda r: r.choice([0, 1, -1, 2**53, 2**63 - 1, -(2**63)]),
    lambda r: r.random() * 10 ** r.randint(-5, 300),
    lambda r: r.choice(['{"turn":', "{}", "[]", '"x"', "null", '{"a":"\\ud800"}', "1e999", "{" * 200, ""]),
    lambda r: bytes(r.randrange(256) for _ in range(r.randint(0, 12))),
    lambda r: zstandard.ZstdCompressor().compress(r.choice([b"{}", b'{"a":1}', b"x" * 5000, b"\xff\xfe"])),
    lambda r: zstandard.ZstdCompressor(write_content_size=r.random() < 0.5).compress(b"{}")[: r.randint(0, 12)],
    lambda r: bytes([0x80 | r.randrange(128) for _ in range(r.randint(1, 10))]) + bytes([r.randrange(128)]),
    lambda r: r.choice(["text-chunks", "reasoning-chunks", "tool-call-chunks", "turn/end", "x"]),
)
COLUMNS = ("seq", "type", "time", "data", "source_event_seqs", "surface_op", "ignorable")
SESSION_COLUMNS = ("version", "created_at", "cwd", "seed_length", "delegation_depth", "revision", "incarnation")


def _rows_edit(r: random.Random, db: sqlite3.Connection) -> str:
    rows = db.execute("SELECT rowid FROM events").fetchall()
    if not rows:
        return "no rows"
    (rowid,) = r.choice(rows)
    how = r.randrange(6)
    if how == 0:
        db.execute("DELETE FROM events WHERE rowid = ?", (rowid,))
        return "row deleted"
    if how == 1:
        db.execute("UPDATE events SET seq = seq + ? WHERE rowid = ?", (r.choice([-1, 1, 1000, -1000]), rowid))
        return "seq moved"
    if how == 2:
        data = db.execute("SELECT data FROM events WHERE rowid = ?", (rowid,)).fetchone()[0]
        if isinstance(data, str) and data:
            cut = r.randrange(len(data))
            db.execute("UPDATE events SET data = ? WHERE rowid = ?", (data[:cut] + data[cut + 1 :], rowid))
        return "data cut"
    column = r.choice(COLUMNS)
    value = r.choice(VALUES)(r)
    db.execute(f"UPDATE events SET {column} = ? WHERE rowid = ?", (value, rowid))
    return f"{column} set"


def _session_edit(r: random.Random, db: sqlite3.Connection) -> str:
    column = r.choice(SESSION_COLUMNS)
    db.execute(
        f"UPDATE sessions SET {column} = ? WHERE rowid = (SELECT min(rowid) FROM sessions)", (r.choice(VALUES)(r),)
    )
    return f"session {column} set"


def _schema_edit(r: random.Random, db: sqlite3.Connection) -> str:
    edit = r.choice(
        [
            "PRAGMA user_version = 18",
            "PRAGMA application_id = 0",
            "DROP TABLE persistence_state",
            "DELETE FROM persistence_state",
            "CREATE TRIGGER t AFTER INSERT ON sessions BEGIN DELETE FROM events; END",
            "CREATE VIEW v AS SELECT * FROM events",
        ]
    )
    db.execute(edit)
    return edit


def make(seed: int, index: int, folder: Path, bases: list[Path]) -> tuple[Path, tuple[str, ...]]:
    """Input `index` of `seed`: a base store copied into `folder`, then mutated."""
    r = random.Random(f"{seed}:{index}")
    target = folder / f"input-{index}.db"
    shutil.copy(bases[r.randrange(len(bases))], target)
    done: list[str] = []
    unsafe = False
    db = sqlite3.connect(target, isolation_level=None)
    try:
        db.execute("PRAGMA foreign_keys = OFF")
        if r.random() < 0.3:  # (a STRICT table refuses most wrong types: the file was edited)
            db.execute("PRAGMA writable_schema = ON")
            for name, sql in db.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'table'").fetchall():
                db.execute("UPDATE sqlite_schema SET sql = ? WHERE name = ?", (sql.replace(") STRICT", ")"), name))
            unsafe = True
        if unsafe:
            db.close()
            db = sqlite3.connect(target, isolation_level=None)
        for _ in range(r.randint(1, 3)):
            pick = r.random()
            try:
                edit = _rows_edit if pick < 0.75 else _session_edit if pick < 0.92 else _schema_edit
                done.append(edit(r, db))
            except sqlite3.Error as err:
                done.append(f"refused: {type(err).__name__}")
    finally:
        db.close()
    if r.random() < 0.15:  # page-level damage
        data = bytearray(target.read_bytes())
        for _ in range(r.randint(1, 40)):
            data[r.randrange(len(data))] = r.randrange(256)
        if r.random() < 0.3:
            del data[r.randrange(len(data)) :]
        target.write_bytes(bytes(data))
        done.append("pages damaged")
    return target, tuple(done)


def _state(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}


def check(path: Path) -> tuple[str, str]:
    """Read every session of the store at `path` twice; the class and what failed (for an `ok`
    input: the verdicts and finding codes its sessions got, which the summary counts)."""
    from replay.audit.auditrun import verify_paths
    from replay.sources.discover import discover

    before = _state(path.parent)
    try:
        reports = []
        for _ in range(2):
            audit = verify_paths(list(discover([str(path)])))
            reports.append([json.dumps(h.report().to_json(), sort_keys=True, default=str) for h in audit.held])
    except Exception as err:  # the fuzzer's purpose: every escaping exception is a finding
        frame = traceback.extract_tb(err.__traceback__)[-1]
        return "crash", f"{type(err).__name__} at {Path(frame.filename).name}:{frame.lineno}: {err}"[:300]
    if reports[0] != reports[1]:
        return "nondeterministic", ""
    if _state(path.parent) != before:
        return "wrote", ""
    seen = {f"verdict:{r['verdict']}" for r in map(json.loads, reports[0])}
    seen |= {
        f["code"]
        for r in map(json.loads, reports[0])
        for f in r["formatFindings"]
        if f["code"].startswith(("sqlite", "format"))
    }
    return "ok", " ".join(sorted(seen))


def _alarm(signum: int, frame: object) -> None:
    raise TimeoutError


def _work(job: tuple[int, int, int, float]) -> list[tuple[int, str, str, tuple[str, ...]]]:
    seed, start, stop, timeout = job
    signal.signal(signal.SIGALRM, _alarm)
    out = []
    with tempfile.TemporaryDirectory(prefix="fuzz-stores-") as tmp:
        bases = base_stores(Path(tmp))
        for index in range(start, stop):
            room = Path(tmp) / f"room-{index}"
            room.mkdir()
            path, done = make(seed, index, room, bases)
            signal.setitimer(signal.ITIMER_REAL, timeout)
            try:
                kind, detail = check(path)
            except TimeoutError:
                kind, detail = "hang", ""
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            out.append((index, kind, detail, done))
            shutil.rmtree(room, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=TIMEOUT)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--show", default=None, help="write input S:N into --out (or the current folder)")
    args = ap.parse_args()
    if args.show:
        seed, index = map(int, args.show.split(":"))
        folder = args.out or Path.cwd()
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            path, done = make(seed, index, folder, base_stores(Path(tmp)))
        print(f"{path}: {', '.join(done)}")
        return
    step = 200
    jobs = [(args.seed, k, min(k + step, args.count), args.timeout) for k in range(0, args.count, step)]
    started = time.monotonic()
    counts: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    first: dict[str, list[dict[str, object]]] = {}
    with multiprocessing.get_context("spawn").Pool(args.jobs) as pool:
        for results in pool.imap_unordered(_work, jobs):
            for index, kind, detail, done in results:
                counts[kind] += 1
                if kind == "ok":
                    seen.update(detail.split())
                if kind != "ok" and len(first.setdefault(kind, [])) < 10:
                    first[kind].append({"input": f"{args.seed}:{index}", "detail": detail, "mutations": list(done)})
    summary = {
        "inputs": sum(counts.values()),
        "seconds": round(time.monotonic() - started, 1),
        "classes": {c: counts[c] for c in CLASSES},
        "first": first,
        "reached": dict(seen.most_common()),
    }
    print(json.dumps(summary, indent=2))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "stores-summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    sys.exit(1 if set(counts) - {"ok"} else 0)


if __name__ == "__main__":
    main()
