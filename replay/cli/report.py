"""`schedlog report`: one HTML page of every session's verdict and timeline."""

from __future__ import annotations

from pathlib import Path

import click

from replay.cli.options import JOBS, cache_options, reading_options
from replay.cli.running import (
    byte_progress,
    exit_for,
    nothing_found,
    say,
    say_skipped,
    say_unread,
    unread_view,
    writing_to,
)
from replay.exitstatus import EXIT_HELP
from replay.reading import Reading
from replay.terminal import printable


@click.command(epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, required=True)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The HTML file to write.")
@click.option("--title", default="schedlog report", show_default=True, help="The page title.")
@reading_options()
@JOBS
@cache_options
def report(paths: tuple[str, ...], output: str, title: str, reading: Reading, jobs: int, cache: Path | None) -> None:
    """Write one self-contained HTML report (no network, works from file://): a fleet page of
    every session's verdict, and per session a timeline with one lane per schedule id. The
    report is written in every case but a usage error."""
    from replay.atomic import write_atomic
    from replay.cli.output import html as html_output
    from replay.cli.output import reports as report_output
    from replay.sources.discover import STDIN, discover
    from replay.tools.sessionview import fleet_views

    files = [p for p in discover(paths, skipped=say_skipped) if p != STDIN]
    if not files:
        raise nothing_found(paths, stores=False)
    with byte_progress(files, "reading") as progress:
        views = list(fleet_views(files, reading, jobs, progress, cache))
    with writing_to(Path(output)):
        write_atomic(Path(output), html_output.page(views, title).encode("utf-8"))
    verdicts = [view["verdict"] for view in views]
    say_unread(unread_view(view) for view in views if view["verdict"] == "unreadable")
    say(printable(f"{report_output.verdict_summary(verdicts)}; report {output}"))
    exit_for(verdicts)
