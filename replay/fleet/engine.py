"""`fleet`: verify a fleet of logs on a Dask cluster, each task writing one Parquet part.

Why Dask distributed (not Ray Data): a local cluster starts in about a second from a pip install
of a few pure-Python packages (Ray's wheels are hundreds of MB and its start takes several
seconds); it reads file lists from any fsspec URL (s3://, gs://, file://) with the same `fsspec`
schedlog uses here; and a task is a plain function over a group of paths, so the verdict rows
land as Parquet through the same writer as `verify --format parquet`. Ray Data would bring its
own Parquet writer and block model for what is, here, a map over file groups.

Each task verifies a group of consecutive paths and writes `part-NNNNN.parquet`, named by the
group: a task the engine retries after losing a worker rewrites the same part (atomically), so no
verdict is lost or counted twice.

Host task stores (`schedule.json`, local ones) are judged as `verify` judges them, with their root's
cross-check against the session logs beside them: the tasks hand back what the cross-check reads
of each session (its id, path and Host reminder messages), and the stores' verdicts are written
as one last part once every session is judged.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from invariant.findings import Finding
from replay.atomic import folder_of, replace_folder
from replay.audit.fanout import grouped
from replay.cache.cached import let_go, verified
from replay.duck.published import foreign, publish, run_id, run_prefix
from replay.duck.verdicts import write_verdicts
from replay.judge.hoststore import cross_checked
from replay.judge.report import SessionReport
from replay.judge.textline import text_line
from replay.judge.verify import store_report
from replay.reading import DEFAULT_READING, Reading
from replay.sources.discover import STORE_NAME, Skipped, discover, is_url, local_path

TASK_FILES, TASK_BYTES = 1024, 64 << 20
"""Logs per task, by count and (local ones) bytes: a task's fixed costs (scheduling, starting
DuckDB for its Parquet part) are larger than a process pool's, so its groups are larger than
`verify -j`'s."""


def expand(patterns: Sequence[str], skipped: Skipped | None = None) -> list[str]:
    """The logs (and Host stores) that paths, directories, globs and object-store URLs name, as
    `verify` finds them (`discover`: each file once; of a session directory's generations the
    current one; a prefix listed as a folder is walked); `skipped` hears what a walk skipped."""
    return list(discover(_globbed(patterns), stores=True, skipped=skipped))


def _globbed(patterns: Sequence[str]) -> list[str]:
    """Local globs expanded (an object store's URL is listed as given: objects.listed)."""
    import glob

    return [
        match
        for p in patterns
        for match in (sorted(glob.glob(local_path(p))) if not is_url(p) and glob.has_magic(p) else [p])
    ]


def verify_group(
    paths: Sequence[str],
    part: int,
    out: str,
    reading: Reading,
    delay: float = 0.0,
    deliveries: bool = False,
    cache: str | None = None,
) -> tuple[list[str], list[SessionReport]]:
    """Verify `paths` and write their verdicts as part `part` in `out`; the verdicts, and with
    `deliveries` what a Host root's cross-check reads of each (the reports without their
    fold, violation and findings). (A log that cannot be read is an unreadable verdict, as in
    `verify`.) Local files go through the verdict cache in folder `cache` when given (a worker
    that cannot open it reads them whole); each report says how it was had (`read`)."""
    reports: list[SessionReport] = []
    folder = None if cache is None else Path(cache)
    try:
        reports = _verified_group(paths, reading, delay, folder)
    finally:
        let_go(folder, close=False)
    write_verdicts(reports, out, name=f"part-{part:05d}")
    light = [replace(r, folded=None, findings=_why_unread(r), violation=None) for r in reports]
    return [r.verdict.value for r in reports], light if deliveries else [_only_read(r) for r in light]


def _why_unread(report: SessionReport) -> tuple[Finding, ...]:
    """What the driver keeps of a report's findings: why it could not be read, where it could not."""
    return tuple(f for f in report.findings if f.code == "format.unreadable") if report.verdict == "unreadable" else ()


def _only_read(report: SessionReport) -> SessionReport:
    """What the driver reads of a report it does not cross-check: how it was had."""
    return replace(report, session=None, host_messages=(), host_message_texts=(), seed_length=0)


