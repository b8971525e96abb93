"""`schedlog check`: judge one candidate change against a log, as the owner would."""

from __future__ import annotations

import sys

import click

from replay.cli.options import reading_options
from replay.cli.output import (
    VERDICT_FORMATS,
    Format,
    emit,
    format_option,
)
from replay.cli.running import InputError, read_input
from replay.reading import Reading


@click.command()
@click.argument("log")
@click.argument("candidate")
@format_option(*VERDICT_FORMATS)
@reading_options(ideal=True)
def check(log: str, candidate: str, fmt: Format, reading: Reading) -> None:
    """May CANDIDATE be appended to LOG? CANDIDATE is a file or - holding a schedule/change
    payload or a whole event. Exit 0 accepted, 1 rejected, 2 usage or unreadable input."""
    from replay.cli.output import verdicts as verdict_output
    from replay.sources.discover import STDIN
    from replay.tools.candidate import CandidateInputError, check_log_candidate

    if log == STDIN and candidate == STDIN:
        raise click.UsageError("LOG and CANDIDATE cannot both be standard input")
    raw = bytes(read_input(candidate))  # a candidate is one small value
    log_data = read_input(log) if log == STDIN else None
    try:
        verdict = check_log_candidate("<stdin>" if log == STDIN else log, raw, reading, log_data)
    except CandidateInputError as err:
        raise InputError(str(err)) from None
    emit(verdict_output.candidate_chunks(verdict, fmt))
    sys.exit(0 if verdict.accepted else 1)
