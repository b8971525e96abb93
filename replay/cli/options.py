"""The options several commands share, each defined once so that its meaning cannot drift apart
between commands: the reading options (handed to a command as one `Reading`), the findings
selection, the verdict cache's folder, the path selection (--files-from, --shard)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

import click

from invariant.names import PROFILE_NAMES
from invariant.tools.names import SURFACE_NAMES
from replay.cli.running import read_input, say_skipped
from replay.modes import AUTO, Mode
from replay.terminal import printable

F = TypeVar("F", bound=Callable[..., Any])


# Options shared by several commands, defined once so that their meaning cannot drift apart.
PROFILE = click.option(
    "--profile",
    type=click.Choice([AUTO, *PROFILE_NAMES]),
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
    type=click.Choice(list(PROFILE_NAMES)),
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
        from replay.sources.discover import STDIN, discover, in_shard, read_path_list

        paths = list(kwargs.pop("paths"))
        listed = kwargs.pop("files_from")
        if listed is not None:
            if listed == STDIN and STDIN in paths:
                raise click.UsageError("standard input cannot hold both the list of paths and a log")
            text = read_input(listed)
            paths += read_path_list(bytes(text).decode("utf-8", "surrogateescape"))
        if not paths:
            raise click.UsageError("name the logs: PATHS, or --files-from LIST")
        if any("\0" in p for p in paths):  # no file's name holds one; the system refuses it
            raise click.UsageError("a path holds a NUL byte (a --files-from list is one path per line)")
        shard = kwargs.pop("shard")
        if shard is not None:  # by each file's path as discovered, so that a directory is split too
            index, count = shard
            found = discover(paths, stores=True, skipped=say_skipped)
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


def reading_options(*, logs: bool = True, ideal: bool = False, selection: bool = True) -> Callable[[F], F]:
    """The reading options a command takes (--profile; with `logs`, --mode and --seed-length,
    and with `selection` the findings it reports; with `ideal`, --ideal), handed to it as one
    `reading` (a Reading, checked once here). Without `selection` every finding counts, whatever
    a configuration file says (repair: a finding ignored is still a refusal of the harness)."""

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def with_reading(*args: Any, **kwargs: Any) -> Any:
            import dataclasses

            from replay.reading import Reading

            reading = Reading.of(
                kwargs.pop("profile"),
                kwargs.pop("mode", Mode.STRICT),
                kwargs.pop("seed_length", None),
                kwargs.pop("ideal", False),
            )
            if logs and selection:
                chosen = _selection(*(kwargs.pop(k) for k in ("select", "ignore", "config", "isolated")))
                reading = dataclasses.replace(reading, selection=chosen)
            return command(*args, reading=reading, **kwargs)

        options = [
            PROFILE,
            *((MODE, SEED_LENGTH) if logs else ()),
            *((IDEAL,) if ideal else ()),
            *(SELECTION if logs and selection else ()),
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
    from pathlib import Path

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
        from pathlib import Path

        from replay.cache.cached import default_folder, let_go, usable

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
