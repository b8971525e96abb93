"""The `schedlog` command line: a thin skin over the library functions of the same names."""

from __future__ import annotations

import dataclasses
import errno
import functools
import io
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import click

from invariant.profiles import PROFILES
from invariant.retention import DAYS_MAX, RECORDS_MAX
from invariant.tools.names import SURFACE_NAMES
from replay.cli.output import (
    CONFORM_FORMATS,
    REPORT_FORMATS,
    ROW_FORMATS,
    VERDICT_FORMATS,
    Format,
    emit,
    format_option,
    json_document,
    json_text,
    stdout_to_devnull,
    to_terminal,
)
from replay.exitstatus import EXIT_HELP, INTERNAL_ERROR, SIGNALS, exit_status, interrupted
from replay.reading import AUTO, Mode, Reading
from replay.sim.limits import MAX_STEPS
from replay.terminal import printable

if TYPE_CHECKING:  # the judge, the readers and the outputs load when a command runs
    from replay.audit.held import Held
    from replay.audit.report import SessionReport
    from replay.cli.output import reports as report_output
    from replay.logs.bytesource import Data

F = TypeVar("F", bound=Callable[..., Any])

PROGRESS_BYTES = 64 << 20
"""Inputs at least this large show a progress bar (when stderr is a terminal)."""


class InputError(click.ClickException):
    """An input or output that cannot be used (a file, a query, a candidate): exit 2, with the
    message alone (not the usage banner of a mistyped command line)."""

    exit_code = 2


# Options shared by several commands, defined once so that their meaning cannot drift apart.
PROFILE = click.option(
    "--profile",
    type=click.Choice([AUTO, *PROFILES]),
    default=AUTO,
    show_default=True,
    help="The protocol revision that judges the schedule stream; auto: each session's own, as its evidence shows.",
)
MODE = click.option(
    "--mode",
    type=click.Choice([m.value for m in Mode]),
    default=Mode.STRICT.value,
    show_default=True,
    help="strict: the persistence reader's rules; lenient: the fixture reader's (header not validated).",
)
SEED_LENGTH = click.option(
    "--seed-length", type=click.IntRange(min=0), default=None, help="Override the header's seedLength."
)
SIMULATED_PROFILE = click.option(
    "--profile",
    type=click.Choice(list(PROFILES)),
    default="calendar",
    show_default=True,
    help="The revision whose owner is simulated.",
)
IDEAL = click.option(
    "--ideal", is_flag=True, help="Use the intended calendar rule instead of the reference's decisions."
)
TOOL_SURFACE = click.option(
    "--tool-surface",
    type=click.Choice([AUTO, *SURFACE_NAMES]),
    default=AUTO,
    show_default=True,
    help="The tool surface logged schedule_* calls are judged against; auto: the one each session's calls point to.",
)
JOBS = click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True, help="Worker processes.")


def nothing_found(paths: Sequence[str], stores: bool) -> InputError:
    """The one message of every command whose paths hold nothing it reads: each name a walk
    reads (the log suffixes, with `stores` the Host store's), and where it looked."""
    from replay.logs.discover import LOG_SUFFIXES, STORE_NAME

    names = [f"*{suffix}" for suffix in LOG_SUFFIXES] + ([STORE_NAME] if stores else [])
    where = ", ".join(paths)
    return InputError(printable(f"nothing to read under {where}: no {', '.join(names[:-1])} or {names[-1]} file found"))


"""What verify and replay say: they read Host task stores too."""


