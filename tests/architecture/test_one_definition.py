"""What the clients used to copy exists once (issue 31 item 4): the vector type names, MMR, the
select-list splitter. Clients reach them through the public API (Connection.describe, Connection.lexing)
or, for MMR, the one pure module the integrations may import (tesseradb.vectors.mmr)."""
from __future__ import annotations

import ast

from modules import modules

TREES = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in modules().items()}


def _assigned(name: str) -> list[str]:
    return sorted(m for m, tree in TREES.items() for node in ast.walk(tree)
                  if isinstance(node, (ast.Assign, ast.AnnAssign))
                  and any(isinstance(t, ast.Name) and t.id == name
                          for t in (node.targets if isinstance(node, ast.Assign) else [node.target])))


def _functions(test) -> list[str]:
    return sorted({m for m, tree in TREES.items() for node in ast.walk(tree)
                   if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and test(node)})


def test_the_vector_types_are_named_once():
    assert _assigned("VECTOR_TYPES") == ["tesseradb.catalog.vector_columns"]


def test_mmr_is_written_once():
    def mmr(node) -> bool:        # picks one candidate at a time by a relevance/diversity trade-off
        picks = any(isinstance(n, ast.Attribute) and n.attr == "argmax" for n in ast.walk(node))
        return picks and any(a.arg in ("diversity", "lambda_mult") for a in node.args.args)
    assert _functions(mmr) == ["tesseradb.vectors.mmr"]


def test_the_select_list_splitter_is_written_once():
    assert _functions(lambda node: "select_items" in node.name) == ["tesseradb.grammar.lexing",
                                                                     "tesseradb.grammar.written_names"]
