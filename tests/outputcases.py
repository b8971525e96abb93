"""The logs whose `verify` output is kept in tests/golden/ (test_outputs_stable.py): the bundled
sessions, the real logs, and small corpora built from the real logs' bodies and synthetically
(the benchmark builders, fixed seeds)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

from .conftest import REAL_LOGS, ROOT, load_jsonl

CASES = ("fixtures", "formats", "conformance", "real-logs", "real-bodies", "real-bodies-11", "synthetic")
FORMATS = {"json": "json", "text": "txt"}


def case_folder(case: str, scratch: Path) -> Path | None:
    """The folder holding the case's logs (built under `scratch` where needed); None when the
    real logs it needs are absent."""
    if case == "fixtures":
        return ROOT / "fixtures" / "sessions"
    if case == "formats":
        return ROOT / "fixtures" / "formats"
    if case.startswith("real-") and not REAL_LOGS.is_dir():
        return None
    if case == "real-logs":
        return REAL_LOGS
    sys.path.insert(0, str(ROOT))
    folder = scratch / case
    folder.mkdir(parents=True, exist_ok=True)
    if case == "conformance":
        from .sessionfiles import header, write_session

        for vectors in ("protocol-examples", "fixed-rate-examples"):
            for k, example in enumerate(load_jsonl(ROOT / "fixtures" / "conformance" / f"{vectors}.jsonl")):
                head = header(example["name"], example.get("seedLength"))
                write_session(folder / f"{vectors}-{k:03d}.jsonl", example["events"], head)
    elif case.startswith("real-bodies"):  # at a 2% schedule share, and at 11% (issue 52: the judge's outputs)
        from bench.realcorpus import bodies, sessions

        share = 0.11 if case == "real-bodies-11" else 0.02
        for name, blob in sessions(random.Random(11), bodies(REAL_LOGS), 2_000_000, share):
            (folder / name).write_bytes(blob)
    else:
        from bench.corpus import real_shaped

        for sid, lines in real_shaped(random.Random(3), 2_000_000):
            (folder / f"{sid}.session.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder
