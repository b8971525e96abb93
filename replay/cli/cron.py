"""`schedlog cron`: the next instants of a cron expression, as the calendar engine computes them."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

import click

from replay.cli.options import IDEAL
from replay.cli.output import (
    VERDICT_FORMATS,
    Format,
    emit,
    format_option,
)
from replay.cli.running import typed_instant


@click.command()
@click.argument("expression")
@click.option("--tz", "time_zone", required=True, help="UTC or an IANA Area/Location zone.")
@click.option("--after", default=None, help="Canonical instant to search from (default: now).")
@click.option("--count", type=click.IntRange(min=0, max=10_000), default=5, show_default=True)
@format_option(*VERDICT_FORMATS)
@IDEAL
def cron(expression: str, time_zone: str, after: str | None, count: int, fmt: Format, ideal: bool) -> None:
    """Canonical form, verdict and next occurrences of a restricted cron EXPRESSION.

    Exit 0 when schedule_create would accept it at --after, 1 when refused, 2 on usage errors.
    """
    from replay.cli.output import verdicts as verdict_output
    from replay.tools.cronreport import describe_cron

    if after is None:
        after_ms = int(datetime.now(UTC).timestamp() * 1000)
    else:
        parsed = typed_instant(after)
        if parsed is None:
            raise click.BadParameter(f"{after!r} is not an instant such as 2026-08-05T12:00:00Z", param_hint="--after")
        after_ms = parsed
    result = describe_cron(expression, time_zone, after_ms, count, ideal=ideal)
    emit(verdict_output.cron_chunks(result, fmt))
    sys.exit(0 if result.code is None else 1)
