"""The catalog: one row per user table with its definition, as JSON, in the database file."""
from __future__ import annotations

import json
from typing import Any

from .rowstore import RowStore

CATALOG = "_tessera_catalog"
CREATE_CATALOG = (f"CREATE TABLE IF NOT EXISTS {CATALOG} ("
                  "name TEXT PRIMARY KEY COLLATE NOCASE, definition TEXT NOT NULL)")
SELECT_ALL = f"SELECT name, definition FROM {CATALOG} ORDER BY name"
SELECT_ONE = f"SELECT definition FROM {CATALOG} WHERE name = ?"
UPSERT = f"INSERT OR REPLACE INTO {CATALOG} (name, definition) VALUES (?, ?)"
DELETE = f"DELETE FROM {CATALOG} WHERE name = ?"
INTERNAL_PREFIXES = ("_tessera_", "sqlite_")


def ensure(store: RowStore) -> None:
    store.execute(CREATE_CATALOG)


def load_all(store: RowStore) -> dict[str, dict[str, Any]]:
    return {name.lower(): json.loads(defn) for name, defn in store.execute(SELECT_ALL)}


def save(store: RowStore, name: str, definition: dict[str, Any]) -> None:
    store.execute(UPSERT, (name, json.dumps(definition)))


def delete(store: RowStore, name: str) -> None:
    store.execute(DELETE, (name,))


def quote(name: str) -> str:
    """An SQLite identifier, safely quoted."""
    return '"' + name.replace('"', '""') + '"'
