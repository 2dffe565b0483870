"""docs/architecture.md#errors: one translation point, called once per client, and every UserError
naming the public class it becomes where it is raised."""
from __future__ import annotations

import ast

from modules import modules

MODULES = modules()


def _calls(name: str) -> list[tuple[str, ast.Call]]:
    out = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == name:
                out.append((module, node))
    return out


def test_every_user_error_names_its_kind_at_the_raise():
    unnamed = [f"{m}:{c.lineno}" for m, c in _calls("UserError")
               if len(c.args) < 2 and not any(k.arg == "kind" for k in c.keywords)]
    assert _calls("UserError") and unnamed == []


def test_errors_are_translated_in_one_place_called_once_per_client():
    callers = [m for m, c in _calls("translate")              # translate(...) or errors.translate(...)
               if isinstance(c.func, ast.Name) or getattr(c.func.value, "id", None) == "errors"]
    assert callers == ["tesseradb.clients.public_errors"]


def test_the_message_tables_live_in_errors_only():
    texts = {m: path.read_text(encoding="utf-8") for m, path in MODULES.items()}
    holders = sorted(m for m, text in texts.items() if "constraint failed: " in text and "re.compile" in text)
    assert holders == ["tesseradb.errors"]


def _reads_error_text(node: ast.AST) -> bool:
    """``x.msg``, ``str(exc)``, ``exc.args``: an expression that is an error's message."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr in ("msg", "args") and isinstance(sub.value, ast.Name) \
                and sub.value.id in ("exc", "e", "error", "err"):
            return True
        if isinstance(sub, ast.Call) and getattr(sub.func, "id", None) == "str" and sub.args \
                and isinstance(sub.args[0], ast.Name) and sub.args[0].id in ("exc", "e", "error", "err"):
            return True
    return False


def test_no_regex_reads_an_error_message_back():
    """Errors carry fields (row, id, key, value, column, table): nothing matches a pattern against an
    error's text to recover them; only a third-party library's own wording is read (SQLite's in
    errors.py, sqlglot's in grammar/sql.py)."""
    foreign = {"tesseradb.errors": "SQLite's own messages (its tables)",
               "tesseradb.grammar.sql": "sqlglot's ParseError description, reworded: the library's text"}
    found = []
    for module, path in MODULES.items():
        if module in foreign:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", None) in (
                    "match", "fullmatch", "search", "findall", "finditer", "sub", "split"):
                if any(_reads_error_text(arg) for arg in node.args):
                    found.append(f"{module}:{node.lineno}")
    assert found == []
