"""The `schedlog` command line: a thin skin over the library functions of the same names."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
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
    paths: Sequence[str],
    profile: str,
    mode: str,
    seed_length: int | None,
    jobs: int,
    stdin: bytes | None,
    progress: Callable[[int], None] | None,
) -> Iterator[SessionReport]:
    """Reports in input order; `progress` hears of every byte read (per file with --jobs)."""
    if stdin is not None:
        yield verify_path("<stdin>", profile, mode, seed_length, data=stdin)
    files = [p for p in paths if p != STDIN]
    tasks = [(p, profile, mode, seed_length) for p in files]
    if jobs > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for path, result in zip(files, pool.map(_verify_one, tasks, chunksize=1), strict=True):
                if progress is not None:
                    progress(_size(path))
                yield result
    else:
        for path in files:
            yield verify_path(path, profile, mode, seed_length, progress=progress)


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
    reports = _collect(files, profile, mode, seed_length, jobs, stdin)
    click.echo(report.render(reports, fmt), nl=False)
    _exit(reports)


def _collect(
    files: Sequence[str], profile: str, mode: str, seed_length: int | None, jobs: int, stdin: bytes | None
) -> list[SessionReport]:
    """Run the sessions, with a byte progress bar on stderr for large inputs on a terminal."""
    total = sum(_size(p) for p in files if p != STDIN)
    if total < PROGRESS_BYTES or not sys.stderr.isatty():
        return list(_run(files, profile, mode, seed_length, jobs, stdin, None))
    with click.progressbar(length=total, label="reading", file=sys.stderr) as bar:
        return list(_run(files, profile, mode, seed_length, jobs, stdin, bar.update))


def _exit(reports: Sequence[SessionReport]) -> None:
    """0 all ok, 1 any corrupt, 2 any unreadable."""
    if any(r.verdict == "unreadable" for r in reports):
        sys.exit(2)
    sys.exit(1 if any(r.verdict == "corrupt" for r in reports) else 0)
