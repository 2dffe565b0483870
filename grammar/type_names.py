"""Column type names: the MySQL and Manticore spellings the grammar accepts, and the canonical type
each one means (docs/types.md)."""
from __future__ import annotations

# MySQL spellings accepted as aliases of our column types.
TYPE_ALIASES = {
    "text": "text", "tinytext": "text", "mediumtext": "text", "longtext": "text",
    "string": "string", "varchar": "string", "char": "string",
    "int": "int", "integer": "int", "tinyint": "int", "smallint": "int", "mediumint": "int",
    "uint": "int",
    "bigint": "bigint",
    "float": "float", "double": "float", "real": "float", "decimal": "float", "numeric": "float",
    "bool": "bool", "boolean": "bool",
    "json": "json",
    "timestamp": "timestamp", "datetime": "datetime", "date": "date", "time": "time",
    "float_vector": "float_vector", "float_vector_array": "float_vector_array",
}
