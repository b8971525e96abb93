"""The verdict cache and watch fuzzer (issue 63): what a cached, resumed or followed reading says
of a log is compared with a cold read of the same bytes, after every way a log changes under
them.

Each case takes a fuzz input of `fuzz.logs` (valid and mutated logs, plain and Zstandard, v0-v4,
strict and lenient) and does one of these to it, comparing after each step a run through the
verdict cache (`replay.cache.cached.verified`, its entries written as a run writes them) with
`verify --no-cache` (`verify_path`), report and text alike:

- `append`: the log written in pieces cut at random points (inside a line, a frame, a torn
  tail), each piece appended to the same file;
- `edit`: bytes changed in place, the size and the modification time kept, then maybe an append;
- `truncate`: the log cut short, then grown again with other bytes;
- `rewrite`: the log rewritten in place (same size) while a run judges it, before its entry is
  written;
- `damage`: the cache's rows damaged (a column NULL, text or cut, a byte flipped, one entry's
  saved reading moved to another), then maybe an append;
- `replace`: another file renamed over the log, or a symbolic link swapped to another target;
- `watch`: `schedlog watch`'s look (`replay.live.follow.look`) after each piece a writer
  appends, and after edits in place of committed bytes: what it told equals verify of the log as
  committed.

A comparison that differs is a failure, reported with the seed and index that make it again
(`python -m fuzz.cache --show SEED:INDEX` runs that case alone and says what differed).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from fuzz.logs import REAL_LOGS, Source, make, sources
from invariant.findings import Finding
from replay.cache import cached as cached_module
from replay.cache.cached import let_go, verified
from replay.judge.report import SessionReport
from replay.judge.textline import text_line
from replay.judge.verdicts import Verdict
from replay.judge.verify import verify_path
from replay.live.follow import Kind, Look, WatchEvent, look, told_of
from replay.reading import Mode, Reading

DEFAULT_SEED = 20261206
KINDS = ("append", "edit", "truncate", "rewrite", "damage", "replace", "watch")
ZSTD = b"\x28\xb5\x2f\xfd"


@dataclass
class Tally:
    """Comparisons by kind, and the differences found (each with the case that makes it again)."""

    seed: int
    cases: int = 0
    comparisons: Counter[str] = field(default_factory=Counter)
    differences: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        self.cases += other.cases
        self.comparisons.update(other.comparisons)
        self.differences.extend(other.differences)

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "cases": self.cases,
            "comparisons": sum(self.comparisons.values()),
            "by kind": dict(sorted(self.comparisons.items())),
            "differences": len(self.differences),
            "first differences": self.differences[:20],
        }


class Case:
    """One case: a log file of its own in `folder`, the shared cache folder `cache`."""

    def __init__(self, seed: int, index: int, data: bytes, folder: Path, cache: Path, tally: Tally) -> None:
        self.seed, self.index, self.data = seed, index, data
        self.rng = random.Random(f"cache:{seed}:{index}")
        self.reading = Reading(mode=self.rng.choice(list(Mode)))
        suffix = ".session.jsonl.zstd" if data.startswith(ZSTD) else ".session.jsonl"
        self.path = folder / f"case-{index}{suffix}"
        self.cache, self.tally = cache, tally

    def compare(self, kind: str, step: str) -> None:
        """Verify the log through the cache and cold: the same report and text, else a difference."""
        self.tally.comparisons[kind] += 1
        through = verified(str(self.path), self.reading, self.cache)
        let_go(self.cache, close=False)  # (its entry written, as the next run finds it)
        cold = verify_path(str(self.path), self.reading)
        if _json(through) != _json(cold) or text_line(through) != text_line(cold):
            self.tally.differences.append(f"{self.seed}:{self.index} {kind} {step}: {_first_difference(through, cold)}")

    def write(self, data: bytes) -> None:
        with open(self.path, "wb") as f:
            f.write(data)

    def append(self, data: bytes) -> None:
        with open(self.path, "ab") as f:
            f.write(data)

    def cuts(self, most: int) -> list[int]:
        return sorted(self.rng.randrange(len(self.data) + 1) for _ in range(self.rng.randint(1, most)))


def _json(report: SessionReport) -> str:
    return json.dumps(report.to_json(), sort_keys=True, default=repr)


def _first_difference(a: SessionReport, b: SessionReport) -> str:
    left, right = a.to_json(), b.to_json()
    for key in sorted(set(left) | set(right)):
        if left.get(key) != right.get(key):
            return f"{key}: cached {str(left.get(key))[:160]} / cold {str(right.get(key))[:160]}"
    return "text differs"


def _kept_mtime(path: Path, edit: Callable[[], None]) -> None:
    """Run `edit` on the file at `path`, then give it back its modification time (and size)."""
    st = path.stat()
    edit()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _edited(rng: random.Random, data: bytes, start: int = 0) -> bytes:
    """`data` with one to three bytes from `start` on changed, its size kept (empty: none can be)."""
    if len(data) <= start:
        return data
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(start, len(out))
        out[at] = rng.choice(b'{}[]",:0123456789 \nabcz\x00\xff') if rng.random() < 0.7 else out[at] ^ 0x20
    return bytes(out)


# --- the kinds ---------------------------------------------------------------------------------


def _append(case: Case) -> None:
    at = 0
    for cut in [*case.cuts(4), len(case.data)]:
        case.append(case.data[at:cut])
        at = max(at, cut)
        case.compare("append", f"at {at}")


def _edit(case: Case) -> None:
    cut = case.cuts(1)[0]
    case.write(case.data[:cut])
    case.compare("edit", f"first {cut}")
    edited = _edited(case.rng, case.data[:cut])
    _kept_mtime(case.path, partial(case.write, edited))
    case.compare("edit", "edited in place, size and mtime kept")
    if case.rng.random() < 0.5:
        case.append(case.data[cut:])
        case.compare("edit", "then appended")


def _truncate(case: Case) -> None:
    case.write(case.data)
    case.compare("truncate", "whole")
    cut = case.cuts(1)[0]
    os.truncate(case.path, cut)
    case.compare("truncate", f"cut at {cut}")
    regrown = _edited(case.rng, case.data, cut)
    case.append(regrown[cut:])
    case.compare("truncate", "grown again with other bytes")


def _rewrite(case: Case) -> None:
    cut = case.cuts(1)[0]
    case.write(case.data[:cut])
    if case.rng.random() < 0.5:
        case.compare("rewrite", "judged before")
        case.append(case.data[cut:])
    now = case.path.read_bytes()
    rewritten = _edited(case.rng, now)
    with _rewritten_under_the_run(case.path, rewritten):
        verified(str(case.path), case.reading, case.cache)  # (it judged the bytes before the rewrite)
        let_go(case.cache, close=False)
    case.compare("rewrite", "after a rewrite during a run")


@contextmanager
def _rewritten_under_the_run(path: Path, new: bytes) -> Iterator[None]:
    """The log rewritten in place (its size and mtime kept) once a cached run has judged it,
    before its entry is written."""
    remember = cached_module.remember

    def rewriting(*args: Any, **kwargs: Any) -> Any:
        _kept_mtime(path, lambda: path.write_bytes(new))
        return remember(*args, **kwargs)

    cached_module.remember = rewriting  # type: ignore[assignment]
    try:
        yield
    finally:
        cached_module.remember = remember  # type: ignore[assignment]


DAMAGE = ("head-null", "head-text", "used-null", "used-text", "rest-null", "rest-text", "cut", "flip", "moved")


def _damage(case: Case) -> None:
    cut = case.cuts(1)[0]
    case.write(case.data[:cut])
    case.compare("damage", f"first {cut}")
    how = case.rng.choice(DAMAGE)
    _damaged(case.cache, os.fsencode(str(case.path.resolve())), how, case.rng)
    if case.rng.random() < 0.6:
        case.append(case.data[cut:])
    case.compare("damage", how)


def _damaged(cache: Path, path: bytes, how: str, rng: random.Random) -> None:
    """The cache's row of the log at `path` damaged as `how` says."""
    let_go(cache, close=True)  # (the store is opened again, as the next run opens it)
    db = sqlite3.connect(cache / "verdicts.sqlite")
    try:
        with db:
            row = db.execute("SELECT key, head, rest FROM entries WHERE path = ?", (path,)).fetchone()
            if row is None:
                return
            key, head, rest = row
            column, value = _damage_of(how, head, rest, rng)
            if how == "moved":
                other = db.execute(
                    "SELECT rest FROM entries WHERE key != ? ORDER BY random() LIMIT 1", (key,)
                ).fetchone()
                value = rest if other is None else other[0]
            db.execute(f"UPDATE entries SET {column} = ? WHERE key = ?", (value, key))
    finally:
        db.close()


