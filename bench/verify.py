"""Verify throughput against a json.loads-every-line baseline, both measured in this run.

    python bench/verify.py [--mb 200] [--sessions 50] [--runs 5] [--framing v0|v4]

Three corpora: the one built from the real logs' bodies (bench/realcorpus.py, the default
case: every key and shape the harness writes), the synthetic real-shaped one (bench/corpus.py:
many small sessions) and `--sessions` sessions of equal size (4 MB each at the defaults). Each
reports the lines that left the fast path and their cost, the reader's floor (`floor`: read,
split and envelope decode alone) beside verify, and the reference's own load of the same logs
(`reference_load`: Node and the released packages, as the reference tier installs them; left
out, saying why, when they cannot be had). For each: CPU seconds, best of `--runs` runs
alternating baseline and verify (the reference's, best of as many in one Node process); then
verify of the real-body corpus as Zstandard logs, the harness's default encoding, against the
same logs plain; then, on the real-body corpus, the wall clock of `verify_paths` with one job
and with two.

Goals: issue 2, verify >= 1.0x the baseline while checking every line; issue 17, >= 4.0x on
both corpora, and two jobs >= 1.7x one; issue 30, verify CPU <= 0.40 of json.loads, that is
>= 2x the reference's own load, and two jobs' wall <= 0.6 of one's. With `--framing v4`, the
uniform corpus is rewritten as format v4 logs (fixtures/upgrade.py) and, beside them, the same
events under a v0 header; the goal (issue 16) is v4 within 10% of v0.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.corpus import as_zstd, build
from bench.realcorpus import build_from_real_logs
from replay.audit.auditrun import verify_paths
from replay.judge.verify import verify_path


def baseline(paths: list[Path]) -> tuple[float, int]:
    start = time.process_time()
    lines = 0
    for path in paths:
        with open(path, "rb") as f:
            for line in f:
                json.loads(line)
                lines += 1
    return time.process_time() - start, lines


def verify(paths: list[Path]) -> tuple[float, int, int]:
    start = time.process_time()
    events = schedule = 0
    for path in paths:
        r = verify_path(str(path))
        assert r.verdict == "ok", (path, r.violation, r.findings)
        events += r.events
        schedule += r.schedule_events
    return time.process_time() - start, events, schedule


def floor(paths: list[Path]) -> tuple[float, int]:
    """(CPU seconds, lines decoded) of the reader's floor, what verify cannot do without: each
    file read (small ones whole), its lines after the header split (frames.plain_lines) and
    decoded into typed envelopes by msgspec (fastruns.decode_run), with no record looked at.
    What verify spends above it is the judgement in Python: the in-line checks, load verdicts,
    surface, selector, fold and report."""
    from replay.logs.fastruns import decode_run
    from replay.logs.frames import Block, plain_lines
    from replay.sources.bytesource import FileSource, load, slicer

    start = time.process_time()
    decoded = 0
    for path in paths:
        data = load(str(path))
        pieces = data.pieces() if isinstance(data, FileSource) else (data,)
        for part in plain_lines(pieces, data.read_at if isinstance(data, FileSource) else slicer(data)):
            if isinstance(part, Block):
                decoded += len(decode_run(part.lines)[0])
        if isinstance(data, FileSource):
            data.close()
    return time.process_time() - start, decoded


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--runs", type=int, default=5, help="best of N alternating runs for each side")
    ap.add_argument("--framing", choices=["v0", "v4"], default="v0")
    ap.add_argument("--start-up", action="store_true", help="only the start-up of a run that does nothing (issue 65)")
    ap.add_argument(
        "--shares",
        default=None,
        help="the judge's cost (issue 52): real-body corpora of --mb MB at these schedule shares, e.g. 0.0035,0.02",
    )
    args = ap.parse_args()
    if min(args.mb, args.sessions, args.runs) < 1:
        ap.error("every option takes a positive number")
    out = Path(__file__).resolve().parent / "out"
    if args.start_up:
        start_up(args.runs)
        return
    if args.shares is not None:
        judge_cost(out, args.mb, [float(s) for s in args.shares.split(",")], args.runs)
        return
    print(f"best of {args.runs} runs each, CPU seconds")
    if args.framing == "v4":
        corpus = build(out / "corpus", args.mb, args.sessions)
        as_v4, as_v0 = framed(corpus, out / f"framed-{args.mb}-{args.sessions}")
        v4_s = min(verify(as_v4)[0] for _ in range(args.runs))
        v0_s = min(verify(as_v0)[0] for _ in range(args.runs))
        size = sum(p.stat().st_size for p in as_v4) / 1e6
        print(f"\nthe same events, {len(as_v4)} sessions, {size:.0f} MB as v4:")
        print(f"  v0 framing: {v0_s:.2f} s   v4 framing: {v4_s:.2f} s")
        print(f"  ratio v0/v4: {v0_s / v4_s:.2f}x (goal >= 0.9x: v4 within 10% of v0)")
        return
    bodies = build_from_real_logs(out / "real-bodies", args.mb)
    measure("built from the real logs' bodies", bodies, args.runs)
    real = build(out / "real", args.mb)
    measure("real-shaped (synthetic)", real, args.runs)
    uniform = build(out / "corpus", args.mb, args.sessions)
    measure(f"{args.sessions} sessions of {args.mb / args.sessions:.0f} MB", uniform, args.runs)
    compressed(bodies, out / "real-bodies-zstd", args.runs)
    jobs(bodies, args.runs)


def jobs(paths: list[Path], runs: int) -> None:
    """Wall clock of verify_paths with one job and with two (best of `runs`, alternating)."""
    names = [str(p) for p in paths]
    best = {1: float("inf"), 2: float("inf")}
    for _ in range(runs):
        for n in best:
            start = time.perf_counter()
            for _report in verify_paths(names, jobs=n):
                pass
            best[n] = min(best[n], time.perf_counter() - start)
    print(f"\nbuilt from the real logs' bodies, wall clock: one job {best[1]:.2f} s, two jobs {best[2]:.2f} s")
    print(f"  ratio two jobs/one job: {best[1] / best[2]:.2f}x (goal >= 1.7x)")
    print(f"  two jobs' wall / one job's: {best[2] / best[1]:.2f} (issue 30: <= 0.6)")


def compressed(paths: list[Path], out: Path, runs: int) -> None:
    """Verify CPU on the logs as Zstandard files against the same logs plain (best of `runs`,
    alternating)."""
    out.mkdir(parents=True, exist_ok=True)
    zstd = [out / f"{p.stem}.jsonl.zstd" for p in paths]
    for path, target in zip(paths, zstd, strict=True):
        if not target.exists():  # built once
            as_zstd(path, target, path.name)
    verify(zstd)
    plain_s = zstd_s = float("inf")
    for _ in range(runs):
        plain_s = min(plain_s, verify(paths)[0])
        zstd_s = min(zstd_s, verify(zstd)[0])
    size = sum(p.stat().st_size for p in zstd) / 1e6
    print(f"\nbuilt from the real logs' bodies, as Zstandard logs (1-8 records a frame, {size:.0f} MB):")
    print(f"  verify {zstd_s:.2f} s against {plain_s:.2f} s plain: {zstd_s / plain_s:.2f}x")


def framed(paths: list[Path], out: Path) -> tuple[list[Path], list[Path]]:
    """Each session rewritten as a v4 log, and the same events under a v0 header (built once)."""
    from fixtures.upgrade import log_bytes, upgrade
    from replay.logs.logfile import SessionLog

    as_v4, as_v0 = [], []
    for path in paths:
        sid = path.name.split(".")[0]  # each in a directory of its own: no generations side by side
        v4, v0 = out / "v4" / sid / "session.v4.jsonl", out / "v0" / sid / "session.jsonl"
        if not v4.exists() or not v0.exists():
            v4.parent.mkdir(parents=True, exist_ok=True)
            v0.parent.mkdir(parents=True, exist_ok=True)
            log = SessionLog(str(path))
            events = [e for entry in log.entries() for e in entry.events()]
            head, upgraded, _ = upgrade(dict(log.head.header or {}), events, 4)
            v4.write_bytes(log_bytes(head, upgraded))
            cut = next((e["seq"] for e in upgraded if e["type"] == "session/end-seed"), 0)
            old = {k: v for k, v in head.items() if k != "isSeeded"} | {"version": 0, "seedLength": cut}
            v0.write_bytes(log_bytes(old, upgraded))
        as_v4.append(v4)
        as_v0.append(v0)
    return as_v4, as_v0


def left_fast_path(paths: list[Path]) -> tuple[int, float]:
    """(lines the fast path handed to the exact reader, the CPU seconds of that exact reading)."""
    from replay.logs.records import Records

    exact = Records.lines  # what the fast path (FastRecords) hands the exact reader
    count, spent = [0], [0.0]

    def counted(self: Records, lines: list[bytes], before: int):  # type: ignore[no-untyped-def]
        count[0] += len(lines)
        start = time.process_time()
        yield from exact(self, lines, before)
        spent[0] += time.process_time() - start

    Records.lines = counted  # type: ignore[method-assign]
    try:
        verify(paths)
    finally:
        Records.lines = exact  # type: ignore[method-assign]
    return count[0], spent[0]


def reference_load(paths: list[Path], runs: int) -> tuple[float, float] | str:
    """(CPU seconds of the reference's own load, of Node's `JSON.parse` of every line), each the
    best of `runs` (bench/reference_load.mjs, run with the pinned packages the reference tier
    installs); or why it cannot be measured. The load must read what verify reads: the events
    after expansion, the schedule changes and the active reminders of every log agree, or this
    fails."""
    from tests.reference import found_engine, installed

    folder, node = installed(), found_engine()
    if isinstance(folder, str):
        return folder
    if not os.path.isabs(node):
        return node
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as listed:
        listed.write("\n".join(str(p.resolve()) for p in paths))
        listed.flush()
        done = subprocess.run(
            [node, "reference_load.mjs", listed.name, str(runs)], cwd=folder, capture_output=True, text=True
        )
    if done.returncode != 0:
        return f"node failed: {done.stderr.strip()[-500:]}"
    *timed, last = map(json.loads, done.stdout.splitlines())
    for path, theirs in zip(paths, last["counts"], strict=True):
        report = verify_path(str(path))
        ours = [report.events, report.schedule_events, len(report.folded.active) if report.folded else None]
        assert ours == theirs, (path, ours, theirs)
    return min(t["load"] for t in timed), min(t["parse"] for t in timed)


def measure(name: str, paths: list[Path], runs: int) -> None:
    size = sum(p.stat().st_size for p in paths) / 1e6
    verify(paths)  # once unmeasured: the event classes of the corpus's types are made on first sight
    left, cost = left_fast_path(paths)
    base_s = ver_s = floor_s = float("inf")
    for _ in range(runs):
        took, lines = baseline(paths)
        base_s = min(base_s, took)
        took, events, schedule = verify(paths)
        ver_s = min(ver_s, took)
        floor_s = min(floor_s, floor(paths)[0])
    share = schedule / lines * 100
    print(f"\n{name}: {len(paths)} sessions, {size:.0f} MB, {lines} lines, {events} events after expansion,")
    print(f"  {schedule} schedule events ({share:.1f}% of lines)")
    print(f"  baseline json.loads : {size / base_s:8.1f} MB/s  {lines / base_s:10.0f} lines/s   ({base_s:.2f} s)")
    print(f"  schedlog verify     : {size / ver_s:8.1f} MB/s  {events / ver_s:10.0f} events/s  ({ver_s:.2f} s)")
    print(f"  ratio verify/baseline: {base_s / ver_s:.2f}x (goal >= 4.0x); verify CPU / json.loads CPU:")
    print(f"  {ver_s / base_s:.2f} (issue 30: <= 0.40)")
    print(f"  lines that left the fast path: {left} ({left / lines * 100:.2f}%, goal <= 0.1%), {cost:.2f} s of CPU")
    print(f"  reader floor (read, split, envelope decode): {floor_s:.2f} s, {floor_s / base_s:.2f} of json.loads;")
    print(f"  verify above it (the judgement in Python): {(ver_s - floor_s) / base_s:.2f} of json.loads")
    found = reference_load(paths, runs)
    if isinstance(found, str):
        print(f"  the reference's own load: not measured ({found})")
        return
    load_s, parse_s = found
    print(f"  the reference's own load (Node {node_version()}: split, JSON.parse, rows expanded, fold):")
    print(f"  {load_s:.2f} s, {load_s / base_s:.2f} of json.loads (JSON.parse alone {parse_s:.2f} s)")
    print(f"  verify CPU / the reference's load: {ver_s / load_s:.2f} (issue 30: <= 0.5, verify >= 2x the reference)")


SCHEDLOG = str(Path(sys.executable).with_name("schedlog"))
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
DUCKDB_LOAD = """
import sys, duckdb
duckdb.connect().sql(
    f"CREATE TABLE raw AS SELECT * FROM read_json('{sys.argv[1]}/*.jsonl', format = 'newline_delimited', "
    "records = false, maximum_object_size = 1073741824)"
)
"""
"""DuckDB's raw load of the same files: each line one JSON value (`records = false`), nothing judged."""


