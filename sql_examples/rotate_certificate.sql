-- Why chunking matters: one long runbook whose answer sits in its last paragraph, and a short page
-- that merely shares the question's words. With chunk_strategy='truncate' the whole runbook is one
-- vector and the short decoy wins; with 'sentence' chunks the runbook's last paragraph wins.
CREATE TABLE pages (
  title text,
  body text,
  v_truncate float_vector knn_type='hnsw' hnsw_similarity='cosine'
    model_name='Xenova/all-MiniLM-L6-v2' from='title,body',
  v_sentence float_vector_array knn_type='hnsw' hnsw_similarity='cosine'
    model_name='Xenova/all-MiniLM-L6-v2' from='title,body'
    chunk_strategy='sentence' max_tokens='128' overlap_tokens='32'
);

INSERT INTO pages (id, title, body) VALUES
(1, 'Database operations runbook',
 'Nightly backups. Every night at two the backup job stops writes for a moment, takes a snapshot of the data volume and copies it to the standby host. Snapshots are compressed with zstd and kept for seven days; weekly snapshots are kept for three months.

Restores. To restore, stop the application servers, pick the snapshot you need from the archive bucket, copy it to the data volume and start the database. Check the row counts of the five largest tables against the numbers recorded in the backup log before you start the application servers again.

Disk space. The data volume must keep at least twenty percent free space. When an alert fires, remove old snapshots from the local cache, vacuum the largest tables and, if that is not enough, grow the volume from the cloud console. Never delete files from the write-ahead log directory by hand.

Monitoring. Replication lag, disk space, connection counts and slow queries are graphed on the operations dashboard. A page goes to the on-call engineer when lag stays above thirty seconds for five minutes or when free space drops below ten percent.

Upgrades. Minor versions are installed during the Tuesday maintenance window: upgrade the standby first, fail over, upgrade the old primary, then fail back. Major versions need a written plan and a rehearsal on the staging cluster.

Replication security. The primary and the standby talk over an encrypted channel. Its certificate expires every year. To rotate the TLS certificate used for replication, request a new certificate from the internal certificate authority, copy the key pair to both hosts, update the path in the replication settings and restart the replication service on the standby and then on the primary.'),
(2, 'TLS certificates', 'Our public website uses TLS certificates; they are renewed automatically before they expire.'),
(3, 'Kitchen rules', 'Please clean the coffee machine on Fridays and label your food in the fridge.'),
(4, 'Holiday calendar', 'The office is closed on public holidays and between Christmas and New Year.');

SHOW WARNINGS;

-- The whole runbook as one vector: the short TLS page ranks first.
SELECT id, title, knn_dist() FROM pages
WHERE knn(v_truncate, 4, 'how do I rotate the TLS certificates used for replication');

-- Sentence chunks: the runbook ranks first by a wide margin.
SELECT id, title, knn_dist() FROM pages
WHERE knn(v_sentence, 4, 'how do I rotate the TLS certificates used for replication');

SELECT id, title, LENGTH(v_sentence) AS chunks FROM pages ORDER BY id;