def _damage_of(how: str, head: bytes, rest: bytes, rng: random.Random) -> tuple[str, object]:
    if how == "moved":
        return "rest", None
    if how in ("cut", "flip"):
        column = rng.choice(("head", "rest"))
        blob = bytearray(head if column == "head" else rest)
        if how == "cut":
            return column, bytes(blob[: rng.randrange(len(blob) + 1)])
        at = rng.randrange(len(blob))
        blob[at] ^= 1 << rng.randrange(8)
        return column, bytes(blob)
    column, what = how.split("-")
    return column, None if what == "null" else "text"


def _replace(case: Case) -> None:
    cut = case.cuts(1)[0]
    other = case.path.with_name(case.path.name + ".other")
    if case.rng.random() < 0.5:  # another file renamed over it
        case.write(case.data[:cut])
        case.compare("replace", f"first {cut}")
        other.write_bytes(_edited(case.rng, case.data)[: len(case.data[:cut]) + case.rng.randrange(64)])
        os.replace(other, case.path)
        case.compare("replace", "renamed over")
        return
    target_a, target_b = case.path.with_name("a-" + case.path.name), case.path.with_name("b-" + case.path.name)
    target_a.write_bytes(case.data[:cut])
    target_b.write_bytes(case.data)
    case.path.symlink_to(target_a.name)
    case.compare("replace", "a link to the first bytes")
    swap = case.path.with_name(case.path.name + ".swap")
    swap.symlink_to(target_b.name)
    os.replace(swap, case.path)
    case.compare("replace", "the link swapped to the whole log")


