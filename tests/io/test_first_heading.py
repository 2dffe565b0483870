"""A markdown document's title is its first heading's text: the block parse plus the inline parse of
the headings gives what a whole CommonMark parse of the page gives (link references included)."""
from __future__ import annotations

import pytest
from markdown_it import MarkdownIt

from tesseradb.io import documents


def whole_parse_title(markdown: str) -> str | None:
    tokens = MarkdownIt("commonmark").parse(markdown)
    for n, token in enumerate(tokens[:-1]):
        if token.type == "heading_open":
            text = "".join(c.content for c in tokens[n + 1].children or () if c.type in ("text", "code_inline"))
            if text.strip():
                return text.strip()
    return None


CASES = [
    ("# Plain title\n\nbody", "Plain title"),
    ("intro [a](http://x)\n\n## *Emphasis* and `code`\n", "Emphasis and code"),
    ("[ref]: /url\n\n# [linked][ref] title\n", "linked title"),          # the reference is resolved
    ("# [not linked][nowhere]\n", "[not linked][nowhere]"),
    ("#\n\n## \n\nSetext *title*\n===\n", "Setext title"),             # empty headings are passed over
    ("```\n# in a fence\n```\n\nText\n---\n", "Text"),
    ("> # quoted\n", "quoted"),
    ("no heading at all\n", None),
    ("# a \\*b\\* &amp; c\r\n", "a *b* & c"),
]


@pytest.mark.parametrize("markdown, title", CASES)
def test_first_heading_is_the_whole_parse_title(markdown, title):
    assert documents.first_heading(markdown) == title == whole_parse_title(markdown)


# The first part of a page is parsed first (documents.TITLE_FIRST): a heading found there is the whole
# parse's, unless a link reference further down could change its text, or the part ends before the
# setext underline of its first heading.
LONG = [
    ("# Title\n\n" + "text\n" * 50, "Title"),
    ("text\n" * 50 + "# Late title\n", "Late title"),
    ("para\n" * 10 + "\nSetext title\n" + "===\n" + "more\n" * 40, "Setext title"),
    ("para\n" * 10 + "Setext\n" + "---\n" + "more\n" * 40, "para" * 10 + "Setext"),      # soft breaks are no text
    ("# [linked][ref] title\n\n" + "text\n" * 50 + "\n[ref]: /url\n", "linked title"),
    ("# [not linked][nowhere]\n\n" + "text\n" * 50, "[not linked][nowhere]"),
    ("```\n" + "# in a fence\n" * 30 + "```\n\n# After the fence\n", "After the fence"),
    ("#\n\n" + "text\n" * 40 + "## Second *one*\n", "Second one"),
    ("> quoted\n" * 20 + "> # quoted heading\n" + "text\n" * 20, "quoted heading"),
    ("no heading\n" * 60, None),
]


@pytest.mark.parametrize("first", [16, 40, 64, 1 << 12])
@pytest.mark.parametrize("markdown, title", CASES + LONG)
def test_first_part_gives_the_whole_parse_title(monkeypatch, markdown, title, first):
    monkeypatch.setattr(documents, "TITLE_FIRST", first)
    assert documents.first_heading(markdown) == title == whole_parse_title(markdown)
