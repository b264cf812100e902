"""The README and the docs pages: every relative link resolves (the file or folder exists and, for a link with
``#anchor``, the target page has a heading, by GitHub's slug, or an ``<a id>`` of that name; web links are not
fetched; links inside code are text, not links), and lists of registered names are those of the registry.
(Their commands run in ``tests/test_readme.py``.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from neurips26.methods.frameselect import SELECTORS

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def unfenced(text: str) -> str:
    """``text`` without its fenced code blocks."""
    return re.sub(r"^(```|~~~).*?^\1[^\n]*$", "", text, flags=re.S | re.M)


def prose(text: str) -> str:
    """``text`` without fenced code blocks and inline code spans."""
    return re.sub(r"(`+)(?:(?!\1).)+?\1", "", unfenced(text), flags=re.S)


def anchors(page: Path) -> set[str]:
    """The anchors GitHub makes for ``page``: one per heading (repeats get -1, -2, ...) and every ``<a id|name>``."""
    text = page.read_text(encoding="utf-8")
    found: set[str] = set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", unfenced(text), flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return found


def links(page: Path) -> list[str]:
    return [target for target in LINK.findall(prose(page.read_text(encoding="utf-8")))
            if not re.match(r"[a-z][a-z0-9+.-]*:", target)]  # http:, https:, mailto: are not fetched


def test_the_pages_have_links() -> None:
    assert len(PAGES) > 5 and sum(len(links(page)) for page in PAGES) > 20


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.exists():
            broken.append(f"{target}: no {resolved.relative_to(ROOT) if resolved.is_relative_to(ROOT) else resolved}")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target}: no heading or <a id> {anchor!r} in {resolved.relative_to(ROOT)}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_frameselect_page_lists_every_registered_selector_and_no_other() -> None:
    text = (ROOT / "docs" / "methods" / "frameselect.md").read_text(encoding="utf-8")
    listed = text.split("Selectors (the registry `SELECTORS`", 1)[1].split("\n\n", 1)[0].split("Each module", 1)[0]
    assert set(re.findall(r"`(\w+)`", listed)) - {"SELECTORS"} == set(SELECTORS.names())