class Told:
    """What watch's events told of one log so far: its findings since the last reread, its verdict."""

    def __init__(self) -> None:
        self.findings: Counter[Finding] = Counter()
        self.verdict: Verdict | None = None

    def hear(self, events: list[WatchEvent]) -> None:
        for e in events:
            if e.kind in (Kind.REREAD, Kind.GONE):
                self.findings, self.verdict = Counter(), None
            elif e.kind is Kind.FINDING:
                assert e.finding is not None
                self.findings[e.finding] += 1
            elif e.kind is Kind.WITHDRAWN:
                assert e.finding is not None and self.findings[e.finding] > 0
                self.findings[e.finding] -= 1
            elif e.kind is Kind.VERDICT:
                self.verdict = e.verdict


def as_committed(path: Path, reading: Reading, scratch: Path) -> tuple[Counter[Finding], Verdict] | None:
    """What `verify` says of the log at `path` as committed: a plain log up to its last LF (None
    where it holds none), a Zstandard one as it stands, its torn final frame aside."""
    data = path.read_bytes()
    if not data.startswith(ZSTD):
        data = data[: data.rfind(b"\n") + 1]
        if not data:
            return None
    scratch.mkdir(exist_ok=True)
    prefix = scratch / path.name
    prefix.write_bytes(data)
    report = verify_path(str(prefix), reading)
    return Counter(told_of(report)), report.verdict


def _watch(case: Case) -> None:
    told, before = Told(), None
    scratch = case.path.parent / f"committed-{case.index}"
    at = 0
    for cut in [*case.cuts(5), len(case.data)]:
        now = case.path.read_bytes() if at else b""
        if now and case.rng.random() < 0.25:  # committed bytes edited in place (often the header), size and mtime kept
            edited = _edited(case.rng, now, 0) if case.rng.random() < 0.5 else _edited_early(case.rng, now)
            _kept_mtime(case.path, partial(case.write, edited))
            before, _ = _looked(case, before, told, scratch, "edited in place")
        elif now and not now.startswith(ZSTD) and not now.endswith(b"\n") and case.rng.random() < 0.5:
            whole = now[:-1] + b"\n"  # the torn tail rewritten in place into a whole line of the same size
            _kept_mtime(case.path, partial(case.write, whole))
            before, _ = _looked(case, before, told, scratch, "torn tail made whole in place")
        case.append(case.data[at:cut])
        at = max(at, cut)
        before, _ = _looked(case, before, told, scratch, f"at {at}")


def _edited_early(rng: random.Random, data: bytes) -> bytes:
    """`data` with a byte of its first line changed (far before the end of a long log)."""
    return _edited(rng, data[: min(len(data), 64)]) + data[64:]


