"""When an INSERT's id value asks for a generated one (MySQL's AUTO_INCREMENT rules, issue 22).

- Manticore's implicit ``id`` (no id column, or ``id bigint`` without PRIMARY KEY): NULL, an omitted
  id and 0 are assigned the next id, as in Manticore.
- A declared integer key without AUTO_INCREMENT (``pk INTEGER PRIMARY KEY``, ``id int PRIMARY KEY``)
  keeps every value it is given, 0 included, as in MySQL (issue 36: whatever the key is called).
- A declared AUTO_INCREMENT key generates on NULL and on 0, unless the session's ``sql_mode`` holds
  ``NO_AUTO_VALUE_ON_ZERO``; then 0 is stored as 0 (MySQL's rule; mysqldump files set it).
"""
from __future__ import annotations

from tesseradb.catalog.tables import Table
from tesseradb.sql.mysql import row_id, variables
from tesseradb.sql.database import Database
from tesseradb.sql.write import IdRule

NO_AUTO_VALUE_ON_ZERO = "NO_AUTO_VALUE_ON_ZERO"


def zero_generates(db: Database, table: Table) -> bool:
    """True when an id value of 0 means "generate one"."""
    if row_id.alias(table) is None:
        return True
    if not row_id.auto_increment(table):
        return False
    mode = str(variables.session(db).system.get("sql_mode", "")).upper()
    return NO_AUTO_VALUE_ON_ZERO not in mode.replace(" ", "").split(",")


def id_rule(db: Database, table: Table) -> IdRule:
    """The write path's rule for this table's ids. A declared key counts row by row, as MySQL's
    AUTO_INCREMENT does (``(0), (NULL), (10), (0)`` is 1, 2, 10, 11); Manticore's implicit id places
    generated ids after every explicit one."""
    declared = row_id.alias(table) is not None
    return IdRule(zero_generates=zero_generates(db, table), in_row_order=declared, declared=declared)
