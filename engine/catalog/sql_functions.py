"""The engine's own SQL functions, one table (:data:`FUNCTIONS`): how each is spelled, where a
statement may use it, the planning step that serves it and the docs page that explains it. The
checks (a view may not search, UPDATE/DELETE may not use knn(), a passage needs a knn() query) and
the docs test iterate this table instead of spelling names; a new function is one entry here."""
from __future__ import annotations

from dataclasses import dataclass

# where a statement may use the function
WHERE = "a condition of the outer WHERE of a SELECT, ANDed with the others"
KNN_SELECT = "the select list (or ORDER BY / HAVING) of a SELECT with knn()"
TEXT_SELECT = "the select list of a SELECT with MATCH() or a hybrid search"
HYBRID_SELECT = "the select list of a hybrid search (OPTION fusion_method='rrf' or hybrid_match())"
ANYWHERE = "any expression over a vector column"
RERANK_SELECT = "the select list of a knn(), MATCH() or hybrid search with OPTION rerank='<model directory>'"


@dataclass(frozen=True)
class SqlFunction:
    name: str          # lower case, as the planner finds the call
    spelling: str      # as the docs write it
    family: str        # knn, passage, text, hybrid or vector
    allowed: str       # where a statement may use it (one of the constants above)
    served_by: str     # the step that rewrites it: a pass of tesseradb.sql.passes or a sql/search module
    doc: str           # its page under docs/

    @property
    def searches(self) -> bool:
        """A vector or full-text search (or reads one): planned per query, so never inside a view."""
        return self.family != "vector"


FUNCTIONS: tuple[SqlFunction, ...] = (
    SqlFunction("knn", "knn(", "knn", WHERE, "search.select_plan", "knn.md"),
    SqlFunction("knn_dist", "knn_dist()", "knn", KNN_SELECT, "search.select_plan", "knn.md"),
    SqlFunction("knn_score", "knn_score()", "knn", KNN_SELECT, "search.select_plan", "knn.md"),
    SqlFunction("knn_chunk", "knn_chunk()", "passage", KNN_SELECT, "search.passage_calls", "passages.md"),
    SqlFunction("knn_chunk_text", "knn_chunk_text()", "passage", KNN_SELECT, "search.passage_calls", "passages.md"),
    SqlFunction("knn_chunk_start", "knn_chunk_start()", "passage", KNN_SELECT, "search.passage_calls",
                "passages.md"),
    SqlFunction("knn_chunk_end", "knn_chunk_end()", "passage", KNN_SELECT, "search.passage_calls", "passages.md"),
    SqlFunction("knn_chunks", "knn_chunks(", "passage", KNN_SELECT, "search.passage_calls", "passages.md"),
    SqlFunction("knn_chunk_heading", "knn_chunk_heading()", "passage", KNN_SELECT, "search.passage_calls",
                "passages.md"),
    SqlFunction("knn_chunk_section", "knn_chunk_section(", "passage", KNN_SELECT, "search.passage_around",
                "passages.md"),
    SqlFunction("knn_chunk_window", "knn_chunk_window(", "passage", KNN_SELECT, "search.passage_around",
                "passages.md"),
    SqlFunction("match", "MATCH(", "text", WHERE, "search.match", "fulltext.md"),
    SqlFunction("weight", "weight()", "text", TEXT_SELECT, "search.match", "fulltext.md"),
    SqlFunction("highlight", "HIGHLIGHT(", "text", TEXT_SELECT, "search.highlight", "fulltext.md"),
    SqlFunction("snippet", "SNIPPET(", "text", TEXT_SELECT, "search.highlight", "fulltext.md"),
    SqlFunction("hybrid_match", "hybrid_match(", "hybrid", WHERE, "search.hybrid", "hybrid.md"),
    SqlFunction("hybrid_score", "hybrid_score()", "hybrid", HYBRID_SELECT, "search.hybrid", "hybrid.md"),
    SqlFunction("rerank_score", "rerank_score()", "hybrid", RERANK_SELECT, "search.rerank_stage", "reranking.md"),
    SqlFunction("length", "LENGTH(", "vector", ANYWHERE, "passes.vector_length", "types.md"),
    SqlFunction("to_string", "TO_STRING(", "vector", ANYWHERE, "passes.vector_to_string", "types.md"),
)

BY_NAME: dict[str, SqlFunction] = {f.name: f for f in FUNCTIONS}


def names(*families: str) -> frozenset[str]:
    """The names of the functions of these families (all searching ones when none is given)."""
    return frozenset(f.name for f in FUNCTIONS if (f.family in families if families else f.searches))
