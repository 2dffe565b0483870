"""The architecture of DESIGN.md §3: imports point down only.

grammar/ and storage/ are siblings at the bottom (neither imports the other or engine/); engine's
leaf services (embed, chunking, vector_options, errors, types) never import the planner, the
executor or the clients; the shell uses only the public engine API.
"""
from __future__ import annotations

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

FORBIDDEN = {
    "grammar": ("engine", "storage"),
    "storage": ("engine", "grammar"),
    "engine/embed": ("engine.database", "engine.planner", "engine.dbapi", "engine.shell", "engine.query",
                     "engine.dml", "engine.ddl", "grammar", "storage"),
    "engine/chunking.py": ("engine.database", "engine.planner", "engine.dbapi", "engine.shell", "grammar",
                           "storage", "engine.embed"),
    "engine/vector_options.py": ("engine.database", "engine.planner", "engine.dbapi", "engine.shell"),
    "engine/shell": ("engine.database", "engine.planner", "engine.dml", "engine.query", "engine.ddl",
                     "storage", "grammar.ddl", "grammar.sql"),
}


def _imports(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def _files(where: str) -> list[pathlib.Path]:
    target = ROOT / where
    return [target] if target.is_file() else sorted(target.rglob("*.py"))


@pytest.mark.parametrize("where", sorted(FORBIDDEN))
def test_imports_point_down(where):
    files = _files(where)
    assert files, f"{where} has no Python files"
    bad = []
    for path in files:
        for module in _imports(path):
            if any(module == f or module.startswith(f + ".") for f in FORBIDDEN[where]):
                bad.append(f"{path.relative_to(ROOT)} imports {module}")
    assert bad == []
