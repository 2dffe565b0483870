"""The statement nodes beyond the ones every statement meets (grammar/ast.py): DDL, LOAD DATA, SHOW,
CALL and friends, as frozen dataclasses. Reached as ``ast.<Name>`` (grammar/ast.py loads this module
when one of them is first named), so plain queries do not pay for creating them at start-up."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ColumnDef:
    name: str
    type: str                      # canonical type: text, string, int, bigint, float, bool, json, timestamp, date, datetime, time, float_vector, float_vector_array
    type_text: str                 # as the user wrote it, e.g. "varchar(255)"
    options: tuple[tuple[str, str], ...] = ()   # (lower-cased key, value) in the order written
    # MySQL column constraints in the order written: (kind, value), kind one of not_null, null, default
    # (MySQL SQL text), unique, primary_key, auto_increment, comment, check (MySQL SQL text), collate,
    # charset, on_update (grammar/mysql_ddl.py)
    constraints: tuple[tuple[str, Any], ...] = ()

    @property
    def option_map(self) -> dict[str, str]:
        return dict(self.options)


@dataclass(frozen=True)
class CreateTable:
    table: str
    columns: tuple[ColumnDef, ...]
    if_not_exists: bool = False
    options: tuple[tuple[str, str], ...] = ()   # table options after the column list: (lower-cased key, value)
    keys: tuple["TableKey", ...] = ()           # MySQL table-level PRIMARY KEY / UNIQUE / KEY / CHECK clauses


@dataclass(frozen=True)
class TableKey:
    """A table-level key clause inside CREATE TABLE's column list."""
    kind: str                                   # primary, unique, index, check, foreign
    name: str | None = None
    columns: tuple[str, ...] = ()
    expr: str | None = None                     # CHECK: the MySQL expression text, parenthesized


@dataclass(frozen=True)
class CreateIndex:
    name: str
    table: str
    columns: tuple[tuple[str, str], ...]      # (column, 'ASC' | 'DESC')
    unique: bool = False
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropIndex:
    name: str
    table: str | None = None
    if_exists: bool = False


@dataclass(frozen=True)
class DropTable:
    tables: tuple[str, ...]
    if_exists: bool = False


@dataclass(frozen=True)
class AlterAddColumn:
    table: str
    column: ColumnDef


@dataclass(frozen=True)
class AlterDropColumn:
    table: str
    column: str


@dataclass(frozen=True)
class AlterRebuild:
    """Manticore's ALTER TABLE t REBUILD KNN | REBUILD EMBEDDINGS [column]."""
    table: str
    target: str                    # knn, embeddings
    column: str | None = None


@dataclass(frozen=True)
class TableCommand:
    """A statement about one table with no other argument."""
    verb: str                      # truncate, describe, show_create, optimize, check, repair
    table: str


@dataclass(frozen=True)
class ShowTables:
    like: str | None = None
    database: str | None = None    # SHOW TABLES FROM db


@dataclass(frozen=True)
class ShowModels:
    like: str | None = None


@dataclass(frozen=True)
class Backup:
    """BACKUP TO 'path': SQLite's online backup of the database into a new file."""
    path: str


@dataclass(frozen=True)
class LoadFields:
    """MySQL's ``{FIELDS | COLUMNS} [TERMINATED BY] [[OPTIONALLY] ENCLOSED BY] [ESCAPED BY]``: None
    where the clause does not say (docs/load_data.md#mysqls-fields-and-lines-clauses)."""
    terminated: str | None = None
    enclosed: str | None = None
    escaped: str | None = None
    optionally: bool = False


@dataclass(frozen=True)
class LoadLines:
    """MySQL's ``LINES [STARTING BY] [TERMINATED BY]``."""
    starting: str | None = None
    terminated: str | None = None


@dataclass(frozen=True)
class UserVar:
    """``@name`` in LOAD DATA's column list: the field goes to a variable that SET can use."""
    name: str                      # lower case, without the @


