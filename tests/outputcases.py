"""The logs whose `verify` output is kept in tests/golden/ (test_outputs_stable.py): the bundled
sessions, the real logs, and small corpora built from the real logs' bodies and synthetically
(the benchmark builders, fixed seeds)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from .conftest import REAL_LOGS, ROOT

CASES = ("fixtures", "real-logs", "real-bodies", "synthetic")
FORMATS = {"json": "json", "text": "txt"}


def case_folder(case: str, scratch: Path) -> Path | None:
    """The folder holding the case's logs (built under `scratch` where needed); None when the
    real logs it needs are absent."""
    if case == "fixtures":
        return ROOT / "fixtures" / "sessions"
    if case in ("real-logs", "real-bodies") and not REAL_LOGS.is_dir():
        return None
    if case == "real-logs":
        return REAL_LOGS
    sys.path.insert(0, str(ROOT))
    folder = scratch / case
    folder.mkdir(parents=True, exist_ok=True)
    if case == "real-bodies":
        from bench.realcorpus import bodies, sessions

        for name, blob in sessions(random.Random(11), bodies(REAL_LOGS), 2_000_000):
            (folder / name).write_bytes(blob)
    else:
        from bench.corpus import real_shaped

        for sid, lines in real_shaped(random.Random(3), 2_000_000):
            (folder / f"{sid}.session.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder
