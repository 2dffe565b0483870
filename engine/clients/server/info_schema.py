"""What mysql-mimic answers information_schema from, when the engine cannot answer a query itself (a
table or column the engine's information_schema does not have: ROUTINES,
DATETIME_PRECISION, the ``mysql`` schema...).

Every SELECT that reads information_schema goes to the engine first (statements.Route.INFO_SCHEMA), so
it answers as in-process. For the rest, mysql-mimic's tables are filled with the engine's own rows,
column by column name, so its answers say the same facts (ENGINE 'SQLite', the engine's collation, the
declared column types), never mysql-mimic's defaults ('MinervaSQL', 'utf8mb4_general_ci ')."""
from __future__ import annotations

from typing import Any

from mysql_mimic.constants import INFO_SCHEMA
from mysql_mimic.schema import InfoSchema
from sqlglot.executor.table import Table

# the tables the engine's information_schema has (tesseradb's sql/mysql/information_schema.py)
ENGINE_TABLES = ("schemata", "tables", "columns", "statistics", "key_column_usage", "table_constraints",
                 "character_sets", "collations")


def build(con: Any) -> InfoSchema:
    """mysql-mimic's information_schema: the engine's rows where it has the table, else empty."""
    data = {db: {name: Table(tuple(columns)) for name, columns in tables.items()}
            for db, tables in INFO_SCHEMA.items()}
    for name in ENGINE_TABLES:
        table = data["information_schema"][name]
        cur = con.cursor()
        cur.execute(f"SELECT * FROM information_schema.{name.upper()}")
        names = [str(d[0]).lower() for d in cur.description]
        for row in cur.fetchall():
            values = dict(zip(names, row))
            table.append(tuple(values.get(column) for column in table.columns))
    return InfoSchema(data)
