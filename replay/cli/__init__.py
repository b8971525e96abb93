"""The `schedlog` command line and its one output layer."""

from replay.cli.commands import main

__all__ = ["main"]