def _looked(
    case: Case, before: Look | None, told: Told, scratch: Path, step: str
) -> tuple[Look | None, list[WatchEvent]]:
    """One look of watch at the log, compared with verify of the log as committed."""
    case.tally.comparisons["watch"] += 1
    after, events = look(str(case.path), before, case.reading)
    told.hear(events)
    expected = as_committed(case.path, case.reading, scratch)
    got = (+told.findings, told.verdict) if told.verdict is not None or +told.findings else None
    if (expected is None and got is not None) or (expected is not None and got != expected):
        case.tally.differences.append(f"{case.seed}:{case.index} watch {step}: told {got} / verify {expected}")
    return after, events


KIND_RUNS: dict[str, Callable[[Case], None]] = {
    "append": _append,
    "edit": _edit,
    "truncate": _truncate,
    "rewrite": _rewrite,
    "damage": _damage,
    "replace": _replace,
    "watch": _watch,
}


def one_case(
    seed: int, index: int, pool: Sequence[Source], folder: Path, cache: Path, kind: str | None = None
) -> Tally:
    """Case `index` of `seed` (its kind drawn from the index, unless `kind`), in `folder`."""
    tally = Tally(seed, cases=1)
    item = make(seed, index, pool)
    if item.source.startswith("store:"):  # (a Host store is never cached: judged at its `now`)
        return Tally(seed)
    case = Case(seed, index, item.data, folder, cache, tally)
    KIND_RUNS[kind or KINDS[index % len(KINDS)]](case)
    return tally


_POOL: list[Source] = []
_PLACE: list[Path] = []


def _start(real_logs: str) -> None:
    _POOL[:] = sources(Path(real_logs))
    _PLACE[:] = [Path(tempfile.mkdtemp(prefix="schedlog-cachefuzz-"))]


def _cases(task: tuple[int, int, int]) -> Tally:
    """Cases `start` to `end` of `seed` (a worker's task), each in a folder of its own."""
    seed, start, end = task
    tally = Tally(seed)
    place = _PLACE[0]
    for index in range(start, end):
        folder = place / f"case-{index}"
        folder.mkdir()
        try:
            tally.add(one_case(seed, index, _POOL, folder, place / "cache"))
        except Exception as err:  # an escaping exception is a failure too
            tally.differences.append(f"{seed}:{index} raised {type(err).__name__}: {err}"[:300])
        finally:
            _removed(folder)
    return tally


def _removed(folder: Path) -> None:
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def run(seed: int, cases: int, jobs: int, real_logs: Path, start: int = 0) -> Tally:
    """Cases `start` to `start + cases` of `seed` on `jobs` spawned worker processes (each with
    a cache of its own, shared by its cases: stale entries of other logs in it, as in life)."""
    tally = Tally(seed)
    chunk = 50
    tasks = [(seed, n, min(n + chunk, start + cases)) for n in range(start, start + cases, chunk)]
    started = time.monotonic()
    context = multiprocessing.get_context("spawn")
    with context.Pool(jobs, initializer=_start, initargs=(str(real_logs),)) as pool:
        for got in pool.imap_unordered(_cases, tasks):
            tally.add(got)
            done = sum(tally.comparisons.values())
            if tally.cases % 2000 < chunk:
                rate = done / (time.monotonic() - started)
                print(f"{tally.cases:,} cases, {done:,} comparisons, {len(tally.differences)} differ, {rate:,.0f}/s",
                      file=sys.stderr, flush=True)  # fmt: skip
    return tally


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.cache", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--cases", type=int, default=5_000)
    parser.add_argument("--start", type=int, default=0, help="the first case's index")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--real-logs", type=Path, default=REAL_LOGS)
    parser.add_argument("--show", metavar="SEED:INDEX", help="run case INDEX of SEED alone and say what differed")
    args = parser.parse_args(argv)
    if args.show:
        seed, index = (int(part) for part in args.show.split(":"))
        with tempfile.TemporaryDirectory() as place:
            tally = one_case(seed, index, sources(args.real_logs), Path(place), Path(place) / "cache")
        print(json.dumps(tally.to_json(), indent=2))
        return 1 if tally.differences else 0
    tally = run(args.seed, args.cases, args.jobs, args.real_logs, args.start)
    print(json.dumps(tally.to_json(), indent=2))
    return 1 if tally.differences else 0


if __name__ == "__main__":
    sys.exit(main())
