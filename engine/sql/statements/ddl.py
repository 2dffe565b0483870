"""CREATE / DROP / ALTER TABLE, SHOW TABLES, SHOW CREATE TABLE, DESCRIBE, TRUNCATE and table upkeep."""
from __future__ import annotations

import secrets
from collections.abc import Sequence

from tesseradb.grammar import ast
from tesseradb.storage import catalog, sources
from tesseradb.storage.catalog import INTERNAL_PREFIXES, quote
from tesseradb.storage.chunk_table import create_chunk_table, drop_chunk_table, install_pending_triggers

from tesseradb import embed, errors
from tesseradb.catalog import fulltext
from tesseradb.catalog import vector_columns
from tesseradb.errors import UserError
from tesseradb.catalog.tables import ID_COLUMN, Column, Table, column_from_def
from tesseradb.catalog.types import TYPES, VECTOR_TYPES

from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import constraints, row_id
from tesseradb.sql.statements.describe import describe
from tesseradb.sql.statements.show_keys import show_create, show_index
from tesseradb.sql.statements.integrity import check_table
from tesseradb.sql.write import recompute_all



def model_resolver(db: Database) -> vector_columns.ResolveModel:
    """``resolve_model`` for this connection: a folder path only where the operator allows files
    (secure_file_priv, io/file_access.py), a remote endpoint only where it allows endpoints."""
    def resolve_model(name: str, options: dict[str, str]) -> tuple[str, str, int]:
        if embed.names_a_path(name):
            name = db.file_access.model_folder(name)
        info = embed.resolve(name, embed.ModelOptions.parse(options), db.remote_access)
        return info.name, info.fingerprint, info.dims
    return resolve_model


def validate(db: Database, table: str, columns: Sequence[tuple[str, str, dict]]) -> dict[str, vector_columns.VectorSpec]:
    """vector_columns.validate_columns with this connection's model rules."""
    return vector_columns.validate_columns(table, columns, resolve_model=model_resolver(db),
                                           is_remote=embed.is_remote)


def _column_sql(col: Column, table: str = "") -> str:
    ctype = TYPES[col.type]
    sql = f"{quote(col.name)} {ctype.decl}"
    if ctype.check:
        name = f"{ctype.message} for column '{col.name}'"
        sql += f" CONSTRAINT {quote(name)} CHECK ({ctype.check.format(c=quote(col.name))})"
    return sql + constraints.column_sql(table, col)    # MySQL NOT NULL / DEFAULT / CHECK


def _validate(db: Database, table: str, columns: Sequence[Column]) -> dict[str, vector_columns.VectorSpec]:
    seen: set[str] = set()
    for col in columns:
        if col.name.lower() in seen:
            raise UserError(f"Duplicate column name '{col.name}'", errors.DuplicateColumn)
        seen.add(col.name.lower())
    described = [(c.name, c.type, dict(c.options)) for c in columns if c is not ID_COLUMN]
    specs = validate(db, table, described)
    return {k.lower(): v for k, v in specs.items()}


def _warn_ignored(db: Database, columns: Sequence[Column]) -> None:
    """Manticore's remote-model options (api_key, ...) are accepted and do nothing here: say so."""
    for note in vector_columns.ignored_options([(c.name, c.type, dict(c.options)) for c in columns],
                                               embed.is_remote):
        db.warn(note, 1287)


def _user_columns(defs: Sequence[ast.ColumnDef]) -> list[Column]:
    columns = [ID_COLUMN]
    for d in defs:
        if d.name.lower() == "id":
            if d.type not in ("bigint", "int") or d.options:
                raise UserError("column 'id' is the implicit bigint primary key and cannot be redefined",
                                errors.SqlSyntaxError)
            continue
        columns.append(column_from_def(d))
    return columns


def _chunk_table_name(table: str, column: str) -> str:
    safe = "".join(ch if ch.isalnum() else "_" for ch in f"{table}_{column}".lower())[:40]
    return f"_tessera_chunks_{safe}_{secrets.token_hex(3)}"


