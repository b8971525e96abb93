"""Running one function over many session files, in input order, optionally in worker processes."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import BrokenExecutor, Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Generic, TypeVar

Task = TypeVar("Task", bound=tuple[object, ...])
Result = TypeVar("Result")


def file_size(path: str) -> int:
    """Bytes of an input file (0 when it cannot be read: the reader reports that itself)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


GROUP_BYTES = 1 << 20
GROUP_FILES = 64
Group = tuple[tuple[str, int], ...]
"""Consecutive files, each with its size in bytes, handed to one worker call."""


def grouped(paths: Sequence[str], files: int | None = None, nbytes: int | None = None) -> Iterator[Group]:
    """Consecutive files with their sizes, in groups of up to `files` (GROUP_FILES) files and
    `nbytes` (GROUP_BYTES) bytes (a larger file goes alone), each for one worker call.

    Handing a task to a worker process and its result back costs a round trip between threads
    and processes (a pool hands a worker one task at a time), which for small session logs (most
    real ones) costs more than reading them: 3,000 logs of 9 KB verified in 1.47 s with two
    workers one file per task, 0.62 s with one process.
    """
    group: list[tuple[str, int]] = []
    total = 0
    for path in paths:
        size = file_size(path)
        if group and (total + size > (nbytes or GROUP_BYTES) or len(group) == (files or GROUP_FILES)):
            yield tuple(group)
            group, total = [], 0
        group.append((path, size))
        total += size
    if group:
        yield tuple(group)


def group_bytes(group: Group) -> int:
    return sum(size for _, size in group)


def path_size(task: tuple[object, ...]) -> int:
    """The input bytes of a task that starts with its file path."""
    return file_size(str(task[0]))


class WorkerDied(RuntimeError):
    """A worker process ended without a result (killed by a signal, or by the system when out
    of memory): no verdict of schedlog's, but said as what it is, with the task it held."""

    def __init__(self, task: object) -> None:
        super().__init__(
            f"a worker process died while judging {_named(task)} (killed by a signal, or by the system when "
            "out of memory); run again with --jobs 1 to judge them in this process"
        )


def _named(task: object) -> str:
    """The paths a task holds (a group of paths first in a tuple), or the task itself."""
    group = task[0] if isinstance(task, tuple) and task else task
    if isinstance(group, list | tuple) and all(isinstance(p, str) for p in group):
        return ", ".join(group)
    return str(group)


class _Window(Generic[Task, Result]):
    """Tasks submitted to a pool and not yet taken, in input order, within a byte budget."""

    def __init__(
        self,
        pool: Executor,
        fn: Callable[[Task], Result],
        tasks: Iterable[Task],
        workers: int,
        budget: int,
        size: Callable[[Task], int],
    ) -> None:
        self.pool = pool
        self.fn = fn
        self.tasks = iter(tasks)
        self.workers = workers
        self.budget = budget
        self.size = size
        self.pending: deque[tuple[Task, Future[Result], int]] = deque()
        self.load = 0
        self.held: tuple[Task, int] | None = None
        """The next task, with its size, when the budget did not admit it yet."""

    def submit(self) -> None:
        """Submit tasks while `workers` + 1 are not yet in flight, or their input fits the budget."""
        while True:
            if self.held is None:
                task = next(self.tasks, None)
                if task is None:
                    return
                self.held = task, self.size(task)
            task, size = self.held
            if len(self.pending) > self.workers and self.load + size > self.budget:
                return
            self.pending.append((task, self.pool.submit(self.fn, task), size))
            self.load += size
            self.held = None

    def results(self) -> Iterator[tuple[Task, Result]]:
        """Each task with its result, in input order; the next tasks are submitted once the
        consumer is done with one (so what it holds on to counts against the window)."""
        while self.pending:
            task, future, size = self.pending.popleft()
            self.load -= size
            try:
                result = future.result()
            except BrokenExecutor as err:
                raise WorkerDied(task) from err
            yield task, result
            self.submit()


