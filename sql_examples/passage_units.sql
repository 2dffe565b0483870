-- passage_units='windows': each chunk's sentences (joined into ~200-character windows) are embedded
-- too, when the row is; a text query then chooses each found document's passage with them.
-- The same notes in two tables, with and without the option (docs/passages.md#passage_units).
CREATE TABLE plain (title text, body text,
  chunks float_vector_array knn_type='hnsw' model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
         chunk_strategy='markdown' max_tokens='64' overlap_tokens='8');
CREATE TABLE fine (title text, body text,
  chunks float_vector_array knn_type='hnsw' model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
         chunk_strategy='markdown' max_tokens='64' overlap_tokens='8' passage_units='windows');

INSERT INTO plain (id, title, body) VALUES
(1, 'Backups', '# Backups\n\nOur backup system copies every database to the archive bucket. Backups matter: without a backup a lost disk means lost data, so backups are checked by the on-call engineer each week.\n\n## Operations\n\nThe backup job is scheduled by cron on the storage host and writes its log to /var/log/backup.log. Snapshots are compressed with zstd before upload. Each snapshot is retained for fourteen days and then expires. The job sends a metric to the monitoring system when it ends, and a failed upload is retried three times with a pause between tries. Uploads use the archive credentials of the service account.\n\n## Restores\n\nRestores start from the newest snapshot in the archive bucket; the restore script asks for the snapshot name.'),
(2, 'Certificates', '# Certificates\n\nThe web site renews its certificates automatically. Internal services use the company authority; request a certificate with the ops form.\n\n## Expiry\n\nAn alert fires thirty days before a certificate expires.');
INSERT INTO fine (id, title, body) SELECT id, title, body FROM plain;

-- The nearest chunk (and the one sharing the question's words) is the Restores section...
SELECT id, knn_chunk(), knn_chunk_heading(), knn_chunk_text() FROM plain
WHERE hybrid_match('how many days are old snapshots kept before they are deleted', chunks) LIMIT 1;

-- ...the units find the sentence that answers, in the middle of the Operations section.
SELECT id, knn_chunk(), knn_chunk_heading(), knn_chunk_text() FROM fine
WHERE hybrid_match('how many days are old snapshots kept before they are deleted', chunks) LIMIT 1;

SHOW CREATE TABLE fine;