def create_table(db: Database, stmt: ast.CreateTable, params=None) -> Result:
    name = stmt.table
    if name.lower().startswith(INTERNAL_PREFIXES):
        raise UserError(f"table name '{name}' is reserved", errors.SqlSyntaxError)
    if name.lower() in db.tables:
        if stmt.if_not_exists:
            return Result(rowcount=0)
        raise UserError(f"table '{name}' already exists", errors.TableExists)
    key = row_id.declared_key(stmt)                   # `user_id int PRIMARY KEY` is the row id (issue 14)
    columns = _user_columns([d for d in stmt.columns if d is not key])
    if key is not None:
        columns[0] = row_id.id_column(key)
    text_options = fulltext.table_options(stmt.options)
    vector_columns.check_table_options([o for o in stmt.options if o[0] not in fulltext.TABLE_OPTION_KEYS
                                        and not constraints.is_mysql_option(o)])
    specs = _validate(db, name, columns)
    _warn_ignored(db, columns)
    mysql = constraints.plan_table(stmt, columns)       # MySQL keys, CHECKs, table options (issue 14)
    body = ", ".join(["\"id\" INTEGER PRIMARY KEY"] + [_column_sql(c, name) for c in columns[1:]] + mysql.checks)
    db.store.execute(f"CREATE TABLE {quote(name)} ({body})")
    for sql in mysql.indexes:
        db.store.execute(sql)
    for note in mysql.notes:
        db.warn(note, 1287, "Note")
    if mysql.comment is not None:
        text_options = {**text_options, "comment": mysql.comment}
    table = Table(name, columns, specs, {k: _chunk_table_name(name, k) for k in specs}, text_options)
    _create_vector_storage(db, table, list(specs))
    fulltext.create(db.store, table)
    catalog.save(db.store, name, table.to_json())
    db.tables[name.lower()] = table
    return Result(rowcount=0)


def _create_vector_storage(db: Database, table: Table, columns: list[str]) -> None:
    for col in columns:
        layout = table.layout(col)
        create_chunk_table(db.store, layout)
        install_pending_triggers(db.store, layout)


def drop_table(db: Database, stmt: ast.DropTable, params=None) -> Result:
    for name in stmt.tables:
        if name.lower() not in db.tables:
            if stmt.if_exists:
                db.warn(f"Unknown table '{name}'", 1051, "Note")
                continue
            raise errors.no_such_table(name)
    for name in stmt.tables:
        table = db.tables.pop(name.lower(), None)
        if table is None:
            continue
        for layout in table.layouts():
            drop_chunk_table(db.store, layout)
            idx = db.indexes.pop((table.name.lower(), layout.column.lower()), None)
            if idx is not None:
                idx.remove_file()
        fulltext.drop_all(db.store, table)
        db.store.execute(f"DROP TABLE {quote(table.name)}")
        catalog.delete(db.store, table.name)
        sources.forget_table(db.store, table.name)      # LOAD DATA ... SYNC's bookkeeping of its rows
    return Result(rowcount=0)


