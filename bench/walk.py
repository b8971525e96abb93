"""The walk of one log through `judge_log`, as a newcomer reading the code follows it (issue 64).

    python -m bench.walk LOG [--show]

Each function of schedlog's two packages is taken in the order a read of LOG first enters it
(read once, as a reader reads a function once), and named by its file; a run of them in one
file is a stay. It prints the number of functions, of stays, of files, and of returns to a file
already left (a reader who must go back to a file they had left); `--show` prints the stays.
Fewer stays and returns: the code of one log's walk sits together.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def walk(path: str) -> list[str]:
    """The files of the functions a read of the log at `path` enters, in the order first entered."""
    from replay.judge.verify import judge_log
    from replay.logs.logfile import SessionLog

    packages = (str(ROOT / "invariant") + os.sep, str(ROOT / "replay") + os.sep)
    order: list[str] = []
    known: set[tuple[str, int]] = set()

    def heard(frame: FrameType, event: str, arg: object) -> None:
        code = frame.f_code
        if event != "call" or not code.co_filename.startswith(packages):
            return
        key = (code.co_filename, code.co_firstlineno)
        if key not in known:
            known.add(key)
            order.append(os.path.relpath(code.co_filename, ROOT))

    log = SessionLog(path)
    sys.setprofile(heard)
    try:
        judge_log(log)
    finally:
        sys.setprofile(None)
    return order


def stays(order: Sequence[str]) -> list[str]:
    """The runs of `order` in one file, each named by its file."""
    return [name for k, name in enumerate(order) if k == 0 or order[k - 1] != name]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("log")
    parser.add_argument("--show", action="store_true", help="print the stays in order")
    args = parser.parse_args(argv)
    order = walk(args.log)
    runs = stays(order)
    returns = sum(1 for k, name in enumerate(runs) if name in runs[:k])
    if args.show:
        print(" > ".join(name.removesuffix(".py") for name in runs))
    files = len(set(runs))
    print(f"{len(order)} functions; {len(runs)} stays in {files} files, {returns} returns to a file already left")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
