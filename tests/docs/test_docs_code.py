"""Every code block of README.md and docs/*.md runs (issue 14 §6): the docs cannot drift from the
program.

A page is one session, run top to bottom in a fresh folder that holds a copy of sql_examples/:
- a ```sql block runs through the installed shell in batch mode against the page's database file
  (a later block may use a table an earlier one created). A block whose first line is
  ``-- expect error`` must fail with a MySQL-style error; one whose first line is ``-- syntax`` is a
  grammar sketch (``[optional]`` parts, placeholders) and is only shown.
- a ```python block runs as a script in the same folder (it may read what an earlier block wrote).
Other fences (```sh, ```text, output listings) are not run. An output listing (a bare ``` or ```text
fence) right after a block that runs is what that block prints, and is checked against it (issue 36;
``listing_pattern``: table borders and column widths, timings, float digits after the fourth
significant one and a ``...`` inside a line are free); a listing preceded by
``<!-- illustration: not checked -->`` is shown only. Examples read only what the repository
ships (the copy of sql_examples/, its data/ folder); nothing beside the checkout. The page's database file
is ``page.db`` unless the page names its own in an HTML comment, ``<!-- docs-test database: docs.db -->``,
so that its Python blocks can open the file its SQL blocks wrote.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
TESSERA = str(Path(sys.executable).parent / "tessera")
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```", re.M | re.S)
RUN = ("sql", "python")


def blocks(page: Path) -> list[tuple[str, str]]:
    """(language, code) of the blocks that run, in page order."""
    return [(lang, code) for lang, code, _ in blocks_with_listings(page)]


ANY_FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
ILLUSTRATION = "<!-- illustration: not checked -->"


def blocks_with_listings(page: Path) -> list[tuple[str, str, str | None]]:
    """(language, code, the output listing right after it or None) of the blocks that run."""
    text = page.read_text(encoding="utf-8")
    fences = list(ANY_FENCE.finditer(text))
    out = []
    for n, m in enumerate(fences):
        if m.group(1) not in RUN or _first_line(m.group(2)).startswith(("-- syntax", "# syntax")):
            continue
        after = fences[n + 1] if n + 1 < len(fences) else None
        listing = None
        if after is not None and after.group(1) in ("", "text") and not text[m.end():after.start()].strip():
            listing = after.group(2)
        out.append((m.group(1), m.group(2), listing))
    return out


_BORDER = re.compile(r"^\+[-+]*\+$")
_TOKEN = re.compile(r"\(\d+\.\d+ sec\)|\.\.\.|-?\d+\.\d+")


def _squeeze(line: str) -> str:
    return re.sub(r"\s*\|\s*", "|", " ".join(line.split()))


def _float_pattern(text: str) -> str:
    """A float as a listing prints it: the printed value must start with its first four significant
    digits (the last float digits of a model's distances may differ between machines)."""
    significant = 0
    for i, ch in enumerate(text):
        if ch.isdigit() and (significant or ch != "0"):
            significant += 1
            if significant == 4:
                return re.escape(text[:i + 1]) + r"\d*"
    return re.escape(text) + r"\d*"


def listing_pattern(line: str) -> re.Pattern[str]:
    """One listing line as a pattern over one printed line (spaces and column widths squeezed)."""
    squeezed, parts, at = _squeeze(line), [], 0
    for m in _TOKEN.finditer(squeezed):
        parts.append(re.escape(squeezed[at:m.start()]))
        token = m.group(0)
        parts.append(".*" if token == "..." else r"\(\d+\.\d+ sec\)" if token.endswith("sec)")
                     else _float_pattern(token))
        at = m.end()
    parts.append(re.escape(squeezed[at:]))
    return re.compile("".join(parts))


def listing_matches(listing: str, printed: str) -> str | None:
    """None when every line of ``listing`` is a line ``printed`` printed, in order; else the first
    listing line not found."""
    lines = [_squeeze(l) for l in printed.splitlines() if l.strip() and not _BORDER.match(l.strip())]
    at = 0
    for wanted in listing.splitlines():
        if not wanted.strip() or _BORDER.match(wanted.strip()):
            continue
        pattern = listing_pattern(wanted)
        while at < len(lines) and not pattern.fullmatch(lines[at]):
            at += 1
        if at == len(lines):
            return wanted
        at += 1
    return None


def _first_line(code: str) -> str:
    return code.strip().splitlines()[0].strip().lower() if code.strip() else ""


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), TESSERA_HISTORY=str(home / "history"),
               TESSERA_CACHE_DIR=os.environ.get("TESSERA_CACHE_DIR", str(Path.home() / ".cache" / "tesseradb")))
    env.pop("TESSERA_BENCH_CORPUS", None)       # examples read only what the repository ships
    return env


DATABASE = re.compile(r"<!-- docs-test database: (\S+) -->")


def database_of(page: Path) -> str:
    found = DATABASE.search(page.read_text(encoding="utf-8"))
    return found.group(1) if found else "page.db"


def _run_sql(code: str, cwd: Path, env: dict, database: str) -> subprocess.CompletedProcess:
    return subprocess.run([TESSERA, str(cwd / database), "-t"], input=code, capture_output=True, text=True,
                          cwd=cwd, env=env, timeout=900)


def _run_python(code: str, cwd: Path, env: dict, database: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=900)


RUNNABLE = [p for p in PAGES if blocks(p)]


@pytest.mark.parametrize("page", RUNNABLE, ids=[p.name for p in RUNNABLE])
def test_code_blocks_run(page, tmp_path, env):
    shutil.copytree(ROOT / "sql_examples", tmp_path / "sql_examples")
    text = page.read_text(encoding="utf-8")
    for n, (lang, code, listing) in enumerate(blocks_with_listings(page), start=1):
        done = (_run_sql if lang == "sql" else _run_python)(code, tmp_path, env, database_of(page))
        where = f"{page.name}, {lang} block {n}:\n{code}\n--- stderr:\n{done.stderr[-3000:]}"
        if _first_line(code).startswith("-- expect error"):
            assert done.returncode == 1 and re.search(r"ERROR \d{4} \(\w{5}\)", done.stderr), where
        else:
            assert done.returncode == 0 and "ERROR" not in done.stderr, where
        if listing is not None and f"{ILLUSTRATION}\n```\n{listing}" not in text:
            missing = listing_matches(listing, done.stdout)
            assert missing is None, (f"{page.name}, {lang} block {n}: the listing after it says\n{missing}\n"
                                     f"which the block does not print; it printed:\n{done.stdout[-3000:]}")


def test_the_check_finds_the_blocks():
    langs = [lang for lang, _ in blocks(ROOT / "README.md")]
    assert "python" in langs and "sql" in langs
    assert sum(len(blocks(p)) for p in PAGES) > 30


def test_a_listing_is_checked_against_what_its_block_prints():
    printed = ("+----+----------------+------------+\n| id | title          | KNN_DIST() |\n"
               "+----+----------------+------------+\n|  1 | Backup runbook |   0.283808 |\n"
               "1 row in set (0.03 sec)\n")
    assert listing_matches("| id | title | KNN_DIST() |\n| 1 | Backup runbook | 0.28380799 |\n"
                           "1 row in set (0.01 sec)", printed) is None
    assert listing_matches("| 1 | Backup runbook | 0.29506326 |", printed) == "| 1 | Backup runbook | 0.29506326 |"
    assert listing_matches("| 2 | Web certificates | 0.6545 |", printed) is not None
    assert listing_matches('[{"text":"Office Le café ..."}]', '[{"text":"Office Le café est servi"}]') is None
    listed = [listing for page in PAGES for _, _, listing in blocks_with_listings(page) if listing]
    assert len(listed) >= 10                    # the pages' listings are found
