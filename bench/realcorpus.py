"""A benchmark corpus built from the real logs' own bodies (../shared/real-logs).

A synthetic generator makes only the shapes it was written for (one once hid a 31% slow path);
this corpus is made of the lines the harness wrote. Each session is a header and the bodies of
one to eight real logs, concatenated and renumbered (`seq`, a chunk row's `seq0`, the cited
`sourceEventSeqs` and a replacement's nodes, moved with the events they name); about one session
in ten is a fork child (its parent's first events as the inherited prefix, under `seedLength`);
and about 2% of the lines are spliced-in `schedule/change` events (after creates dispatched
later, fixed-rate creates, deletes). Every other line keeps its bytes (escapes, key order and
all): only the numbers that must move are rewritten, in place. Deterministic from a seed.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

REAL_LOGS = Path(__file__).resolve().parent.parent.parent / "shared" / "real-logs"
T0 = 1_785_931_200_000
CORPUS_VERSION = 3
"""Bumped when the builder changes, so that a kept corpus is rebuilt."""
SEQ = re.compile(rb'^(\{"type":"[^"]*","seq0?":)(\d+)')
CITED = re.compile(rb'"sourceEventSeqs":\[([0-9,]*)\]')
REPLACED = re.compile(rb'("surfaceOp":\{"op":"replace","start":)(\d+)(,"end":)(\d+)')


def bodies(folder: Path = REAL_LOGS) -> list[list[bytes]]:
    """The event lines of every real log schedlog calls `ok`, in name order (a refused log's
    lines are no body to build on)."""
    from replay.audit.verify import verify_path

    out = []
    for path in sorted(folder.glob("*.jsonl")):
        lines = path.read_bytes().splitlines()[1:]
        if lines and verify_path(str(path)).verdict == "ok" and b'"seedLength"' not in path.read_bytes()[:400]:
            out.append([line for line in lines if line.strip()])
    if not out:
        raise SystemExit(f"no real logs under {folder} (the corpus is built from their bodies)")
    return out


def _width(line: bytes) -> int:
    """How many events a line holds: a chunk row's members, else one."""
    if b'"seq0":' not in line[:80]:
        return 1
    from replay.logs.chunks import decode_row

    value = json.loads(line)
    return len(decode_row(value, value["type"]))


def shifted(line: bytes, by: int, new_of: list[int] | None = None) -> bytes:
    """`line` with its own seq (or seq0) moved by `by`, and every seq it cites (its
    `sourceEventSeqs`, the nodes a replacement names) moved to where that event now stands:
    `new_of[old]` for the events before it in its body, else by `by` too."""
    if by == 0 and not new_of:
        return line
    line = SEQ.sub(lambda m: m.group(1) + str(int(m.group(2)) + by).encode(), line, count=1)

    def moved(old: bytes) -> bytes:
        n = int(old)
        return str(new_of[n] if new_of is not None and n < len(new_of) else n + by).encode()

    def cite(m: re.Match[bytes]) -> bytes:
        return b'"sourceEventSeqs":[' + b",".join(moved(s) for s in m.group(1).split(b",") if s) + b"]"

    def replaced(m: re.Match[bytes]) -> bytes:
        return m[1] + moved(m[2]) + m[3] + moved(m[4])

    return REPLACED.sub(replaced, CITED.sub(cite, line))


def _schedule(seq: int, time: int, data: dict[str, object]) -> bytes:
    return json.dumps(
        {"type": "schedule/change", "seq": seq, "time": time, "data": data}, separators=(",", ":")
    ).encode()


def _iso(ms: int) -> str:
    from invariant import format_instant

    return format_instant(ms)


