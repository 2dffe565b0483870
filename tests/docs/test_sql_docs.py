"""Every SQL statement, function and column option the engine understands has its place in docs/,
and every docs page that shows SQL is backed by a runnable example in sql_examples/."""
from __future__ import annotations

import importlib
import pathlib
import re

import pytest

from tesseradb.catalog import vector_columns as vector_options
from tesseradb.sql.planner import HANDLERS, QUERY_HANDLERS
from tesseradb.catalog import sql_functions
from tesseradb.sql import passes
from tesseradb.sql.search import passage_calls
from tesseradb.grammar import TYPE_ALIASES

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))

TABLE_VERBS = ["DESCRIBE", "TRUNCATE TABLE", "OPTIMIZE TABLE", "CHECK TABLE", "REPAIR TABLE", "SHOW INDEX"]
# The engine's SQL functions come from their one table (catalog/sql_functions.py); the other words
# of its SQL (clauses, OPTIONs, spellings) are listed here.
FUNCTIONS = [f.spelling for f in sql_functions.FUNCTIONS]
WORDS = ["INTO OUTFILE", "@knn_dist", "REBUILD KNN", "AGAINST(",
         "fusion_method", "rank_constant", "window_size", "fusion_weights", "field_weights", "morphology"]


@pytest.mark.parametrize("node", sorted(HANDLERS))
def test_every_statement_is_documented(node):
    assert HANDLERS[node].doc and HANDLERS[node].doc in DOCS      # its spelling is part of its one entry


def test_the_statement_tables_name_real_nodes():
    """planner.HANDLERS and read_only's tables are keyed by class name (so that naming them does not
    load every node at start-up): each name is a node class of grammar.ast, and every node class the
    parser can return has its handler."""
    from dataclasses import is_dataclass

    from tesseradb.grammar import ast, nodes
    from tesseradb.sql import read_only
    for name in [*HANDLERS, *read_only.ALLOWED, *read_only.REFUSED_KINDS]:
        assert name == "Query" or is_dataclass(getattr(ast, name)), name
    statements = {n for n, v in vars(nodes).items() if is_dataclass(v) and v.__module__ == nodes.__name__}
    parts = {"ColumnDef", "TableKey", "LoadFields", "LoadLines", "UserVar"}     # pieces of statements
    assert statements - parts <= set(HANDLERS)


@pytest.mark.parametrize("word", TABLE_VERBS + [e.doc for e in QUERY_HANDLERS.values()] + ["REPLACE"])
def test_every_command_and_query_kind_is_documented(word):
    assert word in DOCS


@pytest.mark.parametrize("name", FUNCTIONS + WORDS)
def test_every_sql_extension_function_is_documented(name):
    assert name in DOCS


@pytest.mark.parametrize("function", sql_functions.FUNCTIONS, ids=lambda f: f.name)
def test_every_function_is_on_its_page_and_served_by_a_real_step(function):
    assert function.spelling in (ROOT / "docs" / function.doc).read_text(encoding="utf-8")
    room, step = function.served_by.split(".")
    if room == "passes":
        assert step in {p.name for p in passes.PASSES}
    else:
        importlib.import_module(f"tesseradb.sql.{room}.{step}")


def test_the_passage_functions_are_the_ones_the_passage_rewrite_serves():
    assert passage_calls.NAMES == set(passage_calls.SINGLE) | {passage_calls.LIST} | passage_calls.AROUND


@pytest.mark.parametrize("option", sorted(vector_options.KNOWN_OPTIONS))
def test_every_vector_column_option_is_documented(option):
    assert re.search(rf"\b{re.escape(option)}\b", DOCS)


@pytest.mark.parametrize("type_name", sorted(set(TYPE_ALIASES)))
def test_every_type_spelling_is_documented(type_name):
    assert re.search(rf"\b{re.escape(type_name)}\b", DOCS, re.IGNORECASE)


def test_examples_exist_for_the_headline_features():
    examples = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "sql_examples").glob("*.sql"))
    for feature in ["chunk_strategy='recursive'", "chunk_strategy='sentence'", "knn(", "knn_dist()",
                    "LENGTH(", "LOAD DATA", "INTO OUTFILE", "float_vector_array", "hnsw_similarity='l2'"]:
        assert feature in examples, feature


@pytest.mark.parametrize("entry", list(HANDLERS.values()) + list(QUERY_HANDLERS.values()), ids=lambda e: e.doc)
def test_every_handler_resolves_to_a_function(entry):
    """Handlers load on first use (start-up pays for none of them): each one's module.function exists."""
    module, name = entry.handler.spec.split(".")
    assert callable(getattr(importlib.import_module(f"tesseradb.sql.statements.{module}"), name))
