"""Every SQL statement, function and column option the engine understands has its place in docs/,
and every docs page that shows SQL is backed by a runnable example in sql_examples/."""
from __future__ import annotations

import pathlib
import re

import pytest

from tesseradb.vectors import options as vector_options
from tesseradb.sql.planner import HANDLERS, QUERY_HANDLERS
from tesseradb.grammar import TYPE_ALIASES, ast

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md")))

# How each statement node is spelled in the docs (a heading or a code sample must contain it).
STATEMENT_WORDS = {
    ast.CreateTable: "CREATE TABLE", ast.DropTable: "DROP TABLE", ast.CreateIndex: "CREATE INDEX",
    ast.DropIndex: "DROP INDEX", ast.AlterAddColumn: "ADD COLUMN", ast.AlterDropColumn: "DROP COLUMN",
    ast.TableCommand: "SHOW CREATE TABLE", ast.ShowTables: "SHOW TABLES", ast.ShowWarnings: "SHOW WARNINGS",
    ast.Transaction: "ROLLBACK", ast.LoadData: "LOAD DATA", ast.Explain: "EXPLAIN",
    ast.ShowModels: "SHOW MODELS", ast.AlterRebuild: "REBUILD EMBEDDINGS",
    ast.ShowChunks: "SHOW CHUNKS", ast.CallChunks: "CALL CHUNKS", ast.AlterModifyColumn: "MODIFY COLUMN",
    ast.SetStatement: "SET NAMES", ast.UseDatabase: "USE main", ast.ShowSession: "SHOW TABLE STATUS",
    ast.ShowColumns: "SHOW FULL COLUMNS", ast.CreateView: "CREATE OR REPLACE VIEW", ast.DropView: "DROP VIEW", ast.LockTables: "LOCK TABLES",
    ast.CreateTableAs: "CREATE TABLE ... AS SELECT", ast.CreateTableLike: "CREATE TABLE ... LIKE",
}
TABLE_VERBS = ["DESCRIBE", "TRUNCATE TABLE", "OPTIMIZE TABLE", "CHECK TABLE", "REPAIR TABLE", "SHOW INDEX"]
FUNCTIONS = ["knn(", "knn_dist()", "LENGTH(", "INTO OUTFILE", "knn_chunk()", "knn_chunk_text()", "knn_chunk_start()",
             "knn_chunk_end()", "knn_chunks(", "TO_STRING(", "@knn_dist", "REBUILD KNN",
             "MATCH(", "AGAINST(", "weight()", "HIGHLIGHT(", "SNIPPET(", "hybrid_score()", "hybrid_match(",
             "fusion_method", "rank_constant", "window_size", "fusion_weights", "field_weights", "morphology"]


@pytest.mark.parametrize("node", sorted(HANDLERS, key=lambda n: n.__name__), ids=lambda n: n.__name__)
def test_every_statement_is_documented(node):
    assert STATEMENT_WORDS[node] in DOCS


@pytest.mark.parametrize("word", TABLE_VERBS + [k.upper() for k in QUERY_HANDLERS] + ["REPLACE"])
def test_every_command_and_query_kind_is_documented(word):
    assert word in DOCS


@pytest.mark.parametrize("name", FUNCTIONS)
def test_every_sql_extension_function_is_documented(name):
    assert name in DOCS


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
