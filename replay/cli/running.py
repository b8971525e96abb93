"""What every command does around its work: read an input (a usage error, never a traceback,
when it cannot be read), write an output atomically, show progress on a terminal, say a line,
and exit as the verdicts say."""

from __future__ import annotations

import os
import re
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import click

from replay.cli.output import (
    Format,
    emit,
    to_terminal,
)
from replay.exitstatus import SIGNALS, exit_status, interrupted
from replay.modes import AUTO
from replay.terminal import printable

if TYPE_CHECKING:
    from pathlib import Path

    from replay.cli.output import reports as report_output
    from replay.judge.held import Held
    from replay.judge.report import SessionReport
    from replay.reading import Reading  # the judge, the readers and the outputs load when a command runs
    from replay.sources.bytesource import Data


PROGRESS_BYTES = 64 << 20
"""Inputs at least this large show a progress bar (when stderr is a terminal)."""


class InputError(click.ClickException):
    """An input or output that cannot be used (a file, a query, a candidate): exit 2, with the
    message alone (not the usage banner of a mistyped command line)."""

    exit_code = 2


def nothing_found(paths: Sequence[str], stores: bool) -> InputError:
    """The one message of every command whose paths hold nothing it reads: each name a walk
    reads (the log suffixes, with `stores` the Host store's), and where it looked."""
    from replay.sources.discover import LOG_SUFFIXES, STORE_NAME

    names = [f"*{suffix}" for suffix in LOG_SUFFIXES] + ([STORE_NAME] if stores else [])
    where = ", ".join(paths)
    return InputError(printable(f"nothing to read under {where}: no {', '.join(names[:-1])} or {names[-1]} file found"))


def file_name(text: object) -> str:
    """`text` as one file name: what no file name holds (a separator, NUL, a leading dot) as `_`."""
    name = re.sub(r"[\x00/\\]", "_", str(text)).lstrip(".")
    return name[:100] or "session"


def say_cache_misses(reports: Sequence[SessionReport | Held]) -> None:
    for r in reports:
        if r.read_why:
            click.echo(printable(f"schedlog: {r.path}: read whole: {r.read_why}"), err=True)


def say(text: str = "") -> None:
    """One line of a command's output on standard output; a reader that closed the pipe
    (`| head`) ends the output quietly and the command exits with its own status (`emit`)."""
    emit([text + "\n"])


def say_unread(lines: Iterable[str]) -> None:
    """Each input that could not be read, and why, as verify's text names it (its line,
    `textline.text_line`): a command whose output is one summary line names them before it."""
    for line in lines:
        say(line)


def unread_view(view: dict[str, Any]) -> str:
    """verify's line of an unreadable log (`textline.text_line`), from its report view (whose
    findings are [code, severity, line, message] lists)."""
    why = next((f[3] for f in view["findings"] if f[0] == "format.unreadable"), "unreadable")
    return printable(f"UNREADABLE {view['path']}: {why}")


def say_skipped(path: str, why: str) -> None:
    """A file a walk found and did not read, said on standard error (never silently)."""
    click.echo(printable(f"schedlog: skipped {path}: {why}"), err=True)


_TYPED_INSTANT = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?(Z|[+-]\d\d:\d\d)"


def typed_instant(text: str) -> int | None:
    """An instant a person types on the command line, in epoch ms: the canonical form a log
    holds (`2026-08-05T12:00:00.000Z`), or with fewer or no fractional digits and an offset
    (`2026-08-05T12:00:00Z`, `2026-08-05T14:00:00+02:00`); None for anything else. (A log's
    instants keep their canonical form: this is for options only.)"""
    from invariant import parse_instant

    canonical = parse_instant(text)
    if canonical is not None or not re.fullmatch(_TYPED_INSTANT, text):
        return canonical
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


def judging(reading: Reading, now: str | None, tool_surface: str, retention: Any = None) -> Reading:
    """`reading` with the judging options of verify and watch: --now (an instant typed as a
    person types it), --tool-surface, and the Host stores' retention where given."""
    now_ms = None if now is None else typed_instant(now)
    if now is not None and now_ms is None:
        raise click.UsageError(f"--now {now!r} is not an instant such as 2026-08-05T12:00:00Z (or .000Z)")
    import dataclasses

    surface = None if tool_surface == AUTO else tool_surface
    judged = dataclasses.replace(reading, now=now_ms, tool_surface=surface)
    return judged if retention is None else dataclasses.replace(judged, retention=retention)


