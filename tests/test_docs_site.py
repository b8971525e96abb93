"""The documentation site (issue 54): a README of at most 250 lines that leads to it, every page
in the site's navigation, and `mkdocs build --strict` passing (a broken link, a page missing
from the build or a CLI reference that does not render fails it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from tests.documentation import PAGES, README, ROOT

MKDOCS = Path(sys.executable).with_name("mkdocs")


def test_the_readme_is_short_and_leads_to_every_page() -> None:
    assert README.count("\n") <= 250
    linked = set(re.findall(r"\]\(docs/([\w-]+\.md)", README))
    pages = {p.name for p in PAGES if p.parent.name == "docs"} - {"index.md"}
    assert pages <= linked, sorted(pages - linked)


def _nav_pages(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [p for item in nav for p in _nav_pages(item)]
    if isinstance(nav, dict):
        return [p for value in nav.values() for p in _nav_pages(value)]
    return []


class _Config(yaml.SafeLoader):
    """The safe loader, reading mkdocs' `!!python/name:` tags (a fence formatter) as their names."""


_Config.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda loader, suffix, node: suffix)


def test_every_page_is_in_the_navigation() -> None:
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), _Config)  # (safe: _Config)
    listed = _nav_pages(config["nav"])
    pages = sorted(p.name for p in PAGES if p.parent.name == "docs")
    assert sorted(listed) == pages


def test_mkdocs_builds_the_site_strictly(tmp_path: Path) -> None:
    """The site builds with --strict, the CLI reference (mkdocs-click) holds every command."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [str(MKDOCS), "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "WARNING" not in done.stderr, done.stderr
    cli = (tmp_path / "site" / "cli" / "index.html").read_text(encoding="utf-8")
    from replay.cli.group import every_command

    for name in every_command():
        assert f'id="{name}"' in cli, name
    architecture = (tmp_path / "site" / "architecture" / "index.html").read_text(encoding="utf-8")
    assert '<pre class="mermaid"><code>flowchart TD' in architecture  # (drawn by the theme's Mermaid)
