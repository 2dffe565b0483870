-- BACKUP TO: a consistent copy of the whole database, vector indexes included (docs/backup.md).
CREATE TABLE notes (body text, v float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2');
INSERT INTO notes (id, body, v) VALUES (1, 'rotate the certificate', (0, 1)), (2, 'flush the logs', (1, 0));
SELECT id, body, knn_dist() FROM notes WHERE knn(v, 2, (0, 1));
BACKUP TO 'notes-backup.db';
