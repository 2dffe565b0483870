"""Chat models and conversation histories (docs/chat.md): two tables in the database file, so a chat
model created once survives a restart and travels with BACKUP, as the tables' catalog does.

``_tessera_chat_models``: one row per chat model (its options as JSON, an API key as written: a plain key
or an ``env:NAME`` reference). ``_tessera_chat_history``: the messages of each conversation, per model,
numbered; the engine keeps the last few per conversation (engine/chat/history.py) and drops them with
their model. Both tables are created by the first CREATE CHAT MODEL, never on open, so a file that uses
no chat has neither.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .rowstore import RowStore

MODELS = "_tessera_chat_models"
HISTORY = "_tessera_chat_history"
CREATE_MODELS = (f"CREATE TABLE IF NOT EXISTS {MODELS} (name TEXT PRIMARY KEY COLLATE NOCASE, "
                 "model TEXT NOT NULL, options TEXT NOT NULL, created_at TEXT NOT NULL)")
CREATE_HISTORY = (f"CREATE TABLE IF NOT EXISTS {HISTORY} (model TEXT NOT NULL COLLATE NOCASE, "
                  "conversation_uuid TEXT NOT NULL, seq INTEGER NOT NULL, role TEXT NOT NULL, "
                  "content TEXT NOT NULL, created_at REAL NOT NULL, "
                  "PRIMARY KEY (model, conversation_uuid, seq))")
EXISTS = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
INSERT_MODEL = f"INSERT INTO {MODELS} (name, model, options, created_at) VALUES (?, ?, ?, ?)"
SELECT_MODEL = f"SELECT name, model, options, created_at FROM {MODELS} WHERE name = ?"
SELECT_MODELS = f"SELECT name, model, options, created_at FROM {MODELS} ORDER BY name"
DELETE_MODEL = f"DELETE FROM {MODELS} WHERE name = ?"
DELETE_HISTORY_OF = f"DELETE FROM {HISTORY} WHERE model = ?"
SELECT_HISTORY = (f"SELECT role, content FROM (SELECT seq, role, content FROM {HISTORY} "
                  "WHERE model = ? AND conversation_uuid = ? ORDER BY seq DESC LIMIT ?) ORDER BY seq")
LAST_SEQ = f"SELECT coalesce(max(seq), 0) FROM {HISTORY} WHERE model = ? AND conversation_uuid = ?"
INSERT_MESSAGE = (f"INSERT INTO {HISTORY} (model, conversation_uuid, seq, role, content, created_at) "
                  "VALUES (?, ?, ?, ?, ?, ?)")
TRIM_HISTORY = f"DELETE FROM {HISTORY} WHERE model = ? AND conversation_uuid = ? AND seq <= ?"
EXPIRE_HISTORY = f"DELETE FROM {HISTORY} WHERE created_at < ?"


def _has(store: RowStore, table: str) -> bool:
    return store.one(EXISTS, (table,)) is not None


def ensure(store: RowStore) -> None:
    store.execute(CREATE_MODELS)
    store.execute(CREATE_HISTORY)


def insert_model(store: RowStore, name: str, model: str, options_json: str, created_at: str) -> None:
    store.execute(INSERT_MODEL, (name, model, options_json, created_at))


def model(store: RowStore, name: str) -> tuple[str, str, str, str] | None:
    if not _has(store, MODELS):
        return None
    rows = list(store.execute(SELECT_MODEL, (name,)))
    return tuple(rows[0]) if rows else None      # type: ignore[return-value]


def models(store: RowStore) -> list[tuple[str, str, str, str]]:
    return [tuple(r) for r in store.execute(SELECT_MODELS)] if _has(store, MODELS) else []   # type: ignore[misc]


def delete_model(store: RowStore, name: str) -> None:
    """The model and its conversations (Manticore drops a chat model's history with it)."""
    store.execute(DELETE_MODEL, (name,))
    if _has(store, HISTORY):
        store.execute(DELETE_HISTORY_OF, (name,))


def history(store: RowStore, model_name: str, conversation: str, limit: int) -> list[tuple[str, str]]:
    """The last ``limit`` messages of a conversation, oldest first, as (role, content)."""
    if not _has(store, HISTORY):
        return []
    return [(r, c) for r, c in store.execute(SELECT_HISTORY, (model_name, conversation, limit))]


def append(store: RowStore, model_name: str, conversation: str, messages: Iterable[tuple[str, str]],
           now: float, keep: int, expire_before: float) -> None:
    """Add messages after the conversation's last one, keep its last ``keep`` and drop what expired."""
    ensure(store)
    seq = int(store.one(LAST_SEQ, (model_name, conversation))[0])
    rows: list[Any] = []
    for role, content in messages:
        seq += 1
        rows.append((model_name, conversation, seq, role, content, now))
    store.executemany(INSERT_MESSAGE, rows)
    store.execute(TRIM_HISTORY, (model_name, conversation, seq - keep))
    store.execute(EXPIRE_HISTORY, (expire_before,))
