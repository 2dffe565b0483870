-- Chunking strategies side by side: the same documents, one model-backed column per strategy.
-- LENGTH(col) is the number of vectors (chunks) a document got; knn() scores a document by its
-- closest chunk. See docs/chunking.md.
CREATE TABLE articles (
  title text,
  body text,
  c_truncate  float_vector       knn_type='hnsw' hnsw_similarity='cosine'
                model_name='Xenova/all-MiniLM-L6-v2' from='title,body',
  c_mean      float_vector       knn_type='hnsw' hnsw_similarity='cosine'
                model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
                chunk_strategy='mean' max_tokens='48',
  c_fixed     float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
                model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
                chunk_strategy='fixed' max_tokens='48' overlap_tokens='8',
  c_recursive float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
                model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
                chunk_strategy='recursive' max_tokens='48' overlap_tokens='8',
  c_sentence  float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
                model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
                chunk_strategy='sentence' max_tokens='48',
  c_capped    float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
                model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
                chunk_strategy='sentence' max_tokens='48' max_chunks='2'
);

INSERT INTO articles (id, title, body) VALUES
(1, 'Running the database',
 'Backups run every night at two and are kept for seven days. A restore stops the application, copies the newest snapshot back and starts the service again.

Disk space must stay above twenty percent. When an alert fires, remove old snapshots from the local cache before growing the volume.

Replication uses TLS. To rotate the replication certificate, request a new certificate from the internal authority, install it on both hosts and restart the replication service.'),
(2, 'Office life',
 'Lunch is served on Fridays at noon. The kitchen is cleaned every evening. The office is closed between Christmas and New Year.'),
(3, 'Short note', 'Certificates for the public website renew automatically.');

-- max_chunks='2' merged the overflow of document 1 into its last chunk: a warning says so.
SHOW WARNINGS;

-- Chunks per document (truncate and mean store one vector: on a float_vector LENGTH() is its dimensions).
SELECT id, title, LENGTH(c_fixed) AS fixed_, LENGTH(c_recursive) AS recursive_,
       LENGTH(c_sentence) AS sentence_, LENGTH(c_capped) AS capped, LENGTH(c_truncate) AS dims
FROM articles ORDER BY id;

-- The answer is in the last paragraph of document 1. One vector for the whole text (truncate)
-- blurs it (a larger distance); the chunk that holds the answer is much closer.
SELECT id, title, knn_dist() FROM articles
WHERE knn(c_truncate, 3, 'how do I rotate the replication certificate');

SELECT id, title, knn_dist() FROM articles
WHERE knn(c_sentence, 3, 'how do I rotate the replication certificate');

SELECT id, title, knn_dist() FROM articles
WHERE knn(c_recursive, 3, 'how do I rotate the replication certificate');

-- A filter is applied before the k nearest are chosen.
SELECT id, title, knn_dist() FROM articles
WHERE knn(c_fixed, 1, 'lunch') AND id <> 2;

SHOW CREATE TABLE articles\G
