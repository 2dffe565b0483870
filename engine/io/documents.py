"""Reading document files for LOAD DATA: markdown, text, HTML and PDF, one row per file.

Each file gives the fields ``path`` (relative to the glob's prefix), ``title``, ``body``, ``modified``,
``size``, ``sha256`` and its front matter keys (YAML between ``---`` lines, read by python-frontmatter
and PyYAML's safe loader). Markdown headings come from markdown-it-py, HTML becomes markdown with
markdownify over a BeautifulSoup tree (scripts and styles dropped), PDF is read by pypdf (the
optional ``pdf`` extra). A file that cannot be read (a binary file: NUL bytes, a damaged PDF) raises
``Unreadable`` with the reason; the loader skips it with a Warning
(``tesseradb.sql.statements.load_documents``). Nothing else is dropped silently: text that is not
UTF-8 is read as Windows-1252, and front matter that is not valid YAML stays in the text; each such
file gets a Warning naming it (``Document.notes``).

No file can exhaust the process: only a regular file is opened (``O_NONBLOCK``, its type checked after
the open: a FIFO or device swapped in after the glob is skipped, never waited on), at most
``MAX_DOCUMENT_BYTES`` are read, front matter is at most ``MAX_FRONT_VALUES`` values and
``MAX_FRONT_DEPTH`` levels once its YAML aliases are expanded (a "billion laughs" file is skipped), and
HTML nested deeper than ``MAX_HTML_DEPTH`` is flattened below that depth (its text kept)."""
from __future__ import annotations

import codecs
import datetime
import functools
import hashlib
import os
import re
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tesseradb import errors

# the reader of each document extension; a .txt file is a document unless the statement has
# FIELDS or LINES clauses (tesseradb.sql.statements.load_documents.is_document_load)
KINDS = {".md": "markdown", ".markdown": "markdown", ".txt": "text", ".html": "html", ".htm": "html",
         ".pdf": "pdf"}
FILE_FIELDS = ("path", "title", "body", "modified", "size", "sha256")
PDF_EXTRA = "reading PDF files needs pypdf: pip install 'tesseradb[pdf]'"
TITLE_SCAN = 1 << 20            # the first heading is looked for in the first megabyte of markdown
TITLE_FIRST = 1 << 12           # ... and first in its first 4 KB (first_heading)
READ_TRIES = 3                  # a file that changes while it is read is read again, this many times
MAX_DOCUMENT_BYTES = 128 << 20  # a bigger file is skipped unread, with a Warning
MAX_FRONT_VALUES = 100_000      # front matter values once YAML aliases are expanded
MAX_FRONT_DEPTH = 64            # nesting of front matter values (a self-referencing alias is endless)
MAX_HTML_DEPTH = 64             # HTML elements below this depth are flattened into their text


class Unreadable(Exception):
    """A file that is skipped: the message is the reason."""


@dataclass
class Document:
    path: str                   # relative to the pattern's prefix, '/'-separated
    file: str                   # the file as the glob found it
    title: str
    body: str
    modified: str               # 'YYYY-MM-DD HH:MM:SS' UTC, the file's modification time
    size: int
    sha256: str
    front: dict[str, Any] = field(default_factory=dict)     # front matter, as JSON values
    notes: list[str] = field(default_factory=list)          # what was read other than asked (a Warning each)


@dataclass(frozen=True)
class Snapshot:
    """A file's bytes, read whole while its size and modification time stayed the same."""
    data: bytes
    sha256: str
    mtime_ns: int
    size: int


def kind_of(path: str) -> str | None:
    return KINDS.get(os.path.splitext(path)[1].lower())


def snapshot(path: str) -> Snapshot:
    """Read the file whole; a file changed during the read is read again (``Unreadable`` if it keeps
    changing), so the hash and the stored text always come from the same bytes."""
    for _ in range(READ_TRIES):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except OSError as exc:
            raise Unreadable(f"cannot read the file: {exc.strerror or exc}") from None
        try:
            with open(fd, "rb", closefd=True) as f:
                before = os.fstat(f.fileno())
                if not stat.S_ISREG(before.st_mode):    # a FIFO opened with O_NONBLOCK does not wait
                    raise Unreadable("not a regular file (a FIFO, a device or a folder)")
                if before.st_size > MAX_DOCUMENT_BYTES:
                    raise Unreadable(f"larger than the {MAX_DOCUMENT_BYTES >> 20} MiB a document may be")
                data = f.read(MAX_DOCUMENT_BYTES + 1)
                after = os.fstat(f.fileno())
        except OSError as exc:
            raise Unreadable(f"cannot read the file: {exc.strerror or exc}") from None
        if len(data) > MAX_DOCUMENT_BYTES:
            raise Unreadable(f"larger than the {MAX_DOCUMENT_BYTES >> 20} MiB a document may be")
        if (before.st_mtime_ns, before.st_size) == (after.st_mtime_ns, after.st_size) == \
                (after.st_mtime_ns, len(data)):
            return Snapshot(data, hashlib.sha256(data).hexdigest(), after.st_mtime_ns, len(data))
    raise Unreadable("the file kept changing while it was read")


