-- Bulk load and export through SQL. LOAD DATA INFILE reads .csv, .tsv, .jsonl and .parquet files
-- (fields matched to columns by name; model-backed columns are embedded as the rows stream in);
-- SELECT ... INTO OUTFILE writes the same formats, vectors as lists.
-- Paths are relative to the working directory, like the mysql client's: run this from the
-- repository root. It writes notes_export.jsonl and nearest.parquet into the working directory.
CREATE TABLE notes (
  title text,
  body text,
  tags json,
  created timestamp,
  v float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
    model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
    chunk_strategy='sentence' max_tokens='32'
);

LOAD DATA INFILE 'sql_examples/data/notes.csv' INTO TABLE notes;

SELECT id, title, tags, LENGTH(v) AS chunks FROM notes ORDER BY id;

SELECT id, title, knn_dist() FROM notes WHERE knn(v, 3, 'how do I get my data back from a backup');

-- Export everything, vectors included, as JSON lines ...
SELECT id, title, body, tags, created, v FROM notes INTO OUTFILE 'notes_export.jsonl';

-- ... and load it into a second table: supplied vectors are stored as they are, nothing is embedded.
CREATE TABLE notes_copy (
  title text,
  body text,
  tags json,
  created timestamp,
  v float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
    model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
    chunk_strategy='sentence' max_tokens='32'
);
LOAD DATA INFILE 'notes_export.jsonl' INTO TABLE notes_copy;

SELECT id, title, knn_dist() FROM notes_copy WHERE knn(v, 3, 'how do I get my data back from a backup');

-- A knn result to Parquet.
SELECT id, title, knn_dist() AS distance FROM notes WHERE knn(v, 2, 'when is lunch')
INTO OUTFILE 'nearest.parquet';

-- Only two columns of a CSV file, by position: (title, body) receive its first two fields.
CREATE TABLE titles (name text, summary text);
LOAD DATA INFILE 'sql_examples/data/titles.csv' INTO TABLE titles (name, summary);
SELECT name, summary FROM titles ORDER BY name;
