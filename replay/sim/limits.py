"""The simulator's bounds, light enough for the command line to state without loading it."""

from __future__ import annotations

MAX_STEPS = 10_000
"""The most steps one fuzz run may have: a run holds its whole log in memory (10,000 steps: up
to about a million events and 2 GB)."""
