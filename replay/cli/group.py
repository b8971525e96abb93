"""The `schedlog` command group. Each command lives in its own module of this folder and is
imported only when it runs (or when the command list is shown): `schedlog verify --help` loads
verify's options alone, not the judge, DuckDB or the simulator."""

from __future__ import annotations

import errno
import importlib
import io
import re
import sys
from typing import Any

import click

from replay.cli.output import stdout_to_devnull
from replay.cli.running import was_interrupted
from replay.exitstatus import INTERNAL_ERROR


def _version(name: str) -> str:
    from replay.cli.output.reports import installed_version

    return installed_version(name)


def _versions() -> str:
    from invariant.zones import icu_version

    v = _version
    return f"schedlog {v('schedlog')} (tzdata {v('tzdata')}; zone names as ICU {icu_version()})"


COMMANDS = {
    "cache": "replay.cli.cache",
    "check": "replay.cli.check",
    "conform": "replay.cli.conform",
    "cron": "replay.cli.cron",
    "explain": "replay.cli.explain",
    "fleet": "replay.cli.fleet",
    "fuzz": "replay.cli.simulate",
    "inspect": "replay.cli.duck",
    "replay": "replay.cli.duck",
    "repair": "replay.cli.repair",
    "report": "replay.cli.report",
    "schemas": "replay.cli.schemas",
    "shrink": "replay.cli.shrink",
    "simulate": "replay.cli.simulate",
    "sql": "replay.cli.duck",
    "verify": "replay.cli.verify",
    "watch": "replay.cli.watch",
}
"""Each command's name and the module that defines it (as a function of the same name)."""


class _Commands(click.Group):
    """The command group. A command is imported when it is asked for (click's lazy-group
    pattern), so a run loads one command's module. A command interrupted by Ctrl-C exits 130
    (128 + SIGINT, as shells report it), not click's 1: for `verify` and `replay`, 1 means that
    violations were found. The command list gives each command's first sentence whole (click
    cuts it at 45 characters)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMANDS.get(cmd_name)
        if module is None:
            return None
        command = getattr(importlib.import_module(module), cmd_name)
        assert isinstance(command, click.Command), (module, cmd_name)
        if command.short_help is None and command.help:
            command.short_help = first_sentence(command.help)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit):
            raise
        except (KeyboardInterrupt, RuntimeError) as err:
            from replay.audit.fanout import WorkerDied

            if isinstance(err, WorkerDied) and not was_interrupted(err):
                click.echo(f"schedlog: {err}", err=True)
                ctx.exit(INTERNAL_ERROR)
            if not was_interrupted(err):
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


def every_command() -> dict[str, click.Command]:
    """Every command by its name, each module loaded (the command list, the docs, the tests)."""
    ctx = click.Context(main)
    return {name: command for name in main.list_commands(ctx) if (command := main.get_command(ctx, name))}
