"""The ledger (invariant/ledger.py): one row per schedule change, made once from the fold, and
every read model reading it: the replay database's `batches` view, `dispatches.batch` and
`schedule_changes.status`, the session view behind the report, `explain`'s batches and
`verify_bytes_with_changes`."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from invariant.ledger import Status, batches
from replay.duck.build import replay
from replay.judge.verify import judge_log, verify_bytes_with_changes
from replay.logs.logfile import SessionLog
from replay.reading import Reading
from replay.tools import explain
from replay.tools.sessionview import session_view

from .sessionfiles import header, write_session

T0 = "2026-08-05T12:00:00.000Z"
INSTANTS = [f"2026-08-05T{12 + h:02d}:{m:02d}:00.000Z" for h in range(3) for m in (0, 1, 30)]
FIXED_RATE = Reading.of(profile="fixed-rate")


def every_log(path: Path, ids: list[str], dispatches: list[tuple[str, str]], seed: int | None = None) -> Path:
    """A fixed-rate log: an `every` record per id (300 s, target T0), then the dispatches."""
    records: list[object] = []
    for record_id in ids:
        schedule = {"id": record_id, "kind": "every", "prompt": "p", "everySeconds": 300, "scheduledAt": T0}
        records.append({"version": 1, "operation": "create", "schedule": schedule})
    for record_id, accepted in dispatches:
        records.append({"version": 1, "operation": "dispatch", "id": record_id, "acceptedAt": accepted})
    events = [
        {"type": "schedule/change", "seq": n, "time": 1785931200000 + n, "data": d} for n, d in enumerate(records)
    ]
    return write_session(path, events, header(seed_length=seed))


def ledger_batches(path: Path) -> list[tuple[int, str, list[str]]]:
    _, judgement = judge_log(SessionLog(str(path), FIXED_RATE), keep=True)
    found = []
    for number, accepted, members in batches(judgement.ledger):
        ids = [m.step.change.id for m in members if m.step is not None]  # type: ignore[union-attr]
        found.append((number, accepted, ids))
    return found


def view_batches(path: Path) -> list[tuple[int, str, list[str]]]:
    """The batches the report's session view notes on its dispatch marks."""
    found: dict[int, tuple[int, str, list[str]]] = {}
    for lane in session_view(str(path), 0, FIXED_RATE)["lanes"]:
        for mark in lane["marks"]:
            if (m := re.fullmatch(r"batch (\d+), accepted (\S+)", mark[5])) is not None:
                found.setdefault(int(m[1]), (int(m[1]), m[2], []))[2].append((mark[3], lane["id"]))  # type: ignore[arg-type]
    return [(n, at, [i for _, i in sorted(members)]) for n, at, members in sorted(found.values())]  # type: ignore[misc]


def explain_batches(path: Path) -> list[tuple[int, str, list[str]]]:
    report, judgement = judge_log(SessionLog(str(path), FIXED_RATE), keep=True)
    changes = [entry for entry, _ in judgement.steps]
    stop = None if report.violation is None else report.violation.index  # as `explain.story` folds
    replayed = explain._replay(changes, judgement.ledger, judgement.state, report_profile(), stop)
    return [(n, at, ids) for n, (at, _, ids) in enumerate(replayed.batches, start=1)]


def report_profile() -> object:
    assert FIXED_RATE.profile is not None
    return FIXED_RATE.profile


def database_batches(path: Path, db: Path) -> list[tuple[int, str, list[str]]]:
    replay([str(path)], db, reading=FIXED_RATE)
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT batch, strftime(accepted_at, '%Y-%m-%dT%H:%M:%S.%g') || 'Z', ids FROM batches ORDER BY batch"
        ).fetchall()
    return [(n, at, list(ids)) for n, at, ids in rows]


def all_read_models(path: Path, db: Path) -> None:
    expected = ledger_batches(path)
    assert view_batches(path) == expected
    assert explain_batches(path) == expected
    assert database_batches(path, db) == expected
    _, changes = verify_bytes_with_changes(str(path), path.read_bytes(), FIXED_RATE)
    _, judgement = judge_log(SessionLog(str(path), FIXED_RATE), keep=True)
    assert [(c["idx"], c["owned"], c["status"]) for c in changes] == [
        (r.index, r.owned, r.status.value) for r in judgement.ledger
    ]
    with duckdb.connect(str(db), read_only=True) as con:
        statuses = con.execute("SELECT idx, owned, status FROM schedule_changes ORDER BY idx").fetchall()
    assert statuses == [(r.index, r.owned, r.status.value) for r in judgement.ledger]


