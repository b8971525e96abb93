"""`schedlog watch`: follow logs as they are written, reading only what was appended."""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import click

from replay.cli.options import TOOL_SURFACE, reading_options
from replay.cli.output import (
    Format,
    format_option,
    to_terminal,
)
from replay.cli.running import judging, say_skipped, terminate_cleanly
from replay.exitstatus import EXIT_HELP, SIGNALS, exit_status
from replay.reading import Reading
from replay.terminal import printable

OBJECT_POLL = 10.0
"""How often `watch` lists an object store's prefix again where --poll does not say (a listing
is one request a thousand objects; an unchanged object is not read)."""


@click.command(epilog=EXIT_HELP.replace("Exit ", "With --until-idle, exit ", 1) + " Ctrl-C exits 130, SIGTERM 143.")
@click.argument("paths", nargs=-1, required=True)
@format_option(Format.TEXT, Format.JSON, Format.GITHUB)
@reading_options()
@click.option("--now", default=None, help="Host-era checks: the canonical instant to judge at.")
@TOOL_SURFACE
@click.option(
    "--poll",
    type=click.FloatRange(min=0.05),
    default=None,
    help=(
        "Look at every log each SECONDS instead of waiting on file events (network file systems; "
        f"an object store's URL is polled every {OBJECT_POLL:g} s unless this says otherwise)."
    ),
)
@click.option(
    "--until-idle",
    "idle",
    type=click.FloatRange(min=0.05),
    default=None,
    help="Exit once no log changed for SECONDS, with verify's exit status for the logs as they then stand.",
)
def watch(
    paths: tuple[str, ...],
    fmt: Format,
    reading: Reading,
    now: str | None,
    tool_surface: str,
    poll: float | None,
    idle: float | None,
) -> None:
    """Follow session logs (files, folders, object-store prefixes) as they are written: print each
    new finding, and a log's verdict whenever it changes, reading only what was appended (an
    object, replaced whole, is read again when its ETag changes).

    A torn last line waits for its LF; a log truncated, replaced or edited is read again from
    its start (`read again`); a log removed says `gone`; new logs in a watched folder are picked
    up. What was printed of a log since it was last read again is what `verify` says of it.
    """
    from replay.cli.output.watched import render_event, watch_summary
    from replay.live.watching import Watch, follow
    from replay.sources.discover import is_url

    for p in paths:
        if p == "-":
            raise click.UsageError("watch follows files and folders, not standard input")
        if os.path.basename(p) == "schedule.json":
            raise click.UsageError(f"{p}: watch follows session logs; verify judges a Host task store")
        if is_url(p):  # an object store sends no events: it is listed again every --poll seconds
            poll = OBJECT_POLL if poll is None else poll
        elif not os.path.isdir(p) and not os.path.isdir(os.path.dirname(os.path.abspath(p))):
            raise click.UsageError(f"{p}: no such file or folder (a file not yet written needs its folder)")
    reading = judging(reading, now, tool_surface)
    colour = fmt is Format.TEXT and to_terminal()
    told = 0

    def tell(event: Any) -> None:
        nonlocal told
        told += 1
        text = render_event(event, fmt, colour)
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()

    watched = Watch(tuple(paths), reading, skipped=say_skipped)
    terminate_cleanly()
    status = 0
    try:
        follow(watched, tell, poll, idle)
        status = exit_status(watched.verdicts())
    except (KeyboardInterrupt, SystemExit):  # the wait for file events turns every signal into the first
        status = 128 + (SIGNALS[-1] if SIGNALS else signal.SIGINT)
    summary = watch_summary(watched.verdicts(), told)
    click.echo(printable(summary), err=fmt is not Format.TEXT)
    sys.exit(status)
