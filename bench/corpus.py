"""Build corpora of session logs for the benchmarks (deterministic from a seed).

`build` (the default case) is real-shaped, like the logs deployments hold: many small sessions
(sizes log-normal around a median of ~25 KB, from 9 KB to a 4 MB tail), lines of a few hundred
bytes (turns, steps, messages, tool calls and results, some large file contents), packed chunk
rows of tens of members (about 5.7 events a line once rows are expanded), ~10% forked children
carrying their parent's prefix under a seedLength, ~2% `schedule/change` lines (creates,
recurring dispatches, deletes) and a few lines holding a lone surrogate escape (valid for
`JSON.parse`, refused by the fast decoders). `build_uniform` is the second case: a few sessions
of equal size (4 MB each by default), which is where per-session costs hide.
"""

from __future__ import annotations

import copy
import json
import math
import random
from pathlib import Path

from invariant.logshapes import appended

T0 = 1_785_931_200_000
WORDS = [
    *("the", "of", "plan", "reminder", "agent", "session", "tool"),
    *("result", "file", "line", "error", "check", "deploy", "metric"),
]


def _text(rng: random.Random, n_words: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n_words))


def _iso(ms: int) -> str:
    from invariant import format_instant

    return format_instant(ms)


def session_lines(rng: random.Random, sid: str, target_bytes: int, schedule_share: float) -> list[str]:
    lines = [
        json.dumps(
            {"type": "session", "version": 0, "id": sid, "createdAt": T0, "cwd": "/srv/app", "delegationDepth": 0}
        )
    ]
    seq = 0
    time = T0
    turn = 0
    size = len(lines[0])
    n_sched = 0
    last_batch: int | None = None
    every: list[tuple[str, int]] = []

    def emit(type_: str, data: object) -> None:
        nonlocal seq, time, size
        time += rng.randint(1, 2000)
        line = json.dumps(appended(type_, seq, time, data), separators=(",", ":"))
        lines.append(line)
        seq += 1
        size += len(line) + 1

    while size < target_bytes:
        turn += 1
        emit("turn/start", {"turn": turn})
        emit("step/start", {"turn": turn, "step": 1})
        emit(
            "request/header",
            {
                "turn": turn,
                "step": 1,
                "header": {
                    "config": {"provider": "p", "model": "m"},
                    "tools": [{"name": f"tool_{i}", "description": _text(rng, 60)} for i in range(8)],
                },
            },
        )
        for kind in ("reasoning-chunks", "text-chunks"):
            members = [_text(rng, rng.randint(1, 3)) for _ in range(rng.randint(20, 120))]
            row = {
                "type": kind,
                "seq0": seq,
                "time0": time,
                "data": {
                    "turn": turn,
                    "step": 1,
                    "index": 0,
                    "dt": [rng.randint(0, 40) for _ in members[1:]],
                    "texts": members,
                },
            }
            line = json.dumps(row, separators=(",", ":"))
            lines.append(line)
            seq += len(members)
            size += len(line) + 1
        emit(
            "assistant/message",
            {
                "turn": turn,
                "step": 1,
                "message": {
                    "id": f"m{seq}",
                    "role": "assistant",
                    "content": [{"type": "text", "text": _text(rng, 200)}],
                    "source": {"kind": "model", "provider": "p", "model": "m"},
                },
            },
        )
        emit(
            "tool/result",
            {
                "turn": turn,
                "step": 1,
                "message": {
                    "id": f"r{seq}",
                    "role": "user",
                    "content": [
                        {
                            "type": "tool-result",
                            "toolCallId": "c",
                            "content": [{"type": "text", "text": _text(rng, 1500)}],
                        }
                    ],
                    "source": {"kind": "tool", "callId": "c"},
                },
            },
        )
        if rng.random() < schedule_share:
            n_sched += 1
            sid_ = f"schedule-{n_sched}"
            secs = rng.randint(300, 7200)
            target = time + secs * 1000
            rec = {
                "id": sid_,
                "kind": "every",
                "prompt": _text(rng, 6),
                "everySeconds": secs,
                "scheduledAt": _iso(target),
            }
            emit("schedule/change", {"version": 1, "operation": "create", "schedule": rec})
            every.append((sid_, target))
        emit("step/end", {"turn": turn, "step": 1})
        emit("turn/end", {"turn": turn, "reason": {"kind": "completed"}})
        time += rng.randint(60_000, 3_600_000)
        due = [(s, t) for s, t in every if t <= time]
        if due and (last_batch is None or time >= last_batch + 600_000):
            last_batch = time
            accepted = _iso(time)
            for s, _ in due:
                emit("schedule/change", {"version": 1, "operation": "dispatch", "id": s, "acceptedAt": accepted})
                every.remove((s, _))
                emit("schedule/change", {"version": 1, "operation": "delete", "id": s})
    return lines