def _shard(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    index, _, count = value.partition("/")
    if not (index.isdigit() and count.isdigit() and 1 <= int(index) <= int(count)):
        raise click.BadParameter(f"{value!r} is not I/N with 1 <= I <= N", param_hint="--shard")
    return int(index), int(count)


def selection_options(command: F) -> F:
    """PATHS, `--files-from LIST` (one path per line, `-` for standard input) and `--shard I/N`
    (a stable split by path), handed to the command as its `paths`."""

    @functools.wraps(command)
    def with_selection(*args: Any, **kwargs: Any) -> Any:
        from replay.logs.discover import STDIN, discover, in_shard, read_path_list

        paths = list(kwargs.pop("paths"))
        listed = kwargs.pop("files_from")
        if listed is not None:
            if listed == STDIN and STDIN in paths:
                raise click.UsageError("standard input cannot hold both the list of paths and a log")
            text = _read_input(listed)
            paths += read_path_list(bytes(text).decode("utf-8", "surrogateescape"))
        if not paths:
            raise click.UsageError("name the logs: PATHS, or --files-from LIST")
        if any("\0" in p for p in paths):  # no file's name holds one; the system refuses it
            raise click.UsageError("a path holds a NUL byte (a --files-from list is one path per line)")
        shard = kwargs.pop("shard")
        if shard is not None:  # by each file's path as discovered, so that a directory is split too
            index, count = shard
            found = discover(paths, stores=True, skipped=_say_skipped)
            paths = [p for p in found if p == STDIN or in_shard(p, index, count)]  # may be none
        return command(*args, paths=tuple(paths), **kwargs)

    options = (
        click.option(
            "--files-from", "files_from", default=None, help="Read the paths, one per line, from a file (or -)."
        ),
        click.option(
            "--shard", default=None, callback=_shard, help="Judge only shard I of N (a stable split by path)."
        ),
    )
    for option in reversed(options):
        with_selection = option(with_selection)
    return cast(F, with_selection)


def reading_options(*, logs: bool = True, ideal: bool = False) -> Callable[[F], F]:
    """The reading options a command takes (--profile; with `logs`, --mode and --seed-length;
    with `ideal`, --ideal), handed to it as one `reading` (a Reading, checked once here)."""

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def with_reading(*args: Any, **kwargs: Any) -> Any:
            reading = Reading.of(
                kwargs.pop("profile"),
                kwargs.pop("mode", Mode.STRICT),
                kwargs.pop("seed_length", None),
                kwargs.pop("ideal", False),
            )
            if logs:
                chosen = _selection(*(kwargs.pop(k) for k in ("select", "ignore", "config", "isolated")))
                reading = dataclasses.replace(reading, selection=chosen)
            return command(*args, reading=reading, **kwargs)

        options = [
            PROFILE,
            *((MODE, SEED_LENGTH) if logs else ()),
            *((IDEAL,) if ideal else ()),
            *(SELECTION if logs else ()),
        ]
        for option in reversed(options):
            with_reading = option(with_reading)
        return cast(F, with_reading)

    return decorate


SELECTION = (
    click.option(
        "--select",
        metavar="CODES",
        default=None,
        help="Report only the findings of these codes (comma-separated; a prefix at a dot, format.header, "
        "names its codes). Never changes a verdict.",
    ),
    click.option("--ignore", metavar="CODES", default=None, help="Report no finding of these codes (as --select)."),
    click.option(
        "--config",
        type=click.Path(dir_okay=False),
        default=None,
        help="Read select and ignore from this TOML file ([tool.schedlog], or its top level) instead of the "
        "pyproject.toml found from the current folder upwards.",
    ),
    click.option("--isolated", is_flag=True, help="Read no configuration file."),
)
"""Which findings a command reports (replay/cli/selection.py): the command line over [tool.schedlog]."""


def _selection(select: str | None, ignore: str | None, config: str | None, isolated: bool) -> Any:
    """The run's selection of findings; a selector or configuration that cannot be used is a
    usage error naming it (exit 2)."""
    from replay.cli.selection import ConfigError, selection

    try:
        return selection(select, ignore, None if config is None else Path(config), isolated, Path.cwd())
    except ConfigError as err:
        raise click.UsageError(printable(str(err))) from None


def cache_options(command: F) -> F:
    """--cache-dir and --no-cache, handed to the command as `cache` (the verdict cache's folder,
    or None). A folder that cannot be used is said once, on stderr, and
    the command runs without it (replay.cache)."""

    @functools.wraps(command)
    def with_cache(*args: Any, **kwargs: Any) -> Any:
        from replay.audit.cached import default_folder, let_go, usable

        named, off = kwargs.pop("cache_dir"), kwargs.pop("no_cache")
        folder = None if off else Path(named) if named else default_folder()
        if folder is not None and (problem := usable(folder)):
            click.echo(printable(f"schedlog: warning: {problem}"), err=True)
            folder = None
        try:
            return command(*args, cache=folder, **kwargs)
        finally:
            let_go(folder, close=True)

    options = [
        click.option(
            "--cache-dir",
            type=click.Path(file_okay=False),
            default=None,
            help="The verdict cache's folder (default: $SCHEDLOG_CACHE_DIR, else the user cache folder).",
        ),
        click.option(
            "--no-cache", is_flag=True, help="Read every log whole, neither asking nor writing the verdict cache."
        ),
    ]
    for option in reversed(options):
        with_cache = option(with_cache)
    return cast(F, with_cache)


def _file_name(text: object) -> str:
    """`text` as one file name: what no file name holds (a separator, NUL, a leading dot) as `_`."""
    name = re.sub(r"[\x00/\\]", "_", str(text)).lstrip(".")
    return name[:100] or "session"


def _say_cache_misses(reports: Sequence[SessionReport | Held]) -> None:
    for r in reports:
        if r.read_why:
            click.echo(printable(f"schedlog: {r.path}: read whole: {r.read_why}"), err=True)


def _version(name: str) -> str:
    from replay.cli.output.reports import installed_version

    return installed_version(name)


def _versions() -> str:
    from invariant.zones import icu_version

    v = _version
    return f"schedlog {v('schedlog')} (tzdata {v('tzdata')}; zone names as ICU {icu_version()})"


_DUCKDB_INTERRUPTED = "Query interrupted"
"""What DuckDB raises (as a RuntimeError, not KeyboardInterrupt) when Ctrl-C lands during a query
it runs on the main thread."""


def _interrupted(err: BaseException) -> bool:
    """Ctrl-C, whether Python or DuckDB noticed it, or a pool its SIGINT broke."""
    if isinstance(err, KeyboardInterrupt) or signal.SIGINT in SIGNALS:
        return True
    return isinstance(err, RuntimeError) and str(err) == _DUCKDB_INTERRUPTED


class _Commands(click.Group):
    """The command group. A command interrupted by Ctrl-C exits 130 (128 + SIGINT, as shells
    report it), not click's 1: for `verify` and `replay`, 1 means that violations were found.
    The command list gives each command's first sentence whole (click cuts it at 45 characters)."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        if cmd.short_help is None and cmd.help:
            cmd.short_help = first_sentence(cmd.help)
        super().add_command(cmd, name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit):
            raise
        except (KeyboardInterrupt, RuntimeError) as err:
            from replay.audit.fanout import WorkerDied

            if isinstance(err, WorkerDied) and not _interrupted(err):
                click.echo(f"schedlog: {err}", err=True)
                ctx.exit(INTERNAL_ERROR)
            if not _interrupted(err):
                _internal_error(ctx)
            click.echo("\nAborted!", err=True)
            ctx.exit(130)
        except OSError as err:
            if err.errno == errno.EPIPE:
                raise  # a closed pipe is click's to handle
            if err.filename is not None:  # a file that went away or turned unreadable under the run
                click.echo(f"schedlog: cannot use {err.filename}: {err.strerror or err}", err=True)
            else:
                _output_failed(err)
            ctx.exit(2)
        except Exception:
            _internal_error(ctx)


def first_sentence(text: str) -> str:
    """A help text's first sentence (to its first `.`, `?` or `!` before a space), its lines joined."""
    joined = " ".join(text.split("\n\n", 1)[0].split())
    found = re.match(r"(.+?[.?!])(?:\s|$)", joined)
    return found.group(1) if found else joined


def say(text: str = "") -> None:
    """One line of a command's output on standard output; a reader that closed the pipe
    (`| head`) ends the output quietly and the command exits with its own status (`emit`)."""
    emit([text + "\n"])


def _say_unread(lines: Iterable[str]) -> None:
    """Each input that could not be read, and why, as verify's text names it (its line,
    `textline.text_line`): a command whose output is one summary line names them before it."""
    for line in lines:
        say(line)


def _unread_view(view: dict[str, Any]) -> str:
    """verify's line of an unreadable log (`textline.text_line`), from its report view (whose
    findings are [code, severity, line, message] lists)."""
    why = next((f[3] for f in view["findings"] if f[0] == "format.unreadable"), "unreadable")
    return printable(f"UNREADABLE {view['path']}: {why}")


def _say_skipped(path: str, why: str) -> None:
    """A file a walk found and did not read, said on standard error (never silently)."""
    click.echo(printable(f"schedlog: skipped {path}: {why}"), err=True)


def _internal_error(ctx: click.Context) -> None:
    """A bug: said as one, with its traceback, and its own exit status (1 would read as "corrupt")."""
    import traceback

    click.echo(traceback.format_exc(), err=True, nl=False)
    click.echo(f"schedlog: internal error (exit {INTERNAL_ERROR}): please report it with the lines above", err=True)
    ctx.exit(INTERNAL_ERROR)


def _output_failed(err: OSError) -> None:
    """Standard output could not be written (a full disk, say): say so on standard error, and
    point standard output at /dev/null so that the exit's final flush cannot fail again."""
    click.echo(f"schedlog: cannot write the output: {err.strerror or err}", err=True)
    stdout_to_devnull()


_TYPED_INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?(Z|[+-]\d\d:\d\d)")


def typed_instant(text: str) -> int | None:
    """An instant a person types on the command line, in epoch ms: the canonical form a log
    holds (`2026-08-05T12:00:00.000Z`), or with fewer or no fractional digits and an offset
    (`2026-08-05T12:00:00Z`, `2026-08-05T14:00:00+02:00`); None for anything else. (A log's
    instants keep their canonical form: this is for options only.)"""
    from invariant import parse_instant

    canonical = parse_instant(text)
    if canonical is not None or not _TYPED_INSTANT.fullmatch(text):
        return canonical
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return (moment - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)


def _show_version(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    """--version: the versions are read only when asked for (they load the zone tables)."""
    if value and not ctx.resilient_parsing:
        click.echo(_versions())
        ctx.exit()


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="Show the version and exit.",
)
def main() -> None:
    """Verify and replay the schedule/change event log of agent sessions."""
    if sys.stdout is None:  # started with file descriptor 1 closed: every command's output would vanish
        click.echo("schedlog: cannot write the output: standard output is closed", err=True)
        sys.exit(2)
    _escape_unencodable_output()


def _escape_unencodable_output() -> None:
    """Write text that has no UTF-8 form as a backslash escape instead of failing.

    A session id or prompt may hold a lone surrogate (a JavaScript string can), and a file name
    undecodable bytes; printing them must not end in a traceback. In JSON output the escape
    written is the JSON escape of the same code unit.
    """
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")


@main.command(epilog=EXIT_HELP)
@click.argument("paths", nargs=-1)
@format_option(*REPORT_FORMATS, Format.PARQUET)
@click.option(
    "--output",
    type=click.Path(file_okay=False),
    default=None,
    help=(
        "With --format parquet: the directory the verdict part is written into (verdicts.parquet, or "
        "verdicts-shard-I-of-N.parquet: a re-run replaces it; another run's parts there are refused)."
    ),
)
@reading_options()
@click.option("--now", default=None, help="Host stores: warn of active tasks overdue at this canonical instant.")
@click.option(
    "--delivery-history-days",
    type=click.IntRange(1, DAYS_MAX),
    default=None,
    help="Host stores: the retention in days.",
)
@click.option(
    "--delivery-history-records",
    type=click.IntRange(1, RECORDS_MAX),
    default=None,
    help="Host stores: records kept per task.",
)
@TOOL_SURFACE
@JOBS
@click.option("--quiet", "-q", is_flag=True, help="Text: print only the sessions that are not ok, then the summary.")
@click.option(
    "--all-findings",
    is_flag=True,
    help="Text: print every finding (else at most 10 of a code a log, then how many more; other formats hold all).",
)
@cache_options
@click.option("--verbose", "-v", is_flag=True, help="Say, on standard error, why a log the cache held was read whole.")
@selection_options
def verify(
    paths: tuple[str, ...],
    fmt: Format,
    output: str | None,
    reading: Reading,
    jobs: int,
    quiet: bool,
    all_findings: bool,
    now: str | None,
    delivery_history_days: int | None,
    delivery_history_records: int | None,
    tool_surface: str,
    cache: Path | None,
    verbose: bool,
) -> None:
    """Check session logs (files, directories, or - for stdin) and Host task stores against the
    schedule protocol."""
    from invariant.retention import Retention
    from replay.audit.auditrun import verify_paths
    from replay.cli.output import reports as report_output
    from replay.logs.discover import STDIN, discover, is_url

    if (fmt is Format.PARQUET) != (output is not None):
        raise click.UsageError("--format parquet and --output DIR go together")
    shard = click.get_current_context().params.get("shard")  # (the selection took the logs of it)
    if output is not None:
        from replay.duck.verdicts import other_runs_parts, part_name

        if others := other_runs_parts(output, shard):
            raise InputError(
                printable(
                    f"{output} holds verdict parts of another run ({', '.join(others[:3])}): remove them or "
                    "choose another folder (a re-run replaces its own part; the shards of one split sit side by side)"
                )
            )
    reading = _judging(reading, now, tool_surface, Retention(delivery_history_days, delivery_history_records))
    files = list(discover(paths, stores=True, skipped=_say_skipped))
    stdin = _stdin() if STDIN in paths else None
    if not files and paths:  # (no paths at all: a shard that holds none of the logs, judged as such)
        raise nothing_found(paths, stores=True)
    started, clock = datetime.now(UTC), time.perf_counter()
    with _progress(files, "reading") as progress:
        audit = verify_paths([p for p in files if p != STDIN], reading, jobs, stdin, progress, cache)
    if verbose:
        _say_cache_misses(audit.held)
    run = report_output.Run(started, time.perf_counter() - clock)
    if output is not None:
        from replay.duck.verdicts import write_verdicts  # DuckDB loads for Parquet output only

        if is_url(output):  # one object, one PUT: whole or absent
            part = write_verdicts(audit.reports, output, name=part_name(shard))
        else:
            with _writing(Path(output)):
                part = write_verdicts(audit.reports, Path(output), name=part_name(shard))
        say(printable(f"{report_output.summary_line(audit.held)}; verdicts {part}"))
    elif fmt is Format.TEXT:  # (a cache hit's report is not made again: its text was kept)
        emit([report_output.text(audit.held, quiet, audit.lenient_hint(reading), all_findings)])
    else:
        _report(audit.reports, fmt, run)
    sys.exit(audit.exit_status)


def _judging(reading: Reading, now: str | None, tool_surface: str, retention: Any = None) -> Reading:
    """`reading` with the judging options of verify and watch: --now (an instant typed as a
    person types it), --tool-surface, and the Host stores' retention where given."""
    now_ms = None if now is None else typed_instant(now)
    if now is not None and now_ms is None:
        raise click.UsageError(f"--now {now!r} is not an instant such as 2026-08-05T12:00:00Z (or .000Z)")
    surface = None if tool_surface == AUTO else tool_surface
    judged = dataclasses.replace(reading, now=now_ms, tool_surface=surface)
    return judged if retention is None else dataclasses.replace(judged, retention=retention)


def _report(
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

        with _writing(Path(target)), open(target, "a", encoding="utf-8", errors="backslashreplace") as f:
            f.write(step_summary(reports))


@contextmanager
def _progress(files: Sequence[str], label: str) -> Iterator[Callable[[int], None] | None]:
    """A byte progress bar on stderr for large inputs on a terminal; None otherwise."""
    if not sys.stderr.isatty():
        yield None
        return
    from replay.audit.fanout import file_size as _size
    from replay.logs.discover import STDIN

    total = sum(_size(p) for p in files if p != STDIN)
    if total < PROGRESS_BYTES:
        yield None
        return
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar.update


@contextmanager
def _sessions_progress(count: int, label: str) -> Iterator[Callable[[int], None] | None]:
    """A progress bar of sessions on stderr when it is a terminal (a fleet's remote logs have no
    size to count by); None otherwise."""
    if not sys.stderr.isatty():
        yield None
        return
    with click.progressbar(length=count, label=label, file=sys.stderr, show_pos=True) as bar:
        yield bar.update


def _exit(reports: Sequence[SessionReport]) -> None:
    """Exit as the sessions' verdicts say (replay.exitstatus.EXIT_ORDER)."""
    _exit_for([r.verdict for r in reports])


def _exit_for(verdicts: Sequence[str]) -> None:
    sys.exit(exit_status(verdicts))


def _read_input(path: str) -> Data:
    from replay.logs.bytesource import read_stream
    from replay.logs.discover import STDIN

    if path == STDIN:
        return _stdin()
    with _reading(path), open(path, "rb") as f:
        return read_stream(f)


def _stdin() -> Data:
    """Standard input, whole (bounded by MAX_STREAM)."""
    from replay.logs.bytesource import read_stream

    if sys.stdin is None:  # started with file descriptor 0 closed
        raise InputError("cannot read standard input: it is closed")
    with _reading("standard input"):
        return read_stream(sys.stdin.buffer)


@contextmanager
def _reading(what: str) -> Iterator[None]:
    """An input that cannot be read (or held) is a usage error (exit 2), not a traceback."""
    try:
        yield
    except OSError as err:
        raise InputError(f"cannot read {what}: {err.strerror or err}") from None
    except MemoryError:
        raise InputError(f"cannot read {what}: not enough memory to hold it") from None


OBJECT_POLL = 10.0
"""How often `watch` lists an object store's prefix again where --poll does not say (a listing
is one request a thousand objects; an unchanged object is not read)."""


@main.command(epilog=EXIT_HELP.replace("Exit ", "With --until-idle, exit ", 1) + " Ctrl-C exits 130, SIGTERM 143.")
@click.argument("paths", nargs=-1, required=True)
@format_option(Format.TEXT, Format.JSON, Format.GITHUB)
@reading_options()
@click.option("--now", default=None, help="Host-era checks: the canonical instant to judge at.")
@TOOL_SURFACE
@click.option(
    "--poll",
    type=click.FloatRange(min=0.05),
    default=None,
    help=(
        "Look at every log each SECONDS instead of waiting on file events (network file systems; "
        f"an object store's URL is polled every {OBJECT_POLL:g} s unless this says otherwise)."
    ),
)
@click.option(
    "--until-idle",
    "idle",
    type=click.FloatRange(min=0.05),
    default=None,
    help="Exit once no log changed for SECONDS, with verify's exit status for the logs as they then stand.",
)
def watch(
    paths: tuple[str, ...],
    fmt: Format,
    reading: Reading,
    now: str | None,
    tool_surface: str,
    poll: float | None,
    idle: float | None,
) -> None:
    """Follow session logs (files, folders, object-store prefixes) as they are written: print each
    new finding, and a log's verdict whenever it changes, reading only what was appended (an
    object, replaced whole, is read again when its ETag changes).

    A torn last line waits for its LF; a log truncated, replaced or edited is read again from
    its start (`read again`); a log removed says `gone`; new logs in a watched folder are picked
    up. What was printed of a log since it was last read again is what `verify` says of it.
    """
    from replay.audit.watching import Watch, follow
    from replay.cli.output.watched import render_event, watch_summary
    from replay.logs.discover import is_url

    for p in paths:
        if p == "-":
            raise click.UsageError("watch follows files and folders, not standard input")
        if os.path.basename(p) == "schedule.json":
            raise click.UsageError(f"{p}: watch follows session logs; verify judges a Host task store")
        if is_url(p):  # an object store sends no events: it is listed again every --poll seconds
            poll = OBJECT_POLL if poll is None else poll
        elif not os.path.isdir(p) and not os.path.isdir(os.path.dirname(os.path.abspath(p))):
            raise click.UsageError(f"{p}: no such file or folder (a file not yet written needs its folder)")
    reading = _judging(reading, now, tool_surface)
    colour = fmt is Format.TEXT and to_terminal()
    told = 0

    def tell(event: Any) -> None:
        nonlocal told
        told += 1
        text = render_event(event, fmt, colour)
        if text:
            sys.stdout.write(text)
            sys.stdout.flush()

    watched = Watch(tuple(paths), reading, skipped=_say_skipped)
    _terminate_cleanly()
    status = 0
    try:
        follow(watched, tell, poll, idle)
        status = exit_status(watched.verdicts())
    except (KeyboardInterrupt, SystemExit):  # the wait for file events turns every signal into the first
        status = 128 + (SIGNALS[-1] if SIGNALS else signal.SIGINT)
    summary = watch_summary(watched.verdicts(), told)
    click.echo(printable(summary), err=fmt is not Format.TEXT)
    sys.exit(status)


@main.command(epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, required=True)
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="The HTML file to write.")
@click.option("--title", default="schedlog report", show_default=True, help="The page title.")
@reading_options()
@JOBS
@cache_options
def report(paths: tuple[str, ...], output: str, title: str, reading: Reading, jobs: int, cache: Path | None) -> None:
    """Write one self-contained HTML report (no network, works from file://): a fleet page of
    every session's verdict, and per session a timeline with one lane per schedule id. The
    report is written in every case but a usage error."""
    from replay.atomic import write_atomic
    from replay.audit.sessionview import fleet_views
    from replay.cli.output import html as html_output
    from replay.cli.output import reports as report_output
    from replay.logs.discover import STDIN, discover

    files = [p for p in discover(paths, skipped=_say_skipped) if p != STDIN]
    if not files:
        raise nothing_found(paths, stores=False)
    with _progress(files, "reading") as progress:
        views = list(fleet_views(files, reading, jobs, progress, cache))
    with _writing(Path(output)):
        write_atomic(Path(output), html_output.page(views, title).encode("utf-8"))
    verdicts = [view["verdict"] for view in views]
    _say_unread(_unread_view(view) for view in views if view["verdict"] == "unreadable")
    say(printable(f"{report_output.verdict_summary(verdicts)}; report {output}"))
    _exit_for(verdicts)


@main.command(epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, required=True)
@click.option("--session", "session_id", default=None, help="Only the session with this id (from the header).")
@format_option(Format.TEXT, Format.JSON)
@reading_options()
@cache_options
def explain(paths: tuple[str, ...], session_id: str | None, fmt: Format, reading: Reading, cache: Path | None) -> None:
    """Tell a session's schedule story: for a corrupt one, the rule, the history up to the
    violation, the offending and related events, and what would have been valid instead."""
    from replay.audit.explain import explain_path
    from replay.logs.discover import STDIN, discover

    files = [p for p in discover(paths, skipped=_say_skipped) if p != STDIN]
    if not files:
        raise nothing_found(paths, stores=False)
    try:
        told = [explain_path(p, reading, cache) for p in files]
    finally:
        from replay.audit.cached import let_go

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
    _exit([r for r, _ in told])


@main.group()
def cache() -> None:
    """The verdict cache: what verify, report, explain, replay and fleet keep of the logs they
    read, so that a re-audit reads only what changed (docs/verdict-cache.md)."""


def _cache_dir_option(command: F) -> F:
    return click.option(
        "--cache-dir",
        type=click.Path(file_okay=False),
        default=None,
        help="The cache's folder (default: $SCHEDLOG_CACHE_DIR, else the user cache folder).",
    )(command)


def _opened_cache(cache_dir: str | None) -> Any:
    """The cache's store in `cache_dir` (else the default folder); one that cannot be used is an input error."""
    from replay.audit.cached import default_folder, open_store

    store, problem = open_store(Path(cache_dir) if cache_dir else default_folder())
    if store is None:
        raise InputError(printable(problem))
    return store


@cache.command("info")
@_cache_dir_option
def cache_info(cache_dir: str | None) -> None:
    """Where the cache is, how many entries it holds and their size, and its bound."""
    with closing(_opened_cache(cache_dir)) as store:
        info = store.info()
    say(printable(f"folder: {info.folder}"))
    say(f"entries: {info.entries:,}")
    say(f"size: {info.bytes / 2**20:,.1f} MiB of entries ({info.file_bytes / 2**20:,.1f} MiB on disk)")
    say(f"bound: {info.limit / 2**20:,.0f} MiB (least recently used entries go past it; $SCHEDLOG_CACHE_LIMIT_MB)")


@cache.command("clear")
@_cache_dir_option
def cache_clear(cache_dir: str | None) -> None:
    """Delete every entry of the cache."""
    with closing(_opened_cache(cache_dir)) as store:
        count = store.clear()
    say(f"cleared {count:,} entries from {printable(str(store.folder))}")


@main.command()
@click.argument("log")
@click.argument("candidate")
@format_option(*VERDICT_FORMATS)
@reading_options(ideal=True)
def check(log: str, candidate: str, fmt: Format, reading: Reading) -> None:
    """May CANDIDATE be appended to LOG? CANDIDATE is a file or - holding a schedule/change
    payload or a whole event. Exit 0 accepted, 1 rejected, 2 usage or unreadable input."""
    from replay.audit.candidate import CandidateInputError, check_log_candidate
    from replay.cli.output import verdicts as verdict_output
    from replay.logs.discover import STDIN

    if log == STDIN and candidate == STDIN:
        raise click.UsageError("LOG and CANDIDATE cannot both be standard input")
    raw = bytes(_read_input(candidate))  # a candidate is one small value
    log_data = _read_input(log) if log == STDIN else None
    try:
        verdict = check_log_candidate("<stdin>" if log == STDIN else log, raw, reading, log_data)
    except CandidateInputError as err:
        raise InputError(str(err)) from None
    emit(verdict_output.candidate_chunks(verdict, fmt))
    sys.exit(0 if verdict.accepted else 1)


@main.command()
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
    from replay.audit.cronreport import describe_cron
    from replay.cli.output import verdicts as verdict_output

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


@main.command()
@click.argument("log", type=click.Path(dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Where the shrunk log is written.")
@click.option("--redact", is_flag=True, help="Replace prompts and free text by same-length placeholders.")
@reading_options()
def shrink(log: str, output: str, redact: bool, reading: Reading) -> None:
    """Cut a corrupt LOG down to the fewest lines that keep its verdict and rule (its seqs
    renumbered), for a bug report; with --redact, without its conversation. The shrunk log is
    verified again before it is written."""
    from replay.atomic import write_atomic
    from replay.audit.shrink import CannotShrink, shrink_path, summary

    try:
        shrunk = shrink_path(log, reading, redact)
    except CannotShrink as err:
        raise InputError(printable(f"{log}: {err}")) from None
    with _writing(Path(output)):
        write_atomic(Path(output), shrunk.data)
    say(printable(f"{summary(shrunk)}; written to {output}"))


@main.command()
@click.option("--out", type=click.Path(file_okay=False), default="schemas", show_default=True)
@click.option("--check", is_flag=True, help="Compare instead of writing; exit 1 on any difference.")
@click.option(
    "--vendored",
    is_flag=True,
    help="With --check: OUT holds a project's copy of some schemas; check those it holds, miss none of the rest.",
)
def schemas(out: str, check: bool, vendored: bool) -> None:
    """Write the v1 JSON Schemas (generated from the decoder's shapes) into OUT."""
    from replay.schemafiles import stale_schemas, write_schemas

    target = Path(out)
    if vendored and not check:
        raise click.UsageError("--vendored goes with --check")
    if check:
        problems = stale_schemas(target, vendored)
        for problem in problems:
            say(f"stale: {target / problem}")
        if problems:
            click.echo("run `schedlog schemas` to regenerate", err=True)
            sys.exit(1)
        say(f"{target}: up to date")
        return
    with _writing():
        written, removed = write_schemas(target)
    for path in written:
        say(f"wrote {path}")
    for path in removed:
        say(f"removed {path} (not generated by this version)")


@contextmanager
def _writing(target: Path | None = None) -> Iterator[None]:
    """An output that cannot be written is a usage error (exit 2), not a traceback. It names
    `target` when given (not the temporary file an atomic write failed on)."""
    try:
        yield
    except OSError as err:
        where = target or err.filename or "the output"
        raise InputError(f"cannot write {where}: {err.strerror or err}") from None


def _terminate_cleanly() -> None:
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


@main.command(epilog=EXIT_HELP)
@click.argument("paths", nargs=-1)
@click.option("--db", "db", type=click.Path(dir_okay=False), required=True, help="The DuckDB file to (re)create.")
@format_option(*REPORT_FORMATS)
@reading_options()
@JOBS
@click.option("--parquet", type=click.Path(file_okay=False), default=None, help="Also write every table as Parquet.")
@click.option(
    "--rebuild", is_flag=True, help="Build the database anew, even where it could take only what changed in the logs."
)
@cache_options
@selection_options
def replay(
    paths: tuple[str, ...],
    db: str,
    fmt: Format,
    reading: Reading,
    jobs: int,
    parquet: str | None,
    rebuild: bool,
    cache: Path | None,
) -> None:
    """Replay session logs into a DuckDB database for inspection (written atomically, also when
    a session is corrupt). Into a database an earlier replay made (same schedlog, same reading
    options), only what changed in the logs is read and written: new logs, grown ones, edited
    ones; logs no longer given are removed. Text output is one summary line; the other formats
    give each session's report, as verify does."""
    import duckdb

    from replay.cli.output import reports as report_output
    from replay.duck.build import TargetError
    from replay.duck.build import replay as replay_logs
    from replay.logs.discover import STDIN, discover

    _terminate_cleanly()
    started, clock = datetime.now(UTC), time.perf_counter()
    files = list(discover(paths, stores=True, skipped=_say_skipped))  # logs and Host stores
    if not files:
        raise nothing_found(paths, stores=True)
    stdin = _stdin() if STDIN in paths else None
    try:
        with _progress(files, "replaying") as progress:
            reports, changed = replay_logs(
                files,
                Path(db),
                reading=reading,
                jobs=jobs,
                stdin=stdin,
                parquet=Path(parquet) if parquet else None,
                progress=progress,
                cache=cache,
                rebuild=rebuild,
            )
    except TargetError as err:  # raised before any work: the target is left as it was
        raise InputError(str(err)) from None
    except (RuntimeError, duckdb.Error, OSError) as err:
        if SIGNALS:  # DuckDB reports the interrupted query; the earlier database is untouched
            sys.exit(128 + SIGNALS[0])
        if _interrupted(err):  # Ctrl-C during one of DuckDB's statements: as any other Ctrl-C
            raise
        kept = f", {db} left as it was" if Path(db).exists() else ""
        click.echo(printable(f"replay failed{kept}: {err}"), err=True)
        sys.exit(2)
    where = f"; database {db}" + (f" ({changed})" if changed else "") + (f", parquet {parquet}" if parquet else "")
    summary = report_output.summary_line(reports) + where
    if fmt is Format.TEXT:  # (the other formats name every report, these among them)
        from replay.audit.textline import text_line

        _say_unread(text_line(r) for r in reports if r.verdict == "unreadable")
    _report(reports, fmt, report_output.Run(started, time.perf_counter() - clock), summary)
    _exit(reports)


@main.command()
@click.argument("db", type=click.Path(dir_okay=False))
@click.argument("query")
@format_option(*ROW_FORMATS)
@click.option(
    "--allow-external-access",
    is_flag=True,
    help="Let the query read and write other files, attach databases and install extensions.",
)
def sql(db: str, query: str, fmt: Format, allow_external_access: bool) -> None:
    """Run one SQL QUERY against a replay database (opened read-only).

    The query sees the database alone: DuckDB's access to other files, databases and extensions
    is off and its configuration locked, unless --allow-external-access."""
    from replay.cli.output import rows as row_output
    from replay.duck.query import QueryError, query_rows

    try:
        with query_rows(Path(db), query, external_access=allow_external_access) as rows:
            emit(row_output.render_chunks(rows, fmt, to_terminal()))  # written as the rows arrive (json, jsonl, csv)
    except QueryError as err:
        raise InputError(str(err)) from None


@main.command()
@click.argument("db", type=click.Path(dir_okay=False))
@format_option(Format.TEXT, Format.JSON)
def inspect(db: str, fmt: Format) -> None:
    """A short summary of a replay database: verdicts, rules violated, active reminders."""
    from replay.cli.output import rows as row_output
    from replay.duck.query import QueryError, inspect_db

    try:
        emit(row_output.inspection_chunks(inspect_db(Path(db)), fmt))
    except QueryError as err:
        raise InputError(str(err)) from None


@main.command(epilog=EXIT_HELP)
@click.argument("paths", nargs=-1, required=True)
@click.option(
    "--output",
    type=click.Path(file_okay=False),
    required=True,
    help="The directory of Parquet parts, replaced as a whole (one holding other files is refused).",
)
@click.option("--workers", type=click.IntRange(min=1), default=2, show_default=True, help="Local worker processes.")
@click.option("--scheduler", default=None, help="The address of a running Dask scheduler (instead of a local one).")
@reading_options()
@cache_options
def fleet(
    paths: tuple[str, ...], output: str, workers: int, scheduler: str | None, reading: Reading, cache: Path | None
) -> None:
    """Verify a fleet of logs (paths, directories, globs or fsspec URLs such as s3://bucket/logs/)
    on a Dask cluster; each task writes a Parquet part of verdict rows into OUTPUT, read them
    with read_parquet('OUTPUT/**/*.parquet'). Needs schedlog[dask]."""
    from replay.logs.bytesource import is_stream
    from replay.logs.discover import STDIN, is_url

    try:
        from replay.fleet.engine import expand, run_fleet
    except ImportError as err:  # the engine is an extra
        raise InputError(f"schedlog fleet needs the dask extra (pip install 'schedlog[dask]'): {err}") from None
    if STDIN in paths:
        raise click.UsageError("a fleet is read from paths and URLs, not from standard input")
    found = expand(paths, skipped=_say_skipped)
    if not found:
        raise nothing_found(paths, stores=True)
    streams = [p for p in found if not is_url(p) and is_stream(p)]
    if streams:  # a worker opens each log itself, and a pipe is the caller's alone, read once
        raise click.UsageError(
            printable(f"a fleet's workers open each log themselves, and {streams[0]} is a pipe or device: verify it")
        )
    if scheduler is not None:
        _check_scheduler(scheduler)
    try:
        with _sessions_progress(len(found), "judging") as progress:
            run = run_fleet(
                found, output, reading, workers=workers, scheduler=scheduler, progress=progress, cache=cache
            )
    except (FileNotFoundError, FileExistsError) as err:  # before any work: the output folder cannot be used
        raise InputError(printable(f"cannot write {output}: {err.strerror or err}")) from None
    except (OSError, TimeoutError) as err:  # a scheduler that cannot be reached, a part that cannot be written
        raise InputError(f"the fleet run failed: {err}") from None
    from replay.cli.output import reports as report_output

    told = report_output.reads_told(run.reads)
    _say_unread(run.unread)
    say(printable(f"{report_output.verdict_summary(run.verdicts)}{told}; verdicts in {output}"))
    _exit_for(run.verdicts)


def _check_scheduler(address: str) -> None:
    """A scheduler address whose scheme the engine knows, before anything is written."""
    try:
        from distributed.comm import parse_address, registry
    except ImportError:  # the dask extra is missing: the run says so
        return
    try:
        registry.get_backend(parse_address(address)[0])
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--scheduler") from None


MAX_SIMULATED_EVENTS = 600_000
"""`simulate`'s default bound on appended events: a run holds its whole log and trace in memory,
about 2.5 KB an event (measured: 200,000 events of one `every` record peaked at 0.53 GB RSS), so
the default keeps a run under 2 GB; one that would go further (a century of five-minute
reminders, say) stops with a clear message instead of being killed."""


@main.command()
@click.argument("scenario", type=click.Path(dir_okay=False))
@click.option("--name", default=None, help="Pick one scenario of a JSON-lines file by name.")
@click.option("--log", "log_path", type=click.Path(dir_okay=False), default=None, help="Write the session log here.")
@format_option(Format.TEXT, Format.JSON)
@click.option(
    "--max-events",
    type=click.IntRange(min=0),
    default=MAX_SIMULATED_EVENTS,
    show_default=True,
    help=(
        "Refuse a run that appends more events, or holds more than 1,000 characters of reminder text "
        "per event allowed (it holds its whole log in memory, about 2.5 KB an event)."
    ),
)
@SIMULATED_PROFILE
@click.option(
    "--live-to",
    "live_to",
    type=click.Path(file_okay=False),
    default=None,
    help="Also write the session log into this folder as it happens, each event at its time (for `schedlog watch`).",
)
@click.option(
    "--speed",
    type=click.FloatRange(min=0.001),
    default=60.0,
    show_default=True,
    help="With --live-to: virtual seconds written per real second.",
)
def simulate(
    scenario: str,
    name: str | None,
    log_path: str | None,
    fmt: Format,
    max_events: int,
    profile: str,
    live_to: str | None,
    speed: float,
) -> None:
    """Run the reference live-owner simulator on a SCENARIO (JSON) and print its timeline.

    When the scenario carries `expect`, exit 1 if the run does not meet it. With --live-to DIR,
    the log is also written into DIR/NAME.session.jsonl a line at a time, paced by its events'
    times, while `schedlog watch DIR` follows it.
    """
    from replay.atomic import write_atomic_chunks
    from replay.cli.output.timeline import timeline_lines
    from replay.sim.scenarios import load_scenario, unmet_expectations
    from replay.sim.simulator import Scenario, ScenarioError, TooManyEvents
    from replay.sim.simulator import simulate as run_simulation

    try:
        obj = load_scenario(Path(scenario), name)
        result = run_simulation(Scenario.from_json(obj), profile, max_events)
    except TooManyEvents as err:
        raise InputError(f"{err}; --max-events raises the bound") from None
    except ScenarioError as err:
        raise InputError(str(err)) from None
    if log_path is not None:
        with _writing(Path(log_path)):
            write_atomic_chunks(Path(log_path), result.session_log_lines())
    if live_to is not None:
        from replay.sim.livelog import paced, write_live

        live = Path(live_to) / f"{_file_name(result.header.get('id') or Path(scenario).stem)}.session.jsonl"
        try:
            write_live(live, paced(result.header, result.events, speed))
        except FileExistsError:
            raise InputError(f"{live} exists: a live log is written to a new file") from None
        except OSError as err:
            raise InputError(f"cannot write {live}: {err.strerror or err}") from None
    expect = obj.get("expect")  # an object or null: Scenario.from_json has checked it
    unmet = unmet_expectations(result, expect) if expect is not None else []
    if fmt is Format.JSON:
        out = {**result.expectations(), "timeline": result.timeline, "unmet": unmet}
        import json

        emit(json.JSONEncoder(ensure_ascii=False, indent=2).iterencode(out))
        say()
    else:
        emit(timeline_lines(result))
        if expect is not None:
            say("expectations: " + ("met" if not unmet else "NOT met: " + ", ".join(unmet)))
    sys.exit(1 if unmet else 0)


@main.command()
@click.option("--seed", type=int, default=0, show_default=True, help="First seed; run r uses seed + r.")
@click.option("--runs", type=click.IntRange(min=1), default=200, show_default=True)
@click.option(
    "--steps",
    type=click.IntRange(1, MAX_STEPS),
    default=40,
    show_default=True,
    help=f"Steps per run (at most {MAX_STEPS:,}: a run holds its whole log in memory).",
)
@SIMULATED_PROFILE
def fuzz(seed: int, runs: int, steps: int, profile: str) -> None:
    """Random scenarios checked against the owner's invariants; failures are shrunk.

    Exit 0 when every run holds, 1 when any fails (its seed and a small scenario are printed).
    """
    from replay.sim.fuzz import fuzz as run_fuzz
    from replay.sim.fuzz import scenario_json

    total, failures = run_fuzz(seed, runs, steps, profile)
    again = "schedlog simulate FILE" + ("" if profile == "calendar" else f" --profile {profile}")
    for failure in failures:
        say(f"FAIL seed {failure.seed}:")
        for violation in failure.violations:
            say(f"    {violation.invariant}: {violation.detail}")
        say(f"    shrunk scenario ({again} reproduces it):")
        say("    " + json_text(scenario_json(failure.scenario)))
    say(f"{total} run(s) from seed {seed}: {total - len(failures)} held, {len(failures)} failed")
    sys.exit(1 if failures else 0)


@main.command()
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
