"""`schedlog shrink`: cut a log down to what keeps its verdict (for a bug report)."""

from __future__ import annotations

from pathlib import Path

import click

from replay.cli.options import reading_options
from replay.cli.running import InputError, say, writing_to
from replay.reading import Reading
from replay.terminal import printable


@click.command()
@click.argument("log", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Where the shrunk log is written.")
@click.option("--redact", is_flag=True, help="Replace prompts and free text by same-length placeholders.")
@reading_options()
def shrink(log: str, output: str, redact: bool, reading: Reading) -> None:
    """Cut a corrupt LOG down to the fewest lines that keep its verdict and rule (its seqs
    renumbered), for a bug report; with --redact, without its conversation. The shrunk log is
    verified again before it is written."""
    from replay.atomic import write_atomic
    from replay.tools.shrink import CannotShrink, shrink_path, summary

    try:
        shrunk = shrink_path(log, reading, redact)
    except CannotShrink as err:
        raise InputError(printable(f"{log}: {err}")) from None
    with writing_to(Path(output)):
        write_atomic(Path(output), shrunk.data)
    say(printable(f"{summary(shrunk)}; written to {output}"))
