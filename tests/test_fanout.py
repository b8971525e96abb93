"""Fan-out over session files: results in input order, a bounded window, workers started on entry."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any
from unittest.mock import patch

from hypothesis import given
from hypothesis import strategies as st

from replay.audit import fanout
from replay.audit.fanout import grouped, in_order, in_processes


class _Recorder(Executor):
    """Runs nothing until a result is asked for; records what is in flight at each submit."""

    def __init__(self) -> None:
        self.submitted: list[str] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        future.set_result(fn(*args))
        self.submitted.append(str(args[0][0]))
        return future


def _files(tmp_path: Path, sizes: list[int]) -> list[tuple[str]]:
    tasks = []
    for n, size in enumerate(sizes):
        path = tmp_path / f"f{n}"
        path.write_bytes(b"x" * size)
        tasks.append((str(path),))
    return tasks


def _name(task: tuple[str]) -> str:
    return os.path.basename(task[0])


@given(sizes=st.lists(st.integers(0, 50), max_size=12), workers=st.integers(1, 3), budget=st.integers(0, 120))
def test_in_order_keeps_order_and_its_window(
    tmp_path_factory: Any, sizes: list[int], workers: int, budget: int
) -> None:
    tmp_path = tmp_path_factory.mktemp("fanout")
    tasks = _files(tmp_path, sizes)
    pool = _Recorder()
    results = in_order(pool, _name, tasks, workers, budget)
    # submitted before the first result is asked for
    assert len(pool.submitted) == min(len(tasks), max(workers + 1, _fits(sizes, budget)))
    taken = 0
    for task, result in results:
        assert result == _name(task) == f"f{taken}"
        taken += 1
        in_flight = len(pool.submitted) - taken
        window = sizes[taken : taken + in_flight]
        # beyond `workers` + 1 tasks, only while their input fits the budget
        assert in_flight <= workers + 1 or sum(window) <= budget
    assert taken == len(tasks)


def _fits(sizes: list[int], budget: int) -> int:
    """How many leading tasks fit the budget together."""
    total = 0
    for n, size in enumerate(sizes):
        total += size
        if total > budget:
            return n
    return len(sizes)


def _pid(task: tuple[str]) -> int:
    return os.getpid()


def test_in_processes_forks_its_workers_on_entry(tmp_path: Path) -> None:
    tasks = _files(tmp_path, [1, 2, 3])
    before = {p.pid for p in multiprocessing.active_children()}
    with in_processes(_pid, tasks, 2, None) as results:
        started = {p.pid for p in multiprocessing.active_children()} - before
        assert len(started) == 2  # forked already, before any result is taken
        pids = [pid for _, pid in results]
        assert not {p.pid for p in multiprocessing.active_children()} & started  # stopped: all results taken
    assert set(pids) <= started


def test_in_processes_reports_progress_in_order(tmp_path: Path) -> None:
    tasks = _files(tmp_path, [5, 7, 11])
    heard: list[int] = []
    with in_processes(_name, tasks, 2, heard.append) as results:
        assert [result for _, result in results] == ["f0", "f1", "f2"]
    assert heard == [5, 7, 11]


@given(sizes=st.lists(st.integers(0, 3 << 20), max_size=40))
def test_grouped_keeps_order_in_bounded_groups(sizes: list[int]) -> None:
    """Every file once, in input order, in groups of at most GROUP_FILES files and GROUP_BYTES
    bytes (a larger file alone); a group ends only when the next file would not fit."""
    names = [f"f{n}" for n in range(len(sizes))]
    with patch.object(fanout, "file_size", lambda path: sizes[int(path[1:])]):
        groups = list(grouped(names))
    assert [m for group in groups for m in group] == list(zip(names, sizes, strict=True))
    for group in groups:
        total = sum(size for _, size in group)
        assert 1 <= len(group) <= fanout.GROUP_FILES and (len(group) == 1 or total <= fanout.GROUP_BYTES)
    for before, after in itertools.pairwise(groups):
        total = sum(size for _, size in before)
        assert len(before) == fanout.GROUP_FILES or total + after[0][1] > fanout.GROUP_BYTES


def _die_on_second(task: tuple[list[str], int]) -> str:
    """A task function whose worker is killed (as the system kills one out of memory) on task 1."""
    if task[1] == 1:
        os.kill(os.getpid(), 9)
    return task[0][0]


def test_a_worker_killed_mid_run_is_named_not_a_broken_pool(tmp_path: Path) -> None:
    import pytest

    tasks = [([str(tmp_path / f"log-{n}.jsonl")], n) for n in range(4)]
    with (
        pytest.raises(fanout.WorkerDied) as died,
        in_processes(_die_on_second, tasks, 2, None, size=lambda t: 0) as results,
    ):
        list(results)
    assert "a worker process died while judging " in str(died.value)
    assert "log-" in str(died.value) and "--jobs 1" in str(died.value)


def _sigterm_default(task: tuple[str]) -> bool:
    return signal.getsignal(signal.SIGTERM) is signal.SIG_DFL


def test_a_worker_dies_on_sigterm_whatever_handler_its_parent_holds(tmp_path: Path) -> None:
    """The pool stops the workers of a broken pool with SIGTERM: a worker forked from a process
    that turns SIGTERM into SystemExit (as `schedlog replay` does) gets the default action back,
    else the signal can land on its watching thread and leave it waiting on its queue."""

    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, handler)
    forked = multiprocessing.get_context("fork")  # the start method that inherits handlers
    try:
        with (
            patch.object(fanout, "worker_context", lambda fn: forked),
            in_processes(_sigterm_default, _files(tmp_path, [1, 2, 3]), 2, None) as results,
        ):
            assert [default for _, default in results] == [True, True, True]
    finally:
        signal.signal(signal.SIGTERM, previous)
