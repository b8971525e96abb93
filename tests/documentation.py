"""The documentation as the tests read it: the README and the pages of the site (`docs/*.md`,
built by MkDocs). Every fenced block of every page is run or checked (test_readme_snippets.py);
tests that hold a page's sentence or section find it here, wherever it was moved."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README_PATH = ROOT / "README.md"
PAGES = [README_PATH, *sorted((ROOT / "docs").glob("*.md"))]
"""The README first (its first block is the set-up command CI runs), then the site's pages."""
TEXTS = {page: page.read_text(encoding="utf-8") for page in PAGES}
README = TEXTS[README_PATH]
ALL = "\n".join(TEXTS.values())
"""Every page's text, for a test that holds a sentence wherever it stands."""
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
BLOCKS = [
    (m.group(1), m.group(2), f"{page.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}")
    for page, text in TEXTS.items()
    for m in FENCE.finditer(text)
]
"""Each fenced block: its language, its body, and where it starts (`docs/verify.md:12`)."""
_HEADING = re.compile(r"^(#{1,6}) (.+)$", re.M)


def section(title: str) -> str:
    """The text under the heading `title` (at any level, on any page) up to the next heading of
    the same or a higher level; KeyError where no page has it."""
    for text in TEXTS.values():
        for m in _HEADING.finditer(text):
            if m.group(2).strip() == title:
                level = len(m.group(1))
                rest = text[m.end() :]
                stop = re.search(rf"^#{{1,{level}}} ", rest, re.M)
                return rest[: stop.start()] if stop else rest
    raise KeyError(title)


def page(name: str) -> str:
    """A page of the site (`verify.md`), or the README (`README.md`)."""
    return TEXTS[README_PATH if name == "README.md" else ROOT / "docs" / name]
