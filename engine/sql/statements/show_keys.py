"""SHOW CREATE TABLE and SHOW INDEX / SHOW KEYS in MySQL's shapes (issue 36): keys are their own lines
(``PRIMARY KEY (`user_id`)``, ``UNIQUE KEY `email` (`email`)``, ``KEY `by_tag` (`tag`)``), which is what
MySQL clients' reflection reads (SQLAlchemy's MySQL dialect parses SHOW CREATE TABLE), and SHOW INDEX has
MySQL's columns. The keys come from one reader, ``schema_info.keys``.

Manticore's spelling stays Manticore's: a table whose id is the implicit one prints `` `id` bigint`` and
no PRIMARY KEY line, so the text re-creates the same table; SHOW INDEX and information_schema still
report that id as the primary key, for reflection and GUI row editors."""
from __future__ import annotations

from tesseradb.catalog import vector_columns
from tesseradb.catalog.tables import Table
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import constraints, row_id, schema_info


def mysql_type(type_text: str) -> str:
    """A declared type as MySQL (and Manticore) print it: lower case (``FLOAT(53)`` -> ``float(53)``)."""
    return type_text if "'" in type_text else type_text.lower()


def backquote(name: str) -> str:
    """SHOW CREATE TABLE quotes every identifier, as MySQL does (SQLAlchemy's reflection reads them so)."""
    return "`" + name.replace("`", "``") + "`"


def key_line(key: schema_info.Key) -> str:
    listed = ",".join(backquote(c) for c in key.columns)
    if key.unique and key.name.upper() == "PRIMARY":
        return f"PRIMARY KEY ({listed})"
    return f"{'UNIQUE KEY' if key.unique else 'KEY'} {backquote(key.name)} ({listed})"


def _id_line(table: Table) -> str:
    name = row_id.alias(table)
    if name is None:
        return "`id` bigint"                               # Manticore's implicit id, as Manticore prints it
    col = table.columns[0]
    text = f"{backquote(name)} {mysql_type(row_id.display_type(table, col))} NOT NULL"
    text += " AUTO_INCREMENT" if row_id.auto_increment(table) else ""
    return text + constraints.column_text(col)            # its COMMENT


def show_create(db: Database, table: Table) -> Result:
    lines = [_id_line(table)]
    for col in table.columns[1:]:
        text = f"{backquote(col.name)} {mysql_type(col.type_text)}"
        spec = table.vectors.get(col.name.lower())
        if spec is not None:
            text += " " + vector_columns.render_options(spec)
        elif col.options:
            text += " " + " ".join(f"{k}='{v}'" for k, v in col.options)
        lines.append(text + constraints.column_text(col))
    lines += [key_line(k) for k in schema_info.keys(db, table) if not k.implicit]
    sql = f"CREATE TABLE {backquote(table.name)} (\n  " + ",\n  ".join(lines) + "\n)"
    sql += "".join(f" {k}='{v}'" for k, v in table.options.items())
    return Result(columns=[("Table", None), ("Create Table", None)], rows=[(table.name, sql)], rowcount=1)


INDEX_COLUMNS = ("Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name", "Collation", "Cardinality",
                 "Sub_part", "Packed", "Null", "Index_type", "Comment", "Index_comment", "Visible", "Expression")


def index_rows(db: Database, table: Table) -> list[tuple]:
    """SHOW INDEX's rows, MySQL's 15 columns (Cardinality is not estimated: NULL)."""
    nullable = {i.name.lower(): i.nullable for i in schema_info.column_infos(db, table)}
    rows = []
    for key in schema_info.keys(db, table):
        for seq, (column, descending) in enumerate(zip(key.columns, key.descending or (False,) * len(key.columns)),
                                                   start=1):
            rows.append((table.name, 0 if key.unique else 1, key.name, seq, column, "D" if descending else "A",
                         None, None, None, "YES" if nullable.get(column.lower()) else "", "BTREE", "", "", "YES",
                         None))
    return rows


def show_index(db: Database, table: Table) -> Result:
    rows = index_rows(db, table)
    return Result(columns=[(c, None) for c in INDEX_COLUMNS], rows=rows, rowcount=len(rows))
