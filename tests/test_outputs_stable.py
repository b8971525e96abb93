"""`verify`'s output stays byte-identical while the reader is reworked for speed (issue 30): on
the bundled sessions, the real logs and small corpora built from the real logs' bodies and
synthetically, JSON and text output equal tests/golden/, written by the reader before its
rework (the commit before "reader: the surface metadata the harness writes stays on the fast
path"). An intended change of output rewrites the golden files in the same commit."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from replay.cli import main

from .conftest import ROOT
from .outputcases import CASES, FORMATS, case_folder

GOLDEN = ROOT / "tests" / "golden"


@pytest.mark.parametrize("fmt", sorted(FORMATS))
@pytest.mark.parametrize("case", CASES)
def test_verify_output_is_what_it_was(case: str, fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = case_folder(case, tmp_path)
    if folder is None:
        pytest.skip("the real logs are not present (fresh clone without ../shared)")
    monkeypatch.chdir(folder)
    golden = (GOLDEN / f"verify-{case}.{FORMATS[fmt]}").read_bytes()
    result = CliRunner().invoke(main, ["verify", ".", "--format", fmt, "--no-cache"])
    assert result.exit_code in (0, 1), result.output
    assert result.stdout_bytes == golden
    for use in ("read whole", "from cache"):  # through the verdict cache: written, then read back
        cached = CliRunner().invoke(main, ["verify", ".", "--format", fmt, "--cache-dir", str(tmp_path / "cache")])
        assert cached.exit_code == result.exit_code
        if fmt != "text":
            assert cached.stdout_bytes == golden
            continue
        body, summary = cached.stdout_bytes.rstrip(b"\n").rsplit(b"\n", 1)
        count = int(golden.rstrip(b"\n").rsplit(b"\n", 1)[1].split(b" ")[0])
        uses = {
            "read whole": f"0 from cache, 0 resumed, {count} read whole",
            "from cache": f"{count} from cache, 0 resumed, 0 read whole",
        }
        assert body + b"\n" + summary == golden.rstrip(b"\n") + f"; {uses[use]}".encode()