def build_uniform(
    directory: Path, total_mb: int = 200, sessions: int = 50, seed: int = 7, schedule_share: float = 0.15
) -> list[Path]:
    """Write the corpus (reused when already present with the same parameters).

    `schedule_share` is the chance that a turn creates a reminder (each later gets a dispatch
    and a delete): 0.15 gives schedule events on about 4% of lines, 0.5 on about 14%.
    """
    directory.mkdir(parents=True, exist_ok=True)
    stamp = directory / f".corpus-{SHAPE}-{total_mb}-{sessions}-{seed}-{schedule_share}"
    paths = [directory / f"s{i:03d}.session.jsonl" for i in range(sessions)]
    if stamp.exists() and all(p.exists() for p in paths):
        return paths
    for old in directory.glob(".corpus-*"):  # a build with other parameters overwrites the same names
        old.unlink()
    rng = random.Random(seed)
    per = total_mb * 1_000_000 // sessions
    for i, path in enumerate(paths):
        path.write_text("\n".join(session_lines(rng, f"bench-{i}", per, schedule_share)) + "\n")
    stamp.touch()
    return paths


def as_zstd(log: Path, target: Path, seed: int | str) -> Path:
    """`log` written to `target` as the harness's default encoding writes it (session-log.md
    §9): the header line in a frame of its own, then one checksummed frame an append batch,
    here of 1-8 records (seeded), streamed; `target` appears whole or not at all."""
    import zstandard

    compressor = zstandard.ZstdCompressor(write_checksum=True)
    rng = random.Random(seed)
    part = target.with_name(target.name + ".part")
    with open(log, "rb") as src, open(part, "wb") as out:
        out.write(compressor.compress(src.readline()))
        batch: list[bytes] = []
        step = rng.randint(1, 8)
        for line in src:
            batch.append(line)
            if len(batch) == step:
                out.write(compressor.compress(b"".join(batch)))
                batch, step = [], rng.randint(1, 8)
        if batch:
            out.write(compressor.compress(b"".join(batch)))
    part.rename(target)
    return target


SHAPE = 4
"""The generators' revision, in the stamp of a built corpus: a change rebuilds it (4: surface
events carry surfaceOp, as the harness writes them)."""
LONE_SURROGATE = "\ud83d"
"""Half of a surrogate pair: `JSON.parse` keeps it, msgspec refuses it (the exact path reads it)."""


class _Writer:
    """One real-shaped session being written, turn by turn (copied to fork a child)."""

    def __init__(self, rng: random.Random, sid: str, schedule_share: float, header: dict[str, object]) -> None:
        self.rng = rng
        self.sid = sid
        self.share = schedule_share
        self.lines = [json.dumps(header, separators=(",", ":"))]
        self.size = len(self.lines[0]) + 1
        self.seq = 0
        self.time = T0 + rng.randint(0, 10**9)
        self.turns = 0
        self.made = 0
        self.last_batch: int | None = None
        self.every: list[tuple[str, int]] = []

    def _put(self, record: dict[str, object]) -> None:
        line = json.dumps(record, separators=(",", ":"))
        self.lines.append(line)
        self.size += len(line) + 1

    def emit(self, type_: str, data: object) -> None:
        self.time += self.rng.randint(1, 900)
        self._put(appended(type_, self.seq, self.time, data))
        self.seq += 1

    def row(self, tag: str, step: int, index: int, n: int, extra: dict[str, object] | None = None) -> None:
        rng = self.rng
        members = [rng.choice(WORDS)[: rng.randint(1, 6)] for _ in range(n)]
        data: dict[str, object] = {"turn": self.turns, "step": step, "index": index}
        data |= extra or {}
        data["dt"] = [rng.choice((0, 0, 0, 1, 27, 29, 58)) for _ in members[1:]]
        data["texts" if tag != "tool-call-chunks" else "args"] = members
        self._put({"type": tag, "seq0": self.seq, "time0": self.time, "data": data})
        self.seq += n
        self.time += sum(data["dt"])  # type: ignore[arg-type]

    def message(self, kind: str, words: int, step: int | None = None) -> dict[str, object]:
        text = _text(self.rng, words)
        if self.rng.random() < 0.003:
            text += " " + LONE_SURROGATE
        body: dict[str, object] = {"id": f"{kind}-{self.seq}", "role": "assistant" if kind == "a" else "user"}
        body["content"] = [{"type": "text", "text": text}]
        body["source"] = {"kind": "model", "provider": "p", "model": "m"} if kind == "a" else {"kind": "user"}
        return body if step is None else {"turn": self.turns, "step": step, "message": body}

    def turn(self) -> None:
        rng = self.rng
        self.turns += 1
        t = self.turns
        self.emit("turn/start", {"turn": t})
        self.emit("user/message", self.message("u", rng.randint(5, 60)))  # as the harness writes it
        if rng.random() < 0.3:
            inserted = [self.message("u", rng.randint(5, 30))]
            self.emit("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": inserted})
        steps = rng.choice((1, 1, 2, 2, 3))
        for step in range(1, steps + 1):
            self.emit("step/start", {"turn": t, "step": step})
            if step == 1 and t % 3 == 1:
                tools = [{"name": f"tool_{i}", "description": _text(rng, 40)} for i in range(6)]
                header = {"config": {"provider": "p", "model": "m"}, "tools": tools}
                self.emit("request/header", {"turn": t, "step": step, "header": header})
            self.emit("request/context", {"turn": t, "step": step, "messages": rng.randint(1, 200)})
            self.row("reasoning-chunks", step, 0, rng.randint(4, 50))
            if step < steps:
                call = f"call_{self.seq}"
                self.row("tool-call-chunks", step, 1, rng.randint(4, 30), {"id": call, "name": "bash"})
                args = {"command": _text(rng, rng.randint(2, 12))}
                self.emit("tool/call", {"turn": t, "step": step, "callId": call, "name": "bash", "args": args})
                words = rng.randint(5, 120) if rng.random() > 0.04 else rng.randint(1500, 9000)
                output = [{"type": "text", "text": _text(rng, words)}]
                block = {"type": "tool-result", "toolCallId": call, "content": output}
                result = {
                    "id": f"r-{self.seq}",
                    "role": "user",
                    "content": [block],
                    "source": {"kind": "tool", "callId": call},
                }
                self.emit("tool/result", {"turn": t, "step": step, "message": result})
            else:
                self.row("text-chunks", step, 0, rng.randint(3, 40))
                self.emit("assistant/message", self.message("a", rng.randint(10, 90), step))
            self.emit("step/end", {"turn": t, "step": step})
        self.schedule()
        self.emit("turn/end", {"turn": t, "reason": {"kind": "completed"}})
        self.time += rng.randint(60_000, 3_600_000)

    def schedule(self) -> None:
        """Creates on some turns, then each due reminder's dispatch (batches >= 600 s apart) and delete."""
        rng = self.rng
        if rng.random() < self.share:
            self.made += 1
            secs = rng.randint(300, 7200)
            target = self.time + secs * 1000
            name = f"{self.sid[-6:]}-{self.made}"
            record = {"id": name, "kind": "every", "prompt": _text(rng, 6), "everySeconds": secs}
            record["scheduledAt"] = _iso(target)
            self.emit("schedule/change", {"version": 1, "operation": "create", "schedule": record})
            self.every.append((name, target))
        due = [(s, t) for s, t in self.every if t <= self.time]
        if due and (self.last_batch is None or self.time >= self.last_batch + 600_000):
            self.last_batch = self.time
            accepted = _iso(self.time)
            for s, t in due:
                self.emit("schedule/change", {"version": 1, "operation": "dispatch", "id": s, "acceptedAt": accepted})
                self.every.remove((s, t))
                self.emit("schedule/change", {"version": 1, "operation": "delete", "id": s})


def _size(rng: random.Random) -> int:
    """A session's size in bytes: log-normal (median 25 KB), clipped to 9 KB-4 MB."""
    return int(min(4_000_000, max(9_000, math.exp(rng.gauss(math.log(25_000), 1.3)))))


def real_shaped(rng: random.Random, total: int, schedule_share: float = 0.12) -> list[tuple[str, list[str]]]:
    """(name, lines) of each session of a real-shaped corpus of about `total` bytes."""
    out: list[tuple[str, list[str]]] = []
    written = 0
    while written < total:
        target = _size(rng)
        sid = f"bench-{len(out):05d}"
        header = {"type": "session", "version": 0, "id": sid, "createdAt": T0, "cwd": "/srv/app", "delegationDepth": 0}
        writer = _Writer(rng, sid, schedule_share, header)
        fork_at = target * rng.uniform(0.2, 0.8) if rng.random() < 0.1 else None
        child: _Writer | None = None
        while writer.size < target:
            writer.turn()
            if fork_at is not None and child is None and writer.size >= fork_at:
                child = copy.copy(writer)
                child.lines = list(writer.lines)
                child.every = []  # the parent's reminders are inherited: the child may not dispatch them
        out.append((sid, writer.lines))
        written += writer.size
        if child is not None:  # a forked child: its parent's events so far, then its own
            csid = f"{sid}-child"
            head = {**header, "id": csid, "parentSession": sid, "seedLength": child.seq, "delegationDepth": 1}
            child.lines[0] = json.dumps(head, separators=(",", ":"))
            child.sid = csid
            for _ in range(rng.randint(1, 6)):
                child.turn()
            out.append((csid, child.lines))
            written += child.size
    return out


def build(
    directory: Path, total_mb: int = 200, sessions: int | None = None, seed: int = 7, schedule_share: float = 0.15
) -> list[Path]:
    """Write the real-shaped corpus of about `total_mb` (reused when already present with the
    same parameters); with `sessions`, the uniform one of that many sessions (`build_uniform`)."""
    if sessions is not None:
        return build_uniform(directory, total_mb, sessions, seed, schedule_share)
    stamp = directory / f".real-{SHAPE}-{total_mb}-{seed}"
    listing = directory / ".files"
    if stamp.exists() and listing.exists():
        paths = [directory / name for name in listing.read_text().split()]
        if all(p.exists() for p in paths):
            return paths
    directory.mkdir(parents=True, exist_ok=True)
    for old in [*directory.glob(".real-*"), *directory.glob("*.jsonl")]:
        old.unlink()
    paths = []
    for sid, lines in real_shaped(random.Random(seed), total_mb * 1_000_000):
        path = directory / f"{sid}.session.jsonl"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    listing.write_text("\n".join(p.name for p in paths) + "\n")
    stamp.touch()
    return paths
