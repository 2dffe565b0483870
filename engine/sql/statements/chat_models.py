"""CREATE / SHOW / DESCRIBE / DROP CHAT MODEL (Manticore's conversational search; docs/chat.md).

A chat model is a row of ``_tessera_chat_models`` (storage/chat.py): it lives in the database file and
survives a restart. Its API key is never shown back: DESCRIBE prints ``HIDDEN``, SHOW CHAT MODELS
prints no options at all. Over a server a chat model's endpoint must be one the operator allowed
(``--allow-remote``), checked here and again at every CALL CHAT.
"""
from __future__ import annotations

import fnmatch
import time
from typing import Any

from tesseradb import errors
from tesseradb.chat import history, spec
from tesseradb.embed.remote import secrets
from tesseradb.embed.remote.access import UNRESTRICTED, RemoteAccess
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.storage import chat as store

SHOW_COLUMNS = [("name", None), ("model", None), ("created_at", None)]
DESCRIBE_COLUMNS = [("property", None), ("value", None)]


def load(db: Database, name: str) -> spec.ChatModel:
    row = store.model(db.store, name)
    if row is None:
        raise UserError(f"chat model '{name}' does not exist", errors.ProgrammingError)
    found, _model, options, created_at = row
    return spec.ChatModel.from_row(found, options, created_at)


def access_of(db: Database) -> RemoteAccess:
    """The operator's allow-list of endpoints and environment variables (a server's; none in-process)."""
    return getattr(db, "remote_access", None) or UNRESTRICTED


def check_access(db: Database, model: spec.ChatModel) -> None:
    access = access_of(db)
    access.check_url(model.url)
    if secrets.is_env_ref(model.api_key) and access.env is not None \
            and secrets.env_name(model.api_key or "") not in access.env:
        access.api_key(model.api_key)       # refused: the operator did not list the variable


def create_chat_model(db: Database, stmt: ast.CreateChatModel, params: Any = None) -> Result:
    created = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    model = spec.from_options(stmt.name, stmt.options, created)
    check_access(db, model)
    if store.model(db.store, stmt.name) is not None:
        if stmt.if_not_exists:
            return Result(rowcount=0)
        raise UserError(f"chat model '{stmt.name}' already exists", errors.ProgrammingError)
    store.ensure(db.store)
    store.insert_model(db.store, model.name, model.model_text, model.options_json(), created)
    return Result(rowcount=0)


def show_chat_models(db: Database, stmt: ast.ShowChatModels, params: Any = None) -> Result:
    rows = [(name, model, created) for name, model, _opts, created in store.models(db.store)
            if stmt.like is None or fnmatch.fnmatchcase(name.lower(), _glob(stmt.like))]
    return Result(columns=SHOW_COLUMNS, rows=rows, rowcount=len(rows))


def _glob(like: str) -> str:
    """A LIKE pattern as a glob (case-insensitive: names compared lower-cased)."""
    return like.lower().replace("[", "[[]").replace("*", "[*]").replace("?", "[?]").replace("%", "*").replace("_", "?")


def describe_chat_model(db: Database, stmt: ast.DescribeChatModel, params: Any = None) -> Result:
    rows = load(db, stmt.name).describe()
    return Result(columns=DESCRIBE_COLUMNS, rows=rows, rowcount=len(rows))


def drop_chat_model(db: Database, stmt: ast.DropChatModel, params: Any = None) -> Result:
    if store.model(db.store, stmt.name) is None:
        if stmt.if_exists:
            return Result(rowcount=0)
        raise UserError(f"chat model '{stmt.name}' does not exist", errors.ProgrammingError)
    store.delete_model(db.store, stmt.name)
    history.MEMORY.drop_model(db.path, stmt.name)
    return Result(rowcount=0)
