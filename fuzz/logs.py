"""The session-log fuzzer (issues 33 and 49): seeded mutations of every fixture and real log, in
every format version, plain and Zstandard, through `verify_bytes`, each input checked for

- `crash`: an exception escaping the reader, the judge or a report in any format (by type and place);
- `hang`: no report within `--timeout` seconds (5 by default);
- `nondeterministic`: a second judgement of the same bytes in the same process differs;
- `fast-exact`: the fast reader's report differs from the exact reader's (`fast=False`);
- `not-json`: the `--format json` (or jsonl, sarif) report does not parse with Python's `json.loads`;
- `shrink`: `shrink` of a corrupt log (one input in SHRINK_EVERY, small ones) crashes, or gives a
  log whose verdict and rule are not the original's;
- `plain-zstd`: a plain log framed as the harness frames it (one input in FRAME_EVERY) is judged
  otherwise than plain, where its complete frames hold whole, defect-free records (elsewhere
  session-log.md §9.3 makes the framed file stricter: tests/test_zstd_vs_plain.py);
- `reading`: a Host store (one input in STORE_EVERY, mutated) judged at a random `now` raises,
  where a Reading must refuse an instant it cannot use when it is made.

Mutations: byte flips, JSON fragments, cuts, deep nests, copied spans, numbers past the doubles,
string escapes, truncation; surface metadata of other types (`surfaceOp`, its bounds and
`sourceEventSeqs` as lists, objects, strings, huge or reversed runs); floods of blank lines;
line edits; re-framing; byte edits of the compressed bytes.

Input N of seed S is made from `random.Random(f"{S}:{N}")` alone, so any one is made again by
`--show S:N` (written to a file to attach to a bug report). Usage:

    python -m fuzz.logs --count 1000000 --jobs 2 --out fuzz-out
    python -m fuzz.logs --show 20261202:4711 --out fuzz-out

The summary (printed, and `summary.json` under `--out`) counts inputs by class, with the first
inputs of each class; each failing input is written to `--out`. Exit 1 when any input failed.
The test suite runs a bounded number of inputs through the same `check` (tests/test_logfuzz.py).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import multiprocessing
import os
import random
import re
import signal
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import zstandard

ROOT = Path(__file__).resolve().parent.parent
REAL_LOGS = ROOT.parent / "shared" / "real-logs"
DEFAULT_SEED = 20261202
TIMEOUT = 5.0
CLASSES = ("ok", "crash", "hang", "nondeterministic", "fast-exact", "not-json", "shrink", "plain-zstd", "reading")
SHRINK_EVERY = 8
"""One input in this many (of the corrupt ones with at most SHRINK_LINES lines) is shrunk too."""
SHRINK_LINES = 40
FRAME_EVERY = 8
"""One plain input in this many is also read framed as the harness frames a log."""
STORE_EVERY = 64
"""One input in this many is a mutated Host store, judged at a random `now`."""
STORES = ROOT / "fixtures" / "host" / "stores"


# --- the sources: every fixture and real log, in every format version, plain and zstd ----------


def _upgrade_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fixtures_upgrade", ROOT / "fixtures" / "upgrade.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@dataclass(frozen=True)
class Source:
    """A log to mutate: its name (which says plain or zstd) and its plaintext lines."""

    name: str
    lines: tuple[bytes, ...]

    @property
    def zstd(self) -> bool:
        return self.name.endswith(".zstd")


def sources(real_logs: Path = REAL_LOGS) -> list[Source]:
    """The fixtures' and real logs' lines as they are (v0, plain and zstd), and each rewritten
    as v2, v3 and v4 (fixtures/upgrade.py), in name order: the same list on every machine that
    has the same real logs."""
    from replay.logs.logfile import SessionLog

    upgrade = _upgrade_module()
    fixtures = sorted((ROOT / "fixtures" / "sessions").rglob("*.session.jsonl*"))
    real = sorted(real_logs.glob("*.jsonl")) if real_logs.is_dir() else []
    out: list[Source] = []
    for path in [*fixtures, *real]:
        data = path.read_bytes()
        if path.name.endswith(".zstd"):
            data = b"".join(zstandard.ZstdDecompressor().read_to_iter(data))
        lines = tuple(data.splitlines())
        stem = path.name.removesuffix(".zstd").removesuffix(".jsonl").removesuffix(".session")
        out.append(Source(f"{stem}.v0.session.jsonl", lines))
        out.append(Source(f"{stem}.v0.session.jsonl.zstd", lines))
        log = SessionLog(path.name, data=data)
        events = [e for entry in log.entries() for e in entry.events()]
        if log.head.header is None or log.head.header.get("version") != 0 or log.unreadable:
            continue
        for version in (2, 3, 4):
            head, upgraded, _ = upgrade.upgrade(dict(log.head.header), events, version)
            text = tuple(upgrade.log_bytes(head, upgraded).splitlines())
            out.append(Source(f"{stem}.v{version}.session.v{version}.jsonl", text))
            out.append(Source(f"{stem}.v{version}.session.v{version}.jsonl.zstd", text))
    return out


# --- mutations ------------------------------------------------------------------------------------

FRAGMENTS = (
    b"[", b"]", b"{", b"}", b'"', b",", b":", b"\n", b"\r", b"\t", b" ", b"\\", b"\\u", b"\\ud800", b"\\udc00",
    b"-0", b"0.5", b"1e999", b"-1e400", b"300.0", b"9007199254740993", b"7" * 5000, b"null", b"true", b"\xff",
    b"\xc3", b"\x00", b"\xef\xbb\xbf", b'"\\u0000"', b'{"type":"session","version":4}', b'"seq":', b'"type":',
    b'{"type":"turn/end","seq":0,"time":0,"data":{}}', b'"\\ud800"', b"\xe2\x80\xa8",
)  # fmt: skip
STRINGS = (b"\\ud800", b"\\udfff x", b" padded ", b"\\u0000", b"\\u00a0", b"", b"\\\\", b"\\u2028")
NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
NUMBERS = (b"-0", b"0.0", b"1e999", b"-1e999", b"7" * 5000, b"9007199254740993", b"1.5", b"300.0", b"1e21", b"-1")


def _deep(rng: random.Random) -> bytes:
    depth = 33_000 if rng.random() < 0.02 else rng.choice([10, 600, 1_100, 2_000, 5_000])
    if rng.random() < 0.5:
        return b"[" * depth + b"0" + b"]" * depth
    return b'{"a":' * depth + b"null" + b"}" * depth


def _at(rng: random.Random, text: bytearray) -> int:
    return rng.randrange(len(text) + 1)


def _flip(rng: random.Random, text: bytearray) -> None:
    if text:
        text[rng.randrange(len(text))] = rng.randrange(256)


def _insert(rng: random.Random, text: bytearray) -> None:
    at = _at(rng, text)
    text[at:at] = rng.choice(FRAGMENTS)


def _cut(rng: random.Random, text: bytearray) -> None:
    at = _at(rng, text)
    del text[at : at + rng.randint(1, 60)]


def _nest(rng: random.Random, text: bytearray) -> None:
    """A deep value where a value may stand (after a `:`), or anywhere."""
    colons = [m.end() for m in re.finditer(rb'":', text)]
    at = rng.choice(colons) if colons and rng.random() < 0.8 else _at(rng, text)
    end = at
    if at in colons:  # replace the value there (up to the next , or })
        while end < len(text) and text[end] not in b",}]\n":
            end += 1
    text[at:end] = _deep(rng)


def _copy_span(rng: random.Random, text: bytearray) -> None:
    start = _at(rng, text)
    text[_at(rng, text) : 0] = text[start : start + rng.randint(1, 300)]


def _number(rng: random.Random, text: bytearray) -> None:
    found = list(NUMBER.finditer(text))
    if found:
        m = rng.choice(found)
        text[m.start() : m.end()] = rng.choice(NUMBERS)


def _string(rng: random.Random, text: bytearray) -> None:
    """A string's content replaced by escapes JSON allows and a log may hold."""
    quotes = [m.start() for m in re.finditer(rb'"[^"\\\n]{1,40}"', text)]
    if quotes:
        at = rng.choice(quotes) + 1
        end = text.index(b'"', at)
        text[at:end] = rng.choice(
            [b"\\ud800", b"\\udfff x", b" padded ", b"\\u0000", b"\\u00a0", b"", b"\\\\", b"\\u2028"]
        )


