"""A benchmark corpus built from the real logs' own bodies (../shared/real-logs).

A synthetic generator makes only the shapes it was written for (one once hid a 31% slow path);
this corpus is made of the lines the harness wrote. Each session is a header and the bodies of
one to eight real logs, concatenated and renumbered (`seq`, a chunk row's `seq0`, the cited
`sourceEventSeqs` and a replacement's nodes, moved with the events they name); about one session
in ten is a fork child (its parent's first events as the inherited prefix, under `seedLength`);
and after about 2% of the lines the schedule traffic of a live owner is spliced in (`Owner`:
creates, deletes, and each due decision with its reminder queued before its dispatches and
delivered after them, as the harness writes them). Every other line keeps its bytes (escapes, key order and
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
CORPUS_VERSION = 5
"""Bumped when the builder changes, so that a kept corpus is rebuilt."""
SEQ = re.compile(rb'^(\{"type":"[^"]*","seq0?":)(\d+)')
CITED = re.compile(rb'"sourceEventSeqs":\[([0-9,]*)\]')
REPLACED = re.compile(rb'("surfaceOp":\{"op":"replace","start":)(\d+)(,"end":)(\d+)')


def bodies(folder: Path = REAL_LOGS) -> list[list[bytes]]:
    """The event lines of every real log schedlog calls `ok`, in name order (a refused log's
    lines are no body to build on)."""
    from replay.judge.verify import verify_path

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
    from replay.lines.chunks import decode_row

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


def _event(tag: str, seq: int, time: int, data: object) -> bytes:
    from invariant.logshapes import appended

    return json.dumps(appended(tag, seq, time, data), separators=(",", ":")).encode()


def _iso(ms: int) -> str:
    from invariant import format_instant

    return format_instant(ms)


ACTIVE_MOST = 6
"""The records a session keeps active at most (a deployment's sessions hold a few; recurring
ones left to pile up would make every batch dispatch hundreds)."""


class Owner:
    """One session's schedule traffic as the harness's live owner writes it: records created,
    some deleted, and each due decision (invariant.delivery.decide) written as the owner writes
    it, its reminder queued in the inbox (an `agent/inbox/spliced` user message whose text is
    the framing), its dispatches, then the message delivered as a `user/message` of the same id,
    every event at a time the virtual clock gives, the clock only moving on. So a log made of
    real bodies and this traffic draws no delivery finding (tests/test_bench_corpus.py)."""

    def __init__(self, rng: random.Random) -> None:
        from invariant import Folder, get_profile

        self.rng, self.profile = rng, get_profile("calendar")
        self.folder = Folder(0, self.profile)
        self.clock = T0
        self.made = 0

    def events(self, seq: int) -> list[tuple[str, object]]:
        """The events written at this point of the session (`seq`: the next event's), as (type, data)."""
        from invariant.delivery import BatchDue, OneShotDue, Wait, decide

        self.clock += self.rng.randint(20_000, 90_000)
        decision = decide(self.folder.snapshot(), self.clock)
        if isinstance(decision, Wait):
            return [("schedule/change", self._created_or_deleted())]
        assert isinstance(decision, (OneShotDue, BatchDue))
        from invariant.logshapes import reminder_message

        message = reminder_message(f"reminder-{seq}", decision.framing(self.profile))
        queued = {"target": "next-turn", "start": 0, "inserted": [message]}
        out: list[tuple[str, object]] = [("agent/inbox/spliced", queued)]
        for change in decision.changes():
            self.folder.apply(change)
            out.append(("schedule/change", change.to_json()))
        out.append(("user/message", message))
        return out

    def _created_or_deleted(self) -> dict[str, object]:
        from invariant import decode_change

        active = self.folder.snapshot().active
        if len(active) >= ACTIVE_MOST or (active and self.rng.random() < 0.15):
            data: dict[str, object] = {"version": 1, "operation": "delete", "id": self.rng.choice(active).id}
        else:
            self.made += 1
            sched_id = f"schedule-{self.made}"
            if self.rng.random() < 0.6:
                seconds = self.rng.choice((60, 300, 900))
                record: dict[str, object] = {"id": sched_id, "kind": "after", "prompt": "check the deploy"}
                record |= {"afterSeconds": seconds, "scheduledAt": _iso(self.clock + seconds * 1000)}
            else:
                record = {"id": sched_id, "kind": "every", "prompt": "stand-up", "everySeconds": 600}
                record["scheduledAt"] = _iso(self.clock + 600_000)
            data = {"version": 1, "operation": "create", "schedule": record}
        self.folder.apply(decode_change(data, self.profile))
        return data


def session(rng: random.Random, parts: list[list[bytes]], schedule_share: float) -> tuple[list[bytes], int]:
    """One session's event lines (no header) from the bodies `parts`, renumbered, with the
    schedule traffic of an `Owner` spliced in after about `schedule_share` of the lines; and
    its event count."""
    out: list[bytes] = []
    seq = 0
    owner = Owner(rng)
    for part in parts:
        new_of: list[int] = []  # where each of the part's events now stands, by its seq in the part
        for line in part:
            width = _width(line)
            out.append(shifted(line, seq - len(new_of), new_of))
            new_of.extend(range(seq, seq + width))
            seq += width
            if rng.random() < schedule_share:
                for tag, data in owner.events(seq):
                    out.append(_event(tag, seq, owner.clock, data))
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
