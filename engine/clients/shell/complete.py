"""Tab completion: SQL keywords, functions, client commands, and the database's table and column names
(re-read after statements that change the schema)."""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

if TYPE_CHECKING:
    from tesseradb.clients.shell.runner import Runner

KEYWORDS = """
select from where and or not in is null like between exists distinct as on join left right inner
outer cross using group by having order asc desc limit offset union all intersect except case when
then else end insert into values replace update set delete create table if drop alter add column
truncate optimize describe desc show tables warnings explain begin start transaction commit rollback
load data infile outfile with true false primary key default
use databases schemas variables status errors full columns fields names character charset collate
view index auto_increment comment check constraint engine lock unlock ignore duplicate
information_schema
text string int integer bigint float double bool boolean json timestamp varchar tinyint
float_vector float_vector_array knn_type knn_dims hnsw_similarity hnsw_m hnsw_ef_construction
model_name from chunk_strategy max_tokens overlap_tokens max_chunks chunk_context hnsw cosine l2 ip
truncate mean fixed recursive sentence markdown heading
option morphology stem_en none against natural language mode boolean field_weights fusion_method rrf
rank_constant window_size fusion_weights before_match after_match around limit_snippets
""".split()
FUNCTIONS = """
knn knn_dist count sum avg min max length lower upper coalesce ifnull nullif abs round substr
substring trim concat json_extract instr replace cast
database version connection_id last_insert_id row_count found_rows if
match weight highlight snippet hybrid_match hybrid_score
""".split()
CLIENT_COMMANDS = ["source", "help", "exit", "quit", "status", "warnings", "nowarning", "pager", "nopager",
                   "tee", "notee", "system", "use", "delimiter", "prompt", "charset", "rehash", "print",
                   "vectors"]
TABLE_CONTEXT = {"from", "join", "into", "update", "table", "describe", "desc", "exists"}
_WORD = re.compile(r"[A-Za-z0-9_]+")
_BEFORE = re.compile(r"([A-Za-z_]+)\s+$")
_QUALIFIED = re.compile(r"([A-Za-z0-9_]+)\.$")


class SqlCompleter(Completer):
    def __init__(self) -> None:
        self.tables: list[str] = []
        self.columns: dict[str, list[str]] = {}

    def refresh(self, runner: "Runner") -> None:
        """Read table and column names through the connection's catalog (``Connection.tables()``)."""
        self.columns = runner.table_columns()
        self.tables = list(self.columns)

    def all_columns(self) -> list[str]:
        seen: dict[str, None] = {}
        for cols in self.columns.values():
            seen.update(dict.fromkeys(cols))
        return list(seen)

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        word = document.get_word_before_cursor(pattern=_WORD) if _ends_in_word(document) else ""
        before = document.text_before_cursor[:len(document.text_before_cursor) - len(word)]
        qualified = _QUALIFIED.search(before)
        if qualified:
            table = next((t for t in self.tables if t.lower() == qualified.group(1).lower()), None)
            yield from _matches(word, self.columns.get(table, []) if table else [], "column")
            return
        if not before.strip():
            yield from _matches(word, CLIENT_COMMANDS, "command")
        previous = _BEFORE.search(before)
        if previous and previous.group(1).lower() in TABLE_CONTEXT:
            yield from _matches(word, self.tables, "table")
            return
        yield from _matches(word, self.all_columns(), "column")
        yield from _matches(word, self.tables, "table")
        yield from _matches(word, FUNCTIONS, "function", case=True)
        yield from _matches(word, KEYWORDS, "keyword", case=True)


def _ends_in_word(document: Document) -> bool:
    text = document.text_before_cursor
    return bool(text) and bool(_WORD.fullmatch(text[-1]))


def _matches(word: str, candidates: Iterable[str], meta: str, case: bool = False) -> Iterator[Completion]:
    low = word.lower()
    upper = case and word[:1].isupper()
    seen: set[str] = set()
    for cand in candidates:
        if cand.lower().startswith(low) and cand.lower() != low and cand.lower() not in seen:
            seen.add(cand.lower())
            text = cand.upper() if upper else cand
            yield Completion(text, start_position=-len(word), display_meta=meta)
