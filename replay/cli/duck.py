"""`schedlog replay`, `sql` and `inspect`: logs into a DuckDB database, and queries of it."""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import click

from replay.cli.options import JOBS, cache_options, reading_options, selection_options
from replay.cli.output import (
    REPORT_FORMATS,
    ROW_FORMATS,
    Format,
    emit,
    format_option,
    to_terminal,
)
from replay.cli.running import (
    InputError,
    byte_progress,
    exit_with,
    nothing_found,
    read_stdin,
    say_skipped,
    say_unread,
    terminate_cleanly,
    was_interrupted,
    write_reports,
)
from replay.exitstatus import EXIT_HELP, SIGNALS
from replay.reading import Reading
from replay.terminal import printable


@click.command(epilog=EXIT_HELP)
@click.argument("paths", nargs=-1)
@click.option("--db", "db", type=click.Path(dir_okay=False), required=True, help="The DuckDB file to (re)create.")
@format_option(*REPORT_FORMATS)
@reading_options()
@JOBS
@click.option("--parquet", type=click.Path(file_okay=False), default=None, help="Also write every table as Parquet.")
@click.option(
    "--rebuild", is_flag=True, help="Build the database anew, even where it could take only what changed in the logs."
)
@cache_options
@selection_options
def replay(
    paths: tuple[str, ...],
    db: str,
    fmt: Format,
    reading: Reading,
    jobs: int,
    parquet: str | None,
    rebuild: bool,
    cache: Path | None,
) -> None:
    """Replay session logs into a DuckDB database for inspection (written atomically, also when
    a session is corrupt). Into a database an earlier replay made (same schedlog, same reading
    options), only what changed in the logs is read and written: new logs, grown ones, edited
    ones; logs no longer given are removed. Text output is one summary line; the other formats
    give each session's report, as verify does."""
    import duckdb

    from replay.cli.output import reports as report_output
    from replay.duck.build import TargetError
    from replay.duck.build import replay as replay_logs
    from replay.sources.discover import STDIN, discover

    terminate_cleanly()
    started, clock = datetime.now(UTC), time.perf_counter()
    files = list(discover(paths, stores=True, skipped=say_skipped))  # logs and Host stores
    if not files:
        raise nothing_found(paths, stores=True)
    stdin = read_stdin() if STDIN in paths else None
    try:
        with byte_progress(files, "replaying") as progress:
            reports, changed = replay_logs(
                files,
                Path(db),
                reading=reading,
                jobs=jobs,
                stdin=stdin,
                parquet=Path(parquet) if parquet else None,
                progress=progress,
                cache=cache,
                rebuild=rebuild,
            )
    except TargetError as err:  # raised before any work: the target is left as it was
        raise InputError(str(err)) from None
    except (RuntimeError, duckdb.Error, OSError) as err:
        if SIGNALS:  # DuckDB reports the interrupted query; the earlier database is untouched
            sys.exit(128 + SIGNALS[0])
        if was_interrupted(err):  # Ctrl-C during one of DuckDB's statements: as any other Ctrl-C
            raise
        kept = f", {db} left as it was" if Path(db).exists() else ""
        click.echo(printable(f"replay failed{kept}: {err}"), err=True)
        sys.exit(2)
    where = f"; database {db}" + (f" ({changed})" if changed else "") + (f", parquet {parquet}" if parquet else "")
    summary = report_output.summary_line(reports) + where
    if fmt is Format.TEXT:  # (the other formats name every report, these among them)
        from replay.judge.textline import text_line

        say_unread(text_line(r) for r in reports if r.verdict == "unreadable")
    write_reports(reports, fmt, report_output.Run(started, time.perf_counter() - clock), summary)
    exit_with(reports)


@click.command()
@click.argument("db", type=click.Path(dir_okay=False))
@click.argument("query")
@format_option(*ROW_FORMATS)
@click.option(
    "--allow-external-access",
    is_flag=True,
    help="Let the query read and write other files, attach databases and install extensions.",
)
def sql(db: str, query: str, fmt: Format, allow_external_access: bool) -> None:
    """Run one SQL QUERY against a replay database (opened read-only).

    The query sees the database alone: DuckDB's access to other files, databases and extensions
    is off and its configuration locked, unless --allow-external-access."""
    from replay.cli.output import rows as row_output
    from replay.duck.query import QueryError, query_rows

    try:
        with query_rows(Path(db), query, external_access=allow_external_access) as rows:
            emit(row_output.render_chunks(rows, fmt, to_terminal()))  # written as the rows arrive (json, jsonl, csv)
    except QueryError as err:
        raise InputError(str(err)) from None


@click.command()
@click.argument("db", type=click.Path(dir_okay=False))
@format_option(Format.TEXT, Format.JSON)
def inspect(db: str, fmt: Format) -> None:
    """A short summary of a replay database: verdicts, rules violated, active reminders."""
    from replay.cli.output import rows as row_output
    from replay.duck.query import QueryError, inspect_db

    try:
        emit(row_output.inspection_chunks(inspect_db(Path(db)), fmt))
    except QueryError as err:
        raise InputError(str(err)) from None