def _process_cpu(args: list[str], runs: int) -> float:
    """The least user + system CPU seconds of `runs` runs of the process `args` (its threads too)."""
    import resource

    best = float("inf")
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(args, capture_output=True, env=ENV, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode not in (0, 1):
            raise SystemExit(f"{args[:2]} failed: {done.stderr.decode()[-500:]}")
        best = min(best, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return best


def judge_cost(out: Path, mb: int, shares: list[float], runs: int) -> None:
    """Issues 52 and 65, paired in one run on corpora of the real logs' bodies that differ only in
    their schedule traffic (written as the live owner writes it: every dispatch's reminder
    queued and delivered, so every log is ok with no finding): `json.loads` of every line,
    `schedlog verify --no-cache -j 1` as whole processes (text, text `--quiet`, JSON), the
    reference's own load, what one schedule event costs (the difference between the corpora,
    divided by the difference of their schedule events), what writing the JSON report costs
    (the JSON run less the quiet text one), then `replay` against DuckDB's raw `read_json` of the
    same files, and the start-up of a run that does nothing. Goals (issue 65): verify <= 1.0x
    the reference's load, JSON writing <= 10% of a run, one schedule event <= 2 `json.loads`
    lines, replay <= 2.5x DuckDB, start-up <= 60 ms beyond Python's own."""
    print(f"best of {runs} runs each, CPU seconds (whole processes: user + system)")
    rows = []
    verify_cmd = [SCHEDLOG, "verify", "--no-cache", "-j", "1"]
    for share in shares:
        folder = out / f"judge-{mb}-{share}"
        paths = build_from_real_logs(folder, mb, 1, share)
        _, events, schedule = verify(paths)
        base_s, lines = min(baseline(paths) for _ in range(runs))
        text_s = _process_cpu([*verify_cmd, str(folder)], runs)
        quiet_s = _process_cpu([*verify_cmd, "--quiet", str(folder)], runs)
        json_s = _process_cpu([*verify_cmd, "--format", "json", str(folder)], runs)
        found = reference_load(paths, runs)
        load_s = found[0] if not isinstance(found, str) else float("nan")
        with tempfile.TemporaryDirectory() as tmp:
            db = str(Path(tmp) / "r.duckdb")
            replay_s = _process_cpu([SCHEDLOG, "replay", "--rebuild", "--no-cache", str(folder), "--db", db], runs)
        duck_s = _process_cpu([sys.executable, "-c", DUCKDB_LOAD, str(folder)], runs)
        rows.append((share, schedule, lines, base_s, json_s, quiet_s, load_s))
        print(f"\nshare {share:.2%}: {len(paths)} sessions, {lines} lines, {events} events, {schedule} schedule events")
        print(f"  json.loads of every line {base_s:.2f} s (1.00)")
        print(f"  schedlog verify          text {text_s:.2f} s, --quiet {quiet_s:.2f} s, --format json {json_s:.2f} s")
        if isinstance(found, str):
            print(f"  the reference's load: not measured ({found})")
        else:
            print(f"  the reference's load     {load_s:.2f} s ({load_s / base_s:.2f}), Node {node_version()}")
            print(f"  verify / the reference's load: json {json_s / load_s:.2f}, text {text_s / load_s:.2f}, "
                  f"quiet {quiet_s / load_s:.2f} (goal <= 1.0)")  # fmt: skip
        print(f"  writing the JSON report: {max(0.0, json_s - quiet_s) / json_s:.0%} of the JSON run (goal <= 10%)")
        print(
            f"  replay {replay_s:.2f} s, DuckDB's raw read_json {duck_s:.2f} s: {replay_s / duck_s:.2f}x (goal <= 2.5)"
        )
    for a, b in itertools.pairwise(rows):
        more = b[1] - a[1]
        if more <= 0:
            continue
        per_line = a[3] / a[2]
        for name, at in (("json", 4), ("quiet", 5)):
            ours, theirs = (b[at] - a[at]) / more, (b[6] - a[6]) / more
            said = f"schedlog {ours * 1e6:.1f} us = {ours / per_line:.1f} json.loads lines (goal <= 2)"
            print(
                f"\none schedule event ({a[0]:.2%} -> {b[0]:.2%}, {name}): {said}; the reference {theirs * 1e6:.1f} us"
            )
    start_up(runs)


def start_up(runs: int) -> None:
    """CPU of a run that does nothing beyond Python's own start: `verify --help`, and a verify the
    verdict cache answers whole (a small folder, unchanged). Goal (issue 65): <= 60 ms each."""
    python_s = _process_cpu([sys.executable, "-c", "pass"], runs * 3)
    help_s = _process_cpu([SCHEDLOG, "verify", "--help"], runs * 3)
    fixtures = str(Path(__file__).resolve().parent.parent / "fixtures" / "sessions" / "valid")
    with tempfile.TemporaryDirectory() as cache:
        _process_cpu([SCHEDLOG, "verify", "--cache-dir", cache, fixtures], 1)
        hit_s = _process_cpu([SCHEDLOG, "verify", "--cache-dir", cache, fixtures], runs * 3)
    helped, hit = (help_s - python_s) * 1000, (hit_s - python_s) * 1000
    print(f"\nstart-up beyond Python's own ({python_s * 1000:.0f} ms): verify --help {helped:.0f} ms, ", end="")
    print(f"a verify the cache answers {hit:.0f} ms (goal <= 60 ms)")


def node_version() -> str:
    from tests.reference import found_engine

    return subprocess.run([found_engine(), "--version"], capture_output=True, text=True).stdout.strip().lstrip("v")


if __name__ == "__main__":
    main()
