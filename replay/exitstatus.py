"""The exit status of a run that judges sessions, by the verdicts it gave: the one table every
reading command (verify, replay, report, explain, fleet) exits by and states in its help.
Light on purpose: the command line imports it before any judge is loaded."""

from __future__ import annotations

from collections.abc import Iterable

EXIT_ORDER = (
    ("unreadable", 2, "any session is unreadable (or on a usage error)"),
    ("corrupt", 1, "any is corrupt"),
    ("unsupported", 3, "any has a format too new to judge"),
)
"""(verdict, exit status, when), the first that applies wins; 0 when none does (every session ok)."""
INTERNAL_ERROR = 70
"""A bug in schedlog (EX_SOFTWARE of sysexits.h), never a verdict: 1 would read as "corrupt"."""
EXIT_HELP = (
    "Exit "
    + ", else ".join(f"{status} when {when}" for _, status, when in EXIT_ORDER)
    + f", else 0; {INTERNAL_ERROR} on an internal error."
)


SIGNALS: list[int] = []
"""The signals that ended or interrupt this run (SIGINT, SIGTERM, SIGHUP), as they arrived: a
run that heard Ctrl-C exits 130 whichever part of it noticed first (a worker pool broken by
the same SIGINT may report before the KeyboardInterrupt does)."""


def interrupted(signum: int, frame: object) -> None:
    """The SIGINT handler of a run: Python's own, with the signal noted in SIGNALS."""
    SIGNALS.append(signum)
    raise KeyboardInterrupt


def exit_status(verdicts: Iterable[str]) -> int:
    """The run's exit status (EXIT_ORDER)."""
    given = set(verdicts)
    return next((status for verdict, status, _ in EXIT_ORDER if verdict in given), 0)
