"""docs/README.md indexes every page of docs/ once, under one of its four kinds (tutorial, reference,
operations, internals), and every link of the index leads to a file that exists."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
INDEX = DOCS / "README.md"
KINDS = ("Tutorial", "Reference", "Operations", "Internals")
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


def _sections() -> dict[str, str]:
    parts = re.split(r"^## ", INDEX.read_text(encoding="utf-8"), flags=re.M)[1:]
    return {part.split(":", 1)[0].split("\n", 1)[0].strip(): part for part in parts}


def test_every_page_is_listed_once_under_a_kind():
    sections = _sections()
    assert [k for k in KINDS if k in sections] == list(KINDS)
    listed = [link for kind in KINDS for link in LINK.findall(sections[kind]) if "/" not in link]
    pages = sorted(p.name for p in DOCS.glob("*.md") if p.name != "README.md")
    assert sorted(set(listed)) == pages, "pages missing from docs/README.md: " + ", ".join(
        sorted(set(pages) - set(listed)))
    assert len(listed) == len(set(listed)), "a page listed twice"


def test_every_link_of_the_index_exists():
    missing = [link for link in LINK.findall(INDEX.read_text(encoding="utf-8"))
               if "://" not in link and not (DOCS / link).resolve().exists()]
    assert missing == []


def test_the_readme_points_at_the_index():
    assert "docs/README.md" in (ROOT / "README.md").read_text(encoding="utf-8")
