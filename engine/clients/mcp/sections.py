"""read(section=): one section of a markdown document, found by heading in the document's own text.

The headings come from a CommonMark parse (markdown-it-py, block structure only): ATX and setext
headings at the top level (a ``#`` line in a code fence is code), after YAML front matter. A
section is its heading line through the end of its sub-sections (up to the next heading of the same
or a higher level), cut from the text exactly as stored. Chunks are not used: a chunk may hold
several small sections, or start before the first heading, so chunk heading paths cannot say where
a section is."""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

PATH_SEPARATOR = " > "
_FRONT_MATTER = re.compile(r"---[ \t]*\r?\n.*?^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL | re.MULTILINE)


@dataclass(frozen=True)
class Section:
    path: tuple[str, ...]       # the titles of the enclosing headings, itself last
    start: int                  # its heading line's first character
    end: int                    # the end of its last sub-section

    @property
    def heading(self) -> str:
        return PATH_SEPARATOR.join(self.path)


@lru_cache(maxsize=1)
def _parser():
    from markdown_it import MarkdownIt
    md = MarkdownIt("commonmark")
    md.core.ruler.disable(["inline", "text_join"])     # block structure is all we read
    return md


def sections(text: str) -> list[Section]:
    """Every heading's section, in document order."""
    front = _FRONT_MATTER.match(text)
    body = front.end() if front else 0
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text[body:])]
    found: list[tuple[int, int, str]] = []          # (start, level, title)
    tokens = _parser().parse(text[body:])
    for n, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.level == 0 and tok.map:
            title = " ".join(tokens[n + 1].content.split()) if n + 1 < len(tokens) else ""
            found.append((body + starts[tok.map[0]], int(tok.tag[1]), title))
    out: list[Section] = []
    stack: list[tuple[int, str]] = []               # (level, title) of the enclosing headings
    for i, (start, level, title) in enumerate(found):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = next((s for s, lv, _ in found[i + 1:] if lv <= level), len(text))
        out.append(Section(tuple(t for _, t in stack), start, end))
    return out


def _key(path: str | tuple[str, ...]) -> list[str]:
    parts = path.split(PATH_SEPARATOR.strip()) if isinstance(path, str) else path
    return [" ".join(p.split()).lower() for p in parts]


def find(text: str, wanted: str) -> list[Section]:
    """The sections whose heading path ends with ``wanted`` ('Certificates', 'Replication > Certificates'),
    compared without case and extra spaces, in document order."""
    key = _key(wanted)
    if not any(key):
        return []
    return [s for s in sections(text) if _key(s.path)[-len(key):] == key]


def section_text(text: str, section: Section) -> str:
    return text[section.start:section.end].rstrip()
