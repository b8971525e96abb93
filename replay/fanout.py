"""Running one function over many session files, in input order, optionally in worker processes."""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import TypeVar

Task = TypeVar("Task", bound=tuple[object, ...])
Result = TypeVar("Result")


def file_size(path: str) -> int:
    """Bytes of an input file (0 when it cannot be read: the reader reports that itself)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def in_order(
    pool: Executor, fn: Callable[[Task], Result], tasks: Iterable[Task], workers: int, budget: int = 0
) -> Iterator[tuple[Task, Result]]:
    """`fn` over `tasks` (each starting with its file path) on `pool`, results in input order.

    Unlike Executor.map, which submits every task at once, it keeps `workers` + 1 tasks in
    flight and more only while their input stays within `budget` bytes: what a slow consumer
    has not taken yet (staged files on disk, say) stays bounded.
    """
    pending: deque[tuple[Task, Future[Result], int]] = deque()
    load = 0
    for task in tasks:
        size = file_size(str(task[0]))
        while len(pending) > workers and load + size > budget:
            first, future, first_size = pending.popleft()
            load -= first_size
            yield first, future.result()
        pending.append((task, pool.submit(fn, task), size))
        load += size
    while pending:
        first, future, _ = pending.popleft()
        yield first, future.result()


PARENT_POLL_S = 0.2


def _exit_with_parent(parent: int) -> None:
    """Worker initializer: end this worker once its parent is gone.

    A pool worker blocks on its task queue, which it holds both ends of, so a parent killed
    with SIGKILL would leave it waiting forever; a watcher thread notices the re-parenting.
    """

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def in_processes(
    fn: Callable[[Task], Result],
    tasks: Sequence[Task],
    jobs: int,
    progress: Callable[[int], None] | None,
    budget: int = 0,
) -> Iterator[tuple[Task, Result]]:
    """`fn` over `tasks` in `jobs` processes, results in order (see `in_order` for `budget`).

    Progress is reported per finished file, by its size.
    """
    with ProcessPoolExecutor(max_workers=jobs, initializer=_exit_with_parent, initargs=(os.getpid(),)) as pool:
        for task, result in in_order(pool, fn, tasks, jobs, budget):
            if progress is not None:
                progress(file_size(str(task[0])))
            yield task, result
