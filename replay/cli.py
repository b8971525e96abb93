"""The `schedlog` command line: a thin skin over the library functions of the same names."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from importlib.metadata import PackageNotFoundError, version

import click

from invariant.profiles import PROFILES

from . import report
from .logfile import MODES
from .verify import STDIN, SessionReport, discover, verify_path

PROGRESS_BYTES = 64 << 20
"""Inputs at least this large show a progress bar (when stderr is a terminal)."""


def _versions() -> str:
    def v(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "unknown"

    return f"schedlog {v('schedlog')} (tzdata {v('tzdata')})"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(message="%(version)s", version=_versions())
def main() -> None:
    """Verify and replay the schedule/change event log of agent sessions."""


def _verify_one(args: tuple[str, str, str, int | None]) -> SessionReport:
    path, profile, mode, seed_length = args
    return verify_path(path, profile, mode, seed_length)


def _run(
    paths: Sequence[str], profile: str, mode: str, seed_length: int | None, jobs: int, stdin: bytes | None
) -> Iterator[SessionReport]:
    files = [p for p in paths if p != STDIN]
    if stdin is not None:
        yield verify_path("<stdin>", profile, mode, seed_length, data=stdin)
    tasks = [(p, profile, mode, seed_length) for p in files]
    if jobs > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            yield from pool.map(_verify_one, tasks, chunksize=max(1, len(tasks) // (jobs * 8)))
    else:
        yield from map(_verify_one, tasks)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


@main.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(report.FORMATS), default="text", show_default=True)
@click.option("--profile", type=click.Choice(sorted(PROFILES)), default="calendar", show_default=True)
@click.option(
    "--mode",
    type=click.Choice(MODES),
    default="strict",
    show_default=True,
    help="strict: the persistence reader's rules; lenient: the fixture reader's (header not validated).",
)
@click.option("--seed-length", type=click.IntRange(min=0), default=None, help="Override the header's seedLength.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True, help="Worker processes.")
def verify(paths: tuple[str, ...], fmt: str, profile: str, mode: str, seed_length: int | None, jobs: int) -> None:
    """Check session logs (files, directories, or - for stdin) against the schedule protocol.

    Exit 0 when every session is ok, 1 when any is corrupt, 2 on usage errors or unreadable input.
    """
    files = list(discover(paths))
    stdin = sys.stdin.buffer.read() if STDIN in paths else None
    if not files:
        raise click.UsageError("no *.jsonl or *.jsonl.zstd file found under the given paths")
    total = sum(_size(p) for p in files if p != STDIN)
    stream = _run(files, profile, mode, seed_length, jobs, stdin)
    reports: list[SessionReport] = []
    if total >= PROGRESS_BYTES and sys.stderr.isatty():
        with click.progressbar(stream, length=len(files), label="verifying", file=sys.stderr) as bar:
            reports.extend(bar)
    else:
        reports.extend(stream)
    click.echo(report.render(reports, fmt), nl=False)
    if any(r.verdict == "unreadable" for r in reports):
        sys.exit(2)
    sys.exit(1 if any(r.verdict == "corrupt" for r in reports) else 0)
