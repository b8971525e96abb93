"""`schedlog report` against `schedlog verify` on the real-shaped corpus, and the report's
opening time in headless Chromium (run by hand: `python -m bench.report`).

Issue 19's goals: the report written in under 3x the time verify takes, and open in under 5 s.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.corpus import build

ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def _wall(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=False, capture_output=True)
    return time.perf_counter() - start


def _open_seconds(page: Path) -> float | None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        tab = browser.new_page()
        start = time.perf_counter()
        tab.goto(page.as_uri())
        tab.wait_for_selector("tr.session-row")
        seconds = time.perf_counter() - start
        browser.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=200, help="corpus size (default 200 MB)")
    parser.add_argument("--runs", type=int, default=3, help="best of this many runs each")
    args = parser.parse_args()
    paths = build(Path("bench/out/real"), args.mb)
    root = str(Path("bench/out/real"))
    schedlog = str(Path(sys.executable).with_name("schedlog"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.html"
        verify = min(_wall([schedlog, "verify", root]) for _ in range(args.runs))
        report = min(_wall([schedlog, "report", root, "-o", str(out)]) for _ in range(args.runs))
        opened = _open_seconds(out)
        size = out.stat().st_size
    print(
        f"{len(paths)} sessions: verify {verify:.2f} s, report {report:.2f} s "
        f"({report / verify:.2f}x verify; goal < 3x)"
    )
    print(
        f"report {size / 1e6:.1f} MB; "
        + (
            "no playwright: open time not measured"
            if opened is None
            else f"opens in Chromium in {opened:.2f} s (goal < 5 s)"
        )
    )


if __name__ == "__main__":
    main()
