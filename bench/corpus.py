"""Build a real-shaped corpus of session logs for the benchmarks (deterministic from a seed).

Shape, from the real harness logs: mostly large non-schedule events (request headers with tool
schemas, assistant messages, tool results with file contents), many packed chunk rows, and a
few percent `schedule/change` events (creates, deletes, one-shot and recurring dispatches).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

T0 = 1_785_931_200_000
WORDS = [
    *("the", "of", "schedule", "reminder", "agent", "session", "tool"),
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
        line = json.dumps({"type": type_, "seq": seq, "time": time, "data": data}, separators=(",", ":"))
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


def build(
    directory: Path, total_mb: int = 200, sessions: int = 50, seed: int = 7, schedule_share: float = 0.15
) -> list[Path]:
    """Write the corpus (reused when already present with the same parameters).

    `schedule_share` is the chance that a turn creates a reminder (each later gets a dispatch
    and a delete): 0.15 gives schedule events on about 4% of lines, 0.5 on about 14%.
    """
    directory.mkdir(parents=True, exist_ok=True)
    stamp = directory / f".corpus-{total_mb}-{sessions}-{seed}-{schedule_share}"
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
