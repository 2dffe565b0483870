"""docs/benchmarks.md has one source (issue 31): every section is rendered from
tests/benchmarks/results/*.json by the renderer tests/benchmarks/sections.py names, between its own
markers, so re-rendering the page changes nothing, and a section rewritten alone leaves the rest."""
from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "tests" / "benchmarks"
PAGE = ROOT / "docs" / "benchmarks.md"


@pytest.fixture(scope="module")
def sections():
    sys.path.insert(0, str(BENCH))
    try:
        yield importlib.import_module("sections")
    finally:
        sys.path.remove(str(BENCH))


def test_rendering_the_page_from_the_results_changes_nothing(sections):
    diff = sections.check()
    assert not diff, ("docs/benchmarks.md differs from what tests/benchmarks/results/*.json give; run "
                      "`python tests/benchmarks/make_report.py` (or fix the renderer):\n" + "\n".join(diff[:80]))


def test_every_line_of_the_page_is_inside_a_section(sections):
    text = PAGE.read_text(encoding="utf-8")
    names = re.findall(r"^<!-- ([\w-]+):start -->$", text, re.M)
    assert names == [n for n in sections.NAMES if f"<!-- {n}:start -->" in text]     # page order
    assert len(names) >= 20 and len(set(names)) == len(names)
    outside = re.sub(r"^<!-- ([\w-]+):start -->\n.*?^<!-- \1:end -->$", "", text, flags=re.M | re.S)
    assert outside.strip() == ""


def test_a_section_rewritten_alone_leaves_the_page_as_it_was(sections, tmp_path, monkeypatch):
    copy = tmp_path / "benchmarks.md"
    copy.write_text(PAGE.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(sections, "PAGE", copy)
    for name in ("sync", "hybrid-peers", "one-file"):
        sections.write_section(name)
    assert copy.read_text(encoding="utf-8") == PAGE.read_text(encoding="utf-8")
    damaged = copy.read_text(encoding="utf-8").replace("| first SYNC within", "| hand-edited first SYNC within")
    copy.write_text(damaged, encoding="utf-8")
    assert any("hand-edited" in line for line in sections.check())      # the check sees a hand edit
    sections.write_section("sync")
    assert "hand-edited" not in copy.read_text(encoding="utf-8")
