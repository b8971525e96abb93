"""Every value a log can hold, at any depth and in any field, ends in a verdict and the documented
exit status, never a traceback: values nested 10,000 levels deep in each envelope, header, row and
payload field, and a bounded seeded byte-level fuzz of the fixtures through verify and replay."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from replay.cli import main
from replay.lines import deepjson

from .conftest import REAL_LOGS, ROOT
from .sessionfiles import ev, header, text_row

DEPTH = 10_000
DEEP = {"array": "[" * DEPTH + "1" + "]" * DEPTH, "object": '{"a":' * DEPTH + "1" + "}" * DEPTH}
MARK = '"\\u0000deep\\u0000"'
"""Stands where the deep value goes; replaced in the JSON text (json.dumps cannot write the value)."""

CREATE = {
    "version": 1,
    "operation": "create",
    "schedule": {
        "id": "schedule-1",
        "kind": "every",
        "prompt": "water the plants",
        "everySeconds": 600,
        "scheduledAt": "2026-08-05T12:10:00.000Z",
    },
}
DISPATCH = {
    "version": 1,
    "operation": "dispatch",
    "id": "schedule-1",
    "acceptedAt": "2026-08-05T12:10:00.000Z",
    "nextScheduledAt": "2026-08-05T12:20:00.000Z",
}


def _with_mark(value: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """A copy of `value` whose member at `path` is the mark (added where absent)."""
    copy = json.loads(json.dumps(value))
    target = copy
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = "\x00deep\x00"
    return copy


def _log(head: dict[str, Any], records: list[dict[str, Any]], deep: str) -> bytes:
    lines = [json.dumps(r, separators=(",", ":")) for r in [head, *records]]
    return "".join(line.replace(MARK, deep) + "\n" for line in lines).encode()


def _records() -> list[dict[str, Any]]:
    return [
        ev(0, "turn/start"),
        ev(1, "schedule/change", CREATE, time=1785931200000),
        text_row(2, ["a", "b"]),
        ev(4, "schedule/change", DISPATCH, time=1785931800000),
        ev(5, "turn/end"),
    ]


def _cases() -> Iterator[tuple[str, bytes]]:
    head = header(seed_length=0, cwd="/work", origin="user")
    for kind, deep in DEEP.items():
        for key in [*head, "extra"]:
            yield f"header.{key}.{kind}", _log(_with_mark(head, (key,)), _records(), deep)
        for index, record in enumerate(_records()):
            for key in [*record, "extra", "surfaceOp"]:
                records = _records()
                records[index] = _with_mark(record, (key,))
                yield f"record{index}.{key}.{kind}", _log(head, records, deep)
        for index, payload in ((1, CREATE), (3, DISPATCH)):
            paths: list[tuple[str, ...]] = [(key,) for key in [*payload, "extra"]]
            if "schedule" in payload:
                paths += [("schedule", key) for key in [*payload["schedule"], "extra"]]
            for path in paths:
                records = _records()
                records[index]["data"] = _with_mark(payload, path)
                yield f"payload{index}.{'.'.join(path)}.{kind}", _log(head, records, deep)
        for key in ["turn", "dt", "texts", "extra"]:
            records = _records()
            records[2]["data"] = _with_mark(records[2]["data"], (key,))
            yield f"row.data.{key}.{kind}", _log(head, records, deep)


CASES = dict(_cases())


def _no_traceback(result: Result, expected: set[int]) -> None:
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert result.exit_code in expected, result.output


def test_the_deep_cases_cover_every_field() -> None:
    assert len(CASES) > 100
    assert all(DEEP["array"] in text.decode() or DEEP["object"] in text.decode() for text in CASES.values())


@pytest.fixture(scope="module")
def deep_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("deep")
    for name, data in CASES.items():
        (root / f"{name}.session.jsonl").write_bytes(data)
    return root


@pytest.fixture(scope="module")
def deep_verified(deep_logs: Path) -> Result:
    """`schedlog verify --format json` over every deep log, run once for the tests below."""
    return CliRunner().invoke(main, ["verify", "--format", "json", str(deep_logs)])


@pytest.mark.slow
def test_deep_values_get_a_verdict_from_verify(deep_verified: Result) -> None:
    _no_traceback(deep_verified, {1, 2})
    verdicts = [report["verdict"] for report in deepjson.parse(deep_verified.output)]  # type: ignore[union-attr]
    assert len(verdicts) == len(CASES) and set(verdicts) <= {"ok", "corrupt", "unreadable"}


@pytest.mark.slow
def test_deep_values_are_written_in_every_report_format(deep_logs: Path) -> None:
    """Each of verify's formats writes the deep logs' reports (judged once, rendered by the
    command line's own output layer)."""
    from replay.audit.auditrun import verify_paths
    from replay.cli.output import Format
    from replay.cli.output.reports import render

    reports = verify_paths(sorted(str(p) for p in deep_logs.iterdir())).reports
    assert len(reports) == len(CASES)
    for name in ("text", "json", "jsonl", "csv", "junit", "github", "sarif"):
        text = render(reports, Format(name))
        assert text.endswith("\n")
        if name == "jsonl":
            verdicts = [deepjson.parse(line)["verdict"] for line in text.splitlines()]  # type: ignore[index]
            assert verdicts == [r.verdict for r in reports]


@pytest.mark.slow
def test_deep_values_get_the_same_verdicts_in_worker_processes(deep_logs: Path, deep_verified: Result) -> None:
    two = CliRunner().invoke(main, ["verify", "--format", "json", "--jobs", "2", str(deep_logs)])
    _no_traceback(two, {1, 2})
    assert deep_verified.output == two.output


@pytest.mark.slow
def test_deep_values_get_a_verdict_from_replay_and_the_database_answers(deep_logs: Path, tmp_path: Path) -> None:
    db = tmp_path / "deep.duckdb"
    result = CliRunner().invoke(main, ["replay", str(deep_logs), "--db", str(db), "--format", "jsonl"])
    _no_traceback(result, {1, 2})
    assert len(result.output.splitlines()) == len(CASES)
    for query in ("SELECT * FROM sessions", "SELECT * FROM events", "SELECT * FROM schedule_changes"):
        for fmt in ("text", "json", "jsonl", "csv"):
            _no_traceback(CliRunner().invoke(main, ["sql", str(db), query, "--format", fmt]), {0})
    _no_traceback(CliRunner().invoke(main, ["inspect", str(db), "--format", "json"]), {0})


@pytest.mark.slow
def test_deep_values_get_a_verdict_from_check(deep_logs: Path, tmp_path: Path) -> None:
    candidate = tmp_path / "candidate.json"
    candidate.write_text(json.dumps({"version": 1, "operation": "delete", "id": "schedule-1"}))
    for name in sorted(CASES)[::7]:
        log = deep_logs / f"{name}.session.jsonl"
        _no_traceback(CliRunner().invoke(main, ["check", str(log), str(candidate)]), {0, 1, 2})
    deep_candidate = tmp_path / "deep.json"
    deep_candidate.write_text(json.dumps(DISPATCH).replace('"schedule-1"', DEEP["array"]))
    log = deep_logs / f"{sorted(CASES)[0]}.session.jsonl"
    _no_traceback(CliRunner().invoke(main, ["check", "--format", "json", str(log), str(deep_candidate)]), {1, 2})


SEEDS = 40
"""Fuzzed logs per run of the bounded fuzz (a few seconds)."""


def _sources() -> list[bytes]:
    fixtures = sorted((ROOT / "fixtures" / "sessions").rglob("*.jsonl*"))
    real = sorted(REAL_LOGS.glob("*.jsonl")) if REAL_LOGS.is_dir() else []
    return [p.read_bytes() for p in [*fixtures, *real[:6]]]


def _mutate(data: bytes, rng: random.Random) -> bytes:
    """One to eight byte-level mutations: flips, insertions of JSON-ish fragments, cuts, deep nests."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        at = rng.randrange(len(out) + 1)
        choice = rng.randrange(6)
        if choice == 0 and out:
            out[min(at, len(out) - 1)] = rng.randrange(256)
        elif choice == 1:
            out[at:at] = rng.choice([b"[", b"]", b"{", b"}", b'"', b",", b":", b"\n", b"\\u", b"-0", b"1e999", b"\xff"])
        elif choice == 2:
            del out[at : at + rng.randint(1, 40)]
        elif choice == 3:
            depth = rng.choice([10, 1_100, 5_000])
            out[at:at] = b"[" * depth + b"0" + b"]" * depth
        elif choice == 4:
            start = rng.randrange(len(out) + 1)
            out[at:at] = out[start : start + rng.randint(1, 200)]
        else:
            out[at:at] = b'{"a":' * 300 + b"null" + b"}" * 300
    return bytes(out)


@pytest.mark.slow
def test_bounded_fuzz_of_the_fixtures_never_ends_in_a_traceback(tmp_path: Path) -> None:
    """Seeded mutations of the fixtures (and some real logs, when present) through verify and
    replay: every file gets a verdict, every run the documented exit status."""
    rng = random.Random(20261201)
    sources = _sources()
    for n in range(SEEDS):
        data = _mutate(rng.choice(sources), rng)
        (tmp_path / f"fuzz{n:03d}.session.jsonl").write_bytes(data)
    verified = CliRunner().invoke(main, ["verify", "--format", "jsonl", str(tmp_path)])
    _no_traceback(verified, {0, 1, 2})
    assert len(verified.output.splitlines()) == SEEDS
    replayed = CliRunner().invoke(
        main, ["replay", str(tmp_path), "--db", str(tmp_path / "f.duckdb"), "--format", "jsonl"]
    )
    _no_traceback(replayed, {0, 1, 2})
