"""bench/verify.py's yardstick, the reference's own load (bench/reference_load.mjs, run with the
released packages), reads what verify reads: on a corpus built from the real logs' bodies (fork
children and schedule changes spliced in), every log's events after row expansion, schedule
changes and active reminders agree, so the CPU it prints beside verify times the same work."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from .conftest import REAL_LOGS, requires_real_logs
from .reference import reference_dir

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    sys.path.insert(0, str(ROOT))
    from bench.realcorpus import build_from_real_logs

    paths = build_from_real_logs(tmp_path_factory.mktemp("bodies"), 2, seed=7, schedule_share=0.1, folder=REAL_LOGS)
    texts = [p.read_bytes() for p in paths]
    assert sum(b'"seedLength"' in t.split(b"\n", 1)[0] for t in texts) >= 2  # fork children
    assert sum(t.count(b'"type":"schedule/change"') for t in texts) >= 100
    assert sum(b'"type":"text-chunks"' in t or b'"type":"tool-call-chunks"' in t for t in texts) >= 2  # rows
    return paths


@requires_real_logs
def test_the_reference_load_reads_what_verify_reads(corpus: list[Path]) -> None:
    reference_dir()  # skips, saying why, when the packages cannot be had
    from bench.verify import reference_load

    found = reference_load(corpus, 1)
    assert not isinstance(found, str), found
    load, parse = found
    assert load > 0 and parse > 0


@requires_real_logs
def test_the_reference_load_is_refused_as_a_yardstick_when_the_counts_differ(
    corpus: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load that read other events than verify (here: verify made to count one more) fails."""
    reference_dir()
    import bench.verify
    from replay.judge.report import SessionReport
    from replay.judge.verify import verify_path

    def one_more(path: str) -> SessionReport:
        report = verify_path(path)
        return replace(report, events=report.events + 1)

    monkeypatch.setattr(bench.verify, "verify_path", one_more)
    with pytest.raises(AssertionError):
        bench.verify.reference_load(corpus[:3], 1)