def _truncate(rng: random.Random, text: bytearray) -> None:
    del text[_at(rng, text) :]


SURFACE_KEYS = re.compile(rb'"(?:surfaceOp|sourceEventSeqs|startSeq|endSeq|start|end)":')
SURFACE_VALUES = (
    b"[2]", b'{"a":1}', b'"x"', b'"append"', b"null", b"true", b"-1", b"1.5", b"1e400", b"-0", b"9007199254740993",
    b"[]", b"[0,0]", b"[[0,1]]", b"[[5,3]]", b"[[0,1000000]]", b"[[0,1000001]]", b"[[0,1000000000000]]",
    b"[[0,9007199254740991]]", b"[[1,2,3]]", b'[["a",2]]', b"[[0,1e400]]", b"[0,[1,2],1]",
    b'{"op":"replace","startSeq":[1],"endSeq":2}', b'{"op":"replace","start":{"a":1},"end":0}',
    b'{"op":"replace","startSeq":0,"endSeq":0}', b'{"op":"replace","start":1,"end":0}',
    b'{"op":"replace","startSeq":"1","endSeq":null}', b'{"op":"replace"}',
)  # fmt: skip
"""Surface metadata of other types and shapes than the harness writes (issue 49: a list where a
bound stands, runs of 10^12 seqs, a run's end one past a size limit)."""


