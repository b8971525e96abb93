"""`schedlog report`: one self-contained HTML file (inline CSS, SVG drawn by inline JavaScript).

It works from `file://` with no network: the sessions' picture data (`tools.sessionview`) is
embedded as JSON in a non-executed script element, every `<` in it written `\\u003c` so that no
log text can end the element; the page builds its DOM from that data with `textContent` and
attributes only (never markup from a string), so prompts and ids from logs stay text. The page
itself (HTML, CSS and JavaScript) is `page.html` beside this module, its `@TITLE@`, `@SUMMARY@`
and `@DATA@` filled in here.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from importlib.resources import files
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
    template = files("replay.cli.output").joinpath("page.html").read_text(encoding="utf-8")
    return (
        template.replace("@TITLE@", safe_title)
        .replace("@SUMMARY@", data_json(summary))
        .replace("@DATA@", data_json(list(views)))
    )