def test_a_batch_is_consecutive_dispatches_sharing_acceptance(tmp_path: Path) -> None:
    """x at A, y at B, then z at A again: three batches (the fold's and `explain`'s reading),
    never one batch ["x", "z"], in every read model."""
    a, b = "2026-08-05T12:00:00.000Z", "2026-08-05T12:00:10.000Z"
    path = every_log(tmp_path / "s.jsonl", ["x", "y", "z"], [("x", a), ("y", b), ("z", a)])
    report, _ = verify_bytes_with_changes(str(path), path.read_bytes(), FIXED_RATE)
    assert report.verdict == "ok"
    assert ledger_batches(path) == [(1, a, ["x"]), (2, b, ["y"]), (3, a, ["z"])]
    all_read_models(path, tmp_path / "s.duckdb")


def test_a_one_shot_dispatch_belongs_to_no_batch_and_splits_none(tmp_path: Path) -> None:
    """Recurring x, a one-shot o (no acceptedAt: protocol.md §2.3), recurring z, x and z
    accepted together: one batch [x, z], as the fold's gate reads it."""
    every = {"kind": "every", "prompt": "p", "everySeconds": 300, "scheduledAt": T0}
    once = {"id": "o", "kind": "after", "prompt": "p", "afterSeconds": 1, "scheduledAt": T0}
    records: list[object] = [{"version": 1, "operation": "create", "schedule": {"id": i, **every}} for i in "xz"]
    records.append({"version": 1, "operation": "create", "schedule": once})
    for record_id in ("x", "o", "z"):
        accepted = {} if record_id == "o" else {"acceptedAt": T0}
        records.append({"version": 1, "operation": "dispatch", "id": record_id, **accepted})
    events = [
        {"type": "schedule/change", "seq": n, "time": 1785931200000 + n, "data": d} for n, d in enumerate(records)
    ]
    path = write_session(tmp_path / "s.jsonl", events, header())
    _, judgement = judge_log(SessionLog(str(path), FIXED_RATE), keep=True)
    assert [r.status for r in judgement.ledger] == [Status.APPLIED] * 6
    assert ledger_batches(path) == [(1, T0, ["x", "z"])]
    all_read_models(path, tmp_path / "s.duckdb")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    dispatches=st.lists(st.tuples(st.sampled_from(["a", "b", "c", "d"]), st.sampled_from(INSTANTS)), max_size=10),
    seed=st.integers(0, 3),
)
def test_every_read_model_equals_the_ledger(
    tmp_path_factory: pytest.TempPathFactory, dispatches: list[tuple[str, str]], seed: int
) -> None:
    """Interleaved and repeated `acceptedAt` values, forks cutting anywhere in the creates, and
    violations: the database, the session view, `explain` and `verify_bytes_with_changes` all
    say what the ledger says."""
    folder = tmp_path_factory.mktemp("ledger")
    path = every_log(folder / "s.jsonl", ["a", "b", "c", "d"], dispatches, seed or None)
    all_read_models(path, folder / "s.duckdb")


def _database_equals_the_ledger(paths: list[Path], db: Path) -> int:
    """Replay `paths` into `db`: each session's schedule changes (idx, owned, status) and its
    batches are its ledger's, read with the same (default) reading. Returns the changes compared."""
    replay([str(p) for p in paths], db)
    compared = 0
    with duckdb.connect(str(db), read_only=True) as con:
        keys = dict(con.execute("SELECT path, session_key FROM sessions").fetchall())
        for path in paths:
            _, judgement = judge_log(SessionLog(str(path)), keep=True)
            key = keys[str(path)]
            rows = con.execute(
                "SELECT idx, owned, status FROM schedule_changes WHERE session_key = ? ORDER BY idx", [key]
            ).fetchall()
            assert rows == [(r.index, r.owned, r.status.value) for r in judgement.ledger], path
            held = con.execute(
                "SELECT batch, first_index, last_index, size FROM batches WHERE session_key = ? ORDER BY batch", [key]
            ).fetchall()
            expected = [(n, ms[0].index, ms[-1].index, len(ms)) for n, _, ms in batches(judgement.ledger)]
            assert held == expected, path
            compared += len(rows)
    return compared


@pytest.mark.slow
def test_the_database_equals_the_ledger_on_fixtures_real_logs_and_simulated_logs(tmp_path: Path) -> None:
    """Every bundled session, every real log (when ../shared is there) and the logs the seeded
    simulator writes under each profile (a mixed workload: batches, every kind, deletes)."""
    from replay.sim.simulator import Simulation
    from replay.sim.workload import mixed_workload

    from .conftest import ROOT

    paths = sorted(p for p in (ROOT / "fixtures" / "sessions").rglob("*.jsonl*") if p.is_file())
    real = ROOT.parent / "shared" / "real-logs"
    if real.is_dir():
        paths += sorted(p for p in real.rglob("*.jsonl*") if p.is_file())
    scenario = mixed_workload(0, schedules=150, days=2)
    for profile in ("calendar", "after-only", "fixed-rate"):
        log = tmp_path / f"simulated-{profile}.session.jsonl"
        log.write_bytes(Simulation(scenario, profile=profile).run().session_log())
        paths.append(log)
    assert _database_equals_the_ledger(paths, tmp_path / "all.duckdb") > 500