def write_reports(
    reports: Sequence[SessionReport],
    fmt: Format,
    run: report_output.Run,
    summary: str | None = None,
    quiet: bool = False,
    hint: str | None = None,
) -> None:
    """Write the reports in `fmt`; with --format github under GitHub Actions, also append the
    Markdown summary to the file $GITHUB_STEP_SUMMARY names."""
    from replay.cli.output import reports as report_output

    text = report_output.render(reports, fmt, summary=summary, terminal=to_terminal(), run=run, quiet=quiet, hint=hint)
    emit([text])
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if fmt is Format.GITHUB and target:
        from replay.cli.output.ci import step_summary

        with writing_to(target), open(target, "a", encoding="utf-8", errors="backslashreplace") as f:
            f.write(step_summary(reports))


@contextmanager
def byte_progress(files: Sequence[str], label: str) -> Iterator[Callable[[int], None] | None]:
    """A byte progress bar on stderr for large inputs on a terminal; None otherwise."""
    if not sys.stderr.isatty():
        yield None
        return
    from replay.audit.fanout import file_size as _size
    from replay.sources.discover import STDIN

    total = sum(_size(p) for p in files if p != STDIN)
    if total < PROGRESS_BYTES:
        yield None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar.update


@contextmanager
def sessions_progress(count: int, label: str) -> Iterator[Callable[[int], None] | None]:
    """A progress bar of sessions on stderr when it is a terminal (a fleet's remote logs have no
    size to count by); None otherwise."""
    if not sys.stderr.isatty():
        yield None
        return
    with click.progressbar(length=count, label=label, file=sys.stderr, show_pos=True) as bar:
        yield bar.update


def exit_with(reports: Sequence[SessionReport]) -> None:
    """Exit as the sessions' verdicts say (replay.exitstatus.EXIT_ORDER)."""
    exit_for([r.verdict for r in reports])


def exit_for(verdicts: Sequence[str]) -> None:
    sys.exit(exit_status(verdicts))


def read_input(path: str) -> Data:
    from replay.sources.bytesource import read_stream
    from replay.sources.discover import STDIN

    if path == STDIN:
        return read_stdin()
    with input_errors(path), open(path, "rb") as f:
        return read_stream(f)


def read_stdin() -> Data:
    """Standard input, whole (bounded by MAX_STREAM)."""
    from replay.sources.bytesource import read_stream

    if sys.stdin is None:  # started with file descriptor 0 closed
        raise InputError("cannot read standard input: it is closed")
    with input_errors("standard input"):
        return read_stream(sys.stdin.buffer)


@contextmanager
def input_errors(what: str) -> Iterator[None]:
    """An input that cannot be read (or held) is a usage error (exit 2), not a traceback."""
    try:
        yield
    except OSError as err:
        raise InputError(f"cannot read {what}: {err.strerror or err}") from None
    except MemoryError:
        raise InputError(f"cannot read {what}: not enough memory to hold it") from None


@contextmanager
def writing_to(target: Path | str | None = None) -> Iterator[None]:
    """An output that cannot be written is a usage error (exit 2), not a traceback. It names
    `target` when given (not the temporary file an atomic write failed on)."""
    try:
        yield
    except OSError as err:
        where = target or err.filename or "the output"
        raise InputError(f"cannot write {where}: {err.strerror or err}") from None


def terminate_cleanly() -> None:
    """Turn SIGTERM and SIGHUP (a closed terminal) into SystemExit so that temporary files are
    removed on the way out, and note Ctrl-C (still a KeyboardInterrupt; the console script
    notes it from its start): the staging workers get it too, and the pool they break may
    report first."""

    def handler(signum: int, frame: object) -> None:
        SIGNALS.append(signum)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGHUP, handler)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, interrupted)


_DUCKDB_INTERRUPTED = "Query interrupted"
"""What DuckDB raises (as a RuntimeError, not KeyboardInterrupt) when Ctrl-C lands during a query
it runs on the main thread."""


def was_interrupted(err: BaseException) -> bool:
    """Ctrl-C, whether Python or DuckDB noticed it, or a pool its SIGINT broke."""
    if isinstance(err, KeyboardInterrupt) or signal.SIGINT in SIGNALS:
        return True
    return isinstance(err, RuntimeError) and str(err) == _DUCKDB_INTERRUPTED
