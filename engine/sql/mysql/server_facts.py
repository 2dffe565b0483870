"""What the server is, in MySQL's layouts: its storage engines, character sets, collations and plugins.
SHOW ENGINES / CHARSET / COLLATION / PLUGINS (statements/server_probes.py) and information_schema's
ENGINES, CHARACTER_SETS and COLLATIONS (mysql/information_schema.py) answer from these tables, so the
two never disagree (issue 22). Each is (column names, rows)."""
from __future__ import annotations

ENGINES = (["Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"], [
    ("SQLite", "DEFAULT", "SQLite through apsw: rows, FTS5 full-text, FAISS vector indexes", "YES", "NO", "YES"),
    ("InnoDB", "YES", "accepted in CREATE TABLE ... ENGINE=InnoDB: stored as SQLite", "YES", "NO", "YES"),
])
CHARSETS = (["Charset", "Description", "Default collation", "Maxlen"], [
    ("utf8mb3", "UTF-8 Unicode (stored as utf8mb4)", "utf8mb3_general_ci", 3),
    ("utf8mb4", "UTF-8 Unicode", "utf8mb4_0900_ai_ci", 4),
])
COLLATIONS = (["Collation", "Charset", "Id", "Default", "Compiled", "Sortlen", "Pad_attribute"], [
    ("utf8mb3_general_ci", "utf8mb3", 33, "Yes", "Yes", 1, "PAD SPACE"),
    ("utf8mb4_0900_ai_ci", "utf8mb4", 255, "Yes", "Yes", 0, "NO PAD"),
    ("utf8mb4_bin", "utf8mb4", 46, "", "Yes", 1, "PAD SPACE"),
    ("utf8mb4_general_ci", "utf8mb4", 45, "", "Yes", 1, "PAD SPACE"),
    ("utf8mb4_unicode_ci", "utf8mb4", 224, "", "Yes", 8, "PAD SPACE"),
])
PLUGINS = (["Name", "Status", "Type", "Library", "License"], [
    ("sqlite", "ACTIVE", "STORAGE ENGINE", None, "Public Domain"),
    ("fts5", "ACTIVE", "FTPARSER", None, "Public Domain"),
    ("faiss_hnsw", "ACTIVE", "VECTOR INDEX", None, "MIT"),
])
