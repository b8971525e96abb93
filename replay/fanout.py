"""Running one function over many session files, in input order, optionally in worker processes."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

Task = TypeVar("Task", bound=tuple[object, ...])
Result = TypeVar("Result")


def file_size(path: str) -> int:
    """Bytes of an input file (0 when it cannot be read: the reader reports that itself)."""
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def in_processes(
    fn: Callable[[Task], Result], tasks: Sequence[Task], jobs: int, progress: Callable[[int], None] | None
) -> Iterator[tuple[Task, Result]]:
    """`fn` over `tasks` (each starting with its file path) in `jobs` processes, results in order.

    Progress is reported per finished file, by its size.
    """
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for task, result in zip(tasks, pool.map(fn, tasks, chunksize=1), strict=True):
            if progress is not None:
                progress(file_size(str(task[0])))
            yield task, result
