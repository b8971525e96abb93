"""`verify`'s output stays byte-identical while the reader is reworked for speed (issue 30): on
the bundled sessions, the real logs and small corpora built from the real logs' bodies and
synthetically, JSON and text output equal tests/golden/, written by the reader before its
rework (the commit before "reader: the surface metadata the harness writes stays on the fast
path"). An intended change of output rewrites the golden files in the same commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.cli import main
from replay.cli.output import json_document

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


# --- the JSON format's writer (issue 52: its values by the C encoder, its layout by msgspec) ----

_JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=8)
)
_JSON_VALUES = st.recursive(
    _JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(_JSON_VALUES)
def test_the_json_format_writes_what_the_standard_library_writes(value: object) -> None:
    """Floats at every scale (`1e-05`, `1e+16`), NaN and Infinity, lone surrogates, control
    characters, empty containers: the same text as `json.dumps(indent=2)`, character for character."""
    assert json_document(value) == json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def test_the_json_format_writes_the_edge_values_as_the_standard_library_does() -> None:
    for value in (1e-05, 1e16, 1e21, 5e-324, float("nan"), float("-inf"), "\ud800", {"k\udfff": [[], {}]}, -0.0):
        assert json_document(value) == json.dumps(value, ensure_ascii=False, indent=2) + "\n"
