-- Ranking beyond the first stage: linear fusion, MMR, length penalty, knn_score().
-- Run it: tessera -t < sql_examples/ranking.sql      (docs/hybrid.md, docs/knn.md, docs/reranking.md)

CREATE TABLE notes (
  title text,
  body  text,
  v     float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
        model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
        chunk_strategy='recursive' max_tokens='32' overlap_tokens='4'
);

INSERT INTO notes (id, title, body) VALUES
  (1, 'Log rotation', 'Rotate the logs with logrotate, then send USR1 so the daemon reopens its files.'),
  (2, 'Rotating logs', 'Log rotation: send USR1 to the daemon after logrotate has moved the files.'),
  (3, 'FLUSH LOGS', 'FLUSH LOGS reopens the log files too, from SQL, without a signal.'),
  (4, 'Nightly backups', 'The backup job copies the data volume to the standby host every night.'),
  (5, 'Certificates', 'The replication certificate expires every year; request a new one.');

-- hybrid_match: knn + chunk BM25 (stemmed: "rotating" finds "rotation"), fused linearly (min-max scores summed).
SELECT id, title, ROUND(hybrid_score(), 3) AS score FROM notes WHERE hybrid_match('rotating the log files') LIMIT 3;

-- Linear fusion: each side's scores min-max normalised and summed; a relevance cut-off after fusion.
SELECT id, title, ROUND(hybrid_score(), 3) AS score FROM notes
WHERE MATCH('logs') AS text AND knn(v, 5, 'rotating the log files') AS dense AND hybrid_score() > 0.5
OPTION fusion_method='linear', normalization='minmax', fusion_weights=(text=0.4, dense=0.6);

-- MMR: near-copies of one answer do not fill the top; knn_dist() stays raw, knn_score() was ranked.
SELECT id, title, ROUND(knn_dist(), 3) AS dist, ROUND(knn_score(), 3) AS ranked
FROM notes WHERE knn(v, 3, 'how do I rotate logs', {mmr=0.6});

-- Length penalty: similarity / (1 + 0.25 ln(chunks)).
SELECT id, title, ROUND(knn_score(), 3) AS ranked FROM notes WHERE knn(v, 3, 'how do I rotate logs', {length_penalty=0.25});
