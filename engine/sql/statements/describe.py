"""DESCRIBE / DESC: Manticore's layout (Field | Type | Properties), which Manticore's clients read,
carrying the facts SHOW COLUMNS carries in MySQL's layout.

- Type is the type as declared, in MySQL's lower-case spelling (``varchar(255)``, ``int unsigned``,
  ``integer``), without Manticore's text flags, which are properties.
- Properties: for a text or string column, what full-text search makes of it (``indexed stored``: MATCH
  searches it and SELECT returns it; ``indexed attribute`` for ``string attribute indexed``; ``stored`` /
  ``attribute`` for a text column MATCH does not search), then the MySQL facts (``primary key``,
  ``auto_increment``, ``not null``, ``unique``, ``key``, ``default ...``); for a KNN-indexed vector
  column ``knn`` alone, as Manticore prints it (its options: SHOW CREATE TABLE, and SHOW COLUMNS' Extra).
  The implicit id shows none, as in Manticore.
See docs/statements.md (DESCRIBE)."""
from __future__ import annotations

from tesseradb.catalog import vector_columns
from tesseradb.catalog.tables import Column, Table
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import row_id, schema_info
from tesseradb.sql.mysql.schema_info import ColumnInfo

FLAGS = ("attribute", "indexed", "stored")
KEY_WORDS = {"PRI": "primary key", "UNI": "unique", "MUL": "key"}


def describe(db: Database, table: Table) -> Result:
    rows = [(info.name, declared_type(table, col), _properties(table, col, info))
            for col, info in zip(table.columns, schema_info.column_infos(db, table))]
    return Result(columns=[("Field", None), ("Type", None), ("Properties", None)], rows=rows,
                  rowcount=len(rows))


def declared_type(table: Table, col: Column) -> str:
    """The type as declared, in MySQL's lower-case spelling, without Manticore's text flags."""
    words = row_id.display_type(table, col).split(" ")
    while len(words) > 1 and words[-1].lower() in FLAGS:
        words.pop()
    text = " ".join(words)
    return text if "'" in text else text.lower()


def _properties(table: Table, col: Column, info: ColumnInfo) -> str:
    if col is table.columns[0] and row_id.alias(table) is None:
        return ""                                   # Manticore's document id: no properties, as there
    spec = table.vectors.get(col.name.lower())
    words = [text_flags(col), *_mysql_facts(col, info)]
    if spec is not None:
        words = ["knn", *words]                     # Manticore prints knn alone; the options: SHOW COLUMNS
    return " ".join(w for w in words if w)


def text_flags(col: Column) -> str:
    """What MATCH makes of a text or string column: ``indexed`` when it searches it (our type text)."""
    base = col.type_text.split(" ")[0].lower()
    declared = [w.lower() for w in col.type_text.split(" ")[1:] if w.lower() in FLAGS]
    if col.type == "text":
        return "indexed attribute" if base == "string" or "attribute" in declared else "indexed stored"
    if col.type == "string" and base == "text":
        return " ".join(declared)                   # text stored / text attribute: not searched by MATCH
    return ""


def _mysql_facts(col: Column, info: ColumnInfo) -> list[str]:
    words = []
    if info.key == "PRI":
        words.append(KEY_WORDS["PRI"])
    elif not info.nullable:
        words.append("not null")
    if info.extra:
        words.append(info.extra)
    if info.key in ("UNI", "MUL"):
        words.append(KEY_WORDS[info.key])
    written = dict(col.constraints or ()).get("default")
    if written is not None:
        words.append(f"default {written}")
    elif info.default is not None:
        words.append("default " + vector_columns.quote(str(info.default)))
    return words