@dataclass(frozen=True)
class LoadData:
    path: Any                      # the file or glob; a Placeholder for INFILE ?
    table: str
    columns: tuple[Any, ...] = ()  # column names; UserVar for @name
    replace: bool = False
    sync: bool = False             # LOAD DATA ... SYNC INTO TABLE (docs/load_data.md#sync)
    fields: LoadFields | None = None
    lines: LoadLines | None = None
    ignore_lines: int | None = None                 # IGNORE n {LINES | ROWS}
    assignments: tuple[tuple[str, Any], ...] = ()   # SET col = expr: (column, sqlglot expression)
    ignore: bool = False           # LOAD DATA ... IGNORE INTO TABLE: rows repeating a key are skipped
    charset: str | None = None     # CHARACTER SET name


@dataclass(frozen=True)
class ShowChunks:
    """SHOW CHUNKS FROM table.column [WHERE/ORDER BY/LIMIT]: ``documents`` is a sqlglot
    ``SELECT id FROM table ...`` that picks the documents, in order."""
    table: str
    column: str
    documents: Any


@dataclass(frozen=True)
class CallChunks:
    """CALL CHUNKS(text, strategy, ...): positional arguments and ``value AS name`` options."""
    args: tuple[Any, ...]
    options: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class CallEvaluate:
    """CALL EVALUATE('<SELECT ... ?>', '<questions table>'): positional arguments (docs/evaluation.md)."""
    args: tuple[Any, ...]
    options: tuple[tuple[str, Any], ...] = ()


@dataclass(frozen=True)
class AlterModifyColumn:
    table: str
    column: ColumnDef


@dataclass(frozen=True)
class UseDatabase:
    name: str


@dataclass(frozen=True)
class ShowSession:
    """SHOW DATABASES / VARIABLES / STATUS / ERRORS / TABLE STATUS [LIKE 'pattern']."""
    what: str                      # databases, variables, status, errors, table_status
    like: str | None = None
    database: str | None = None    # SHOW TABLE STATUS FROM db


@dataclass(frozen=True)
class LockTables:
    """LOCK TABLES t WRITE, ... / UNLOCK TABLES (mysqldump writes them): accepted, the tables checked."""
    tables: tuple[str, ...] = ()
    unlock: bool = False


@dataclass(frozen=True)
class ShowColumns:
    table: str
    full: bool = False
    like: str | None = None
    database: str | None = None


@dataclass(frozen=True)
class CreateTableAs:
    """CREATE TABLE t [AS] SELECT ...: the columns and rows of the SELECT."""
    table: str
    query: Any                     # Query (kind select)
    if_not_exists: bool = False


@dataclass(frozen=True)
class CreateTableLike:
    """CREATE TABLE t LIKE u: u's columns, types, constraints and vector options, no rows."""
    table: str
    source: str
    if_not_exists: bool = False


@dataclass(frozen=True)
class CreateView:
    name: str
    query: Any                     # Query (kind select), parsed by sqlglot
    columns: tuple[str, ...] = ()
    or_replace: bool = False


@dataclass(frozen=True)
class DropView:
    names: tuple[str, ...]
    if_exists: bool = False


# -- Manticore's conversational search (docs/chat.md) --------------------------------------------------
@dataclass(frozen=True)
class CreateChatModel:
    """CREATE CHAT MODEL name (model='openai:...', api_key=..., base_url=..., ...): options as written."""
    name: str
    options: tuple[tuple[str, str], ...]       # (lower-cased key, value) in the order written
    if_not_exists: bool = False


@dataclass(frozen=True)
class ShowChatModels:
    like: str | None = None


@dataclass(frozen=True)
class DescribeChatModel:
    name: str


@dataclass(frozen=True)
class DropChatModel:
    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class CallChat:
    """CALL CHAT('question', 'table', 'model' [, 'conversation_uuid' [, 'vector_field']]): positional."""
    args: tuple[Any, ...]
    options: tuple[tuple[str, Any], ...] = ()
