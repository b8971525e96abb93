"""`schedlog conform`: check another implementation of the protocol against schedlog."""

from __future__ import annotations

import sys

import click

from invariant.profiles import PROFILES
from replay.cli.output import (
    CONFORM_FORMATS,
    Format,
    emit,
    format_option,
)
from replay.cli.running import InputError


@click.command()
@click.option("--exec", "command", metavar="CMD", default=None, help="The implementation under test (a command line).")
@click.option("--serve", is_flag=True, help="Answer the protocol on stdin/stdout with schedlog's own implementation.")
@click.option(
    "--cases", "count", type=click.IntRange(min=0), default=1000, show_default=True, help="Generated cases per op."
)
@click.option("--seed", type=int, default=0, show_default=True, help="The same seed asks the same cases.")
@click.option("--ops", default=None, show_default="all", help="Comma-separated operations to ask.")
@click.option("--profile", type=click.Choice(sorted(PROFILES)), default=None, help="Only cases of this profile.")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True, help="Seconds per answer.")
@format_option(*CONFORM_FORMATS)
def conform(
    command: str | None,
    serve: bool,
    count: int,
    seed: int,
    ops: str | None,
    profile: str | None,
    timeout: float,
    fmt: Format,
) -> None:
    """Check an implementation of the schedule protocol in any language against schedlog.

    With --exec CMD, CMD is started once and asked every fixture case and COUNT generated cases
    per operation, one JSON request per line (docs/conformance.md). Exit 0 on full agreement,
    1 on any disagreement (each shrunk, with a one-line reproduction), 2 on a protocol error
    (a crash, a silence or a malformed answer) or a usage error.
    """
    from invariant.conformance import OPERATIONS, ops_of
    from replay.cli.output import conform as conform_output
    from replay.conform.cases import all_cases
    from replay.conform.runner import run as run_conformance
    from replay.conform.transport import Implementation, ProtocolError
    from replay.conform.transport import serve as serve_protocol

    if serve == (command is not None):
        raise click.UsageError("give exactly one of --exec CMD and --serve")
    if serve:
        serve_protocol(sys.stdin.buffer, sys.stdout.buffer)
        return
    assert command is not None
    try:
        chosen = list(OPERATIONS) if ops is None else ops_of([op.strip() for op in ops.split(",") if op.strip()])
    except ValueError as err:
        raise click.UsageError(str(err)) from None
    cases = all_cases(chosen, count, seed, profile)
    try:
        with Implementation(command, timeout) as implementation:
            outcome = run_conformance(implementation, cases)
    except ProtocolError as err:
        raise InputError(str(err)) from None
    emit([conform_output.render(outcome, fmt)])
    sys.exit(outcome.status)
