"""Every code block of README.md and docs/*.md runs (issue 14 §6): the docs cannot drift from the
program.

A page is one session, run top to bottom in a fresh folder that holds a copy of sql_examples/:
- a ```sql block runs through the installed shell in batch mode against the page's database file
  (a later block may use a table an earlier one created). A block whose first line is
  ``-- expect error`` must fail with a MySQL-style error; one whose first line is ``-- syntax`` is a
  grammar sketch (``[optional]`` parts, placeholders) and is only shown.
- a ```python block runs as a script in the same folder (it may read what an earlier block wrote).
Other fences (```sh, ```text, output listings) are not run. Examples read only what the repository
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
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(page.read_text(encoding="utf-8"))
            if m.group(1) in RUN and not _first_line(m.group(2)).startswith(("-- syntax", "# syntax"))]


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
    for n, (lang, code) in enumerate(blocks(page), start=1):
        done = (_run_sql if lang == "sql" else _run_python)(code, tmp_path, env, database_of(page))
        where = f"{page.name}, {lang} block {n}:\n{code}\n--- stderr:\n{done.stderr[-3000:]}"
        if _first_line(code).startswith("-- expect error"):
            assert done.returncode == 1 and re.search(r"ERROR \d{4} \(\w{5}\)", done.stderr), where
        else:
            assert done.returncode == 0 and "ERROR" not in done.stderr, where


def test_the_check_finds_the_blocks():
    langs = [lang for lang, _ in blocks(ROOT / "README.md")]
    assert "python" in langs and "sql" in langs
    assert sum(len(blocks(p)) for p in PAGES) > 30