def _value_end(text: bytearray, at: int) -> int:
    """Where the JSON value starting at `at` ends (brackets matched, strings skipped; else at the
    next `,`, `}` or `]`): a mutation's reach, not a parser."""
    if at < len(text) and text[at] in b"[{":
        depth, k, quoted = 0, at, False
        while k < len(text):
            c = text[k]
            if quoted:
                if c == 0x5C:  # a backslash escapes the next byte
                    k += 1
                elif c == 0x22:
                    quoted = False
            elif c == 0x22:
                quoted = True
            elif c in b"[{":
                depth += 1
            elif c in b"]}":
                depth -= 1
                if depth == 0:
                    return k + 1
            elif c == 0x0A:
                return k
            k += 1
        return k
    k = at
    while k < len(text) and text[k] not in b",}]\n":
        k += 1
    return k


def _swap_or_add(rng: random.Random, text: bytearray, keys: bytes, value: bytes, places: bytes, added: bytes) -> None:
    """The value after a match of `keys` made `value` (most often), else `added` put at the end
    of a match of `places`."""
    found = [m.end() for m in re.finditer(keys, text)]
    if found and rng.random() < 0.7:
        at = rng.choice(found)
        text[at : _value_end(text, at)] = value
        return
    starts = [m.end() for m in re.finditer(places, text)]
    if starts:
        at = rng.choice(starts)
        text[at:at] = added


_SURFACE_EVENT = rb'\{"type":"(?:user/message|assistant/message|tool/result)"'


def _surface(rng: random.Random, text: bytearray) -> None:
    """A surface field's value swapped for another type or shape, or one added to an event."""
    value = rng.choice(SURFACE_VALUES)
    _swap_or_add(rng, text, SURFACE_KEYS.pattern, value, _SURFACE_EVENT, b',"sourceEventSeqs":' + value)


def _huge_run(rng: random.Random, text: bytearray) -> None:
    """A huge or reversed `[start, end]` run cited by a surface event (never expanded)."""
    ends = [0, 1, 3, 999_999, 1_000_000, 1_000_001, 10**12, 2**53 - 1, 2**53]
    start, end = rng.choice([0, 1, 5, 2**52]), rng.choice(ends)
    run = b"[[%d,%d]]" % ((end, start) if rng.random() < 0.2 else (start, end))
    _swap_or_add(rng, text, rb'"sourceEventSeqs":', run, _SURFACE_EVENT, b',"sourceEventSeqs":' + run)