def parse(path: str, relative: str, snap: Snapshot) -> Document:
    """The document of one file (``Unreadable`` when it cannot be decoded)."""
    kind = kind_of(path) or "text"
    notes: list[str] = []
    title, body, front = READERS[kind](snap.data, notes)
    stem = os.path.splitext(os.path.basename(path))[0]
    modified = datetime.datetime.fromtimestamp(snap.mtime_ns / 1e9, datetime.timezone.utc)
    return Document(relative, path, title or stem, body, modified.strftime("%Y-%m-%d %H:%M:%S"),
                    snap.size, snap.sha256, front, notes)


# -- text and front matter ---------------------------------------------------------------------------
#: The declared fallback for a text file that is not valid UTF-8: Windows-1252, the usual encoding of
#: such notes (a superset of Latin-1's printable characters); the five bytes it leaves undefined are
#: read as Latin-1 (C1 controls), so every byte decodes.
FALLBACK_ENCODING = "cp1252"


_CP1252_HOLES = re.compile(rb"[\x81\x8d\x8f\x90\x9d]")


def _cp1252(data: bytes) -> str:
    """Windows-1252, its five undefined bytes read as Latin-1."""
    parts = _CP1252_HOLES.split(data)
    out = [parts[0].decode(FALLBACK_ENCODING)]
    for hole, part in zip(_CP1252_HOLES.findall(data), parts[1:]):
        out += [chr(hole[0]), part.decode(FALLBACK_ENCODING)]
    return "".join(out)


