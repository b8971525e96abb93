"""`schedlog cache info|clear`: the verdict cache's folder."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Any

import click

from replay.cli.options import F
from replay.cli.running import InputError, say
from replay.terminal import printable


@click.group()
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
    from replay.cache.cached import default_folder, open_store

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
