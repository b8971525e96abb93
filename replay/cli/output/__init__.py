"""The one output layer: one `--format` vocabulary for every command, and how text reaches stdout.

Each command offers the formats that make sense for its result (`format_option`); the renderers
beside this module (`reports`, `rows`, `verdicts`, `timeline`) turn a library result into text,
a piece at a time, and `emit` writes the pieces as they come, so a large result is never held.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterable
from enum import StrEnum
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


class Format(StrEnum):
    """Every output format a command may offer."""

    TEXT = "text"
    """For people: lines or an aligned table, control characters escaped."""
    JSON = "json"
    """One JSON document (an array where there are several results), indented."""
    JSONL = "jsonl"
    """One compact JSON object per line."""
    CSV = "csv"
    """A header row, then one row per result."""
    JUNIT = "junit"
    """JUnit XML: one testcase per session."""
    GITHUB = "github"
    """GitHub Actions workflow annotations, one per problem, and a Markdown step summary."""
    SARIF = "sarif"
    """One SARIF 2.1.0 log (code scanning): a result per problem, rules from the rule table."""
    PARQUET = "parquet"
    """Verdict rows as a Parquet part file in --output DIR (fleets: many runs write side by side)."""


REPORT_FORMATS = (Format.TEXT, Format.JSON, Format.JSONL, Format.CSV, Format.JUNIT, Format.GITHUB, Format.SARIF)
"""What the session reports (verify, replay) are written as (reports.py; `verify` offers Parquet too)."""
VERDICT_FORMATS = (Format.TEXT, Format.JSON, Format.JSONL)
"""What one verdict (check, cron) is written as (verdicts.py)."""
ROW_FORMATS = (Format.TEXT, Format.JSON, Format.JSONL, Format.CSV)
"""What query rows (sql, inspect) are written as (rows.py)."""
CONFORM_FORMATS = (Format.TEXT, Format.JSON, Format.JUNIT)
"""What a conformance outcome is written as (conform.py)."""


def to_terminal() -> bool:
    """Whether standard output is a terminal (data shown there has its control characters escaped)."""
    return sys.stdout is not None and sys.stdout.isatty()


def format_option(*offered: Format, default: Format = Format.TEXT) -> Callable[[F], F]:
    """The `--format` option of a command offering `offered` (the command receives a Format as `fmt`)."""
    choices = [f.value for f in offered]
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(choices),
        default=default.value,
        show_default=True,
        callback=lambda ctx, param, value: Format(value),
        help="Output format.",
    )


def json_text(value: object, indent: int | None = None) -> str:
    """`value` as JSON (non-ASCII as is). A value nested deeper than the standard library writes
    (a header field JSON.parse read, say) is written compact, without recursion, as JavaScript
    holds it (`deepjson.dumps`): the document stays JSON, only its layout differs."""
    try:
        return json.dumps(value, ensure_ascii=False) if indent is None else _indented(value, indent)
    except RecursionError:
        from replay.lines import deepjson

        return deepjson.dumps(value)


def _indented(value: object, indent: int) -> str:
    """`json.dumps(value, ensure_ascii=False, indent=indent)`, byte for byte, in a third of its
    time: the standard library writes indented JSON in Python, so the values are written by its C
    encoder, compact, and laid out by msgspec's formatter, which moves no byte of a value (issue
    52). What the formatter cannot take (NaN or Infinity, which are not JSON; a lone surrogate,
    which is not UTF-8) is written by the standard library's own indenting encoder."""
    import msgspec

    compact = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    try:
        return msgspec.json.format(compact, indent=indent)
    except (msgspec.DecodeError, UnicodeEncodeError):
        return json.dumps(value, ensure_ascii=False, indent=indent)


def json_document(value: object) -> str:
    """`value` as the JSON format writes it (indented, ends with a newline)."""
    return json_text(value, 2) + "\n"


def json_line(value: object) -> str:
    """`value` as one line of the JSONL format."""
    return json_text(value) + "\n"


def emit(pieces: Iterable[str], size: int = 1 << 20) -> None:
    """Write text given in pieces to standard output, about `size` characters at a time: a long
    result is written as it is rendered, never held whole. Written exactly: click would strip
    what looks like an ANSI sequence from data piped elsewhere than a terminal (the renderers
    escape what would reach a terminal)."""
    chunk: list[str] = []
    held = 0
    try:
        for piece in pieces:
            chunk.append(piece)
            held += len(piece)
            if held >= size:
                click.echo("".join(chunk), nl=False, color=True)
                chunk.clear()
                held = 0
        click.echo("".join(chunk), nl=False, color=True)
    except BrokenPipeError:  # the reader stopped (`| head`): no more output, the command's own status
        stdout_to_devnull()


def stdout_to_devnull() -> None:
    """Point standard output at /dev/null: what is still buffered, and the exit's final flush,
    go nowhere instead of failing again (a BrokenPipeError at exit would print and exit 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real file descriptor behind standard output
        pass
