"""`schedlog report`: the HTML report, rendered in headless Chromium (Debian's `chromium`, driven
by Playwright), checked from its DOM; untrusted log text stays text."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from replay.cli import main

from .conftest import ROOT
from .sessionfiles import header, write_session

SESSIONS = ROOT / "fixtures" / "sessions"
DOCS = ROOT / "docs"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
"""Chromium as root on a closed network: no sandbox, no background connections."""
HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> "quoted" \x1b[31m\u202e'
T0 = 1785931200000


def change(seq: int, data: dict[str, Any], time: int = T0) -> dict[str, Any]:
    return {"type": "schedule/change", "seq": seq, "time": time, "data": {"version": 1, **data}}


def report(tmp_path: Path, *paths: Path) -> Path:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", *map(str, paths), "-o", str(out)], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return out


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (the dev extra installs it)")
    if not Path(CHROMIUM).is_file():
        pytest.skip("no chromium: install Debian's chromium package (.ci/run does)")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture()
def hostile_log(tmp_path: Path) -> Path:
    record = {"id": HOSTILE, "kind": "at", "prompt": HOSTILE, "scheduledAt": "2026-08-06T01:00:00.000Z"}
    events = [
        change(0, {"operation": "create", "schedule": record}),
        change(1, {"operation": "create", "schedule": record}, T0 + 60_000),  # reused: corrupt, related
    ]
    return write_session(tmp_path / "hostile.session.jsonl", events, header(HOSTILE))


class Page:
    """A report opened in Chromium, with every console error and page error collected."""

    def __init__(self, browser: Any, path: Path) -> None:
        self.page = browser.new_page(viewport={"width": 1400, "height": 900})
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.url = path.as_uri()
        self.page.goto(self.url)
        self.page.wait_for_selector("tr.session-row", state="attached")  # (one log opens on its session)

    def session(self, name: str) -> None:
        key = self.page.locator("tr.session-row", has_text=name).first.get_attribute("data-key")
        self.page.goto(f"{self.url}#session={key}")
        self.page.wait_for_selector("svg.timeline")

    def count(self, selector: str) -> int:
        return int(self.page.locator(selector).count())


def test_the_fleet_page_lists_every_session_with_counts_and_rules(browser: Any, tmp_path: Path) -> None:
    page = Page(browser, report(tmp_path, SESSIONS))
    assert page.count("tr.session-row") == 8
    assert page.page.locator(".card[data-verdict=corrupt] b").text_content() == "5"
    assert page.count("#rules tbody tr") == 4  # four fold/decode rules; the format refusal apart
    assert page.page.locator("#refusals tbody tr td").first.text_content() == "format.seq-gap"
    first = page.page.locator("tr.session-row").first.get_attribute("data-verdict")
    assert first == "corrupt"  # sorted by verdict, corrupt first
    page.page.locator("th[data-key=events]").click()
    events = [int(t) for t in page.page.locator("tr.session-row td.num:nth-child(4)").all_text_contents()]
    assert events == sorted(events)
    assert page.errors == []


def test_a_session_view_draws_lanes_batches_gates_and_the_violation(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the paths shown as a user types them (this view is the README's picture)
    page = Page(browser, report(tmp_path, Path("fixtures/sessions")))
    page.session("gate-too-soon")
    assert page.count("g.lane") == 2
    assert page.count("#timeline .mark.violation") == 1 and page.count("#timeline .mark.related") == 1
    assert page.page.locator(".mark.related").get_attribute("data-line") == "21"
    assert page.count("#timeline .gate") == 1 and page.count("#timeline .tick") > 0
    assert "fold.gate" in page.page.locator("#violation").text_content()
    page.page.locator("#timeline .mark.violation").hover()
    detail = page.page.locator("#detail").text_content()
    assert detail.startswith("violation at line 23, event 29") and '"acceptedAt":"2026-08-05T12:07:00.000Z"' in detail
    page.page.screenshot(path=str(tmp_path / "session.png"), clip={"x": 0, "y": 0, "width": 1400, "height": 520})
    if os.environ.get("SCHEDLOG_UPDATE_DOCS"):
        shutil.copy(tmp_path / "session.png", DOCS / "report-session.png")
    assert page.errors == []


def test_a_fork_child_shows_the_cut_and_its_inherited_events(browser: Any, tmp_path: Path) -> None:
    page = Page(browser, report(tmp_path, SESSIONS))
    page.session("fork-child")
    assert page.count(".cut") == 1 and page.count(".mark.inherited") >= 1
    assert page.errors == []


def test_untrusted_text_stays_text(browser: Any, tmp_path: Path, hostile_log: Path) -> None:
    out = report(tmp_path, hostile_log)
    source = out.read_text()
    assert "<script>window" not in source and "<img" not in source and "\x1b" not in source
    page = Page(browser, out)
    assert page.count("script") == 3  # the page's own: summary, data, code
    page.session("hostile")
    assert page.page.evaluate("window.__pwned") is None
    assert page.count("img") == 0
    label = page.page.locator("g.lane text.lane-label").first.text_content()
    assert label.startswith("'<script>window.__pwned=1</script>")
    lines = page.page.locator("g.lane text.lane-label").first.locator("tspan").all_text_contents()
    full = page.page.locator("g.lane text.lane-label title").first.text_content()  # also on hover
    assert len(lines) > 1 and all(len(line) <= 36 for line in lines)  # wrapped, whole
    assert "".join(lines).replace(" ", "") == full.replace(" ", "")
    violation = page.page.locator("#violation").text_content()
    assert "fold.create.reuse" in violation and "related: line 2, event 0" in violation
    assert page.errors == []


def test_a_large_lane_is_aggregated(browser: Any, tmp_path: Path) -> None:
    target = T0 + 300_000
    record = {"id": "tick", "kind": "every", "prompt": "p", "everySeconds": 300}
    events = [change(0, {"operation": "create", "schedule": {**record, "scheduledAt": _iso(target)}})]
    for n in range(1, 5001):
        accepted = target + (n - 1) * 300_000
        events.append(change(n, {"operation": "dispatch", "id": "tick", "acceptedAt": _iso(accepted)}, accepted))
    log = write_session(tmp_path / "busy.session.jsonl", events, header("busy"))
    page = Page(browser, report(tmp_path, log))
    page.session("busy")
    assert page.count(".bin") > 100 and page.count(".mark") < 10
    assert page.errors == []


def _iso(ms: int) -> str:
    from invariant import format_instant

    return format_instant(ms)


def test_the_readme_shows_the_screenshot() -> None:
    png = DOCS / "report-session.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from tests.documentation import README, page

    assert "docs/report-session.png" in README and "report-session.png" in page("report.md")


def test_the_fleet_table_filters_and_breaks_paths_at_slashes(browser: Any, tmp_path: Path) -> None:
    page = Page(browser, report(tmp_path, SESSIONS))
    visible = "tr.session-row:visible"
    page.page.fill("#filter", "gate")
    assert page.count(visible) == 1
    page.page.fill("#filter", "")
    page.page.locator(".card[data-verdict=corrupt]").click()
    assert page.count(visible) == 5 and page.page.input_value("#filter") == "corrupt"
    page.page.locator(".card[data-verdict=corrupt]").click()
    assert page.count(visible) == 8
    path = page.page.locator("tr.session-row td.path a").first
    assert path.locator("wbr").count() == path.text_content().count("/") >= 1  # a break after each slash
    assert page.errors == []


def test_a_format_refusal_has_a_banner_and_no_empty_headings(browser: Any, tmp_path: Path) -> None:
    page = Page(browser, report(tmp_path, SESSIONS))
    page.session("seq-gap")
    banner = page.page.locator("#refusal")
    assert banner.is_visible() and "format.seq-gap" in banner.text_content()
    assert banner.text_content().startswith("CORRUPT: the log's format is refused")
    assert not page.page.locator("#violation").is_visible()
    page.session("gate-too-soon")
    assert not banner.is_visible()
    findings = page.page.locator("#findings li").count()
    assert page.page.locator("#findings-box").is_visible() == (findings > 0)
    assert page.errors == []


def test_the_timeline_has_time_ticks_zooms_by_dragging_and_a_matching_legend(browser: Any, tmp_path: Path) -> None:
    page = Page(browser, report(tmp_path, SESSIONS))
    page.session("reminders")
    ticks = page.page.locator("#timeline .axis").all_text_contents()
    assert 2 <= len(ticks) <= 9, ticks
    marks = page.count("#timeline .mark")
    box = page.page.locator("svg.timeline").bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2
    page.page.mouse.move(box["x"] + box["width"] * 0.30, y)
    page.page.mouse.down()
    page.page.mouse.move(box["x"] + box["width"] * 0.40, y)
    page.page.mouse.up()
    zoomed = page.page.locator("#timeline .axis").all_text_contents()
    assert zoomed != ticks and page.count("#timeline .mark") < marks
    page.page.locator("#zoom-reset").click()
    assert page.page.locator("#timeline .axis").all_text_contents() == ticks
    for shape, kind in (("circle", "create"), ("path", "dispatch"), ("rect", "delete"), ("path", "violation")):
        assert page.count(f".legend {shape}.key.{kind}:not(.related)") == 1, kind
        if page.count(f"#timeline .mark.{kind}"):  # the chart draws that kind with the same shape
            assert page.page.locator(f"#timeline .mark.{kind}").first.evaluate("n => n.tagName") == shape
    assert page.errors == []


# --- what a newcomer met (issue 54) ----------------------------------------------------------------


def _quiet_log(tmp_path: Path) -> Path:
    """A valid log with no schedule event."""
    events = [{"type": "turn/start", "seq": n, "time": T0, "data": {}} for n in range(3)]
    return write_session(tmp_path / "quiet.session.jsonl", events)


def _twice_refused(tmp_path: Path) -> Path:
    """A log refused for two findings: a v4 name over a v0 header, and a seq gap before a turn/end."""
    events = [
        {"type": "turn/start", "seq": 0, "time": T0, "data": {}},
        {"type": "turn/start", "seq": 2, "time": T0, "data": {}},
        {"type": "turn/end", "seq": 3, "time": T0, "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ]
    folder = tmp_path / "refused"
    folder.mkdir()
    return write_session(folder / "session.v4.jsonl", events)


def test_a_report_of_one_log_opens_on_its_session(browser: Any, tmp_path: Path) -> None:
    """It opened on the fleet table: a click to see the only session."""
    page = Page(browser, report(tmp_path, SESSIONS / "corrupt" / "gate-too-soon.session.jsonl"))
    page.page.wait_for_selector("svg.timeline")
    assert page.page.locator("#session").is_visible() and not page.page.locator("#fleet").is_visible()
    assert "gate-too-soon" in page.page.locator("#session-title").text_content()
    page.page.locator("#home").click()
    page.page.wait_for_selector("#fleet", state="visible", timeout=5000)  # the way back to the fleet page
    assert page.errors == []


def test_empty_tables_and_cells_say_none(browser: Any, tmp_path: Path) -> None:
    """A fleet without violations showed "Violations by rule" with its headers alone, and a
    session without schedule events an empty "first schedule event"."""
    page = Page(browser, report(tmp_path, SESSIONS / "valid", _quiet_log(tmp_path)))
    assert page.page.locator("#rules tbody tr").all_text_contents() == ["none"]
    row = page.page.locator("tr.session-row", has_text="quiet.session.jsonl")
    assert row.locator("td").nth(5).text_content() == "none"
    assert not page.page.locator("#refusals-box").is_visible()
    assert page.errors == []


def test_every_refusal_of_a_log_is_counted(browser: Any, tmp_path: Path) -> None:
    """A log refused for two findings counted its first alone."""
    log = _twice_refused(tmp_path)
    printed = CliRunner().invoke(main, ["verify", "--no-cache", str(log)]).output
    assert "format.name-version" in printed and "error line 3: format.seq-gap" in printed
    page = Page(browser, report(tmp_path, log, SESSIONS / "valid"))
    rows = [r.split("\n") for r in page.page.locator("#refusals tbody tr").all_inner_texts()]
    assert sorted(r[0].split("\t")[0] for r in rows) == ["format.name-version", "format.seq-gap"]
    assert page.errors == []


def test_paths_are_shown_below_their_common_folder_and_whole_on_hover(browser: Any, tmp_path: Path) -> None:
    page = Page(browser, report(tmp_path, SESSIONS))
    cells = page.page.locator("tr.session-row td.path")
    shown = [t.replace("\u200b", "") for t in cells.all_inner_texts()]
    assert "corrupt/gate-too-soon.session.jsonl" in shown and not any(s.startswith("/") for s in shown)
    full = {cells.nth(n).get_attribute("title") for n in range(cells.count())}
    assert str(SESSIONS / "corrupt" / "gate-too-soon.session.jsonl") in full
    assert page.errors == []


def test_lane_labels_are_whole(browser: Any, tmp_path: Path) -> None:
    """A lane's label was cut at 38 characters ('schedule-1' (every 300 s, prompt "ti…): it is
    wrapped, every word of it drawn."""
    prompt = "tidy the staging bucket and report what was removed to the channel"
    record = {
        "id": "schedule-1",
        "kind": "every",
        "prompt": prompt,
        "everySeconds": 300,
        "scheduledAt": "2026-08-05T12:05:00.000Z",
    }
    log = write_session(tmp_path / "long.session.jsonl", [change(0, {"operation": "create", "schedule": record})])
    page = Page(browser, report(tmp_path, log))
    page.page.wait_for_selector("svg.timeline")
    label = page.page.locator("g.lane text.lane-label").first
    drawn = " ".join(label.locator("tspan").all_text_contents())
    title = label.locator("title").text_content()
    assert drawn == title and prompt in drawn and "\u2026" not in drawn
    assert label.locator("tspan").count() >= 2
    box, lane = label.bounding_box(), page.page.locator("g.lane line.lane-line").first.bounding_box()
    assert box is not None and lane is not None and box["x"] + box["width"] <= lane["x"]  # not under the marks
    assert page.errors == []


def test_no_legend_without_schedule_events(browser: Any, tmp_path: Path) -> None:
    page = Page(browser, report(tmp_path, _quiet_log(tmp_path)))
    page.page.wait_for_selector("svg.timeline")
    assert "no schedule events" in page.page.locator("#timeline").text_content()
    assert not page.page.locator("#legend").is_visible()
    assert page.errors == []


def test_the_docs_show_the_fleet_and_the_session_pages(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The screenshots docs/report.md shows are of this report (SCHEDLOG_UPDATE_DOCS=1 takes the
    fleet page's again; the session view's is test_a_session_view_draws_lanes_batches_gates_and_the_violation's)."""
    if os.environ.get("SCHEDLOG_UPDATE_DOCS"):
        monkeypatch.chdir(ROOT)  # the paths as a user types them
        page = Page(browser, report(tmp_path, Path("fixtures/sessions")))
        page.page.screenshot(path=str(DOCS / "report-fleet.png"), clip={"x": 0, "y": 0, "width": 1400, "height": 560})
    shown = (DOCS / "report.md").read_text()
    for name in ("report-fleet.png", "report-session.png"):
        assert f"]({name})" in shown and (DOCS / name).stat().st_size > 10_000, name
