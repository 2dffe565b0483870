"""``help contents`` and ``help <topic>``: SQL help that ships inside the package (the mysql client's
server-side help, here without a server). Topics are matched case-insensitively; a prefix that names
one topic shows it (``help creat`` -> CREATE TABLE), as mysql's does."""
from __future__ import annotations

TOPICS: dict[str, str] = {
    "SELECT": """SELECT [DISTINCT] expr, ... FROM t [JOIN u ON ...] [WHERE cond] [GROUP BY ...] [HAVING ...]
       [ORDER BY ...] [LIMIT n [OFFSET m]] [INTO OUTFILE 'file.csv' | 'file.parquet']
MySQL's SELECT, run by SQLite. Search extensions:
  WHERE knn(col, k, 'question' | (0.1, 0.2, ...) | doc_id [, {ef=N, ...}])   k nearest documents
  knn_dist(), knn_chunk(), knn_chunk_text()        distance and the passage that matched (help passages)
  WHERE hybrid_match('question', col)               full-text and knn fused (help hybrid_match)
  WHERE MATCH('full-text query'), weight(), HIGHLIGHT()
Example: SELECT id, title, knn_dist() FROM docs WHERE knn(chunks, 5, 'rotate certificates');""",
    "INSERT": """INSERT [IGNORE] INTO t [(col, ...)] VALUES (...), (...) [ON DUPLICATE KEY UPDATE col = expr, ...]
INSERT INTO t [(col, ...)] SELECT ...
A model-backed vector column that is omitted is embedded from its 'from' columns.
A declared integer key keeps every value given (0 too); AUTO_INCREMENT generates on NULL and 0.""",
    "REPLACE": """REPLACE INTO t [(col, ...)] VALUES (...): deletes the rows that share the id or a unique key,
then inserts (and re-embeds).""",
    "UPDATE": """UPDATE t SET col = expr, ... [WHERE cond] [ORDER BY ...] [LIMIT n]
Changing a 'from' column embeds the vector column again.""",
    "DELETE": "DELETE FROM t [WHERE cond] [ORDER BY ...] [LIMIT n]",
    "CREATE TABLE": """CREATE TABLE [IF NOT EXISTS] t (col type [NOT NULL] [DEFAULT v] [PRIMARY KEY] [AUTO_INCREMENT]
    [UNIQUE] [COMMENT 'x'], ..., [KEY name (cols)]) [ENGINE=...]
Types: text, string/varchar(n), int, bigint, float/double, bool, json, timestamp (Unix seconds),
date, datetime, time, float_vector, float_vector_array.
A vector column that embeds by itself:
  chunks float_vector_array knn_type='hnsw' model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
      chunk_strategy='sentence' max_tokens='128' overlap_tokens='16'""",
    "ALTER TABLE": """ALTER TABLE t ADD [COLUMN] col type ... | DROP [COLUMN] col | MODIFY [COLUMN] col <vector options>
ALTER TABLE t REBUILD KNN | REBUILD EMBEDDINGS [col]
Like every DDL statement it commits the open transaction first.""",
    "DROP TABLE": "DROP TABLE [IF EXISTS] t [, u ...]   (commits the open transaction, as in MySQL)",
    "TRUNCATE": "TRUNCATE [TABLE] t   (commits the open transaction, as in MySQL)",
    "DESCRIBE": """DESCRIBE t | DESC t: Field, Type, Properties (Manticore's layout).
SHOW [FULL] COLUMNS FROM t [FROM db] [LIKE 'p']: MySQL's layout (Field, Type, Null, Key, Default, Extra).""",
    "SHOW": """SHOW TABLES [FROM db] [LIKE 'p'] | SHOW FULL TABLES | SHOW CREATE TABLE t | SHOW [FULL] COLUMNS FROM t
SHOW INDEX FROM t | SHOW TABLE STATUS | SHOW DATABASES | SHOW [SESSION] VARIABLES [LIKE 'p']
SHOW STATUS | SHOW WARNINGS | SHOW ERRORS | SHOW MODELS | SHOW CHUNKS FROM t.col""",
    "LOAD DATA": """LOAD DATA [LOCAL] INFILE 'file' [REPLACE] INTO TABLE t [(col, ...)]
Reads .csv, .tsv, .jsonl/.ndjson, .json and .parquet files (by their extension); vectors are embedded
in batches.""",
    "HYBRID_MATCH": """SELECT id, title, hybrid_score(), knn_chunk_text() FROM docs
    WHERE hybrid_match('your question', chunks [, {k=N, ...}]) LIMIT 5
Full-text (BM25 over the column's chunks) and knn fused by reciprocal rank: the usual first query of a
table of notes. hybrid_score() is the fused score, larger is better; the passage functions (help
passages) name the chunk that answered. Example after 'tessera index notes.db notes':
  SELECT path, title, knn_chunk_heading(), knn_chunk_text() FROM docs
    WHERE hybrid_match('how do I rotate the certificate', chunks) LIMIT 5;""",
    "PASSAGES": """The passage that matched, in a query with knn() or hybrid_match():
  knn_chunk()            its 1-based chunk number     knn_chunk_text()       its text
  knn_chunk_start(), knn_chunk_end()   its offsets     knn_chunk_heading()    its heading path ('A > B')
  knn_chunk_section([max_tokens])      its section     knn_chunk_window(before, after)  with neighbours
  knn_chunks(n)          the n best chunks as JSON
Example: SELECT path, knn_chunk_heading(), knn_chunk_text() FROM docs WHERE knn(chunks, 3, 'backups');""",
    "SHOW CHUNKS": """SHOW CHUNKS FROM t.col [WHERE id = n]: every stored chunk of a vector column (id, chunk,
start, end, tokens, text, heading). CALL CHUNKS('text', 'strategy', max_tokens [, overlap]) shows how a
text would be cut, without a table.""",
    "TRANSACTIONS": """BEGIN | START TRANSACTION; ...; COMMIT | ROLLBACK
SET autocommit = 0|1. DDL (CREATE, ALTER, DROP, TRUNCATE) commits the open transaction, as in MySQL.""",
    "SET": """SET @var = expr | SET @var := (SELECT ...) | SET [SESSION] var = value | SET NAMES utf8mb4
SET sql_mode = 'NO_AUTO_VALUE_ON_ZERO' keeps 0 in an AUTO_INCREMENT key.""",
    "DATE": """DATE, DATETIME, TIME: MySQL's dates, stored as ISO text ('2024-01-31', '2024-01-31 09:30:00',
'09:30:00'); compared, sorted and grouped as dates; YEAR(), MONTH(), DATE_FORMAT(), DATE_ADD(), NOW()...
timestamp: Manticore's Unix seconds; compared with a date string it is converted ('ts > "2024-01-01"').""",
}
ALIASES = {"DESC": "DESCRIBE", "CREATE": "CREATE TABLE", "ALTER": "ALTER TABLE", "DROP": "DROP TABLE",
           "LOAD": "LOAD DATA", "BEGIN": "TRANSACTIONS", "COMMIT": "TRANSACTIONS", "ROLLBACK": "TRANSACTIONS",
           "START TRANSACTION": "TRANSACTIONS", "DATETIME": "DATE", "TIME": "DATE", "TIMESTAMP": "DATE",
           "KNN": "SELECT", "MATCH": "SELECT", "INSERT IGNORE": "INSERT", "HYBRID": "HYBRID_MATCH",
           "HYBRID_SCORE": "HYBRID_MATCH", "HYBRID_MATCH()": "HYBRID_MATCH", "PASSAGE": "PASSAGES",
           "CHUNKS": "SHOW CHUNKS", "CALL CHUNKS": "SHOW CHUNKS",
           **{f"{name}{paren}": "PASSAGES" for name in ("KNN_CHUNK", "KNN_CHUNK_TEXT", "KNN_CHUNK_START",
                                                        "KNN_CHUNK_END", "KNN_CHUNK_HEADING", "KNN_CHUNK_SECTION",
                                                        "KNN_CHUNK_WINDOW", "KNN_CHUNKS") for paren in ("", "()")}}


def contents() -> str:
    lines = ["You asked for help about help category: \"Contents\"",
             "For more information, type 'help <item>', where <item> is one of the following topics:"]
    return "\n".join(lines + [f"   {name}" for name in sorted(TOPICS)])


def lookup(topic: str) -> str | None:
    """The help text of ``topic`` (``contents`` lists them), None when nothing matches."""
    key = " ".join(topic.strip().rstrip(";").upper().split())
    if key == "CONTENTS":
        return contents()
    key = ALIASES.get(key, key)
    if key in TOPICS:
        return f"Name: '{key}'\n{TOPICS[key]}"
    matches = sorted((name for name in TOPICS if name.startswith(key)), key=len)
    if matches and all(m.startswith(matches[0]) for m in matches):      # 'sho' -> SHOW (not SHOW CHUNKS)
        return f"Name: '{matches[0]}'\n{TOPICS[matches[0]]}"
    return None
