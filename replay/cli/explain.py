"""`schedlog explain`: each schedule change of a log with what the fold did with it."""

from __future__ import annotations

from pathlib import Path

import click

from replay.cli.options import cache_options, reading_options
from replay.cli.output import (
    Format,
    emit,
    format_option,
    json_document,
)
from replay.cli.running import InputError, exit_with, nothing_found, say_skipped
from replay.exitstatus import EXIT_HELP
from replay.reading import Reading
from replay.terminal import printable


@click.command(epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, required=True)
@click.option("--session", "session_id", default=None, help="Only the session with this id (from the header).")
@format_option(Format.TEXT, Format.JSON)
@reading_options()
@cache_options
def explain(paths: tuple[str, ...], session_id: str | None, fmt: Format, reading: Reading, cache: Path | None) -> None:
    """Tell a session's schedule story: for a corrupt one, the rule, the history up to the
    violation, the offending and related events, and what would have been valid instead."""
    from replay.sources.discover import STDIN, discover
    from replay.tools.explain import explain_path

    files = [p for p in discover(paths, skipped=say_skipped) if p != STDIN]
    if not files:
        raise nothing_found(paths, stores=False)
    try:
        told = [explain_path(p, reading, cache) for p in files]
    finally:
        from replay.cache.cached import let_go

        let_go(cache, close=True)
    if session_id is not None:
        told = [(r, lines) for r, lines in told if r.session == session_id]
        if not told:
            raise InputError(printable(f"no session {session_id!r} among the logs given"))
    if fmt is Format.JSON:
        emit(
            [json_document([{"path": r.path, "session": r.session, "verdict": r.verdict, "story": s} for r, s in told])]
        )
    else:
        emit(["\n\n".join("\n".join(printable(line) for line in s) for _, s in told) + "\n"])
    exit_with([r for r, _ in told])
