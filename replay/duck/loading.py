"""Loading batches into one DuckDB database over several connections at once.

DuckDB runs one statement on the thread that executes it (the replay sets one thread per
statement), so a single connection loads on one core. Each connection here holds its own
transaction: appends from concurrent transactions do not conflict, and rows written in full
row groups during a transaction are kept as written when it commits.
"""

from __future__ import annotations

import queue
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import duckdb


class ParallelLoader:
    """Runs load steps on `width` connections, at most `width` at a time, each connection in one
    transaction committed by `finish` (and rolled back by `close` if it was not)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, width: int, setup: Sequence[str]) -> None:
        self.width = width
        self.free: queue.SimpleQueue[duckdb.DuckDBPyConnection] = queue.SimpleQueue()
        self.connections: list[duckdb.DuckDBPyConnection] = []
        for _ in range(width):
            cursor = con.cursor()
            self.connections.append(cursor)
            for statement in setup:
                cursor.execute(statement)
            cursor.execute("BEGIN")
            self.free.put(cursor)
        self.pool = ThreadPoolExecutor(max_workers=width)
        self.committer = ThreadPoolExecutor(max_workers=1)
        self.running: deque[Future[None]] = deque()

    def submit(self, step: Callable[[duckdb.DuckDBPyConnection], None]) -> None:
        """Run `step` on a free connection; wait first while `width` steps are running (so that
        what the steps consume, staged files say, stays bounded)."""
        while len(self.running) >= self.width:
            self.running.popleft().result()

        def run() -> None:
            con = self.free.get()
            try:
                step(con)
            finally:
                self.free.put(con)

        self.running.append(self.pool.submit(run))

    def finish(self) -> Future[None]:
        """Commit every connection's transaction once every step has run, in the background:
        the caller goes on (the last batches' commits write their partial row groups, tens of
        milliseconds each) and waits on the returned future. Connections commit in parallel."""

        def commit() -> None:
            while self.running:
                self.running.popleft().result()
            for done in [self.pool.submit(con.execute, "COMMIT") for con in self.connections]:
                done.result()

        return self.committer.submit(commit)

    def close(self) -> None:
        """Stop (waiting for running steps) and close the connections; uncommitted work is dropped."""
        for future in list(self.running):  # a copy: the committer may be taking from it
            future.cancel()
        self.committer.shutdown(wait=True)
        self.pool.shutdown(wait=True)
        for con in self.connections:
            con.close()
