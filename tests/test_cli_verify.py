"""`schedlog verify` end to end: example sessions, formats, exit codes, bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from replay.cli import main
from replay.terminal import printable

from .conftest import protocol_examples
from .sessionfiles import ev, header, session_bytes, write_session

FOLD_EXAMPLES = [e for e in protocol_examples() if "candidate" not in e]


def run(*args: str, input: bytes | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def example_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("examples")
    for e in FOLD_EXAMPLES:
        write_session(root / f"{e['name']}.session.jsonl", e["events"], header(e["name"], e["seedLength"]))
    return root


def test_verify_json_agrees_with_every_fold_example(example_dir: Path) -> None:
    # lenient: the examples' other events are placeholders the session layer would refuse
    # (`other-event-types-ignored` holds a user/message with no message); the fold is the point
    code, out = run("verify", "--format", "json", "--mode", "lenient", str(example_dir))
    reports = {Path(r["path"]).name.removesuffix(".session.jsonl"): r for r in json.loads(out)}
    assert len(reports) == len(FOLD_EXAMPLES)
    assert code == 1
    for e in FOLD_EXAMPLES:
        r = reports[e["name"]]
        assert r["verdict"] == e["expect"], e["name"]
        assert r["events"] == len(e["events"])
        if e["expect"] == "ok":
            if "active" in e:
                assert [a["id"] for a in r["active"]] == e["active"]
            continue
        v = r["violation"]
        assert v["code"] == "corrupt_schedule_log"
        if v["rule"] != "fold.seed.bounds":
            assert v["index"] is not None and v["seq"] == v["index"]
            assert v["line"] == v["index"] + 2  # header is line 1, one event per line


def test_json_report_shape(example_dir: Path) -> None:
    _, out = run("verify", "--format", "json", str(example_dir / "gate-next-batch-too-soon.session.jsonl"))
    (r,) = json.loads(out)
    assert set(r) >= {
        "path", "session", "seedLength", "events", "scheduleEvents", "verdict",
        "violation", "formatFindings", "active", "lastRecurringAcceptedAt",
    }  # fmt: skip
    assert r["violation"]["rule"] == "fold.gate"
    assert r["violation"]["pointer"] == "/data/acceptedAt"


def test_ok_session_reports_active_records_in_log_shape(example_dir: Path) -> None:
    code, out = run("verify", "--format", "jsonl", str(example_dir / "four-kinds-keep-create-order.session.jsonl"))
    r = json.loads(out)
    assert code == 0 and r["verdict"] == "ok"
    assert [a["id"] for a in r["active"]] == ["d", "b", "c", "a"]
    assert all(list(a)[:3] == ["id", "kind", "prompt"] for a in r["active"])


def test_text_output_names_file_line_and_rule(example_dir: Path) -> None:
    code, out = run("verify", str(example_dir / "delete-twice.session.jsonl"))
    assert code == 1
    assert "delete-twice.session.jsonl:4" in out and "fold.delete.inactive" in out
    assert out.strip().endswith("1 session(s): 0 ok, 1 corrupt, 0 unreadable; 0 from cache, 0 resumed, 1 read whole")


def test_junit_output(example_dir: Path) -> None:
    import xml.etree.ElementTree as ET

    _, out = run("verify", "--format", "junit", "--mode", "lenient", str(example_dir))
    suite = ET.fromstring(out)
    assert int(suite.get("tests", "0")) == len(FOLD_EXAMPLES)
    assert int(suite.get("failures", "0")) == sum(1 for e in FOLD_EXAMPLES if e["expect"] == "corrupt")


_HOSTILE = "x\x1b]0;title\x07\x1b[31mred\rok  forged\nline\x9b2J\u202eevil\x7f"
"""An id a hostile log could hold: terminal sequences (OSC title, CSI colour, C1 CSI), a
carriage return and a line feed that would forge a line, a bidi override, DEL."""


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (_HOSTILE, "x\\x1b]0;title\\x07\\x1b[31mred\\x0dok  forged\\x0aline\\x9b2J\\u202eevil\\x7f"),
        (
            "tab\tgoes (an aligned table breaks), é, 😀 and \u2028 stay",
            "tab\\x09goes (an aligned table breaks), é, 😀 and \u2028 stay",
        ),
        ("\ufffe\uffff", "\\ufffe\\uffff"),
    ],
)
def test_printable_writes_control_characters_as_escapes(text: str, shown: str) -> None:
    assert printable(text) == shown


@pytest.mark.parametrize("fmt", ["text", "junit"])
def test_log_content_reaches_people_as_data(tmp_path: Path, fmt: str) -> None:
    """A log's ids, prompts and messages cannot drive the terminal or break the JUnit XML."""
    import xml.etree.ElementTree as ET

    delete = ev(0, "schedule/change", {"version": 1, "operation": "delete", "id": _HOSTILE})
    path = write_session(tmp_path / f"{_HOSTILE}.session.jsonl", [delete], header(_HOSTILE))  # a name too
    code, out = run("verify", "--format", fmt, str(path))
    assert code == 1
    assert not any(c in out for c in "\x1b\x07\r\x9b\u202e\x7f")
    if fmt == "junit":
        assert ET.fromstring(out).find("testsuite/testcase/failure") is not None
    else:
        assert len(out.splitlines()) == 2  # the session (its file name, and its id twice), the summary
        assert out.count("x\\x1b]0;title") == 3


