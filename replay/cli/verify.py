"""`schedlog verify`: judge session logs and Host task stores, in text, JSON, GitHub, SARIF,
JUnit or Parquet."""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import click

from invariant.names import DAYS_MAX, RECORDS_MAX
from replay.cli.options import JOBS, TOOL_SURFACE, cache_options, reading_options, selection_options
from replay.cli.output import (
    REPORT_FORMATS,
    Format,
    emit,
    format_option,
)
from replay.cli.running import (
    InputError,
    byte_progress,
    judging,
    nothing_found,
    read_stdin,
    say,
    say_cache_misses,
    say_skipped,
    write_reports,
    writing_to,
)
from replay.exitstatus import EXIT_HELP
from replay.terminal import printable

if TYPE_CHECKING:
    from pathlib import Path

    from replay.reading import Reading


@click.command(epilog=EXIT_HELP)
@click.argument("paths", nargs=-1)
@format_option(*REPORT_FORMATS, Format.PARQUET)
@click.option(
    "--output",
    type=click.Path(file_okay=False),
    default=None,
    help=(
        "With --format parquet: the directory the verdict part is written into (verdicts.parquet, or "
        "verdicts-shard-I-of-N.parquet: a re-run replaces it; another run's parts there are refused)."
    ),
)
@reading_options()
@click.option("--now", default=None, help="Host stores: warn of active tasks overdue at this canonical instant.")
@click.option(
    "--delivery-history-days",
    type=click.IntRange(1, DAYS_MAX),
    default=None,
    help="Host stores: the retention in days.",
)
@click.option(
    "--delivery-history-records",
    type=click.IntRange(1, RECORDS_MAX),
    default=None,
    help="Host stores: records kept per task.",
)
@TOOL_SURFACE
@JOBS
@click.option("--quiet", "-q", is_flag=True, help="Text: print only the sessions that are not ok, then the summary.")
@click.option(
    "--all-findings",
    is_flag=True,
    help="Text: print every finding (else at most 10 of a code a log, then how many more; other formats hold all).",
)
@cache_options
@click.option("--verbose", "-v", is_flag=True, help="Say, on standard error, why a log the cache held was read whole.")
@selection_options
def verify(
    paths: tuple[str, ...],
    fmt: Format,
    output: str | None,
    reading: Reading,
    jobs: int,
    quiet: bool,
    all_findings: bool,
    now: str | None,
    delivery_history_days: int | None,
    delivery_history_records: int | None,
    tool_surface: str,
    cache: Path | None,
    verbose: bool,
) -> None:
    """Check session logs (files, directories, or - for stdin) and Host task stores against the
    schedule protocol."""
    from invariant.retention import Retention
    from replay.audit.auditrun import verify_paths
    from replay.cli.output import reports as report_output
    from replay.sources.discover import STDIN, discover, is_url

    if (fmt is Format.PARQUET) != (output is not None):
        raise click.UsageError("--format parquet and --output DIR go together")
    shard = click.get_current_context().params.get("shard")  # (the selection took the logs of it)
    if output is not None:
        from replay.duck.verdicts import other_runs_parts, part_name

        if others := other_runs_parts(output, shard):
            raise InputError(
                printable(
                    f"{output} holds verdict parts of another run ({', '.join(others[:3])}): remove them or "
                    "choose another folder (a re-run replaces its own part; the shards of one split sit side by side)"
                )
            )
    reading = judging(reading, now, tool_surface, Retention(delivery_history_days, delivery_history_records))
    files = list(discover(paths, stores=True, skipped=say_skipped))
    stdin = read_stdin() if STDIN in paths else None
    if not files and paths:  # (no paths at all: a shard that holds none of the logs, judged as such)
        raise nothing_found(paths, stores=True)
    started, clock = datetime.now(UTC), time.perf_counter()
    with byte_progress(files, "reading") as progress:
        audit = verify_paths([p for p in files if p != STDIN], reading, jobs, stdin, progress, cache)
    if verbose:
        say_cache_misses(audit.held)
    run = report_output.Run(started, time.perf_counter() - clock)
    if output is not None:
        from pathlib import Path

        from replay.duck.verdicts import write_verdicts  # DuckDB loads for Parquet output only

        if is_url(output):  # one object, one PUT: whole or absent
            part = write_verdicts(audit.reports, output, name=part_name(shard))
        else:
            with writing_to(Path(output)):
                part = write_verdicts(audit.reports, Path(output), name=part_name(shard))
        say(printable(f"{report_output.summary_line(audit.held)}; verdicts {part}"))
    elif fmt is Format.TEXT:  # (a cache hit's report is not made again: its text was kept)
        emit([report_output.text(audit.held, quiet, audit.lenient_hint(reading), all_findings)])
    else:
        write_reports(audit.reports, fmt, run)
    sys.exit(audit.exit_status)
