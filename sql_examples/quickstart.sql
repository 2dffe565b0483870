-- Quickstart: a table whose vector column chunks and embeds its text by itself.
CREATE TABLE docs (
  title text,
  body text,
  chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
    model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
    chunk_strategy='recursive' max_tokens='64' overlap_tokens='8'
);

INSERT INTO docs (id, title, body) VALUES
  (1, 'Backup runbook', 'Backups run every night at two. The job copies the data directory to the standby host and keeps seven days of history.\n\nRestoring: stop the service, copy the newest snapshot back and start the service again.\n\nCertificates: replication between the primary and the standby uses TLS. To rotate the replication certificate, issue a new certificate from the internal CA, install it on both hosts and restart the replication service.'),
  (2, 'Web certificates', 'The public web server certificate is renewed automatically every ninety days.'),
  (3, 'Team lunch', 'Lunch is served on Fridays at noon in the kitchen.');

SELECT id, title, knn_dist() FROM docs
WHERE knn(chunks, 3, 'how do I rotate the replication certificate');

SELECT id, title, LENGTH(chunks) AS n_chunks FROM docs ORDER BY id;
