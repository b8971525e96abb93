"""One audit of many paths, as a value: what `schedlog verify` computes and then only prints."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from replay.cache.cached import let_go, verified_each
from replay.exitstatus import exit_status
from replay.judge.held import Held
from replay.judge.verdicts import Verdict
from replay.reading import DEFAULT_READING, Mode, Reading
from replay.sources.discover import STDIN

if TYPE_CHECKING:  # worker processes, the Host cross-check and the reports load only where a run uses them
    from replay.audit.fanout import Group
    from replay.judge.report import SessionReport
    from replay.sources.bytesource import Data


@dataclass(frozen=True)
class Audit:
    """The reports of a run, in input order, each Host task store's with its root's cross-check
    (the session logs beside it), held (replay.judge.held: a cache hit's report is made only for
    an output that reads it); iterating it gives the reports."""

    held: tuple[Held, ...]

    @cached_property
    def reports(self) -> tuple[SessionReport, ...]:
        return tuple(h.report() for h in self.held)

    def __iter__(self) -> Iterator[SessionReport]:
        return iter(self.reports)

    def __len__(self) -> int:
        return len(self.held)

    @property
    def exit_status(self) -> int:
        """What the command exits with (replay.exitstatus.EXIT_ORDER)."""
        return exit_status(h.verdict for h in self.held)

    def to_json(self) -> list[dict[str, object]]:
        """What `schedlog verify --format json` prints."""
        return [r.to_json() for r in self.reports]

    def lenient_hint(self, reading: Reading) -> str | None:
        """Where sessions are corrupt only for the strict reader's header rules (a header without
        `delegationDepth`, say: 7 of the 23 real logs), whether the lenient reader takes them,
        found by reading them so: said once, so that a maintainer knows the mode exists."""
        if reading.mode is not Mode.STRICT:
            return None
        refused = (h.report() for h in self.held if h.verdict is Verdict.CORRUPT)
        taken = [
            r
            for r in refused
            if refused_by_header_rules_only(r) and lenient_report(r.path, reading).verdict is Verdict.OK
        ]
        if not taken:
            return None
        from invariant.findings import Severity

        first = next(f for f in taken[0].findings if f.severity is Severity.ERROR)
        return (
            f"hint: {len(taken)} session(s) are corrupt only for the strict reader's header rules "
            f"({first.code}: {first.message}, ...); with --mode lenient (the fixture reader's rules) they are ok"
        )


def refused_by_header_rules_only(report: SessionReport) -> bool:
    """A file log the strict reader refuses for its header rules alone (no protocol violation)."""
    from invariant.findings import Severity

    errors = [f for f in report.findings if f.severity is Severity.ERROR]  # (none where --ignore took them)
    return (
        report.verdict is Verdict.CORRUPT
        and report.violation is None
        and report.path not in ("<stdin>", STDIN)
        and bool(errors)
        and all(f.code.startswith("format.header") for f in errors)
    )


def lenient_report(path: str, reading: Reading) -> SessionReport:
    """The log at `path` read as the lenient reader (the fixture reader's rules) reads it."""
    from replay.judge.verify import verify_path

    return verify_path(path, replace(reading, mode=Mode.LENIENT))


def verify_paths(
    paths: Sequence[str],
    reading: Reading = DEFAULT_READING,
    jobs: int = 1,
    stdin: Data | None = None,
    progress: Callable[[int], None] | None = None,
    cache: Path | None = None,
) -> Audit:
    """The audit of the logs and Host task stores at `paths` (and first, for `stdin` when given,
    one reported as `<stdin>`): `verify_each`'s reports, the stores cross-checked against the
    logs beside them. `jobs` > 1 verifies in that many worker processes."""
    held = list(verify_each(paths, reading, jobs, stdin, progress, cache))
    if any(h.store for h in held):
        from replay.judge.hoststore import cross_checked

        held = [Held.of(r) for r in cross_checked([h.report() for h in held], reading.selection)]
    return Audit(tuple(held))


# --- many logs, each through the verdict cache when given, in worker processes with jobs ------------


VerifyTask = tuple["Group", Reading, Path | None]
"""Consecutive files verified by one worker call, how to read them, and the verdict cache's folder."""


def _verify_group(task: VerifyTask) -> list[Held]:
    group, reading, cache = task
    try:
        return list(verified_each([path for path, _ in group], reading, cache))
    finally:
        let_go(cache, close=False)


def _verify_size(task: VerifyTask) -> int:
    from replay.audit.fanout import group_bytes

    return group_bytes(task[0])


def verify_each(
    paths: Sequence[str],
    reading: Reading = DEFAULT_READING,
    jobs: int = 1,
    stdin: Data | None = None,
    progress: Callable[[int], None] | None = None,
    cache: Path | None = None,
) -> Iterator[Held]:
    """One report per file of `paths` (and first, for `stdin` when given, one reported as
    `<stdin>`), in input order, as each is judged (`auditrun.verify_paths` adds the Host
    cross-check); with `jobs` > 1, consecutive files are verified in groups by
    that many worker processes. `progress` hears of every byte read (per group with jobs).
    With `cache`, a verdict cache folder: what it holds of each file is trusted as far as the
    file's bytes show (replay.cache.cached)."""
    if stdin is not None:
        from replay.judge.verify import verify_path

        yield Held.of(verify_path("<stdin>", reading, data=stdin))
    if jobs > 1:  # grouped only then: grouping reads every file's size
        from replay.audit.fanout import grouped, in_processes

        tasks = [(group, reading, cache) for group in grouped(paths)]
        if len(tasks) > 1:
            from replay.judge.verify import VERIFY_BUDGET

            with in_processes(_verify_group, tasks, jobs, progress, VERIFY_BUDGET, _verify_size) as results:
                for _, reports in results:
                    yield from reports
            return
    try:
        yield from verified_each(paths, reading, cache, progress)
    finally:
        let_go(cache, close=True)