def session(rng: random.Random, parts: list[list[bytes]], schedule_share: float) -> tuple[list[bytes], int]:
    """One session's event lines (no header) from the bodies `parts`, renumbered, with schedule
    events spliced in after about `schedule_share` of the lines; and its event count."""
    out: list[bytes] = []
    seq = 0
    time = T0
    pending: list[tuple[str, str]] = []  # (id, kind) created and not yet dispatched or deleted
    made = 0
    last_batch = 0
    for part in parts:
        new_of: list[int] = []  # where each of the part's events now stands, by its seq in the part
        for line in part:
            width = _width(line)
            out.append(shifted(line, seq - len(new_of), new_of))
            new_of.extend(range(seq, seq + width))
            seq += width
            if rng.random() < schedule_share:
                time += 1_000
                if pending and rng.random() < 0.5:
                    sched_id, kind = pending.pop(rng.randrange(len(pending)))
                    if rng.random() < 0.25:
                        data: dict[str, object] = {"version": 1, "operation": "delete", "id": sched_id}
                    elif kind == "every":  # batches 300 s apart: the calendar gate holds too
                        last_batch = max(time + 900_000, last_batch + 300_000)
                        data = {"version": 1, "operation": "dispatch", "id": sched_id, "acceptedAt": _iso(last_batch)}
                    else:
                        data = {"version": 1, "operation": "dispatch", "id": sched_id}
                else:
                    made += 1
                    sched_id = f"schedule-{made}"
                    if rng.random() < 0.5:
                        record = {"id": sched_id, "kind": "after", "prompt": "check the deploy", "afterSeconds": 60}
                        record["scheduledAt"] = _iso(time + 60_000)
                        kind = "after"
                    else:
                        record = {"id": sched_id, "kind": "every", "prompt": "stand-up", "everySeconds": 600}
                        record["scheduledAt"] = _iso(time + 600_000)
                        kind = "every"
                    data = {"version": 1, "operation": "create", "schedule": record}
                    pending.append((sched_id, kind))
                out.append(_schedule(seq, time, data))
                seq += 1
    return out, seq


def sessions(
    rng: random.Random, sources: list[list[bytes]], total: int, schedule_share: float = 0.02
) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) of sessions built from the bodies `sources` until `total` bytes: one to eight
    bodies each (about four: 200 MB make about 3,400 sessions, as in the corpus of issue 30),
    one in ten a fork child of the session before it."""
    made = 0
    n = 0
    previous: list[bytes] | None = None
    while made < total:
        sid = f"real-{n:05d}"
        parts = [rng.choice(sources) for _ in range(min(8, max(1, int(rng.lognormvariate(1.4, 0.5)))))]
        header: dict[str, object] = {"type": "session", "version": 0, "id": sid, "createdAt": T0, "cwd": "/srv/app"}
        lines, _ = session(rng, parts, schedule_share)
        if previous is not None and rng.random() < 0.1:  # a fork child: the parent's prefix, inherited
            prefix = previous[: rng.randint(1, len(previous))]
            inherited = sum(_width(line) for line in prefix)
            lines = prefix + [shifted(line, inherited) for line in lines]
            header["seedLength"] = inherited
        header["delegationDepth"] = 0
        blob = json.dumps(header, separators=(",", ":")).encode() + b"\n" + b"\n".join(lines) + b"\n"
        yield f"{sid}.jsonl", blob
        made += len(blob)
        previous = lines
        n += 1


def build_from_real_logs(
    out: Path, mb: int = 200, seed: int = 0, schedule_share: float = 0.02, folder: Path = REAL_LOGS
) -> list[Path]:
    """Write the sessions of `sessions` to `out` until `mb` MB (kept: a second call reuses them)."""
    out.mkdir(parents=True, exist_ok=True)
    stamp = out / f".built-{CORPUS_VERSION}-{mb}-{seed}"
    if stamp.exists():
        return sorted(out.glob("*.jsonl"))
    for old in [*out.glob("*.jsonl"), *out.glob(".built-*")]:  # another size's corpus, and its stamp
        old.unlink()
    written = []
    for name, blob in sessions(random.Random(seed), bodies(folder), mb * 1_000_000, schedule_share):
        path = out / name
        path.write_bytes(blob)
        written.append(path)
    stamp.touch()
    return written
