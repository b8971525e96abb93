"""Which findings a run reports: `--select` / `--ignore` on the command line, or `select` /
`ignore` under `[tool.schedlog]` in the nearest `pyproject.toml` (issue 54), as ruff selects rules.

A selector is a finding code or a prefix of one at a dot: `format.header` selects
`format.header` and `format.header.placeholder`, not `format.headerless`. With `select`, only
the findings it names are reported; `ignore` drops those it names (it wins over `select`). A
selection says what is reported of a log, not what the log is: it never changes a verdict or an
exit status, and a violation (the rule an event broke, which makes the log corrupt) is always
reported; a refused log whose refusal's findings are dropped is still corrupt.

The configuration is the first `pyproject.toml` holding a `[tool.schedlog]` table, looked for in
the current folder and then each folder above it (`--config FILE` names another file: a
`pyproject.toml`, or any TOML file whose top level holds the keys; `--isolated` reads none). A
command-line option replaces the configuration's value of the same name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from replay.reading import EVERYTHING, Selection

KEYS = ("select", "ignore")
_SELECTOR = re.compile(r"[a-z][a-z0-9_-]*(\.[a-z0-9_-]+)*")


class ConfigError(ValueError):
    """A configuration file or a selector that cannot be used (the command line says why: exit 2)."""


def selectors(text: str, where: str) -> tuple[str, ...]:
    """The selectors of a comma-separated list (`where`: the option or key, for the message)."""
    return checked([part.strip() for part in text.split(",") if part.strip()], where)


def checked(values: object, where: str) -> tuple[str, ...]:
    """`values` as selectors, each a known finding code or a prefix of one at a dot
    (`format.header`, `delivery`); ConfigError else, naming the nearest known ones (as ruff
    refuses an unknown rule: a misspelt selector would select nothing, silently)."""
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ConfigError(f'{where} takes a list of finding codes, such as ["format.header"], not {values!r}')
    for value in values:
        if not _SELECTOR.fullmatch(value):
            raise ConfigError(f"{where}: {value!r} is no finding code (such as format.header or delivery)")
        from replay.judge.rules import known, nearest  # (read only where a selection is given)

        if not known(value):
            near = nearest(value)
            hint = f"; did you mean {' or '.join(near)}?" if near else " (docs/verify.md lists the codes)"
            raise ConfigError(f"{where}: {value!r} names no finding code or prefix of one{hint}")
    return tuple(values)


def found_config(start: Path) -> Path | None:
    """The first `pyproject.toml` holding `[tool.schedlog]`, from `start` upwards (None: none)."""
    for folder in (start, *start.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file() and _schedlog_table(_read(candidate)) is not None:
            return candidate
    return None


def _read(path: Path) -> dict[str, Any]:
    """A TOML file's content; ConfigError where it cannot be read or is no TOML."""
    import tomllib

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read the configuration {path}: {getattr(err, 'strerror', None) or err}") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"the configuration {path} is not TOML: {err}") from None


def _schedlog_table(data: dict[str, Any]) -> dict[str, Any] | None:
    tool = data.get("tool")
    table = tool.get("schedlog") if isinstance(tool, dict) else None
    return table if isinstance(table, dict) else None


def configured(config: Path | None, isolated: bool, cwd: Path) -> tuple[Selection, Path | None]:
    """The selection the configuration gives (`config`: named on the command line, its
    `[tool.schedlog]` or, for a file of another name than pyproject.toml, its top level; else
    the one found from `cwd` upwards, unless `isolated`), and the file it came from."""
    path = config if config is not None else None if isolated else found_config(cwd)
    if path is None:
        return EVERYTHING, None
    data = _read(path)
    table = _schedlog_table(data)
    if table is None:
        table = {} if path.name == "pyproject.toml" else data
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ConfigError(f"{path}: unknown key {unknown[0]!r} for schedlog (known: {', '.join(KEYS)})")
    where = f"{path}: [tool.schedlog]"
    select, ignore = (checked(table.get(key, []), f"{where} {key}") for key in KEYS)
    return Selection(select, ignore), path


def selection(select: str | None, ignore: str | None, config: Path | None, isolated: bool, cwd: Path) -> Selection:
    """The run's selection: the command line's `--select` / `--ignore` (comma-separated), each
    replacing the configuration's value of the same name."""
    base, _ = configured(config, isolated, cwd)
    return Selection(
        base.select if select is None else selectors(select, "--select"),
        base.ignore if ignore is None else selectors(ignore, "--ignore"),
    )
