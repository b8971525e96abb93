"""What a new user met trying every command on the real logs from a fresh clone (issue 63,
items 8-18): each friction held by a test that failed before it was mended."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from replay.cli import main

from .conftest import ROOT

TRANSCRIPT = ROOT / "fixtures" / "host" / "transcripts" / "call-edit-no-change.session.v4.jsonl"


def _verify(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["verify", "--no-cache", *args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.stdout, result.stderr


# --- item 8: lenient mode relaxes the envelope, and says so -------------------------------------


@pytest.mark.parametrize("run", ["[1,0]", "[0,1000001]"])
def test_lenient_mode_makes_an_envelope_problem_a_warning_as_the_docs_say(tmp_path: Path, run: str) -> None:
    log = tmp_path / "run.session.v4.jsonl"
    log.write_text(TRANSCRIPT.read_text().replace('"sourceEventSeqs":[2]', f'"sourceEventSeqs":[{run}]', 1))
    levels = {}
    for mode in ("strict", "lenient"):
        status, out, _ = _verify("--format", "json", "--mode", mode, str(log))
        (report,) = json.loads(out)
        levels[mode] = (status, [f["severity"] for f in report["formatFindings"] if f["code"] == "format.envelope"])
    assert levels == {"strict": (1, ["error"]), "lenient": (0, ["warning"])}
    docs = " ".join((ROOT / "docs" / "verify.md").read_text().split())
    assert "lenient mode also relaxes what only the persistence reader refuses: the envelope's keys and values" in docs
    assert "`[1, 0]`" in docs and "`[0, 1000001]`" in docs


# --- item 10: a selector that names no known code is refused -----------------------------------

SESSIONS = ROOT / "fixtures" / "sessions"


@pytest.mark.parametrize(
    "option, value, near",
    [
        ("--ignore", "format.headr", "format.header"),
        ("--select", "nonsense-code", ""),
        ("--select", "delivery.ordr", "delivery.order"),
    ],
)
def test_an_unknown_selector_on_the_command_line_is_a_usage_error(option: str, value: str, near: str) -> None:
    status, _, said = _verify(option, value, str(SESSIONS))
    assert status == 2
    assert f"'{value}' names no finding code or prefix of one" in said
    assert near in said


def test_an_unknown_selector_in_the_configuration_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.schedlog]\nselect = ["fold.bogus"]\n')
    result = CliRunner().invoke(
        main, ["verify", "--no-cache", "--config", str(tmp_path / "pyproject.toml"), str(SESSIONS)]
    )
    assert result.exit_code == 2
    assert "'fold.bogus' names no finding code or prefix of one" in result.stderr


@pytest.mark.parametrize(
    "selector", ["format", "format.header", "host", "host.soft", "delivery.order", "tool", "fold.gate"]
)
def test_known_codes_and_prefixes_are_taken(selector: str) -> None:
    status, _, _ = _verify("--select", selector, str(SESSIONS))
    assert status == 1  # (the corrupt fixtures: the selection never changes the verdicts)


def test_every_code_the_sources_write_is_known() -> None:
    """The known codes (what a selector is checked against) hold every code literal of the sources."""
    import re

    from replay.judge.rules import CODES

    shape = re.compile(r"\"((?:format|host|delivery|tool|decode|fold|live)\.[a-z0-9.-]+)\"")
    written = {
        code
        for folder in ("invariant", "replay")
        for path in (ROOT / folder).rglob("*.py")
        for code in shape.findall(path.read_text(encoding="utf-8"))
    }
    prefixes_only = {"fold.cron", "fold.every", "live.cron.create", "live.cron.dispatch"}  # (used as prefixes)
    assert written - prefixes_only <= CODES, sorted(written - prefixes_only - CODES)


def test_a_refused_log_whose_refusal_is_not_selected_says_so_not_see_below() -> None:
    log = SESSIONS / "corrupt" / "seq-gap.session.jsonl"
    status, out, _ = _verify("--select", "delivery", str(log))
    assert status == 1
    assert "(see below)" not in out
    assert "refused (by findings the selection leaves out: --select/--ignore)" in out
    assert "(see below)" in _verify(str(log))[1]


# --- item 15: data another compressor wrote is named by its magic bytes ------------------------


@pytest.mark.parametrize("name", ["gzip", "bzip2", "xz"])
def test_data_another_compressor_wrote_is_named_by_its_magic(tmp_path: Path, name: str) -> None:
    import bz2
    import gzip
    import lzma

    pack = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}[name]
    log = tmp_path / "s.session.jsonl"
    log.write_bytes(pack((SESSIONS / "valid" / "reminders.session.jsonl").read_bytes()))
    status, out, _ = _verify(str(log))
    assert status == 2
    assert f"not a session log: {name} data" in out and "-dc FILE | schedlog verify -" in out


# --- item 16: a Zstandard file whose first frame holds no header is no session log ------------

CRAFTED = [  # the magic, a first frame that scans and does not decode (random bytes), then no frame magic
    "28b52ffdc554532db6a5a1b505ac7b2b27565e6a2bbb5f579eb1ad7cf0c8298629c6866b7d954d32c4e4240676292755b8c60c9d13efc47dab07a5",
    "28b52ffd4484347d53eac4b1c13e9eac9a4980535377263f0dbfb3620b6e00f315c267a55b93e88d84414a1e62bee1caade2b8ad713d4c27e07e8254",
    "28b52ffd00119b8a13748098eda9b25ce7c3e7ae61bc1edc8d754254090df0d89ca6e5b56eac58e332b6e6292ec80b4bdf50203bba46efe1bf0e706c",
]


@pytest.mark.parametrize("hexed", CRAFTED)
def test_a_zstandard_file_whose_first_frame_does_not_decode_is_unreadable(tmp_path: Path, hexed: str) -> None:
    log = tmp_path / "s.session.jsonl"
    log.write_bytes(bytes.fromhex(hexed))
    status, out, _ = _verify(str(log))
    assert (status, out.split()[0]) == (2, "UNREADABLE"), out
    assert "not a session log: corrupt Zstandard container" in out


def test_a_zstandard_log_whose_header_frame_decodes_and_a_later_one_is_corrupt_stays_corrupt(tmp_path: Path) -> None:
    import zstandard

    header = (SESSIONS / "valid" / "reminders.session.jsonl").read_bytes().split(b"\n", 1)[0] + b"\n"
    log = tmp_path / "s.session.jsonl.zstd"
    log.write_bytes(zstandard.ZstdCompressor().compress(header) + b"\x00garbage" * 4)
    status, out, _ = _verify(str(log))
    assert (status, out.split()[0]) == (1, "CORRUPT"), out


# --- item 12: the text output sums up a flood of findings of one code --------------------------


def _flooded(tmp_path: Path, count: int) -> Path:
    """A v4 log followed by `count` user/message events lacking their surfaceOp and message id:
    in lenient mode, `count` format.envelope and `count` format.session warnings."""
    import zstandard

    framed = (ROOT / "fixtures" / "formats" / "fixed-rate" / "v4" / "session.v4.jsonl.zstd").read_bytes()
    with zstandard.ZstdDecompressor().stream_reader(framed, read_across_frames=True) as reader:
        lines = reader.read().splitlines(keepends=True)
    seq = json.loads(lines[-1])["seq"]
    for k in range(count):
        event = {"type": "user/message", "seq": seq + 1 + k, "time": 1785931300000 + k, "data": {"role": "user"}}
        lines.append(json.dumps(event).encode() + b"\n")
    log = tmp_path / "flood.session.v4.jsonl"
    log.write_bytes(b"".join(lines))
    return log


def test_the_text_output_shows_ten_findings_of_a_code_then_how_many_more(tmp_path: Path) -> None:
    log = _flooded(tmp_path, 25)
    status, out, _ = _verify("--mode", "lenient", str(log))
    assert status == 0
    assert out.count("format.envelope: ") == 10 and out.count("format.session: ") == 10
    assert "... 15 more format.envelope (--all-findings prints them)" in out  # (the reader's own cap counted too)
    assert "... 15 more format.session (" in out
    every = _verify("--mode", "lenient", "--all-findings", str(log))[1]
    (report,) = json.loads(_verify("--mode", "lenient", "--format", "json", str(log))[1])
    in_json = sum(f["code"] == "format.envelope" for f in report["formatFindings"])
    assert every.count("format.envelope: ") == in_json > 10 and "... " not in every


def test_the_capped_text_is_the_same_through_the_cache(tmp_path: Path) -> None:
    log = _flooded(tmp_path, 25)
    cold = _verify("--mode", "lenient", str(log))[1]
    cold_every = _verify("--mode", "lenient", "--all-findings", str(log))[1]
    for _ in range(2):  # written, then read back
        args = ["verify", "--mode", "lenient", "--cache-dir", str(tmp_path / "c"), str(log)]
        cached = CliRunner().invoke(main, args).stdout
        assert cached.rsplit("\n", 2)[0] == cold.rsplit("\n", 2)[0]
        every = CliRunner().invoke(main, [*args, "--all-findings"]).stdout
        assert every.rsplit("\n", 2)[0] == cold_every.rsplit("\n", 2)[0]


def test_a_long_list_of_ids_is_said_by_its_first_and_how_many() -> None:
    from invariant.reminders import IDS_SHOWN, listed_ids

    assert listed_ids(["a", "b"]) == "['a', 'b']"
    ids = [f"schedule-{k}" for k in range(60)]
    said = listed_ids(ids)
    assert said.startswith("['schedule-0', 'schedule-1'") and said.endswith(", ... 55 more: 60 ids]")
    assert said.count("schedule-") == IDS_SHOWN


# --- item 13: a sealed query that reads Parquet says which option lets it ---------------------


def test_a_sealed_query_reading_parquet_says_which_option_allows_it(tmp_path: Path) -> None:
    import duckdb

    parts = tmp_path / "fleet-verdicts" / "runs" / "r1"
    parts.mkdir(parents=True)
    duckdb.sql(f"COPY (SELECT 'ok' AS verdict) TO '{parts / 'part-00000.parquet'}' (FORMAT parquet)")
    db = tmp_path / "replay.duckdb"
    replayed = CliRunner().invoke(main, ["replay", str(SESSIONS / "valid"), "--db", str(db), "--no-cache"])
    assert replayed.exit_code == 0, replayed.output
    query = f"SELECT verdict FROM read_parquet('{tmp_path}/fleet-verdicts/**/*.parquet')"
    sealed = CliRunner().invoke(main, ["sql", str(db), query])
    assert sealed.exit_code == 2
    assert "hint: the query sees the database alone" in sealed.stderr and "--allow-external-access" in sealed.stderr
    opened = CliRunner().invoke(main, ["sql", "--allow-external-access", "--format", "json", str(db), query])
    assert opened.exit_code == 0 and json.loads(opened.stdout) == [{"verdict": "ok"}]


def test_the_readme_reads_the_fleets_parts_where_runs_write_them() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "read_parquet('fleet-verdicts/**/*.parquet')" in readme
    assert "read_parquet('fleet-verdicts/*.parquet')" not in readme


# --- item 18: the docs say what the code does ---------------------------------------------------


def test_the_reader_pipeline_page_says_what_the_cache_checks() -> None:
    page = " ".join((ROOT / "docs" / "reader-pipeline.md").read_text().split())
    assert "64 KiB" not in page and "0.35x" not in page
    assert "an xxh3-128 hash of exactly the bytes the reader read" in page
    rules = (ROOT / "replay" / "judge" / "rules.py").read_text()
    assert "README" not in rules


# --- item 9: Ctrl-C during fleet exits 130 with one line ----------------------------------------

_FLEET_HELD = """
import sys
from replay.fleet import engine
real = engine.run_fleet
def held(*args, **kwargs):  # each task sleeps 30 s in its worker: the Ctrl-C comes while they work
    kwargs["delay"], kwargs["started"] = 30.0, lambda client: print("started", flush=True)
    return real(*args, **kwargs)
engine.run_fleet = held
sys.argv = ["schedlog", "fleet", sys.argv[1], "--output", sys.argv[2], "--workers", "2", "--no-cache"]
from replay.entry import run
run()
"""


def test_ctrl_c_at_the_terminal_during_a_fleet_exits_130_with_one_line(tmp_path: Path) -> None:
    """The terminal's Ctrl-C reaches the whole process group, the Dask workers too."""
    import os
    import signal
    import subprocess
    import sys

    pytest.importorskip("distributed")
    run = subprocess.Popen(
        [sys.executable, "-c", _FLEET_HELD, str(SESSIONS), str(tmp_path / "out")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # (its own process group, as a terminal's foreground job)
    )
    try:
        assert run.stdout is not None and run.stdout.readline().strip() == "started"
        import time

        time.sleep(1.0)  # (the tasks reach their workers)
        os.killpg(run.pid, signal.SIGINT)
        _, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 130, err
    assert "Traceback" not in err and "WARNING" not in err, err
    assert [line for line in err.splitlines() if line.strip()] == ["Aborted!"], err
