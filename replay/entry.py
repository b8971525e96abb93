"""The `schedlog` console script. Ctrl-C is noted from its first instant: loading the command
line takes a few tenths of a second, and a KeyboardInterrupt there printed a traceback. A run
that heard Ctrl-C exits 130 (128 + SIGINT, as shells report it), whichever part of it noticed:
click's own "Aborted!" while it parses exits 1, which would read as "corrupt".

The objects alive once the command line has loaded (its modules) and once the command has run
are frozen out of the garbage collector (`gc.freeze`): the collections of a run need not walk
the modules again, and the interpreter's exit need not walk everything a last time, which cost
a run the verdict cache answers about 6 of its 125 ms. Nothing of schedlog waits on a collection
to flush or close a file: outputs are closed where they are written."""

from __future__ import annotations

import gc
import signal
import sys

from replay.exitstatus import SIGNALS, interrupted


def run() -> None:
    """Load the command line and run it; exit 130 once Ctrl-C was heard."""
    signal.signal(signal.SIGINT, interrupted)
    try:
        from replay.cli import main

        gc.freeze()
        main()
    except KeyboardInterrupt:
        sys.stderr.write("\nAborted!\n")
        sys.exit(130)
    except SystemExit:
        if signal.SIGINT in SIGNALS:
            sys.exit(130)
        raise
    finally:
        gc.freeze()
