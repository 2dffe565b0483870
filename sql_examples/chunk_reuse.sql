-- Never embed the same chunk twice (docs/chunk_reuse.md): a re-sync embeds only the changed chunks,
-- and ALTER TABLE ... MODIFY COLUMN re-chunks a column in place, reusing every chunk text it can.
CREATE TABLE wiki (
  title text,
  body  text,
  chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
    model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
    chunk_strategy='sentence' max_tokens='24' overlap_tokens='0'
);

INSERT INTO wiki (id, title, body) VALUES
(1, 'Backups', 'Backups run every night at two. Snapshots are kept for seven days. Weekly snapshots stay for three months. Restores start from the newest snapshot in the archive bucket.'),
(2, 'Certificates', 'Replication runs over TLS. The certificate expires every year. To rotate it, request a new one from the internal authority and restart replication on the standby first.');

-- The nightly re-import: page 1 gained a sentence, page 2 is unchanged.
REPLACE INTO wiki (id, title, body) VALUES
(1, 'Backups', 'Backups run every night at two. Snapshots are kept for seven days. Weekly snapshots stay for three months. Monthly snapshots go to cold storage. Restores start from the newest snapshot in the archive bucket.'),
(2, 'Certificates', 'Replication runs over TLS. The certificate expires every year. To rotate it, request a new one from the internal authority and restart replication on the standby first.');
SHOW WARNINGS;

-- Try smaller chunks: one statement, one transaction; chunk texts seen before are not embedded again.
ALTER TABLE wiki MODIFY COLUMN chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
  model_name='Xenova/all-MiniLM-L6-v2' from='title,body' chunk_strategy='sentence' max_tokens='16';
SHOW WARNINGS;
SHOW CREATE TABLE wiki;
SHOW CHUNKS FROM wiki.chunks WHERE id = 2;

SELECT id, title, knn_chunk_text() FROM wiki WHERE knn(chunks, 1, 'how do I rotate the certificate');
