-- Full-text search (MATCH, weight, HIGHLIGHT, SNIPPET) and hybrid search (MATCH fused with knn by RRF).
-- Run it: tessera -t < sql_examples/fulltext.sql      (docs/fulltext.md, docs/hybrid.md)

CREATE TABLE runbook (
  title text,
  body  text,
  team  string,
  v     float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
        model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
        chunk_strategy='recursive' max_tokens='64' overlap_tokens='8'
) morphology='stem_en';

INSERT INTO runbook (id, title, body, team) VALUES
  (1, 'Log rotation', 'Send USR1 to the daemon, or run FLUSH LOGS, and it reopens its log files. Rotate with logrotate first.', 'ops'),
  (2, 'Nightly backups', 'The backup job snapshots the data volume at two and copies the snapshot to the standby host.', 'ops'),
  (3, 'Certificate renewal', 'The replication certificate expires every year; request a new one and restart replication on both hosts.', 'security'),
  (4, 'Restoring a snapshot', 'Stop the application servers, copy the newest snapshot back and start the database again.', 'ops'),
  (5, 'Team lunch', 'Lunch is served on Fridays at noon in the kitchen.', 'office');

-- Manticore's query language: words ANDed, | OR, -NOT, "phrase", @field, prefix*. Best first (weight() = BM25).
SELECT id, title, ROUND(weight(), 3) AS w FROM runbook WHERE MATCH('snapshot -nightly');
SELECT id, title FROM runbook WHERE MATCH('@title (snapshot | certificate)');
SELECT id, title FROM runbook WHERE MATCH('"flush logs" | replicat*') AND team = 'ops';

-- MySQL's spelling works too.
SELECT id, title FROM runbook WHERE MATCH(title, body) AGAINST('restart snapshot' IN NATURAL LANGUAGE MODE) ORDER BY id;

-- The matching words, marked, in context.
SELECT id, HIGHLIGHT() AS found FROM runbook WHERE MATCH('snapshot');
SELECT id, SNIPPET(body, 'log', 'limit=40', 'around=3') AS passage FROM runbook WHERE id = 1;

-- Hybrid search: the text side and the vector side fused by reciprocal rank.
SELECT id, title, ROUND(hybrid_score(), 4) AS score, ROUND(weight(), 3) AS bm25, ROUND(knn_dist(), 3) AS dist
FROM runbook
WHERE MATCH('certificate') AS text AND knn(v, 3, 'how do I renew TLS') AS dense
OPTION fusion_method='rrf', rank_constant=60, fusion_weights=(text=0.7, dense=0.3);

-- The shortcut: one text, embedded once, fused with BM25 over the column's chunks.
SELECT id, title, ROUND(hybrid_score(), 4) AS score FROM runbook WHERE hybrid_match('make the logs start over', v) LIMIT 3;

-- The index is checked and rebuilt with the table.
CHECK TABLE runbook;