def _flood(rng: random.Random, text: bytearray) -> None:
    """A flood of blank or white-space lines at a line's start (a few KB of Zstandard once cost
    4 s in lenient mode)."""
    starts = [0, *(m.end() for m in re.finditer(rb"\n", text))]
    at = rng.choice(starts)
    text[at:at] = rng.choice([b"\n", b" \n", b"\t\n", b"\r\n", b" \r \n"]) * rng.choice([3, 1000, 100_000, 1_000_000])


TEXT_MUTATIONS: dict[str, Callable[[random.Random, bytearray], None]] = {
    "flip": _flip,
    "insert": _insert,
    "cut": _cut,
    "nest": _nest,
    "copy": _copy_span,
    "number": _number,
    "string": _string,
    "truncate": _truncate,
    "surface": _surface,
    "run": _huge_run,
    "flood": _flood,
}


WEIGHTS = [1 if name in ("nest", "flood") else 8 for name in TEXT_MUTATIONS]
"""A deep value costs a hundred times the others to read (a parser without recursion), a flood
of a million lines a scan of megabytes: rarer."""


def _lines_mutation(rng: random.Random, lines: list[bytes]) -> str:
    """A whole-line edit: a line dropped, doubled, swapped, blanked, or the header repeated."""
    how = rng.choice(["drop", "double", "swap", "blank", "header", "split"])
    i = rng.randrange(len(lines)) if lines else 0
    if not lines:
        return how
    if how == "drop":
        del lines[i]
    elif how == "double":
        lines.insert(i, lines[i])
    elif how == "swap":
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
    elif how == "blank":
        lines.insert(i, rng.choice([b"", b" ", b"\t", b"\r"]))
    elif how == "header":
        lines.insert(i, lines[0])
    else:  # a line split in two
        at = rng.randrange(len(lines[i]) + 1)
        lines[i : i + 1] = [lines[i][:at], lines[i][at:]]
    return how


@dataclass(frozen=True)
class Input:
    """One fuzz input: where it came from and what was done to it, and its bytes."""

    seed: int
    index: int
    source: str
    mutations: tuple[str, ...]
    data: bytes
    strict: bool
    now: object = None
    """For a Host store input (`source` a store's name): the `now` it is judged at."""

    @property
    def name(self) -> str:
        return f"fuzz-{self.seed}-{self.index}-{self.source}"


def make(seed: int, index: int, pool: Sequence[Source]) -> Input:
    """Input `index` of `seed`: a source, one to eight mutations of its plaintext (line edits and
    byte edits), written plain or as Zstandard frames (a few header frames cut or merged), and
    sometimes a byte edit of the compressed bytes."""
    rng = random.Random(f"{seed}:{index}")
    if index % STORE_EVERY == STORE_EVERY - 1:
        return _store_input(seed, index, rng)
    source = pool[rng.randrange(len(pool))]
    lines = list(source.lines)
    done: list[str] = []
    if len(lines) > 40 and rng.random() < 0.5:  # a committed prefix: mutations land near the header more often
        lines = lines[: rng.randint(2, 40)]
        done.append("prefix")
    for _ in range(rng.randint(0, 2)):
        done.append("lines." + _lines_mutation(rng, lines))
    text = bytearray(b"\n".join(lines) + (b"\n" if rng.random() < 0.97 else b""))
    for _ in range(rng.randint(1 if not done else 0, 6)):
        how = rng.choices(list(TEXT_MUTATIONS), WEIGHTS)[0]
        TEXT_MUTATIONS[how](rng, text)
        done.append(how)
    data = bytes(text)
    if source.zstd:
        data = _frames(rng, data)
        if rng.random() < 0.15:
            mutated = bytearray(data)
            _flip(rng, mutated) if rng.random() < 0.5 else _cut(rng, mutated)
            data = bytes(mutated)
            done.append("zstd.bytes")
    return Input(seed, index, source.name, tuple(done), data, strict=rng.random() < 0.5)


NOWS = (-62135596800001, -62135596800000, 0, 1785931200000, 253402300799999, 253402300800000, 2**63, True, 1.5)


