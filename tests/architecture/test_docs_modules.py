"""docs/architecture.md names every module of engine/, grammar/ and storage/ (issue 31 item 5): its
section "Every module" lists each folder (**`folder/`**) and each module in it (- `name.py`)."""
from __future__ import annotations

import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "architecture.md"
SECTION = "## Every module"
FOLDER = re.compile(r"^\*\*`([\w/]+)/`\*\*\s*$")
MODULE = re.compile(r"^- `(\w+\.py)`")


def listed() -> set[str]:
    text = PAGE.read_text(encoding="utf-8")
    assert SECTION in text, f"docs/architecture.md has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    names, folder = set(), None
    for line in section.splitlines():
        if found := FOLDER.match(line):
            folder = found.group(1)
        elif (found := MODULE.match(line)) and folder is not None:
            names.add(f"{folder}/{found.group(1)}")
    return names


def modules() -> set[str]:
    return {p.relative_to(ROOT).as_posix() for top in ("engine", "grammar", "storage")
            for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts}


def test_every_module_is_named_in_the_architecture_page():
    missing = sorted(modules() - listed())
    assert missing == [], f"add them to docs/architecture.md ({SECTION}): {missing}"


def test_every_module_named_there_exists():
    assert sorted(listed() - modules()) == []


def test_the_check_reads_the_page():
    names = listed()
    assert {"engine/sql/executor.py", "storage/vectors.py", "grammar/lexing.py",
            "engine/clients/table_info.py"} <= names and len(names) > 200