def _verified_group(paths: Sequence[str], reading: Reading, delay: float, cache: Path | None) -> list[SessionReport]:
    reports: list[SessionReport] = []
    for path in paths:  # a file or an object, read as verify reads it (its generations beside it too)
        reports.append(verified(path, reading, cache))
        time.sleep(delay)  # (tests: a task long enough to kill its worker under it)
    return reports


@dataclass(frozen=True)
class FleetRun:
    """What a fleet run judged: each session's (and Host store's) verdict, in no order."""

    verdicts: tuple[str, ...]
    reads: tuple[str, ...] = ()
    """How each session's report was had, where the verdict cache was asked (cached.Use)."""
    parts: tuple[str, ...] = ()
    """The parts written (paths, or URLs under an object store's run prefix)."""
    unread: tuple[str, ...] = ()
    """verify's line of each log that could not be read (`textline.text_line`: the command line
    names them)."""

    @property
    def judged(self) -> int:
        return len(self.verdicts)


@contextmanager
def _deaf_to_ctrl_c() -> Iterator[None]:
    """SIGINT ignored while the local cluster's processes start, so that they inherit it
    ignored (an ignored signal stays ignored across exec, and Python keeps it so): a Ctrl-C at
    the terminal reaches the whole process group, and only this process must hear it, to close
    the cluster and exit 130 with one line; the workers, hearing it too, printed tracebacks.
    A Ctrl-C in that instant is lost (the cluster is starting: press it again). The workers
    log only what is critical (unless $DASK_LOGGING__DISTRIBUTED says otherwise): a task that
    fails reaches this process as its exception, and the rest is the cluster's own noise (a
    task cancelled by a Ctrl-C; a heartbeat that finds the scheduler closed as the cluster
    closes, which a loaded machine printed as a traceback)."""
    ours = _WORKER_LOGGING not in os.environ
    if ours:
        os.environ[_WORKER_LOGGING] = "critical"
    main = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        yield
    finally:
        if main:
            signal.signal(signal.SIGINT, before)
        if ours:
            os.environ.pop(_WORKER_LOGGING, None)


_WORKER_LOGGING = "DASK_LOGGING__DISTRIBUTED"
"""What sets the level of the workers' `distributed` loggers (read as each worker starts)."""


@contextmanager
def _quiet_distributed() -> Iterator[None]:
    """This process's `distributed` loggers say only what is critical while the cluster closes
    (a worker killed for its abandoned task, a heartbeat to a scheduler closing: no error of the
    run's to print)."""
    import logging

    logger = logging.getLogger("distributed")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def _stop_workers(cluster: Any) -> None:
    """Kill the local cluster's worker processes at once (a run abandoned by Ctrl-C: their tasks
    are not waited for; the nanny would wait 4 s on each)."""
    for nanny in list(getattr(cluster, "workers", {}).values()):
        pid = getattr(getattr(getattr(nanny, "process", None), "process", None), "pid", None)
        if isinstance(pid, int):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def run_fleet(
    paths: Sequence[str],
    out: Path | str,
    reading: Reading = DEFAULT_READING,
    *,
    workers: int = 2,
    scheduler: str | None = None,
    group: int = TASK_FILES,
    delay: float = 0.0,
    started: Callable[[object], None] | None = None,
    progress: Callable[[int], None] | None = None,
    cache: Path | None = None,
) -> FleetRun:
    """Verify every path on a Dask cluster (a local one of `workers` processes, or the one at
    `scheduler`), writing Parquet parts into `out` as a whole: they are written into a new folder
    beside it, which then takes its place (an earlier run's parts are never read beside this
    run's; a folder holding anything but a fleet's parts is refused: OSError); return the
    verdicts of the sessions (and stores) judged. `started` hears the client once the tasks are
    submitted, `progress` the number of sessions each finished task judged. Into an object
    store's prefix (`out` a URL), the parts go under a run prefix of their own and a manifest
    names them, last (published.py)."""
    args = (reading, workers, scheduler, group, delay, started, progress, cache)
    if isinstance(out, str) and is_url(out):
        return _run_to_store(paths, out, *args)
    out = Path(out)
    foreign = _not_parts(out)
    if foreign:
        raise FileExistsError(
            errno.EEXIST, f"it holds files a fleet run did not write ({', '.join(foreign[:3])})", str(out)
        )
    fresh = Path(tempfile.mkdtemp(prefix=f".{out.name}.fleet-", dir=folder_of(out)))
    try:
        run = _run_into(paths, str(fresh), *args)
        replace_folder(fresh, out)
    finally:
        shutil.rmtree(fresh, ignore_errors=True)
    return run