def _store_input(seed: int, index: int, rng: random.Random) -> Input:
    """A Host store fixture with up to two byte mutations, judged at an instant from NOWS or
    drawn far past the canonical years (issue 49: a `now` past 9999 raised deep in a verify)."""
    stores = sorted(STORES.glob("*.json"))
    path = stores[rng.randrange(len(stores))]
    text = bytearray(path.read_bytes())
    done = []
    for _ in range(rng.randint(0, 2)):
        how = rng.choice(["flip", "insert", "cut", "number", "string"])
        TEXT_MUTATIONS[how](rng, text)
        done.append(how)
    now = rng.choice(NOWS) if rng.random() < 0.7 else rng.randint(-(2**48), 2**48)
    return Input(seed, index, f"store:{path.name}", tuple(done), bytes(text), strict=True, now=now)


def _frames(rng: random.Random, text: bytes) -> bytes:
    """The plaintext as the harness writes it (the header's line in a frame of its own, then
    frames of a few lines), or, sometimes, cut at another place."""
    compressor = zstandard.ZstdCompressor(level=1, write_checksum=rng.random() < 0.5)
    lines = text.splitlines(keepends=True)
    if not lines:
        return compressor.compress(text)
    head = 1 if rng.random() < 0.9 else rng.randint(0, min(3, len(lines)))
    frames = [b"".join(lines[:head])] if head else []
    step = max(rng.choice([1, 5, 50]), len(lines) // 2000)  # (a flood of lines: a few thousand frames)
    frames += [b"".join(lines[i : i + step]) for i in range(head, len(lines), step)]
    return b"".join(compressor.compress(f) for f in frames if f or rng.random() < 0.5)


# --- the check -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """What one input gave: its class (CLASSES) and, for a failure, what and where."""

    kind: str
    detail: str = ""


def check(item: Input) -> Outcome:
    """Judge `item` three times (fast, fast again, exact), render its report in every format,
    and, for some inputs, shrink it and read it framed; the first failure found is the outcome."""
    from replay.cli.output import Format
    from replay.cli.output.reports import render
    from replay.judge.verify import verify_log
    from replay.logs.logfile import SessionLog
    from replay.reading import DEFAULT_READING, Mode, Reading

    if item.source.startswith("store:"):
        return _check_store(item)
    reading = DEFAULT_READING if item.strict else Reading(mode=Mode.LENIENT)
    name = item.name
    try:
        first = verify_log(SessionLog(name, reading, item.data))
        first_json = first.to_json()
        again = verify_log(SessionLog(name, reading, item.data)).to_json()
        exact = verify_log(SessionLog(name, reading, item.data, fast=False)).to_json()
        texts = {Format(fmt): render([first], Format(fmt)) for fmt in RENDERED}
    except Exception as err:  # the fuzzer's purpose: every escaping exception is a finding
        return Outcome("crash", _where(err))
    if again != first_json:
        return Outcome("nondeterministic", _difference(first_json, again))
    if exact != first_json:
        return Outcome("fast-exact", _difference(first_json, exact))
    for fmt in (Format.JSON, Format.JSONL, Format.SARIF):
        try:  # Python's json.loads, refusing the NaN and Infinity it accepts by default (not JSON)
            for document in texts[fmt].rstrip("\n").split("\n") if fmt is Format.JSONL else [texts[fmt]]:
                json.loads(document, parse_constant=_not_json)  # (a line ends at LF only: U+2028 is JSON text)
        except (ValueError, RecursionError) as err:
            return Outcome("not-json", f"{fmt.value}: {type(err).__name__}")
    if item.index % SHRINK_EVERY == 0 and first.verdict.value in ("corrupt", "unsupported"):
        found = _check_shrink(item, reading)
        if found is not None:
            return found
    if item.index % FRAME_EVERY == 1 and not item.source.endswith(".zstd"):
        return _check_framed(item, reading)
    return Outcome("ok")


RENDERED = ("text", "json", "jsonl", "csv", "junit", "github", "sarif")
"""The report formats every input is rendered in (Format values; parquet writes a file)."""


def _check_shrink(item: Input, reading: Any) -> Outcome | None:
    """`shrink` (with `--redact` every other time) of a small corrupt input: a clear refusal, or
    a log whose verdict and rule are the original's and that verify judges so; None when so."""
    from replay.judge.verify import verify_bytes
    from replay.tools.shrink import CannotShrink, _plaintext, key_of, shrink_log

    try:
        data = _plaintext(item.name, item.data)
    except CannotShrink:
        return None
    if data.count(b"\n") > SHRINK_LINES:
        return None
    try:
        want = key_of(verify_bytes(item.name, data, reading))
        shrunk = shrink_log(item.name, data, reading, redact=item.index % (2 * SHRINK_EVERY) == 0)
        got, again = key_of(shrunk.report), key_of(verify_bytes(item.name, shrunk.data, reading))
    except CannotShrink:
        return None
    except Exception as err:
        return Outcome("shrink", _where(err))
    if not got == again == want:
        return Outcome("shrink", f"kept {got} (verified {again}), not {want}")
    return None


def _check_framed(item: Input, reading: Any) -> Outcome:
    """A plain input framed as the harness frames a log reads as the plain bytes do, where its
    complete frames hold whole, defect-free records (tests/test_zstd_vs_plain.py)."""
    from replay.judge.verify import verify_bytes

    lines = item.data.splitlines(keepends=True)
    if len(lines) < 2 or not lines[0].endswith(b"\n"):
        return Outcome("ok")
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    step = 1 + item.index % 5
    frames = [lines[0], *(b"".join(lines[k : k + step]) for k in range(1, len(lines), step))]
    complete = [f for f in frames[1:] if f.endswith(b"\n")]
    if len(complete) < len(frames) - 1 or lines[0].count(b"\n") != 1:
        return Outcome("ok")  # a partial record ends a complete frame: fatal framed (§9.3), a torn tail plain
    try:
        inside = verify_bytes(item.name, item.data, reading)
        if any(f.code in _DEFECTS for f in inside.findings):
            return Outcome("ok")  # a defect inside complete frames: fatal framed (§9.3), a crash tail plain
        framed = verify_bytes(item.name + ".zstd", b"".join(compressor.compress(f) for f in frames), reading)
    except Exception as err:
        return Outcome("crash", _where(err))
    ours, theirs = _errors(framed), _errors(inside)
    return Outcome("ok") if ours == theirs else Outcome("plain-zstd", f"framed {ours}, plain {theirs}")


_DEFECTS = frozenset({"format.seq-gap", "format.unparsable", "format.blank-line", "format.malformed-row"})


def _errors(report: Any) -> str:
    codes = sorted({f.code for f in report.findings if f.severity.value == "error"} - {"format.name-version"})
    return f"{report.verdict.value} {' '.join(codes)}"


def _check_store(item: Input) -> Outcome:
    """A Host store at `item.now`: the Reading refuses an instant it cannot use (ValueError,
    said where it is made), else the store is judged without an exception escaping."""
    from replay.judge.verify import store_report
    from replay.reading import Reading

    try:
        reading = Reading(now=item.now)  # type: ignore[arg-type]
    except ValueError:
        return Outcome("ok")
    except Exception as err:
        return Outcome("reading", _where(err))
    try:
        report = store_report("schedule.json", reading, item.data)
        if report is not None:
            json.loads(json.dumps(report.to_json()), parse_constant=_not_json)
    except Exception as err:
        return Outcome("reading", _where(err))
    return Outcome("ok")


def _not_json(constant: str) -> object:
    raise ValueError(f"{constant} is not JSON")


def _where(err: BaseException) -> str:
    """An exception's type and the innermost frame of schedlog's code it passed through."""
    frames = [
        f for f in traceback.extract_tb(err.__traceback__) if "/replay/" in f.filename or "/invariant/" in f.filename
    ]
    place = f"{Path(frames[-1].filename).name}:{frames[-1].lineno} {frames[-1].name}" if frames else "?"
    return f"{type(err).__name__} at {place}"


def _difference(a: dict[str, Any], b: dict[str, Any]) -> str:
    keys = sorted(k for k in {*a, *b} if a.get(k) != b.get(k))
    return "differs in " + ", ".join(keys)


# --- the run --------------------------------------------------------------------------------------


class _Hang(BaseException):
    """The input's time is up (SIGALRM): a BaseException, so no check's `except Exception` takes
    it for a crash."""


def _alarm(signum: int, frame: object) -> None:
    raise _Hang


_POOL: list[Source] = []


def _start(real_logs: str) -> None:
    _POOL[:] = sources(Path(real_logs))
    signal.signal(signal.SIGALRM, _alarm)


def _one(task: tuple[int, int, float]) -> tuple[int, int, str, Outcome]:
    """Check input `index` of `seed` within `timeout` seconds (a worker's task)."""
    seed, index, timeout = task
    item = make(seed, index, _POOL)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        outcome = check(item)
    except _Hang:
        outcome = Outcome("hang", f"no report within {timeout:g} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return seed, index, item.source, outcome


@dataclass
class Summary:
    """Inputs by class, with the first few of each (seed:index, source, detail) to reproduce."""

    seed: int
    count: int = 0
    classes: Counter[str] = field(default_factory=Counter)
    details: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[str]] = field(default_factory=dict)

    def add(self, seed: int, index: int, source: str, outcome: Outcome) -> None:
        self.count += 1
        self.classes[outcome.kind] += 1
        if outcome.kind != "ok":
            key = f"{outcome.kind}: {outcome.detail}"
            self.details[key] += 1
            shown = self.examples.setdefault(key, [])
            if len(shown) < 5:
                shown.append(f"{seed}:{index} ({source})")

    @property
    def failed(self) -> int:
        return self.count - self.classes["ok"]

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "inputs": self.count,
            "classes": {k: self.classes[k] for k in CLASSES},
            "failures": [{"class": k, "count": n, "first": self.examples[k]} for k, n in self.details.most_common()],
        }


