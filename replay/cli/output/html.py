# ruff: noqa: E501  (the page template below is HTML, CSS and JavaScript, not Python)
"""`schedlog report`: one self-contained HTML file (inline CSS, SVG drawn by inline JavaScript).

It works from `file://` with no network: the sessions' picture data (`audit.sessionview`) is
embedded as JSON in a non-executed script element, every `<` in it written `\\u003c` so that no
log text can end the element; the page builds its DOM from that data with `textContent` and
attributes only (never markup from a string), so prompts and ids from logs stay text.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from replay.terminal import printable

AGGREGATE = 2000
"""A lane with more marks than this is drawn as counts per pixel column (large logs stay responsive)."""


def data_json(value: object) -> str:
    """JSON safe inside a <script> element: `<`, `>`, `&` and the JavaScript line separators escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _refused_by(view: dict[str, Any]) -> list[str]:
    """The findings a refused log's format is refused for: each error's code, once (the first
    alone was counted: a log's second refusal was dropped), else its rule."""
    codes = list(dict.fromkeys(f[0] for f in view.get("findings") or () if f[1] == "error"))
    return codes or [view["rule"]]


def page(views: Sequence[dict[str, Any]], title: str = "schedlog report") -> str:
    """The whole HTML document for the sessions' views."""
    counts = Counter(v["verdict"] for v in views)
    rules = Counter(v["rule"] for v in views if v["violation"] is not None)
    refusals = Counter(code for v in views if v["violation"] is None and v["rule"] for code in _refused_by(v))
    summary = {
        "counts": dict(counts),
        "rules": rules.most_common(),
        "refusals": refusals.most_common(),
        "aggregate": AGGREGATE,
    }
    safe_title = printable(title).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (
        TEMPLATE.replace("@TITLE@", safe_title)
        .replace("@SUMMARY@", data_json(summary))
        .replace("@DATA@", data_json(list(views)))
    )


TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>@TITLE@</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d2330; background: #fafbfc; }
header { background: #1d2330; color: #fff; padding: 10px 20px; display: flex; gap: 20px; align-items: baseline; }
header h1 { font-size: 18px; margin: 0; }
header a { color: #9cc7ff; }
main { padding: 16px 20px; }
.cards { display: flex; gap: 12px; flex-wrap: wrap; margin-bottom: 16px; }
.card { background: #fff; border: 1px solid #d8dde6; border-radius: 6px; padding: 8px 14px; min-width: 110px; }
.card b { display: block; font-size: 22px; }
.ok { color: #1a7f37; } .corrupt { color: #c62828; } .unreadable { color: #8a4b00; } .unsupported { color: #6b6b6b; }
table { border-collapse: collapse; background: #fff; width: 100%; }
th, td { border-bottom: 1px solid #e3e7ee; padding: 4px 8px; text-align: left; vertical-align: top; }
th { cursor: pointer; user-select: none; background: #f0f3f7; position: sticky; top: 0; }
th.sorted::after { content: " \\2193"; } th.sorted.up::after { content: " \\2191"; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.path { font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
#filter { width: 100%; box-sizing: border-box; padding: 5px 8px; margin-bottom: 6px; border: 1px solid #d8dde6; border-radius: 4px; }
.card[data-verdict] { cursor: pointer; } .card.chosen { outline: 2px solid #1d2330; }
#refusal { background: #c62828; color: #fff; border-radius: 6px; padding: 8px 12px; margin-bottom: 8px; }
.axis { font: 11px ui-monospace, monospace; fill: #4a5568; } .grid-line { stroke: #eef1f5; }
.brush { fill: #1565c0; opacity: 0.12; } #zoom-reset { margin-left: 10px; }
.grid { display: grid; grid-template-columns: 2fr 1fr; gap: 16px; align-items: start; }
h2 { font-size: 16px; margin: 18px 0 8px; }
#violation { background: #fff4f4; border: 1px solid #f0b4b4; border-radius: 6px; padding: 8px 12px; }
#violation code, .mono { font-family: ui-monospace, monospace; }
svg.timeline { background: #fff; border: 1px solid #d8dde6; border-radius: 6px; display: block; }
.lane-label { font: 12px ui-monospace, monospace; fill: #1d2330; }
.lane-line { stroke: #e3e7ee; }
.gate, .key.gate-key { fill: #ffd54f; opacity: 0.35; }
.tick, .key.tick-key { stroke: #7e8aa0; stroke-width: 1; }
.cut { stroke: #6a1b9a; stroke-width: 2; stroke-dasharray: 4 3; }
.mark { cursor: pointer; } .mark, .key { stroke: #1d2330; stroke-width: 0.8; }
.create { fill: #2e7d32; } .dispatch { fill: #1565c0; } .delete { fill: #757575; }
.inherited { fill: #c5cae9; } .violation { fill: #d50000; stroke: #d50000; stroke-width: 3; }
.related { stroke: #ff6d00; stroke-width: 3; }
.bin { fill: #1565c0; opacity: 0.6; }
#detail { background: #fff; border: 1px solid #d8dde6; border-radius: 6px; padding: 8px; white-space: pre-wrap; word-break: break-all; min-height: 60px; font: 12px ui-monospace, monospace; }
td.none, tr.none td { color: #8a93a6; font-style: italic; }
.legend span { margin-right: 14px; } .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 4px; border: 1px solid #1d2330; }
</style>
</head>
<body>
<header><h1>@TITLE@</h1><a href="#" id="home">all sessions</a><span id="where"></span></header>
<main>
<section id="fleet">
  <div class="cards" id="verdict-counts"></div>
  <div class="grid">
    <div><h2>Sessions</h2><input id="filter" type="search" placeholder="filter: path, verdict or rule"><table id="sessions"><thead><tr>
      <th data-key="path">log</th><th data-key="verdict">verdict</th><th data-key="rule">rule</th>
      <th data-key="events" class="num">events</th><th data-key="bytes" class="num">bytes</th><th data-key="first">first schedule event</th>
    </tr></thead><tbody></tbody></table></div>
    <div><h2>Violations by rule</h2><table id="rules"><thead><tr><th>rule</th><th class="num">sessions</th></tr></thead><tbody></tbody></table>
    <div id="refusals-box"><h2>Format refusals by finding</h2><table id="refusals"><thead><tr><th>finding</th><th class="num">sessions</th></tr></thead><tbody></tbody></table></div></div>
  </div>
</section>
<section id="session" hidden>
  <h2 id="session-title"></h2>
  <div id="refusal" hidden></div>
  <div id="violation" hidden></div>
  <p class="legend" id="legend">
    <span><svg width="14" height="14"><circle class="key create" cx="7" cy="7" r="5"/></svg> create</span>
    <span><svg width="14" height="14"><path class="key dispatch" d="M7 1 l5 6 l-5 6 l-5 -6 z"/></svg> dispatch</span>
    <span><svg width="14" height="14"><rect class="key delete" x="2" y="2" width="10" height="10"/></svg> delete</span>
    <span><svg width="14" height="14"><path class="key inherited" d="M7 1 l5 6 l-5 6 l-5 -6 z"/></svg> inherited (before the fork cut)</span>
    <span><svg width="14" height="14"><path class="key violation" d="M7 2 l5 10 h-10 z"/></svg> violation</span>
    <span><svg width="14" height="14"><circle class="key create related" cx="7" cy="7" r="5"/></svg> related</span>
    <span><svg width="14" height="14"><rect class="key gate-key" x="0" y="0" width="14" height="14"/></svg> recurring gate window</span>
    <span><svg width="6" height="14"><line class="key tick-key" x1="3" x2="3" y1="2" y2="10"/></svg> intended occurrence</span>
    <span>drag across the timeline to zoom; double-click or <button id="zoom-reset" type="button">all of it</button></span>
  </p>
  <div id="timeline"></div>
  <h2>Event</h2>
  <div id="detail">Hover over an event for its JSON and file line; click to keep it here.</div>
  <div id="findings-box"><h2>Findings</h2>
  <ul id="findings"></ul></div>
</section>
</main>
<script id="schedlog-summary" type="application/json">@SUMMARY@</script>
<script id="schedlog-data" type="application/json">@DATA@</script>
<script>
"use strict";
const SUMMARY = JSON.parse(document.getElementById("schedlog-summary").textContent);
const SESSIONS = JSON.parse(document.getElementById("schedlog-data").textContent);
const SVG = "http://www.w3.org/2000/svg";
function el(tag, attrs, text) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
function svg(tag, attrs, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
function iso(ms) { return ms === null || ms === undefined ? "" : new Date(ms).toISOString(); }

function renderFleet() {
  const cards = document.getElementById("verdict-counts");
  cards.replaceChildren(el("div", {class: "card"}, null));
  cards.firstChild.append(el("b", {}, SESSIONS.length), "sessions");
  for (const verdict of ["ok", "corrupt", "unreadable", "unsupported"]) {
    const n = SUMMARY.counts[verdict] || 0;
    if (!n && verdict !== "ok" && verdict !== "corrupt") continue;
    const card = el("div", {class: "card " + verdict, "data-verdict": verdict});
    card.append(el("b", {}, n), verdict);
    cards.append(card);
  }
  for (const [id, counted] of [["rules", SUMMARY.rules], ["refusals", SUMMARY.refusals]]) {
    const body = document.querySelector("#" + id + " tbody");
    body.replaceChildren();
    for (const [rule, n] of counted) {
      const row = el("tr");
      row.append(el("td", {class: "mono"}, rule), el("td", {class: "num"}, n));
      body.append(row);
    }
    if (!counted.length) {
      const none = el("tr", {class: "none"});
      none.append(el("td", {colspan: 2}, "none"));
      body.append(none);
    }
  }
  document.getElementById("refusals-box").hidden = !SUMMARY.refusals.length;
  for (const card of document.querySelectorAll(".card[data-verdict]")) {
    card.addEventListener("click", () => {
      const filter = document.getElementById("filter");
      filter.value = filter.value === card.dataset.verdict ? "" : card.dataset.verdict;
      applyFilter();
    });
  }
  fillSessions(sortKey, sortUp);
}
function applyFilter() {
  const words = document.getElementById("filter").value.trim().toLowerCase().split(/\\s+/).filter(Boolean);
  for (const row of document.querySelectorAll("tr.session-row")) {
    const text = row.dataset.search;
    row.hidden = !words.every(w => text.includes(w));
  }
  for (const card of document.querySelectorAll(".card[data-verdict]")) {
    card.classList.toggle("chosen", words.length === 1 && words[0] === card.dataset.verdict);
  }
}
document.getElementById("filter").addEventListener("input", applyFilter);
const COMMON = (() => {  // the folder every session's path starts with ("" where none is shared)
  const folders = SESSIONS.map(s => s.path.slice(0, s.path.lastIndexOf("/") + 1));
  let common = folders.length ? folders[0] : "";
  for (const f of folders) while (!f.startsWith(common)) common = common.slice(0, common.lastIndexOf("/", common.length - 2) + 1);
  return common;
})();
function shown(path) { return path.startsWith(COMMON) ? path.slice(COMMON.length) : path; }
function pathCell(path) {  // a path breaks after each slash, not mid-word; shown below COMMON, whole on hover
  const cell = el("td", {class: "path", title: path});
  const link = el("a", {href: "#"});
  shown(path).split("/").forEach((part, i, parts) => {
    link.append(part + (i < parts.length - 1 ? "/" : ""));
    if (i < parts.length - 1) link.append(el("wbr"));
  });
  cell.append(link);
  return [cell, link];
}
let sortKey = "verdict", sortUp = false;
const ORDER = {corrupt: 0, unreadable: 1, unsupported: 2, ok: 3};
function compare(a, b, key) {
  if (key === "verdict") return ORDER[a.verdict] - ORDER[b.verdict] || a.path.localeCompare(b.path);
  const x = a[key], y = b[key];
  if (x === y) return 0;
  if (x === null || x === undefined) return 1;
  if (y === null || y === undefined) return -1;
  return typeof x === "number" ? x - y : String(x).localeCompare(String(y));
}
function fillSessions(key, up) {
  const body = document.querySelector("#sessions tbody");
  const rows = SESSIONS.slice().sort((a, b) => up ? -compare(a, b, key) : compare(a, b, key));
  const fragment = document.createDocumentFragment();
  for (const s of rows) {
    const search = [s.path, s.verdict, s.rule || ""].join(" ").toLowerCase();
    const row = el("tr", {class: "session-row", "data-key": s.key, "data-verdict": s.verdict, "data-search": search});
    const [cell, link] = pathCell(s.path);
    link.setAttribute("href", "#session=" + s.key);
    row.append(cell, el("td", {class: s.verdict}, s.verdict), el("td", {class: "mono"}, s.rule || ""),
      el("td", {class: "num"}, s.events), el("td", {class: "num"}, s.bytes),
      s.first === null ? el("td", {class: "none"}, "none") : el("td", {}, iso(s.first)));
    fragment.append(row);
  }
  body.replaceChildren(fragment);
  applyFilter();
  for (const th of document.querySelectorAll("#sessions th")) {
    th.classList.toggle("sorted", th.dataset.key === key);
    th.classList.toggle("up", th.dataset.key === key && up);
  }
}
for (const th of document.querySelectorAll("#sessions th")) {
  th.addEventListener("click", () => {
    sortUp = sortKey === th.dataset.key ? !sortUp : false;
    sortKey = th.dataset.key;
    fillSessions(sortKey, sortUp);
  });
}

function show(mark, keep) {
  const detail = document.getElementById("detail");
  if (!keep && detail.dataset.kept) return;
  if (keep) detail.dataset.kept = "1";
  detail.textContent = mark[0] + " at line " + mark[2] + ", event " + mark[3] + (mark[5] ? " (" + mark[5] + ")" : "") +
    "\\n" + iso(mark[1]) + "\\n\\n" + mark[4];
}
function renderSession(s) {
  document.getElementById("session-title").textContent = s.path + (s.session ? " [" + s.session + "]" : "") +
    " \\u2014 " + s.verdict + ", profile " + s.profile + ", " + s.events + " events";
  const box = document.getElementById("violation");
  box.replaceChildren();
  box.hidden = !s.violation;
  const related = new Set();
  if (s.violation) {
    const v = s.violation;
    box.append(el("b", {class: "corrupt"}, v.rule), ": " + v.meaning, el("br"),
      "line " + v.line + ", event " + v.index + (v.pointer ? ", " + v.pointer : "") + ": " + v.message);
    for (const r of v.related) {
      if (r.index !== null) related.add(r.index);
      box.append(el("br"), "related: " + (r.line === null ? "" : "line " + r.line + ", ") +
        (r.index === null ? "" : "event " + r.index + ", ") + r.meaning);
    }
  }
  const refusal = document.getElementById("refusal");
  const errors = s.findings.filter(f => f[1] === "error");
  refusal.hidden = !(s.verdict !== "ok" && !s.violation);
  refusal.replaceChildren();
  if (!refusal.hidden) {
    refusal.append(el("b", {}, s.verdict.toUpperCase() + ": the log's format is refused"));
    for (const f of errors) refusal.append(el("br"), (f[2] ? "line " + f[2] + ": " : "") + f[0] + ": " + f[3]);
  }
  const findings = document.getElementById("findings");
  findings.replaceChildren(...s.findings.map(f => el("li", {}, f[1] + (f[2] ? " line " + f[2] : "") + ": " + f[0] + ": " + f[3])));
  document.getElementById("findings-box").hidden = !s.findings.length;
  current = {session: s, related: related, range: null};
  drawTimeline(s, related);
}
let current = null;
function drawTimeline(s, related) {
  const holder = document.getElementById("timeline");
  const lanes = s.lanes;
  const times = [];
  for (const lane of lanes) for (const m of lane.marks) times.push(m[1]);
  for (const g of s.gates) times.push(g[1]);
  if (s.cut !== null) times.push(s.cut);
  const width = Math.max(700, holder.clientWidth || 1000), label = 260, top = 24;
  const labels = lanes.map(lane => wrapped(lane.title, 36));
  const heights = labels.map(lines => Math.max(34, 14 * lines.length + 12));
  const tops = heights.map((h, i) => top + heights.slice(0, i).reduce((a, b) => a + b, 0));
  const lanesH = heights.reduce((a, b) => a + b, 0) || 34;
  const height = top + lanesH + 24;
  const root = svg("svg", {class: "timeline", width: width, height: height, viewBox: "0 0 " + width + " " + height});
  document.getElementById("legend").hidden = !times.length;
  if (!times.length) {
    root.append(svg("text", {x: 10, y: 20, class: "lane-label"}, "no schedule events"));
    holder.replaceChildren(root);
    return;
  }
  let lo = Math.min(...times), hi = Math.max(...times);
  if (hi === lo) { lo -= 60000; hi += 60000; }
  const pad = (hi - lo) * 0.03;
  lo -= pad; hi += pad;
  if (current && current.range) [lo, hi] = current.range;
  const x = t => label + (t - lo) / (hi - lo) * (width - label - 10);
  const step = tickStep(hi - lo);
  for (let t = Math.ceil(lo / step) * step; t <= hi; t += step) {
    root.append(svg("line", {class: "grid-line", x1: x(t), x2: x(t), y1: 18, y2: height - 20}));
    const tick = svg("text", {class: "axis", x: x(t), y: 14, "text-anchor": "middle"}, tickText(t, step));
    tick.append(svg("title", {}, iso(t)));
    root.append(tick);
  }
  brush(root, x, lo, hi, label, width, height);
  for (const [start, end] of s.gates) {
    const a = Math.max(x(start), label), b = Math.min(x(end), width - 10);
    if (b <= a) continue;
    const gate = svg("rect", {class: "gate", x: a, y: top - 4, width: b - a, height: lanesH + 4});
    gate.append(svg("title", {}, "recurring gate: no new batch until " + iso(end)));
    root.append(gate);
  }
  lanes.forEach((lane, i) => {
    const y = tops[i] + heights[i] / 2;
    const g = svg("g", {class: "lane", "data-id": lane.id});
    g.append(svg("line", {class: "lane-line", x1: label, x2: width - 10, y1: y, y2: y}));
    const name = svg("text", {x: 6, y: y + 4 - 7 * (labels[i].length - 1), class: "lane-label"});
    labels[i].forEach((line, n) => name.append(svg("tspan", {x: 6, dy: n ? 14 : 0}, line)));
    name.append(svg("title", {}, lane.title));
    g.append(name);
    const marks = lane.marks.filter(m => m[1] >= lo && m[1] <= hi);  // (a zoom shows part of the lane)
    for (const t of lane.ticks) {
      if (t < lo || t > hi) continue;
      g.append(svg("line", {class: "tick", x1: x(t), x2: x(t), y1: y - 12, y2: y - 6}));
    }
    if (marks.length > SUMMARY.aggregate) {
      const bins = new Map();
      for (const m of marks) { const c = Math.floor(x(m[1])); bins.set(c, (bins.get(c) || 0) + 1); }
      const most = Math.max(...bins.values());
      for (const [c, n] of bins) {
        const h = 4 + 10 * n / most;
        const bin = svg("rect", {class: "bin", x: c, y: y - h / 2, width: 1, height: h});
        bin.append(svg("title", {}, n + " events"));
        g.append(bin);
      }
      for (const m of marks) if (m[0] === "violation" || related.has(m[3])) drawMark(g, m, x, y, related);
    } else {
      for (const m of marks) drawMark(g, m, x, y, related);
    }
    root.append(g);
  });
  if (s.cut !== null && s.cut >= lo && s.cut <= hi) {
    root.append(svg("line", {class: "cut", x1: x(s.cut), x2: x(s.cut), y1: top - 8, y2: height - 16}));
    root.lastChild.append(svg("title", {}, "fork cut: events before it are inherited (seedLength " + s.seed + ")"));
  }
  holder.replaceChildren(root);
}
function wrapped(text, width) {  // a label's words in lines of at most `width` characters (a longer word cut)
  const lines = [];
  let line = "";
  for (const word of text.split(" ")) {
    for (let rest = word; rest.length; rest = rest.slice(width)) {
      const piece = rest.slice(0, width);
      if (line && (line + " " + piece).length > width) { lines.push(line); line = piece; }
      else line = line ? line + " " + piece : piece;
    }
  }
  return [...lines, line];
}
const STEPS = [1000, 5000, 15000, 60000, 300000, 900000, 3600000, 10800000, 21600000, 43200000, 86400000,
  604800000, 2592000000, 7776000000, 31536000000];
function tickStep(span) {  // the smallest step that gives at most 8 ticks
  return STEPS.find(s => span / s <= 8) || STEPS[STEPS.length - 1];
}
function tickText(t, step) {
  const text = iso(t);
  if (step >= 86400000) return text.slice(0, 10);
  if (step >= 60000) return text.slice(5, 16).replace("T", " ");
  return text.slice(11, 19);
}
function brush(root, x, lo, hi, label, width, height) {  // drag to zoom into a time range
  let start = null, box = null;
  const at = e => {
    const r = root.getBoundingClientRect();
    return Math.min(width - 10, Math.max(label, (e.clientX - r.left) * width / r.width));
  };
  root.addEventListener("mousedown", e => {
    start = at(e);
    box = svg("rect", {class: "brush", x: start, y: 0, width: 0, height: height});
    root.append(box);
  });
  root.addEventListener("mousemove", e => {
    if (start === null) return;
    const now = at(e);
    box.setAttribute("x", Math.min(start, now));
    box.setAttribute("width", Math.abs(now - start));
  });
  root.addEventListener("mouseup", e => {
    if (start === null) return;
    const a = Math.min(start, at(e)), b = Math.max(start, at(e));
    start = null;
    box.remove();
    if (b - a < 4) return;
    const t = px => lo + (px - label) / (width - label - 10) * (hi - lo);
    current.range = [t(a), t(b)];
    drawTimeline(current.session, current.related);
  });
  root.addEventListener("dblclick", resetZoom);
}
function resetZoom() {
  if (!current || !current.range) return;
  current.range = null;
  drawTimeline(current.session, current.related);
}
document.getElementById("zoom-reset").addEventListener("click", resetZoom);
function drawMark(g, m, x, y, related) {
  const cls = "mark " + m[0] + (related.has(m[3]) ? " related" : "");
  const attrs = {class: cls, "data-line": m[2], "data-index": m[3]};
  let node;
  if (m[0] === "create") node = svg("circle", {...attrs, cx: x(m[1]), cy: y, r: 6});
  else if (m[0] === "delete") node = svg("rect", {...attrs, x: x(m[1]) - 5, y: y - 5, width: 10, height: 10});
  else if (m[0] === "violation") node = svg("path", {...attrs, d: "M" + x(m[1]) + " " + (y - 9) + " l8 16 h-16 z"});
  else node = svg("path", {...attrs, d: "M" + x(m[1]) + " " + (y - 7) + " l6 7 l-6 7 l-6 -7 z"});
  node.append(svg("title", {}, m[0] + " \\u2014 line " + m[2] + ", event " + m[3] + (m[5] ? " (" + m[5] + ")" : "") + "\\n" + m[4]));
  node.addEventListener("mouseenter", () => show(m, false));
  node.addEventListener("click", () => show(m, true));
  g.append(node);
}
function route() {
  const match = /^#session=(\\d+)$/.exec(location.hash);
  const s = match ? SESSIONS.find(v => v.key === Number(match[1])) : null;
  document.getElementById("fleet").hidden = !!s;
  document.getElementById("session").hidden = !s;
  document.getElementById("where").textContent = s ? s.path : SESSIONS.length + " session(s)";
  const detail = document.getElementById("detail");
  delete detail.dataset.kept;
  if (s) renderSession(s);
}
renderFleet();
window.addEventListener("hashchange", route);
if (SESSIONS.length === 1 && !location.hash) history.replaceState(null, "", "#session=" + SESSIONS[0].key);
route();
</script>
</body>
</html>
"""
