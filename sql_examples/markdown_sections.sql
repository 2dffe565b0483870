-- chunk_strategy='markdown': chunks that follow the sections, their heading paths, and the text around a hit
-- (docs/chunking.md#markdown, docs/passages.md#knn_chunk_sectionmax_tokens-knn_chunk_windowbefore-after)
CREATE TABLE runbook (
  title text, body text,
  chunks float_vector_array knn_type='hnsw' model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
         chunk_strategy='markdown' max_tokens='48'
);
INSERT INTO runbook (id, title, body) VALUES
(1, 'Replication', '# Replication\n\nEvery write is copied to the standby over TLS.\n\n## Certificates\n\n### Rotation\n\nRequest a new certificate from the internal authority, copy it to both hosts and restart replication on the standby first.\n\n### Expiry\n\nCertificates expire after one year; an alert fires thirty days before.\n\n## Lag\n\nLag above thirty seconds pages the on-call engineer.'),
(2, 'Backups', '# Backups\n\nBackups run every night at two.\n\n## Restores\n\nRestores start from the newest snapshot in the archive bucket.');
SHOW CHUNKS FROM runbook.chunks WHERE id = 1;
SELECT id, knn_chunk_heading(), knn_chunk_text() FROM runbook WHERE knn(chunks, 2, 'how do I rotate the certificate');
SELECT id, knn_chunk_heading(), knn_chunk_section() FROM runbook WHERE knn(chunks, 1, 'certificate rotation');
SELECT id, knn_chunk_window(1, 1) FROM runbook WHERE knn(chunks, 1, 'when does a certificate expire');
SELECT id, knn_chunk_heading(), knn_chunk_section(12) FROM runbook WHERE hybrid_match('restore from snapshot', chunks) LIMIT 2;
SHOW CREATE TABLE runbook;
CALL CHUNKS('# Ops\n\n## Backups\n\nBackups run nightly.\n\n```sh\n# not a heading\nrestore --latest\n```', 'markdown', 32);
