"""`schedlog fleet`: judge logs on a Dask cluster (the `dask` extra)."""

from __future__ import annotations

from pathlib import Path

import click

from replay.cli.options import cache_options, reading_options
from replay.cli.running import (
    InputError,
    exit_for,
    nothing_found,
    say,
    say_skipped,
    say_unread,
    sessions_progress,
)
from replay.exitstatus import EXIT_HELP
from replay.reading import Reading
from replay.terminal import printable


@click.command(epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--output",
    type=click.Path(file_okay=False),
    required=True,
    help="The directory of Parquet parts, replaced as a whole (one holding other files is refused).",
)
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True, help="Local worker processes.")
@click.option("--scheduler", default=None, help="The address of a running Dask scheduler (instead of a local one).")
@reading_options()
@cache_options
def fleet(
    paths: tuple[str, ...], output: str, workers: int, scheduler: str | None, reading: Reading, cache: Path | None
) -> None:
    """Verify a fleet of logs (paths, directories, globs or fsspec URLs such as s3://bucket/logs/)
    on a Dask cluster; each task writes a Parquet part of verdict rows into OUTPUT, read them
    with read_parquet('OUTPUT/**/*.parquet'). Needs schedlog[dask]."""
    from replay.sources.bytesource import is_stream
    from replay.sources.discover import STDIN, is_url

    try:
        from replay.fleet.engine import expand, run_fleet
    except ImportError as err:  # the engine is an extra
        raise InputError(f"schedlog fleet needs the dask extra (pip install 'schedlog[dask]'): {err}") from None
    if STDIN in paths:
        raise click.UsageError("a fleet is read from paths and URLs, not from standard input")
    found = expand(paths, skipped=say_skipped)
    if not found:
        raise nothing_found(paths, stores=True)
    streams = [p for p in found if not is_url(p) and is_stream(p)]
    if streams:  # a worker opens each log itself, and a pipe is the caller's alone, read once
        raise click.UsageError(
            printable(f"a fleet's workers open each log themselves, and {streams[0]} is a pipe or device: verify it")
        )
    if scheduler is not None:
        _check_scheduler(scheduler)
    try:
        with sessions_progress(len(found), "judging") as progress:
            run = run_fleet(
                found, output, reading, workers=workers, scheduler=scheduler, progress=progress, cache=cache
            )
    except (FileNotFoundError, FileExistsError) as err:  # before any work: the output folder cannot be used
        raise InputError(printable(f"cannot write {output}: {err.strerror or err}")) from None
    except (OSError, TimeoutError) as err:  # a scheduler that cannot be reached, a part that cannot be written
        raise InputError(f"the fleet run failed: {err}") from None
    from replay.cli.output import reports as report_output

    told = report_output.reads_told(run.reads)
    say_unread(run.unread)
    say(printable(f"{report_output.verdict_summary(run.verdicts)}{told}; verdicts in {output}"))
    exit_for(run.verdicts)


def _check_scheduler(address: str) -> None:
    """A scheduler address whose scheme the engine knows, before anything is written."""
    try:
        from distributed.comm import parse_address, registry
    except ImportError:  # the dask extra is missing: the run says so
        return
    try:
        registry.get_backend(parse_address(address)[0])
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--scheduler") from None