def run(
    seed: int, count: int, jobs: int, timeout: float, real_logs: Path, start: int = 0, out: Path | None = None
) -> Summary:
    """Inputs `start` to `start + count` of `seed` on `jobs` worker processes (spawned: the same
    under every start method), each failing input written to `out`."""
    summary = Summary(seed)
    tasks = ((seed, index, timeout) for index in range(start, start + count))
    context = multiprocessing.get_context("spawn")
    started = time.monotonic()
    pool_sources: list[Source] = []
    with context.Pool(jobs, initializer=_start, initargs=(str(real_logs),), maxtasksperchild=20_000) as pool:
        for n, (s, index, source, outcome) in enumerate(pool.imap_unordered(_one, tasks, chunksize=64), 1):
            summary.add(s, index, source, outcome)
            if outcome.kind != "ok" and out is not None:
                if not pool_sources:
                    pool_sources = sources(real_logs)
                _write(out, make(s, index, pool_sources))
            if n % 20_000 == 0:
                rate = n / (time.monotonic() - started)
                print(f"{n:,} inputs, {summary.failed:,} failed, {rate:,.0f}/s", file=sys.stderr, flush=True)
    return summary


def _write(out: Path, item: Input) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / item.name
    path.write_bytes(item.data)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.logs", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--start", type=int, default=0, help="the first input's index")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=float, default=TIMEOUT, help="seconds an input may take (a hang past it)")
    parser.add_argument("--real-logs", type=Path, default=REAL_LOGS)
    parser.add_argument("--out", type=Path, default=None, help="where failing inputs and summary.json are written")
    parser.add_argument("--show", metavar="SEED:INDEX", help="make input INDEX of SEED again, write it to --out")
    args = parser.parse_args(argv)
    if args.show:
        seed, index = (int(part) for part in args.show.split(":"))
        item = make(seed, index, sources(args.real_logs))
        where = _write(args.out or Path("."), item)
        print(f"{where}: {len(item.data):,} bytes from {item.source}, {', '.join(item.mutations)}; {check(item)}")
        return 0
    summary = run(args.seed, args.count, args.jobs, args.timeout, args.real_logs, args.start, args.out)
    text = json.dumps(summary.to_json(), indent=2)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "summary.json").write_text(text + "\n")
    return 1 if summary.failed else 0


def iter_inputs(seed: int, count: int, real_logs: Path = REAL_LOGS) -> Iterator[Input]:
    """Inputs 0 to `count` of `seed`, made in this process (the test suite's bounded run)."""
    pool = sources(real_logs)
    for index in range(count):
        yield make(seed, index, pool)


if __name__ == "__main__":
    sys.exit(main())
