"""CALL CHAT('question', 'table', 'model' [, 'conversation_uuid' [, 'vector_field']]): an answer from the
chat model over the passages the engine's search finds, with citations (docs/chat.md).

Manticore's columns come back: ``conversation_uuid, user_query, search_query, response, sources``
(sources a JSON string of the hits' rows, vector columns left out). In a conversation with history, the
model first rewrites the question into a standalone search query (``search_query`` shows it); the
prompt holds the conversation's last messages and the sources (engine/chat/prompt.py). The statement
only reads: no write lock is held while the model runs; the two new messages are written after it, in a
transaction of their own (or the open one), or kept in memory on a read-only database.
"""
from __future__ import annotations

import json
import uuid
from typing import Any

from tesseradb import errors
from tesseradb.chat import history, llm, prompt
from tesseradb.chat.spec import ChatModel
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.sql.statements import chat_models, chat_sources
from tesseradb.storage import chat as store

COLUMNS = [("conversation_uuid", None), ("user_query", None), ("search_query", None), ("response", None),
           ("sources", None)]
USAGE = ("CALL CHAT expects ('question', 'table', 'chat model' [, 'conversation_uuid' [, 'vector_field']]) "
         "as strings")


def _arguments(stmt: ast.CallChat, params: Any) -> list[str]:
    values = []
    for arg in stmt.args:
        if isinstance(arg, ast.Placeholder):
            if params is None or isinstance(params, dict) or arg.index >= len(params):
                raise UserError("Incorrect number of bindings supplied for CALL CHAT", errors.ProgrammingError)
            arg = params[arg.index]
        values.append(arg)
    if stmt.options or not 3 <= len(values) <= 5 or not all(isinstance(v, str) for v in values):
        raise UserError(USAGE, errors.SqlSyntaxError)
    if not values[0].strip():
        raise UserError("CALL CHAT: the question is empty", errors.SqlSyntaxError)
    return values + [""] * (5 - len(values))


def _history(db: Database, model: ChatModel, conversation: str) -> list[tuple[str, str]]:
    limit = model.history_messages
    saved = [] if db.read_only or limit == 0 else store.history(db.store, model.name, conversation, limit)
    return saved or history.MEMORY.load(db.path, model.name, conversation, limit)


def _save(db: Database, model: ChatModel, conversation: str, messages: list[tuple[str, str]]) -> None:
    """Written after the model answered; a database that cannot take them keeps them in memory."""
    if db.read_only:
        history.MEMORY.append(db.path, model.name, conversation, messages)
        return
    began = not db.store.in_transaction
    try:
        if began:
            db.begin()
        now = history.now()
        store.append(db.store, model.name, conversation, messages, now, history.KEEP, now - history.TTL)
        if began:
            db.commit()
    except errors.Error as exc:
        if began and db.store.in_transaction:
            db.store.rollback()
        history.MEMORY.append(db.path, model.name, conversation, messages)
        db.warn(f"the conversation's messages are kept in memory: the database could not be written ({exc.msg})",
                code=1105)


def _sources_json(sources: list[prompt.Source], hits: list[prompt.Hit], cited: set[int], score: str) -> str:
    sent = {s.hit.id: s.text for s in sources}
    rows = []
    for hit in hits:
        row = {k: v for k, v in hit.row.items() if not isinstance(v, (bytes, bytearray, memoryview))}
        row.update({score: hit.score, "heading": hit.heading, "passage": sent.get(hit.id),
                    "cited": hit.id in cited})
        rows.append(row)
    return json.dumps(rows, ensure_ascii=False, default=str)


def call_chat(db: Database, stmt: ast.CallChat, params: Any = None) -> Result:
    question, table_name, model_name, conversation, field = _arguments(stmt, params)
    model = chat_models.load(db, model_name)
    access = chat_models.access_of(db)
    table = db.table(table_name)
    spec = chat_sources.vector_field(table, field or None)
    conversation = conversation.strip() or str(uuid.uuid4())
    past = _history(db, model, conversation)
    search_query = question
    if past:            # a follow-up: the model makes it a query that stands alone
        rewritten = llm.complete(model, prompt.rewrite_messages(question, past), access=access,
                                 cancelled=db.check_cancelled)
        search_query = prompt.standalone_query(rewritten, question)
    hits = chat_sources.search(db, table, spec, search_query, retrieval=model.retrieval, limit=model.retrieval_limit)
    sources = prompt.pack(hits, max_document_length=model.max_document_length,
                          max_context_length=model.max_context_length, context=model.context)
    answer = llm.complete(model, prompt.messages(question, sources, past, model.custom_prompt), access=access,
                          on_token=getattr(db, "on_chat_token", None), cancelled=db.check_cancelled)
    _save(db, model, conversation, [("user", question), ("assistant", answer)])
    row = (conversation, question, search_query, answer,
           _sources_json(sources, hits, prompt.cited(answer, sources), chat_sources.SCORE_NAMES[model.retrieval]))
    return Result(columns=COLUMNS, rows=[row], rowcount=1)
