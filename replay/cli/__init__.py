"""The `schedlog` command line: one module per command (or group of commands), loaded when the
command runs (replay/cli/group.py), and its one output layer (replay/cli/output/).

Imports every room below it, each command one library call; nothing imports it but the console script."""

from replay.cli.group import main

__all__ = ["main"]
