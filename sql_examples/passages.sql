-- Which passage matched: retrieval for an LLM prompt, in SQL (docs/passages.md).
-- A knn() search returns documents; knn_chunk_text() is the passage of each that matched, and
-- knn_chunks(n) its n best passages as JSON. SHOW CHUNKS and CALL CHUNKS show how text is cut.
CREATE TABLE handbook (
  title text,
  body  text,
  chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
    model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
    chunk_strategy='sentence' max_tokens='48' overlap_tokens='8'
);

INSERT INTO handbook (id, title, body) VALUES
(1, 'Database operations',
 'Backups run every night at two and are kept for seven days. Restores start from the newest snapshot in the archive bucket. The primary and the standby replicate over TLS; to rotate the replication certificate, request a new one from the internal authority, copy it to both hosts and restart replication on the standby first. Disk alerts fire when free space drops below twenty percent.'),
(2, 'Web site',
 'The public web site renews its TLS certificates automatically. Deployments go out on Tuesdays after the tests pass. Caches are purged after every deployment.'),
(3, 'Office',
 'Le café est servi à huit heures. The kitchen closes at six; label your food in the fridge. 会議室は予約制です。');

-- The nearest documents, the passage that matched and where it sits in the embedded text
-- (title and body joined by one space; offsets count characters, chunks count from 1).
SELECT id, title, knn_dist(), knn_chunk(), knn_chunk_start(), knn_chunk_end(), knn_chunk_text()
FROM handbook WHERE knn(chunks, 2, 'how do I rotate the replication certificate');

-- The two best passages of each document, scored exactly.
SELECT id, knn_chunks(2) FROM handbook WHERE knn(chunks, 1, 'when is the coffee served');

-- Retrieval for an LLM: keep the best passages with their titles, then build the prompt text.
CREATE TABLE context (title string, passage text, dist float);
INSERT INTO context (title, passage, dist)
SELECT title, knn_chunk_text(), knn_dist() FROM handbook
WHERE knn(chunks, 2, 'how do I rotate the replication certificate');
SELECT CONCAT('Answer from these passages only.\n\n',
              GROUP_CONCAT(CONCAT('[', title, '] ', passage) ORDER BY dist SEPARATOR '\n\n'),
              '\n\nQuestion: how do I rotate the replication certificate?') AS prompt
FROM context;

-- How a stored document was cut.
SHOW CHUNKS FROM handbook.chunks WHERE id = 1;

-- How a text would be cut under other settings, before choosing them (nothing is stored).
CALL CHUNKS('Backups run every night. Restores start from the newest snapshot. Disk alerts fire early.', 'sentence', 8);
CALL CHUNKS('Backups run every night. Restores start from the newest snapshot. Disk alerts fire early.', 'fixed', 8, 2);