def decode(data: bytes, notes: list[str] | None = None) -> str:
    """UTF-8 (a BOM is dropped; UTF-16 with a BOM is read too), line ends made ``\\n``. Bytes that are
    not UTF-8 are read as :data:`FALLBACK_ENCODING`, with a note (``notes``) saying so."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            text = data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise Unreadable(f"not valid UTF-16 text: {exc.reason} at byte {exc.start}") from None
    else:
        if b"\0" in data:
            raise Unreadable("a binary file (it contains NUL bytes), not text")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            if notes is None:
                raise Unreadable(f"not UTF-8 text: byte 0x{data[exc.start]:02x} at offset {exc.start} "
                                 "cannot be decoded") from None
            line = data.count(b"\n", 0, exc.start) + 1
            notes.append(f"not UTF-8 (byte 0x{data[exc.start]:02x} on line {line}); read as "
                         f"{FALLBACK_ENCODING} (Windows-1252)")
            text = _cp1252(data)
    if "\0" in text:
        raise Unreadable("a binary file (it contains NUL characters), not text")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def split_front_matter(text: str, notes: list[str] | None = None) -> tuple[dict[str, Any], str]:
    """(front matter as JSON values, the text after it). No front matter: ({}, text). Front matter that
    is not valid YAML (or not a mapping) is kept as text, with a note naming the line, when ``notes``
    is given (else ``Unreadable``). A value YAML reads as a timestamp but that is no date
    (``2024-13-45``) is kept as the text written."""
    import yaml
    from frontmatter.default_handlers import YAMLHandler
    handler = YAMLHandler()
    if not handler.detect(text):
        return {}, text
    raw = ""
    try:
        raw, content = handler.split(text)
    except ValueError:
        return {}, text                     # an opening '---' with no closing one: a thematic break
    try:
        meta = yaml.load(raw, Loader=_front_loader())  # noqa: S506 (a SafeLoader: no tags run code)
    except RecursionError:
        raise Unreadable(f"its front matter is nested more than {MAX_FRONT_DEPTH} levels deep") from None
    except yaml.YAMLError as exc:
        # the line that opened what never closed (a flow sequence...), else where the parser stopped;
        # the raw front matter starts with the opening '---' line's line break: its line 0 is the file's 1
        where = getattr(exc, "context_mark", None) or getattr(exc, "problem_mark", None)
        first = 1 if raw.startswith(("\n", "\r")) else 2
        at = f" (line {where.line + first})" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        message = f"its front matter is not valid YAML{at}: {problem}"
        if notes is None:
            raise Unreadable(message) from None
        notes.append(f"{message}; loaded with the front matter kept as text")
        return {}, text
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        message = f"its front matter is a YAML {type(meta).__name__}, not a mapping of keys to values"
        if notes is None:
            raise Unreadable(message)
        notes.append(f"{message} (line 2); loaded with the front matter kept as text")
        return {}, text
    budget = _Budget()
    return {str(k): json_value(v, budget) for k, v in meta.items()}, content.lstrip("\n")


def _front_loader() -> type:
    """PyYAML's SafeLoader, with a timestamp that is not a real date kept as its text."""
    import yaml

    class FrontLoader(yaml.SafeLoader):
        pass

    def timestamp(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
        try:
            return yaml.SafeLoader.construct_yaml_timestamp(loader, node)
        except ValueError:
            return loader.construct_scalar(node)

    FrontLoader.add_constructor("tag:yaml.org,2002:timestamp", timestamp)
    return FrontLoader


class _Budget:
    """How many values a front matter may still give once its aliases are expanded: YAML shares an
    aliased value, a JSON copy repeats it, so 353 bytes can stand for 387 million strings."""

    def __init__(self) -> None:
        self.left = MAX_FRONT_VALUES

    def take(self, depth: int) -> None:
        self.left -= 1
        if self.left < 0:
            raise Unreadable(f"its front matter expands to more than {MAX_FRONT_VALUES:,} values "
                             "(YAML aliases repeated)")
        if depth > MAX_FRONT_DEPTH:
            raise Unreadable(f"its front matter is nested more than {MAX_FRONT_DEPTH} levels deep")


def json_value(value: Any, budget: _Budget | None = None, depth: int = 0) -> Any:
    """A YAML value as JSON lines would give it: dates as text, nested values kept (within the
    ``budget`` of values and depth)."""
    budget = budget or _Budget()
    budget.take(depth)
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value.strftime("%Y-%m-%d %H:%M:%S") if not value.microsecond else value.isoformat(sep=" ")
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): json_value(v, budget, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [json_value(v, budget, depth + 1) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _front_title(front: dict[str, Any]) -> str | None:
    title = front.get("title")
    if isinstance(title, (str, int, float)) and not isinstance(title, bool) and str(title).strip():
        return str(title).strip()
    return None


# -- the readers ------------------------------------------------------------------------------------------
def read_markdown(data: bytes, notes: list[str] | None = None) -> tuple[str | None, str, dict[str, Any]]:
    front, body = split_front_matter(decode(data, notes), notes)
    return _front_title(front) or first_heading(body), body, front


def read_text(data: bytes, notes: list[str] | None = None) -> tuple[str | None, str, dict[str, Any]]:
    front, body = split_front_matter(decode(data, notes), notes)
    return _front_title(front), body, front


def first_heading(markdown: str) -> str | None:
    """The text of the first ATX or setext heading (markdown-it-py's CommonMark parser).

    The page is parsed for its blocks only; the inline parser then runs on the headings, first to
    last until one has text, with the link references the block parse collected: what a whole parse
    gives those headings, without parsing every paragraph's inline content (most of a page's parse).

    The first :data:`TITLE_FIRST` characters (cut at a line break) are parsed first: CommonMark's
    block structure up to a line depends on the lines before it only, so a heading found there is
    the page's first heading. Its text is the whole parse's too unless it holds a ``[``, which a
    link reference defined further down may turn into a link: then, or when that part has no
    heading with text, the page (up to :data:`TITLE_SCAN`) is parsed whole."""
    scan = markdown if len(markdown) <= TITLE_SCAN else markdown[:markdown.rfind("\n", 0, TITLE_SCAN) + 1]
    if len(scan) > TITLE_FIRST:
        head = scan[:scan.rfind("\n", 0, TITLE_FIRST) + 1]
        found = _heading_text(head, sure_only=True) if head else _UNSURE
        if found is not _UNSURE:
            return found
    return _heading_text(scan, sure_only=False)


_UNSURE = object()      # the first part of a page did not settle its title


def _heading_text(scan: str, sure_only: bool) -> Any:
    env: dict[str, Any] = {}
    tokens = _block_parser().parse(scan, env)
    for n, token in enumerate(tokens[:-1]):
        if token.type == "heading_open":
            content = tokens[n + 1].content
            if sure_only and "[" in content:
                return _UNSURE
            (inline,) = _inline_parser().parseInline(content, env)
            text = "".join(c.content for c in inline.children or () if c.type in ("text", "code_inline"))
            if text.strip():
                return text.strip()
    return _UNSURE if sure_only else None


@functools.lru_cache(maxsize=1)
def _block_parser() -> Any:
    from markdown_it import MarkdownIt     # loads with the first markdown document
    return MarkdownIt("commonmark").disable(["inline", "text_join"])


@functools.lru_cache(maxsize=1)
def _inline_parser() -> Any:
    from markdown_it import MarkdownIt
    return MarkdownIt("commonmark")


_DROPPED_TAGS = ("script", "style", "noscript", "template", "head", "svg", "iframe", "object")


def read_html(data: bytes, notes: list[str] | None = None) -> tuple[str | None, str, dict[str, Any]]:
    """Readable text with headings as markdown headings (markdownify); the title is <title>, else
    the first heading."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter
    soup = BeautifulSoup(decode(data, notes), "html.parser")
    title_tag = soup.find("title")
    title = title_tag.get_text(" ", strip=True) if title_tag is not None else ""
    for tag in soup.find_all(_DROPPED_TAGS):
        tag.decompose()
    _flatten_deep(soup)
    if not title:
        heading = soup.find(re.compile(r"^h[1-6]$"))
        title = heading.get_text(" ", strip=True) if heading is not None else ""
    body = MarkdownConverter(heading_style="ATX", bullets="-").convert_soup(soup)
    body = re.sub(r"\n{3,}", "\n\n", body).strip("\n") + "\n" if body.strip() else ""
    return title or None, body, {}


_BLOCKS = frozenset(("div", "p", "section", "article", "li", "ul", "ol", "table", "tr", "blockquote", "pre",
                     "h1", "h2", "h3", "h4", "h5", "h6", "br", "hr", "main", "aside", "header", "footer"))


def _flatten_deep(soup: Any) -> None:
    """Elements below ``MAX_HTML_DEPTH`` unwrapped into their text (a block element leaves a line
    break), so markdownify, which recurses once per level, never meets more than that depth. The
    walk is iterative: the depth of the file does not matter."""
    from bs4 import Tag
    stack = [(soup, 0)]
    while stack:
        node, depth = stack.pop()
        if depth >= MAX_HTML_DEPTH:
            for inner in [t for t in node.descendants if isinstance(t, Tag)]:
                if inner.name in _BLOCKS:
                    inner.insert_before("\n")
                    inner.insert_after("\n")
                inner.unwrap()
            continue
        stack.extend((child, depth + 1) for child in node.children if isinstance(child, Tag))


def read_pdf(data: bytes, notes: list[str] | None = None) -> tuple[str | None, str, dict[str, Any]]:
    """The text of every page (pypdf), pages separated by a form feed on its own line, as pdftotext
    separates them; the title is the PDF's own Title, when it has one."""
    try:
        import pypdf
    except ImportError:
        raise MissingExtra(PDF_EXTRA) from None
    import io
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable("an encrypted PDF (it needs a password)")
        pages = [page.extract_text() or "" for page in reader.pages]
        title = (reader.metadata.title if reader.metadata else None) or None
    except Unreadable:
        raise
    except Exception as exc:        # pypdf raises many kinds for damaged files (PdfReadError, KeyError, ...)
        raise Unreadable(f"not a readable PDF: {exc}") from None
    return (str(title).strip() or None) if title else None, "\n\f\n".join(p.strip("\n") for p in pages), {}


class MissingExtra(Unreadable):
    """The reader's library is not installed (the message names the extra to install)."""


READERS: dict[str, Callable[[bytes, list[str]], tuple[str | None, str, dict[str, Any]]]] = {
    "markdown": read_markdown, "text": read_text, "html": read_html, "pdf": read_pdf,
}


def missing_extra_error(message: str) -> errors.NotSupportedError:
    return errors.NotSupportedError(f"LOAD DATA: {message}")