def alter_add_column(db: Database, stmt: ast.AlterAddColumn, params=None) -> Result:
    table = db.table(stmt.table)
    col = column_from_def(stmt.column)
    if col.name.lower() == "id":
        raise UserError("Duplicate column name 'id'", errors.DuplicateColumn)
    specs = _validate(db, table.name, table.columns + [col])
    _warn_ignored(db, [col])
    default = " DEFAULT x''" if col.type == "float_vector_array" else ""   # existing rows: [] (no vectors)
    db.store.execute(f"ALTER TABLE {quote(table.name)} ADD COLUMN {_column_sql(col, table.name)}{default}")
    existing = {r[0] for r in db.store.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    for sql in constraints.added_column(table.name, col, existing).indexes:     # MySQL UNIQUE (issue 14)
        db.store.execute(sql)
    table.columns.append(col)
    spec = specs.get(col.name.lower())
    if spec is not None:
        table.vectors[col.name.lower()] = spec
        table.chunk_tables[col.name.lower()] = _chunk_table_name(table.name, col.name)
        _create_vector_storage(db, table, [col.name.lower()])
        if (index := fulltext.chunk_index(table, col.name)) is not None:
            index.create(db.store)               # before the embedding below writes the chunk rows
    if col.type == "text":                      # a new full-text field: the row index over all of them
        fulltext.drop(db.store, table)
        fulltext.recreate_row_index(db.store, table, db.on_progress)
    catalog.save(db.store, table.name, table.to_json())
    if spec is not None and spec.model_name:
        recompute_all(db, table, [spec])
    return Result(rowcount=0)


def alter_drop_column(db: Database, stmt: ast.AlterDropColumn, params=None) -> Result:
    table = db.table(stmt.table)
    col = table.column(stmt.column)
    if col is None:
        raise errors.unknown_column(stmt.column, f"table {table.name}")
    if col is table.columns[0]:
        raise UserError("column 'id' cannot be dropped", errors.SqlSyntaxError)
    users = [s.column for s in table.model_columns() if col.name.lower() in (f.lower() for f in s.from_columns)]
    if users:
        raise UserError(f"column '{col.name}' is the embedding source of '{users[0]}'; drop that column first",
                        errors.SqlSyntaxError)
    key = col.name.lower()
    if col.type == "text":                      # its triggers name the column: SQLite refuses the drop
        fulltext.drop(db.store, table)
    if key in table.vectors:
        layout = table.layout(key)
        if (index := fulltext.chunk_index(table, key)) is not None:
            index.drop(db.store)
        drop_chunk_table(db.store, layout)
        idx = db.indexes.pop((table.name.lower(), key), None)
        if idx is not None:
            idx.remove_file()
        del table.vectors[key]
        del table.chunk_tables[key]
    db.store.execute(f"ALTER TABLE {quote(table.name)} DROP COLUMN {quote(col.name)}")
    table.columns.remove(col)
    if col.type == "text":
        fulltext.recreate_row_index(db.store, table, db.on_progress)
    catalog.save(db.store, table.name, table.to_json())
    return Result(rowcount=0)


def show_tables(db: Database, stmt: ast.ShowTables, params=None) -> Result:
    import fnmatch
    names = sorted(t.name for t in db.tables.values())
    if stmt.like is not None:
        pattern = stmt.like.replace("%", "*").replace("_", "?")
        names = [n for n in names if fnmatch.fnmatchcase(n.lower(), pattern.lower())]
    return Result(columns=[("Table", None)], rows=[(n,) for n in names], rowcount=len(names))


def quote_ident(name: str) -> str:
    plain = name.replace("_", "a").isalnum() and not name[0].isdigit()
    return name if plain and name.lower() not in _RESERVED else "`" + name.replace("`", "``") + "`"


_RESERVED = {"from", "select", "where", "table", "order", "group", "by", "limit", "index", "key",
             "create", "drop", "insert", "update", "delete", "knn", "and", "or", "not", "desc", "asc"}


def truncate(db: Database, table: Table) -> Result:
    for layout in table.layouts():
        db.store.execute(f"DELETE FROM {quote(layout.chunks)}")
    db.store.execute(f"DELETE FROM {quote(table.name)}")
    return Result(rowcount=0)


def optimize(db: Database, table: Table) -> Result:
    db.commit()     # implicit commit, as in MySQL: the compacted index holds committed data only
    for layout in table.layouts():
        db.column_index(table, layout.column).compact()
    fulltext.optimize(db.store, table)      # FTS5 merges its index segments into one
    return Result(columns=[("Table", None), ("Op", None), ("Msg_type", None), ("Msg_text", None)],
                   rows=[(table.name, "optimize", "status", "OK")], rowcount=1)


def check(db: Database, table: Table) -> Result:
    return check_table(db, table, repair=False)


def repair(db: Database, table: Table) -> Result:
    return check_table(db, table, repair=True)


# -- secondary indexes: plain SQLite B-trees, so filters next to knn() need not scan the table --------
INDEX_LIST = ("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? COLLATE NOCASE "
              "AND sql IS NOT NULL AND name NOT LIKE '\\_tessera\\_%' ESCAPE '\\' ORDER BY name")


def _index_exists(db: Database, name: str) -> str | None:
    row = db.store.one("SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name = ? COLLATE NOCASE",
                       (name,))
    return row[0] if row else None


def create_index(db: Database, stmt: ast.CreateIndex, params=None) -> Result:
    table = db.table(stmt.table)
    if stmt.name.lower().startswith(INTERNAL_PREFIXES):
        raise UserError(f"index name '{stmt.name}' is reserved", errors.SqlSyntaxError)
    if _index_exists(db, stmt.name):
        if stmt.if_not_exists:
            return Result(rowcount=0)
        raise UserError(f"Duplicate key name '{stmt.name}'", errors.ProgrammingError, )
    parts = []
    for name, order in stmt.columns:
        col = table.column(name)
        if col is None:
            raise UserError(f"Key column '{name}' doesn't exist in table", errors.NoSuchColumn)
        if col.type in VECTOR_TYPES:
            raise UserError(f"column '{col.name}' is a vector column; it is indexed by knn_type='hnsw', "
                            "not by CREATE INDEX", errors.SqlSyntaxError)
        parts.append(f"{quote(col.name)} {order}")
    unique = "UNIQUE " if stmt.unique else ""
    db.store.execute(f"CREATE {unique}INDEX {quote(stmt.name)} ON {quote(table.name)} ({', '.join(parts)})")
    return Result(rowcount=0)


def drop_index(db: Database, stmt: ast.DropIndex, params=None) -> Result:
    owner = _index_exists(db, stmt.name)
    if owner is None or stmt.name.lower().startswith(INTERNAL_PREFIXES) or (
            stmt.table is not None and owner.lower() != stmt.table.lower()):
        if stmt.if_exists:
            return Result(rowcount=0)
        raise UserError(f"Can't DROP '{stmt.name}'; check that column/key exists", errors.ProgrammingError)
    db.store.execute(f"DROP INDEX {quote(stmt.name)}")
    return Result(rowcount=0)


TABLE_COMMANDS = {
    "show_index": show_index,
    "describe": describe, "show_create": show_create, "truncate": truncate,
    "optimize": optimize, "check": check, "repair": repair,
}


def table_command(db: Database, stmt: ast.TableCommand, params=None) -> Result:
    return TABLE_COMMANDS[stmt.verb](db, db.table(stmt.table))