def in_order(
    pool: Executor,
    fn: Callable[[Task], Result],
    tasks: Iterable[Task],
    workers: int,
    budget: int = 0,
    size: Callable[[Task], int] = path_size,
) -> Iterator[tuple[Task, Result]]:
    """`fn` over `tasks` on `pool`, results in input order; `size` gives a task's input bytes.

    The first tasks are submitted before this returns. Unlike Executor.map, which submits every
    task at once, it keeps `workers` + 1 tasks in flight and more only while their input stays
    within `budget` bytes: what a slow consumer has not taken yet (staged files on disk, say)
    stays bounded.
    """
    window = _Window(pool, fn, tasks, workers, budget, size)
    window.submit()
    return window.results()


def worker_context(fn: Callable[..., object]) -> multiprocessing.context.BaseContext:
    """How worker processes start: by the program's start method (the platform's default unless
    it chose one), except that fork from a process already running other threads becomes
    forkserver.

    A forked child inherits every lock as it was, held by threads it does not have (DuckDB's
    pool, a host application's threads, the test runner's), so it can deadlock, and Python 3.12+
    warns of it. A single-threaded process still forks, the cheapest start; the results are the
    same under every start method. The fork server preloads `fn`'s module, so its workers start
    with the reader already imported.
    """
    methods = multiprocessing.get_all_start_methods()  # the platform's default first
    method = multiprocessing.get_start_method(allow_none=True) or methods[0]
    if method == "fork" and "forkserver" in methods and threads() > 1:
        server = multiprocessing.get_context("forkserver")
        server.set_forkserver_preload([fn.__module__])
        return server
    return multiprocessing.get_context(method)


def threads() -> int:
    """Threads in this process, native ones included (Linux lists them in /proc), else the
    threads Python's threading module knows."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _exit_with_parent() -> None:
    """Worker initializer: end this worker once the process that started the pool is gone, and
    let SIGTERM end it at once.

    The pool stops the workers of a broken pool (one was killed) with SIGTERM. A forked worker
    inherits the parent's handlers, and `schedlog replay` turns SIGTERM into SystemExit: a
    Python handler runs in the main thread only, and the kernel may hand the signal to the
    watching thread below while the main thread waits on its task queue, so the worker would
    wait there forever and the pool with it (seen: the test suite hung). Under spawn and
    forkserver a worker starts with the default action, which this restores under fork too.

    A pool worker blocks on its task queue, which it holds both ends of, so a parent killed
    with SIGKILL would leave it waiting forever. The parent is watched through the sentinel
    multiprocessing gives every child (a pipe whose write end only the parent holds), never
    through the parent's pid: under forkserver (Python 3.14's default on Linux) the worker's
    OS parent is the fork server, and under every start method the sentinel closes when the
    parent ends, however it ends.
    """
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    parent = multiprocessing.parent_process()
    if parent is None:  # not started by multiprocessing: nothing to watch
        return

    def watch() -> None:
        parent.join()
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


@contextmanager
def in_processes(
    fn: Callable[[Task], Result],
    tasks: Sequence[Task],
    jobs: int,
    progress: Callable[[int], None] | None,
    budget: int = 0,
    size: Callable[[Task], int] = path_size,
) -> Iterator[Iterator[tuple[Task, Result]]]:
    """`fn` over `tasks` in `jobs` processes: gives the results in order (see `in_order` for
    `budget` and `size`); progress is reported per finished task, by its size.

    The processes are started (see `worker_context`) and the first tasks submitted on entering,
    so the caller may then start threads of its own (a process forked beside a running thread
    can inherit a lock that thread holds) and do other work while the first results are
    computed. The processes are stopped once the last result is given (what they hold goes back
    while the caller works on: a replay builds its tables after), or on leaving; on an error, tasks
    not yet started are dropped.
    """
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=worker_context(fn), initializer=_exit_with_parent)

    def results(ordered: Iterator[tuple[Task, Result]]) -> Iterator[tuple[Task, Result]]:
        yield from _reported(ordered, progress, size)
        pool.shutdown()

    try:
        yield results(in_order(pool, fn, tasks, jobs, budget, size))  # the first tasks submitted now
    except BaseException:
        pool.shutdown(cancel_futures=True)
        raise
    pool.shutdown()


def _reported(
    results: Iterator[tuple[Task, Result]], progress: Callable[[int], None] | None, size: Callable[[Task], int]
) -> Iterator[tuple[Task, Result]]:
    for task, result in results:
        if progress is not None:
            progress(size(task))
        yield task, result
