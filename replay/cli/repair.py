"""`schedlog repair`: a session the harness refuses, given back without losing a byte."""

from __future__ import annotations

import os
from pathlib import Path

import click

from replay.cli.options import reading_options
from replay.cli.output import Format, emit, format_option, json_document
from replay.cli.running import InputError, writing_to
from replay.reading import Reading
from replay.terminal import printable


@click.command()
@click.argument("log", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Where the repaired log is written (never LOG).")
@click.option("--force", is_flag=True, help="Replace OUTPUT when it exists.")
@click.option("--dry-run", is_flag=True, help="Print the plan; write nothing.")
@format_option(Format.TEXT, Format.JSON)
@reading_options(selection=False)
def repair(log: str, output: str | None, force: bool, dry_run: bool, fmt: Format, reading: Reading) -> None:
    """Give back a session the harness refuses: each event it refuses set aside (kept whole, at
    its seq and time, as an event of a type no reader knows, marked ignorable where its reader
    takes the key), a torn final record dropped, then the result verified before it is written
    to OUTPUT, never over LOG. Exit 0 when the log was repaired (or needed nothing), 1 when it
    cannot be, 2 on a usage error, an unreadable LOG or an OUTPUT that exists or cannot be
    written."""
    from replay.atomic import write_atomic, write_atomic_new
    from replay.tools.repair import CannotRepair, Unreadable, repair_path, text_report

    if output is None and not dry_run:
        raise click.UsageError("give --output OUT (repair never writes over LOG), or --dry-run")
    if output is not None and _same_file(log, output):
        raise InputError(printable(f"{output}: is {log} itself: repair never writes over its input"))
    if output is not None and not force and not dry_run and os.path.lexists(output):
        raise InputError(printable(f"{output}: exists (give --force to replace it)"))
    try:
        repaired = repair_path(log, reading)
    except Unreadable as err:
        raise InputError(printable(f"{log}: {err}")) from None
    except CannotRepair as err:
        emit([printable(f"cannot repair {log}: {err}") + "\n"])
        raise SystemExit(1) from None
    if not dry_run and output is not None:
        with writing_to(Path(output)):
            (write_atomic if force else write_atomic_new)(Path(output), repaired.data)
    if fmt is Format.JSON:
        emit([json_document({**repaired.to_json(), "output": None if dry_run else output, "dryRun": dry_run})])
    else:
        emit([text_report(repaired, None if dry_run else output)])


def _same_file(log: str, output: str) -> bool:
    """Whether OUTPUT names LOG's file (the same path, a link to it, the same file by another
    name; for a store's session, the store)."""
    from replay.sources.sqlitenames import split_name

    named = split_name(log)
    source = named[0] if named is not None else log
    try:
        return os.path.samefile(source, output)
    except OSError:
        return os.path.abspath(source) == os.path.abspath(output)
