"""The built wheel holds what an installed schedlog reads besides its modules: the zone names
(invariant/zones.json), the report page (replay/cli/output/page.html) and the conformance
vectors `schedlog conform` asks; and every module of both packages (a room moved is a room
shipped)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

from .conftest import ROOT


def test_the_wheel_holds_every_module_and_the_data_read_beside_them(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("schedlog-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    data = {"invariant/zones.json", "replay/cli/output/page.html", "replay/conform/vectors/protocol-examples.jsonl"}
    assert data <= names, sorted(data - names)
    modules = {str(p.relative_to(ROOT)) for package in ("invariant", "replay") for p in (ROOT / package).rglob("*.py")}
    assert modules <= names, sorted(modules - names)
