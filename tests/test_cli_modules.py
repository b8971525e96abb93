"""The command line is one module per command (or group of commands), each imported only when
its command runs or the command list is shown (replay/cli/group.py): a run loads the options
and the code of its own command, not the judge of another or DuckDB (start-up, issue 65)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import click
import pytest

from replay.cli import main
from replay.cli.group import COMMANDS

CLI = Path(__file__).resolve().parent.parent / "replay" / "cli"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_listed_command_is_the_function_of_its_name_in_its_module(name: str) -> None:
    command = main.get_command(click.Context(main), name)
    assert isinstance(command, click.Command) and command.name == name
    assert command.callback is not None and command.short_help  # (its first sentence, whole)


def test_every_command_defined_in_the_folder_is_listed() -> None:
    defined = set()
    for path in CLI.glob("*.py"):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef) and any(
                isinstance(d, ast.Call) and ast.unparse(d.func) in ("click.command", "click.group")
                for d in node.decorator_list
            ):
                defined.add((node.name, f"replay.cli.{path.stem}"))
    assert defined - {("main", "replay.cli.group")} == set(COMMANDS.items())


def test_no_command_module_is_over_400_lines() -> None:
    sizes = {p.name: len(p.read_text().splitlines()) for p in CLI.glob("*.py")}
    assert max(sizes.values()) <= 400, sizes


def _loaded_by(*args: str) -> set[str]:
    """The modules of schedlog a fresh process has loaded once `schedlog ARGS` ran."""
    code = (
        "import sys\n"
        f"sys.argv = ['schedlog', *{list(args)!r}]\n"
        "from replay.entry import run\n"
        "try:\n    run()\nexcept SystemExit:\n    pass\n"
        "ours = ('replay', 'invariant', 'duckdb', 'msgspec')\n"
        "sys.stderr.write(' '.join(m for m in sys.modules if m.split('.')[0] in ours))"
    )
    return set(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stderr.split())


def test_a_commands_help_loads_its_own_module_alone() -> None:
    loaded = _loaded_by("verify", "--help")
    commands = {m for m in loaded if m.startswith("replay.cli.") and m.count(".") == 2}
    assert "replay.cli.verify" in commands
    assert not commands & {f"replay.cli.{m.split('.')[-1]}" for m in COMMANDS.values()} - {"replay.cli.verify"}
    for heavy in ("duckdb", "msgspec", "replay.judge.verify", "replay.reading", "invariant.profiles"):
        assert heavy not in loaded, heavy


def test_the_command_list_loads_every_command_module_and_no_judge() -> None:
    loaded = _loaded_by("--help")
    assert {m for m in COMMANDS.values()} <= loaded
    assert "duckdb" not in loaded and "replay.judge.verify" not in loaded
