-- A folder of documents is a table (docs/load_data.md#folders-of-documents): one row per markdown,
-- text, HTML or PDF file; front matter keys fill the columns of their name, the rest goes to meta.
CREATE TABLE vault (path string UNIQUE, title text, body text, tags json, meta json, modified datetime,
  chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
    model_name='Xenova/all-MiniLM-L6-v2' from='title,body' chunk_strategy='recursive' max_tokens='128');

-- SYNC keeps the table equal to the folder: new files added, changed ones replaced, deleted ones removed
LOAD DATA INFILE 'sql_examples/data/vault/**/*' SYNC INTO TABLE vault;
SHOW WARNINGS;

SELECT path, title, tags, meta FROM vault ORDER BY path;
SELECT path, knn_dist() FROM vault WHERE knn(chunks, 2, 'how do I renew the TLS certificate');

-- nothing changed on disk: nothing is rewritten or embedded again
LOAD DATA INFILE 'sql_examples/data/vault/**/*' SYNC INTO TABLE vault;
SHOW WARNINGS;

-- one row per file whatever folder is synced: a folder inside the table's root updates the rows of its
-- files (paths stay relative to the root; docs/load_data.md#sync)
LOAD DATA INFILE 'sql_examples/data/vault/runbooks/**/*' SYNC INTO TABLE vault;
SHOW WARNINGS;
SELECT COUNT(*) AS files FROM vault;

-- the passage that answers, with the path to cite it by
SELECT path, knn_chunk_text() FROM vault WHERE hybrid_match('how do I renew the TLS certificate', chunks) LIMIT 1;