def test_stdin_and_seed_length_override() -> None:
    data = session_bytes([ev(0, "session/end-seed")])
    code, out = run("verify", "--format", "json", "--seed-length", "1", "-", input=data)
    (r,) = json.loads(out)
    assert code == 0 and r["path"] == "<stdin>" and r["seedLength"] == 1


def test_after_only_profile_rejects_calendar_kinds(example_dir: Path) -> None:
    path = str(example_dir / "at-create-valid.session.jsonl")
    assert run("verify", path)[0] == 0
    code, out = run("verify", "--profile", "after-only", "--format", "json", path)
    assert code == 1 and json.loads(out)[0]["violation"]["rule"] == "decode.record.kind"


def test_bad_inputs_give_verdicts_not_tracebacks(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_bytes(b"")
    (tmp_path / "garbage.jsonl").write_bytes(os.urandom(4096).replace(b"\n", b"") + b"\n")
    (tmp_path / "torn.jsonl").write_bytes(session_bytes([ev(0)]) + b'{"type":"turn/en')
    (tmp_path / "dangling.jsonl").symlink_to(tmp_path / "missing-target")
    (tmp_path / "nested").mkdir()
    write_session(tmp_path / "nested" / "good.jsonl", [ev(0)])
    code, out = run("verify", "--format", "json", str(tmp_path))
    verdicts = {Path(r["path"]).name: r["verdict"] for r in json.loads(out)}
    assert verdicts == {
        "empty.jsonl": "unreadable",
        "garbage.jsonl": "unreadable",
        "torn.jsonl": "ok",
        "dangling.jsonl": "unreadable",
        "good.jsonl": "ok",
    }
    assert code == 2


def test_missing_path_is_unreadable(tmp_path: Path) -> None:
    code, out = run("verify", str(tmp_path / "nope.jsonl"))
    assert code == 2 and "UNREADABLE" in out


def test_no_log_files_is_a_usage_error(tmp_path: Path) -> None:
    code, _ = run("verify", str(tmp_path))
    assert code == 2


def test_jobs_give_the_same_reports(example_dir: Path) -> None:
    _, one = run("verify", "--format", "json", str(example_dir))
    _, two = run("verify", "--format", "json", "--jobs", "2", str(example_dir))
    assert one == two


def test_console_script_runs_as_a_subprocess(example_dir: Path) -> None:
    exe = Path(sys.executable).with_name("schedlog")
    proc = subprocess.run(
        [str(exe), "verify", str(example_dir / "every-create-valid.session.jsonl")], capture_output=True, text=True
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "command", [["verify", "-"], ["replay", "-", "--db", "{tmp}/s.duckdb"], ["check", "-", "{tmp}/c.json"]]
)
def test_standard_input_beyond_max_stream_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    from replay.sources import bytesource

    monkeypatch.setattr(bytesource, "MAX_STREAM", 1000)
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    (tmp_path / "c.json").write_text('{"version":1,"operation":"delete","id":"schedule-1"}')
    result = CliRunner().invoke(main, args, input=session_bytes([ev(n) for n in range(40)]))
    assert (
        result.exit_code == 2 and "cannot read standard input: the stream holds more than 1,000 bytes" in result.output
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full (Linux) to make writing fail")
@pytest.mark.parametrize(
    "command",
    [
        ["verify", "--format", "json", "{examples}"],
        ["cron", "0 9 * * *", "--tz", "UTC", "--count", "1000"],
        ["simulate", "{scenario}"],
    ],
)
def test_standard_output_that_cannot_be_written_is_reported_not_a_traceback(
    example_dir: Path, command: list[str]
) -> None:
    """A full disk behind standard output: one line on standard error, exit 2."""
    scenario = next((Path(__file__).resolve().parent.parent / "fixtures" / "scenarios").glob("*.json"))
    args = [a.replace("{examples}", str(example_dir)).replace("{scenario}", str(scenario)) for a in command]
    exe = Path(sys.executable).with_name("schedlog")
    with open("/dev/full", "w") as full:
        proc = subprocess.run([str(exe), *args], stdout=full, stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 2
    assert proc.stderr == "schedlog: cannot write the output: No space left on device\n"


def test_quiet_prints_only_the_sessions_with_a_problem() -> None:
    from replay.cli import main

    sessions = str(Path(__file__).parent.parent / "fixtures" / "sessions")
    loud = CliRunner().invoke(main, ["verify", sessions]).output
    quiet = CliRunner().invoke(main, ["verify", "-q", sessions])
    assert quiet.exit_code == 1
    assert "ok " in loud and not [line for line in quiet.output.splitlines() if line.startswith("ok ")]
    assert quiet.output.count("CORRUPT") == 5 and quiet.output.endswith(
        "8 session(s): 3 ok, 5 corrupt, 0 unreadable; 8 from cache, 0 resumed, 0 read whole\n"
    )


def test_a_hint_names_the_lenient_mode_when_only_header_rules_refuse(tmp_path: Path) -> None:
    """A header without delegationDepth is refused by the strict reader only: the text says how
    many such sessions the lenient reader takes (found by reading them so), once."""
    from replay.cli import main

    head = {"type": "session", "version": 0, "id": "s", "createdAt": 1, "cwd": "/w"}
    for n in range(2):
        (tmp_path / f"s{n}.jsonl").write_text(json.dumps(head) + "\n")
    (tmp_path / "seq.jsonl").write_text(
        json.dumps({**head, "delegationDepth": 0}) + '\n{"type":"a","seq":1,"time":1,"data":{}}\n'
    )
    result = CliRunner().invoke(main, ["verify", str(tmp_path)])
    assert result.exit_code == 1
    assert "hint: 2 session(s) are corrupt only for the strict reader's header rules (format.header: " in result.output
    assert "with --mode lenient (the fixture reader's rules) they are ok" in result.output
    import replay  # the hint is the library's: the command only prints it
    from replay.reading import DEFAULT_READING

    paths = sorted(str(p) for p in tmp_path.iterdir())
    hint = replay.verify_paths(paths).lenient_hint(DEFAULT_READING)
    assert hint is not None and hint in result.output
    assert "hint:" not in CliRunner().invoke(main, ["verify", "--mode", "lenient", str(tmp_path)]).output
    assert "hint:" not in CliRunner().invoke(main, ["verify", "--format", "json", str(tmp_path)]).output


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CORRUPT_LOG = FIXTURES / "sessions" / "corrupt" / "reused-id.session.jsonl"
VALID_ZSTD = FIXTURES / "sessions" / "valid" / "reminders.session.jsonl.zstd"
STORE = FIXTURES / "host" / "stores" / "valid-window.json"


def _through_pipes(command: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`command` run by bash, where `<(cat FILE)` hands schedlog a /dev/fd pipe (the README's
    `verify <(zstdcat log.zst)`), schedlog on PATH."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (
            f"schedlog verify <(cat {CORRUPT_LOG}) <(cat {VALID_ZSTD})",
            "2 session(s): 1 ok, 1 corrupt, 0 unreadable; 0 from cache, 0 resumed, 2 read whole",
        ),
        (
            f"schedlog verify <(cat {STORE})",
            "1 session(s): 1 ok, 0 corrupt, 0 unreadable; 0 from cache, 0 resumed, 1 read whole",
        ),
        (f"schedlog explain <(cat {CORRUPT_LOG})", "Rule fold.create.reuse"),
        (f"schedlog explain <(cat {VALID_ZSTD})", "3 schedule(s) created"),
        (f"schedlog report <(cat {CORRUPT_LOG}) -o r.html", "0 ok, 1 corrupt, 0 unreadable"),
        (f"schedlog replay <(cat {CORRUPT_LOG}) <(cat {VALID_ZSTD}) --db p.duckdb", "1 ok, 1 corrupt, 0 unreadable"),
        (f"cat {CORRUPT_LOG} | schedlog replay - <(cat {CORRUPT_LOG}) --db q.duckdb", "0 ok, 2 corrupt, 0 unreadable"),
        (f"schedlog shrink <(cat {CORRUPT_LOG}) -o s.jsonl", "still corrupt (fold.create.reuse)"),
        (f"schedlog check <(cat {CORRUPT_LOG}) <(echo '{{}}')", "fold.create.reuse: id 'schedule-1'"),
        (f"schedlog fleet <(cat {CORRUPT_LOG}) --output f", "a fleet's workers open each log themselves"),
    ],
    ids=[
        "verify",
        "verify-store",
        "explain",
        "explain-zstd",
        "report",
        "replay",
        "replay-stdin",
        "shrink",
        "check",
        "fleet",
    ],
)
def test_a_pipe_is_read_once_by_every_command(command: str, says: str, tmp_path: Path) -> None:
    """A /dev/fd pipe is read once: its first bytes were taken by the Host store's sniff, and the
    log then said UNREADABLE ("the first line is not JSON"). A fleet, whose workers open each
    log themselves, refuses a pipe as it refuses standard input (exit 2, saying so)."""
    done = _through_pipes(command, tmp_path)
    assert says in done.stdout + done.stderr, done.stdout + done.stderr
    assert "UNREADABLE" not in done.stdout and "Traceback" not in done.stderr
