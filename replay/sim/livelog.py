"""A simulated session written as it happens (`schedlog simulate --live-to DIR`): the run's log
appended a line at a time, each event when the virtual clock reached its `time`, `speed`
virtual seconds to one real second, so that `schedlog watch` can follow an owner live.

The run is the simulator's, on its virtual clock (nothing here changes what it wrote); only
the writing is paced, by the events' own times. Each line is appended whole, in one write, to a
file this run creates (an existing file is never written over).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from invariant.jsvalue import js_compact_json


def paced(header: dict[str, Any], events: Iterable[dict[str, Any]], speed: float) -> Iterable[tuple[float, bytes]]:
    """Each line of the log with the real seconds to wait before it: the header at once, each
    event the virtual time since the one before it (or since the first event) over `speed`."""
    yield 0.0, js_compact_json(header).encode("utf-8") + b"\n"
    last = None
    for event in events:
        at = event.get("time")
        moment = at if isinstance(at, int | float) else last
        wait = 0.0 if last is None or moment is None else max(0.0, (moment - last) / 1000 / speed)
        last = moment if moment is not None else last
        yield wait, js_compact_json(event).encode("utf-8") + b"\n"


def write_live(
    path: Path,
    lines: Iterable[tuple[float, bytes]],
    sleep: Callable[[float], None] = time.sleep,
) -> int:
    """Create `path` and append each line after its wait; the lines written. FileExistsError
    where `path` exists."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), 0o644)
    written = 0
    try:
        for wait, line in lines:
            if wait > 0:
                sleep(wait)
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view) :]
            written += 1
    finally:
        os.close(fd)
    return written
