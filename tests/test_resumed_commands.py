"""A grown log judged through the verdict cache gives every command's cold output, byte for byte
(issue 64, acceptance 2): the log read when it was cut short anywhere (its reader's and judge's
states saved at its last committed line), then grown to the whole, then `verify`, `report`,
`explain` and `watch` of the whole through the cache (resumed where they resume) against each
with `--no-cache`. `replay`'s own resumption (the database takes what changed) is held the same
way by tests/test_replay_increment.py; the reading itself at every split by tests/test_resume.py."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzz.logs import make, sources
from replay.cli import main
from replay.judge.verify import verify_path
from replay.live.follow import look, told_of
from replay.reading import Mode, Reading

from .conftest import ROOT

POOL = sources(ROOT / "no-real-logs")
COMMANDS = {
    "verify": ["verify", "--format", "json"],
    "explain": ["explain", "--format", "json"],
    "report": ["report", "-o", "{out}"],
}


def _run(args: list[str], out: Path) -> str:
    """The command's output: what it printed, or the file it wrote."""
    filled = [a.format(out=out) for a in args]
    result = CliRunner().invoke(main, filled, catch_exceptions=False)
    assert result.exit_code in (0, 1, 2), result.output
    return out.read_text() if "-o" in filled else result.stdout


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    index=st.integers(0, 10**6),
    cut=st.floats(0, 1),
    command=st.sampled_from(sorted(COMMANDS)),
    mode=st.sampled_from(list(Mode)),
)
def test_a_grown_log_through_the_cache_gives_each_commands_cold_output(
    tmp_path_factory: object, index: int, cut: float, command: str, mode: Mode
) -> None:
    item = make(20261207, index, POOL)
    if item.source.startswith("store:"):
        return
    tmp = tmp_path_factory.mktemp("grown")  # type: ignore[attr-defined]
    name = "s.jsonl.zstd" if item.data[:4] == b"\x28\xb5\x2f\xfd" else "s.jsonl"
    log, cache = tmp / name, tmp / "cache"
    args = [*COMMANDS[command], "--mode", mode.value]
    log.write_bytes(item.data[: int(cut * len(item.data))])
    _run([*args, "--cache-dir", str(cache), str(log)], tmp / "first.html")
    with log.open("ab") as f:  # grown in place: the same file, its first bytes as judged
        f.write(item.data[int(cut * len(item.data)) :])
    grown = _run([*args, "--cache-dir", str(cache), str(log)], tmp / "grown.html")
    cold = _run([*args, "--no-cache", str(log)], tmp / "cold.html")
    assert grown == cold


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    index=st.integers(0, 10**6),
    cuts=st.lists(st.floats(0, 1), min_size=1, max_size=4),
    mode=st.sampled_from(list(Mode)),
)
def test_watch_of_a_log_growing_in_pieces_tells_what_verify_says_of_it(
    tmp_path_factory: object, index: int, cuts: list[float], mode: Mode
) -> None:
    """`watch` looks after each piece a writer appends (its states taken up again at each look):
    at the end, what it holds of the log is what a cold verify says of it."""
    item = make(20261207, index, POOL)
    if item.source.startswith("store:") or item.data[:4] == b"\x28\xb5\x2f\xfd":
        return  # (a Zstandard log is written frame by frame: tests/test_watch.py)
    tmp = tmp_path_factory.mktemp("watched")  # type: ignore[attr-defined]
    log, reading = tmp / "s.jsonl", Reading(mode=mode)
    data, before, written = item.data, None, 0
    log.write_bytes(b"")
    for at in [*sorted(int(c * len(data)) for c in cuts), len(data)]:
        with log.open("ab") as f:
            f.write(data[written:at])
        written = max(written, at)
        before, _ = look(str(log), before, reading)
    committed = data[: data.rfind(b"\n") + 1]
    if before is None or before.verdict is None or not committed:
        return
    (tmp / "c.jsonl").write_bytes(committed)
    cold = verify_path(str(tmp / "c.jsonl"), reading)
    assert before.verdict is cold.verdict
    assert before.told == told_of(cold)