def _run_to_store(paths: Sequence[str], out: str, *args: Any) -> FleetRun:
    """`run_fleet` into the object store's prefix `out`: the parts under a new run's prefix,
    then the manifest naming them (published.publish)."""
    others = foreign(out)
    if others:
        raise FileExistsError(
            errno.EEXIST, f"it holds objects a fleet run did not write ({', '.join(others[:3])})", out
        )
    run = run_id(datetime.now(UTC))
    done = _run_into(paths, run_prefix(out, run), *args)
    publish(out, run, done.parts, done.judged)
    return done


PART = re.compile(r"part-\d{5}\.parquet")


def _not_parts(out: Path) -> list[str]:
    """What `out` holds beside a fleet run's parts (nothing when it does not exist)."""
    try:
        return sorted(entry.name for entry in os.scandir(out) if not PART.fullmatch(entry.name))
    except FileNotFoundError:
        return []


def _run_into(
    paths: Sequence[str],
    out: str,
    reading: Reading,
    workers: int,
    scheduler: str | None,
    group: int,
    delay: float,
    started: Callable[[object], None] | None,
    progress: Callable[[int], None] | None,
    cache: Path | None = None,
) -> FleetRun:
    """`run_fleet`, its parts written into the folder `out` (a new one), or under the object
    store's prefix `out`."""
    from distributed import Client, LocalCluster, as_completed

    maybe_stores = [p for p in paths if not is_url(p) or p.endswith("/" + STORE_NAME)]  # (an object is one by name)
    judged_stores = [r for r in (store_report(p, reading) for p in maybe_stores) if r is not None]
    stores = {r.path for r in judged_stores}  # each read once, here: a worker reads no store
    if progress is not None and judged_stores:
        progress(len(judged_stores))
    local = [p for p in paths if not is_url(p) and p not in stores]
    groups = [[path for path, _ in g] for g in grouped(local, group, TASK_BYTES)]  # by files and bytes
    remote = [p for p in paths if is_url(p) and p not in stores]
    groups += [remote[n : n + group] for n in range(0, len(remote), group)]
    folder = None if cache is None else str(cache)
    cluster = None
    if scheduler is None:
        # ":0", a free port: None does not disable the dashboard (dask/distributed#8136), and a
        # fixed 8787 warns whenever another cluster holds it
        with _deaf_to_ctrl_c():
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=":0")
    try:
        with Client(scheduler or cluster) as client:
            futures = [
                client.submit(verify_group, g, n, str(out), reading, delay, bool(stores), folder, pure=False, retries=3)
                for n, g in enumerate(groups)
            ]
            if started is not None:
                started(client)
            results: list[tuple[list[str], list[SessionReport]]] = []
            for future in as_completed(futures):  # as they finish, for the progress
                results.append(future.result())
                if progress is not None:
                    progress(len(results[-1][0]))
    except KeyboardInterrupt:
        if cluster is not None:  # the run is abandoned: its workers' tasks are not waited for
            _stop_workers(cluster)
        raise
    finally:
        if cluster is not None:
            with _quiet_distributed():
                cluster.close()
    verdicts = [verdict for group_verdicts, _ in results for verdict in group_verdicts]
    if stores:
        sessions = [r for _, light in results for r in light]
        checked = [r for r in cross_checked([*judged_stores, *sessions], reading.selection) if r.store]
        write_verdicts(checked, out, name=f"part-{len(groups):05d}")
        verdicts += [r.verdict.value for r in checked]
    reads = tuple(r.read for _, light in results for r in light if r.read)
    unread = tuple(text_line(r) for _, light in results for r in light if r.verdict == "unreadable")
    parts = tuple(f"{out}/part-{n:05d}.parquet" for n in range(len(groups) + bool(stores)))
    return FleetRun(tuple(verdicts), reads, parts, unread)
