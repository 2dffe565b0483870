"""MySQL's SHOW statements about the session and the schema: SHOW DATABASES / VARIABLES / STATUS /
ERRORS / [FULL] COLUMNS / TABLE STATUS, in MySQL's column layout, so that tools written for MySQL
read them. Column facts (NULL, key, default) come from SQLite's own schema (PRAGMA table_info,
index_list), so they are what SQLite enforces."""
from __future__ import annotations

import re
import time
from functools import lru_cache
from typing import Any

from tesseradb import errors
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.catalog.vector_columns import render_options
from tesseradb.sql.mysql import variables
from tesseradb.sql.mysql.schema_info import (COLLATION, ENGINE, PRIVILEGES, TEXT_TYPES, column_infos,
                                             table_status_rows, view_names)
from tesseradb.sql.statements import server_probes
from tesseradb.sql.database import Database

_OPENED = time.monotonic()


@lru_cache(maxsize=128)
def _like_regex(pattern: str) -> re.Pattern[str]:
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "%" else "." if ch == "_" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.IGNORECASE | re.DOTALL)


def like(pattern: str | None, text: str) -> bool:
    """MySQL's LIKE for SHOW ... LIKE: % and _, backslash escapes, case-insensitive."""
    return pattern is None or _like_regex(pattern).fullmatch(text) is not None


def _names(columns: list[str]) -> list[tuple[str, None]]:
    return [(c, None) for c in columns]


def _result(columns: list[str], rows: list[tuple]) -> Result:
    return Result(columns=_names(columns), rows=rows, rowcount=len(rows))


# -- handlers -------------------------------------------------------------------------------------------
def show_columns(db: Database, stmt: ast.ShowColumns, params: Any = None) -> Result:
    _check_database(db, stmt.database)
    table = db.table(stmt.table)
    infos = [i for i in column_infos(db, table) if like(stmt.like, i.name)]
    if not stmt.full:
        return _result(["Field", "Type", "Null", "Key", "Default", "Extra"],
                       [(i.name, i.type_text, _yes(i.nullable), i.key, i.default, _extra(table, i)) for i in infos])
    return _result(["Field", "Type", "Collation", "Null", "Key", "Default", "Extra", "Privileges", "Comment"],
                   [(i.name, i.type_text, COLLATION if i.type in TEXT_TYPES else None, _yes(i.nullable),
                     i.key, i.default, _extra(table, i), PRIVILEGES, i.comment) for i in infos])


def _extra(table: Any, info: Any) -> str:
    """MySQL's Extra; for a KNN-indexed vector column ``knn`` and its options as SHOW CREATE TABLE prints
    them (DESCRIBE shows ``knn`` alone, as Manticore does; issue 36)."""
    spec = table.vectors.get(info.name.lower())
    return info.extra if spec is None else " ".join(w for w in ("knn", render_options(spec), info.extra) if w)


def _yes(flag: bool) -> str:
    return "YES" if flag else "NO"


def _check_database(db: Database, name: str | None) -> None:
    if name is not None and not variables.is_this_database(db, name):
        raise UserError(f"Unknown database '{name}'", errors.UnknownDatabase)


def _show_table_status(db: Database, stmt: ast.ShowSession) -> Result:
    _check_database(db, stmt.database)
    columns = ["Name", "Engine", "Version", "Row_format", "Rows", "Avg_row_length", "Data_length",
               "Max_data_length", "Index_length", "Data_free", "Auto_increment", "Create_time",
               "Update_time", "Check_time", "Collation", "Checksum", "Create_options", "Comment"]
    rows = [(name, ENGINE, 10, "Dynamic", count, None, None, None, None, None, next_id, None, None, None,
             COLLATION, None, "", comment)
            for name, count, next_id, comment in table_status_rows(db) if like(stmt.like, name)]
    return _result(columns, rows)


def _show_databases(db: Database, stmt: ast.ShowSession) -> Result:
    names = [n for n in ("information_schema", variables.database_name(db)) if like(stmt.like, n)]
    return _result(["Database"], [(n,) for n in names])


def _value_text(value: Any) -> str:
    if isinstance(value, int) and value in (0, 1):
        return "ON" if value else "OFF"
    return "" if value is None else str(value)


BOOLEAN_VARIABLES = {name for name, v in variables.SYSTEM.items() if v.check is variables._bool}


def _show_variables(db: Database, stmt: ast.ShowSession) -> Result:
    state = variables.session(db).system
    rows = [(name, _value_text(value) if name in BOOLEAN_VARIABLES else "" if value is None else str(value))
            for name, value in sorted(state.items()) if like(stmt.like, name)]
    return _result(["Variable_name", "Value"], rows)


def _status_values(db: Database) -> dict[str, Any]:
    state = variables.session(db)
    return {
        "Uptime": int(time.monotonic() - _OPENED),
        "Threads_connected": 1,
        "Threads_running": 1,
        "Open_tables": len(db.tables),
        "Compression": "OFF",
        "Ssl_cipher": "",
        "Last_query_rows": state.found_rows,
    }


def _show_status(db: Database, stmt: ast.ShowSession) -> Result:
    rows = [(name, str(value)) for name, value in sorted(_status_values(db).items()) if like(stmt.like, name)]
    return _result(["Variable_name", "Value"], rows)


def _show_errors(db: Database, stmt: ast.ShowSession) -> Result:
    db.pending_warnings = list(db.warnings)     # like SHOW WARNINGS: the diagnostics stay for the next look
    rows = [(w.level, w.code, w.message) for w in db.warnings if w.level == "Error"]
    return _result(["Level", "Code", "Message"], rows)


def _show_full_tables(db: Database, stmt: ast.ShowSession) -> Result:
    _check_database(db, stmt.database)
    rows = [(t.name, "BASE TABLE") for t in db.tables.values()]
    rows += [(name, "VIEW") for name in view_names(db)]
    rows = sorted((r for r in rows if like(stmt.like, r[0])), key=lambda r: r[0].lower())
    return _result([f"Tables_in_{variables.database_name(db)}", "Table_type"], rows)


SHOW: dict[str, Any] = {
    "databases": _show_databases, "variables": _show_variables, "status": _show_status,
    "errors": _show_errors, "table_status": _show_table_status, "full_tables": _show_full_tables,
    **server_probes.SHOW,           # SHOW ENGINES / CHARSET / COLLATION / PLUGINS / GRANTS (issue 22)
}


def show_session(db: Database, stmt: ast.ShowSession, params: Any = None) -> Result:
    return SHOW[stmt.what](db, stmt)
